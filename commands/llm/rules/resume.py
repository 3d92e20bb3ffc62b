"""The offline `resume_compress` rule (seed 001 §3 step 19, §7 "Resume compress"): every
memory keeps a place in the summary, its share of the bound, cut at a word when longer."""

from __future__ import annotations

from typing import Final

from mnemoledger.commands.llm.consolidation_schemas import (
    ResumeCompressInput,
    ResumeCompressOutput,
)
from mnemoledger.commands.llm.rules.text import single_line

SEPARATOR: Final = "; "
ELLIPSIS: Final = "…"
MIN_SHARE_CHARS: Final = 40
"""No memory is cut shorter than this; past the bound, the last memories are left out."""


def resume_compress(inputs: ResumeCompressInput) -> ResumeCompressOutput:
    """The memories in their order (most important first), each cut to an equal share of
    `max_chars` at a word boundary, joined by "; " and never past `max_chars`."""
    texts = [single_line(text).rstrip(" .;") for text in inputs.memories]
    texts = [text for text in texts if text]
    if not texts or inputs.max_chars <= 0:
        return ResumeCompressOutput(summary="")
    room = inputs.max_chars - len(SEPARATOR) * (len(texts) - 1)
    share = max(MIN_SHARE_CHARS, room // len(texts))
    summary = ""
    for text in texts:
        piece = cut_at_word(text, share)
        candidate = f"{summary}{SEPARATOR}{piece}" if summary else piece
        if len(candidate) > inputs.max_chars:
            break
        summary = candidate
    return ResumeCompressOutput(summary=summary or cut_at_word(texts[0], inputs.max_chars))


def cut_at_word(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters, else its words up to the limit and "…"."""
    if len(text) <= limit:
        return text
    head = text[: max(limit - len(ELLIPSIS), 1)]
    if " " in head:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:") + ELLIPSIS
