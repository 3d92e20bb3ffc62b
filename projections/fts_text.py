"""What the keyword index reads of a text: CJK runs as overlapping bigrams.

SQLite's `unicode61` tokenizer splits on spaces and punctuation, so a sentence of Chinese
or Japanese, written without spaces, is one token: a query for one of its words finds
nothing. Seed 001 §9 pre-processes CJK text before indexing (jieba for Chinese, bigrams for
Japanese and Korean); here every run of CJK characters (Han, Hiragana, Katakana, Hangul)
becomes its overlapping two-character words plus its last character alone
("我喜欢咖啡" -> "我喜 喜欢 欢咖 咖啡 啡"), on the index side and the query side alike, so
a two-character word matches anywhere in a run and a one-character query, searched as a
prefix, matches too. Text without CJK characters is left as it is.
"""

from __future__ import annotations

import json
import re
from typing import Final

CJK_RUN: Final = re.compile(
    "["
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\uff66-\uff9f"  # half-width Katakana
    "]+"
)


_NO_TAGS = "[]"


def has_cjk(text: str) -> bool:
    return CJK_RUN.search(text) is not None


def cjk_bigrams(run: str) -> list[str]:
    """A CJK run's overlapping bigrams, then its last character alone."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]]


def fts_text(text: str | None) -> str:
    """`text` as the keyword index reads it: each CJK run replaced by its bigrams (spaced
    apart from the text around it); other text unchanged."""
    if not text:
        return ""
    if text.isascii() or not has_cjk(text):  # isascii: a C scan, no regex (rebuilds)
        return text
    return CJK_RUN.sub(lambda match: " " + " ".join(cjk_bigrams(match[0])) + " ", text)


def fts_tags(tags_json: str | None) -> str:
    """A memory's tags (a JSON list) as one indexed text: the tags spaced apart."""
    if not tags_json or tags_json == _NO_TAGS:
        return ""
    try:
        tags = json.loads(tags_json)
    except ValueError:
        return ""
    return fts_text(" ".join(str(tag) for tag in tags)) if isinstance(tags, list) else ""


def query_cjk_terms(run: str) -> list[str]:
    """The index terms a CJK run of a query asks for: its bigrams (a one-character run: the
    character itself, matched as a prefix by the caller)."""
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
