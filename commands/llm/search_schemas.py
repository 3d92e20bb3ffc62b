"""Inputs and outputs of the search-time LLM stages (seed 001 §4.4 expansion, §4.5 rerank)."""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field

MAX_EXPANSIONS: Final = 6
"""Seed 001 §4.4: the LLM proposes 4-6 alternative search phrases."""
RERANK_MAX_CANDIDATES: Final = 40
"""Candidates shown to the rerank stage at most (the best of the fused ranking)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ExpandInput(_Model):
    query: str
    """The search query to rephrase."""


class ExpandOutput(_Model):
    queries: list[str] = Field(max_length=MAX_EXPANSIONS)
    """4-6 alternative search phrases for the same need, each on its own (keywords,
    synonyms, the other language of a bilingual user: Chinese and English)."""


class RerankCandidate(_Model):
    id: str
    """The memory id, to name it in `ranking`."""
    content: str


class RerankInput(_Model):
    query: str
    candidates: list[RerankCandidate]
    """Best first, as the search ranked them."""


class RerankOutput(_Model):
    ranking: list[str]
    """Candidate ids, most useful for the query first; ids left out keep their order after
    the ranked ones."""
