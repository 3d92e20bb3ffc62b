"""English function words: NLTK's list as bm25s ships it (`STOPWORDS_EN_PLUS`), read on first
use. Importing `bm25s.stopwords` loads the whole `bm25s` package and with it scipy.sparse
(~0.2 s of CPU), which a command that never compares words should not pay at start-up."""

from __future__ import annotations

from functools import cache


@cache
def stop_words() -> frozenset[str]:
    """bm25s's English stop words."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS)
