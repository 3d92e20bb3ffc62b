"""Offline rules of the search-time stages: expansion to keyword variants of the query
(no paraphrase without a model), re-ranking that keeps the search's order."""

from __future__ import annotations

import re
from typing import Final

from mnemoledger.commands.llm.rules.stopwords import stop_words
from mnemoledger.commands.llm.search_schemas import (
    MAX_EXPANSIONS,
    ExpandInput,
    ExpandOutput,
    RerankInput,
    RerankOutput,
)

_WORD: Final = re.compile(r"\w+", re.UNICODE)


def expand(inputs: ExpandInput) -> ExpandOutput:
    """The query's content words alone, then without the names in it (a question about
    "Caroline's painting" also as "painting"): what a keyword search can do with it."""
    words = [w for w in _WORD.findall(inputs.query) if w.lower() not in stop_words()]
    unnamed = [w for w in words if not w[:1].isupper()]
    variants = [" ".join(words), " ".join(unnamed)]
    query = inputs.query.strip().lower()
    kept = [v for v in dict.fromkeys(variants) if v and v.lower() != query]
    return ExpandOutput(queries=kept[:MAX_EXPANSIONS])


def rerank(inputs: RerankInput) -> RerankOutput:
    """The search's own order: offline there is no better judge of usefulness."""
    return RerankOutput(ranking=[c.id for c in inputs.candidates])
