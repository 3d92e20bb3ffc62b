"""Query expansion (seed 001 §4.4) and LLM re-ranking (§4.5) as hooks of `hybrid_search`,
each call recorded (`LLMCallRecorded`) on one `SearchRequested` command stream per search,
like every other stage.

    llm = SearchLLM(ledger, provider, provenance, query="where does she live", user="maya")
    hits = hybrid_search(..., expand=llm.expand, rerank=llm.rerank)
    llm.finish()   # saves the command (only if the search asked the LLM)

A provider that fails leaves the search as it was (no expansion, the fused order), as the
seed degrades without its LLM; the command records the failure.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mnemoledger.commands.llm.errors import LLMError
from mnemoledger.commands.llm.search_prompts import EXPAND, RERANK
from mnemoledger.commands.llm.search_schemas import (
    ExpandInput,
    RerankCandidate,
    RerankInput,
)
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.models import SearchHit
from mnemoledger.commands.parts import Parts
from mnemoledger.commands.recall.facts_api import fact_linked_memories
from mnemoledger.commands.recall.search import Expand, FactLinked, Relevance, Replacing, Rerank
from mnemoledger.commands.write.recorded_llm import RecordedLLM
from mnemoledger.commands.write.replaying import recorded_id
from mnemoledger.ledger.application import Ledger
from mnemoledger.ledger.command import Command
from mnemoledger.ledger.provenance import Provenance, acting_as

logger = logging.getLogger(__name__)

RERANK_SHOWN = 40
"""Candidates shown to the rerank stage at most (the best of the fused ranking)."""


@dataclass
class SearchCommand(Command, created_event_name="SearchRequested"):
    """A search that asked the LLM (expansion, re-ranking): its calls and their outcome."""


class SearchLLM:
    """The expansion and rerank hooks of one search, recorded on one command stream."""

    def __init__(
        self,
        ledger: Ledger,
        provider: LLMProvider,
        provenance: Provenance,
        *,
        query: str,
        user: str,
    ) -> None:
        self.ledger = ledger
        self.provider = provider
        self.provenance = replace(provenance, user_id=user)
        self.input: dict[str, Any] = {"query": query, "user": user}
        self.command: SearchCommand | None = None
        self.llm: RecordedLLM | None = None
        self.outcome: dict[str, Any] = {}
        self.failed: str | None = None
        self._expansions: dict[str, list[str]] = {}
        self._rankings: dict[tuple[str, ...], list[str]] = {}

    def _recorded(self) -> RecordedLLM:
        if self.llm is None:
            with acting_as(self.provenance):
                self.command = recorded_id(SearchCommand(input=self.input))
            decided = replace(self.provenance, causation_id=self.command.id.hex)
            self.llm = RecordedLLM(self.provider, self.command, decided)
        return self.llm

    def expand(self, query: str) -> list[str]:
        """4-6 alternative phrasings of `query` (none if the LLM fails); asked once per
        query however many times the search runs."""
        if query in self._expansions:
            return self._expansions[query]
        self._expansions[query] = found = self._expand(query)
        return found

    def _expand(self, query: str) -> list[str]:
        try:
            output = self._recorded().run(EXPAND, ExpandInput(query=query))
        except LLMError as error:
            logger.warning("query expansion failed (%s); searching the query alone", error)
            self.failed = f"expand: {error}"
            return []
        queries = [q.strip() for q in output.queries if q.strip()]
        self.outcome["expanded"] = queries
        return queries

    def rerank(self, query: str, hits: list[SearchHit]) -> list[SearchHit]:
        """`hits` in the LLM's order (the first `RERANK_SHOWN` shown to it; ids it leaves out
        keep their order after the ranked ones), each taking the score of its new position
        among the fused scores, so that scores still fall down the list."""
        shown = hits[:RERANK_SHOWN]
        if len(shown) < 2:
            return hits
        shown_ids = tuple(h.id for h in shown)
        ranking = self._rankings.get(shown_ids)
        if ranking is None:
            candidates = [RerankCandidate(id=h.id, content=h.content) for h in shown]
            try:
                output = self._recorded().run(
                    RERANK, RerankInput(query=query, candidates=candidates)
                )
            except LLMError as error:
                logger.warning("re-ranking failed (%s); keeping the search's order", error)
                self.failed = f"rerank: {error}"
                return hits
            ranking = self._rankings[shown_ids] = output.ranking
        by_id = {h.id: h for h in shown}
        ordered = [by_id[i] for i in dict.fromkeys(ranking) if i in by_id]
        ordered += [h for h in shown if h not in ordered]
        scores = sorted((h.score for h in shown), reverse=True)
        reranked = [
            h.model_copy(update={"score": score}) for h, score in zip(ordered, scores, strict=True)
        ]
        self.outcome["reranked"] = [h.id for h in reranked]
        return reranked + hits[RERANK_SHOWN:]

    def finish(self) -> str | None:
        """Save the command if the search asked the LLM; its id (None: it did not)."""
        if self.command is None:
            return None
        with acting_as(replace(self.provenance, causation_id=self.command.id.hex)):
            if self.failed is None:
                self.command.complete(self.outcome)
            else:
                self.command.fail(self.failed, "llm")
        self.ledger.save(self.command)
        return self.command.id.hex


ExpandChoice = Expand | bool | None
RerankChoice = Rerank | bool | None


@dataclass(frozen=True)
class SearchHooks:
    """What one search asks of the LLM, decided from the call and the settings."""

    llm: SearchLLM
    expand: Expand | None
    rerank: Rerank | None
    expand_always: bool
    facts: FactLinked | None = None
    """The fact graph channel (seed 001 §4.1)."""
    relevance: Relevance | None = None
    """The relevance model that reads the best candidates (setting `search_relevance`)."""
    replacing: Replacing | None = None
    """The judge's "replaces", which puts newer values first (setting `search_relevance`)."""

    def finish(self) -> str | None:
        return self.llm.finish()


def search_hooks(
    parts: Parts,
    *,
    query: str,
    user: str,
    expand: ExpandChoice = None,
    rerank: RerankChoice = None,
    agent: str | None = None,
    thread: str | None = None,
) -> SearchHooks:
    """`expand`: True expands every time, False never, None as the setting `search_expand`
    says (`auto`: when the best match is below 0.25; `always`; `off`), a function: that
    function, below 0.25. `rerank`: True asks the LLM, a function reorders, None/False:
    the fused order. `facts`: the fact graph channel, always on (seed 001 §4.1). The
    relevance model reads the best candidates, and newer values go first, only when the
    setting `search_relevance` is `learned`."""
    llm = SearchLLM(
        parts.ledger, parts.llm, parts.provenance(user, agent, thread), query=query, user=user
    )
    if expand is None:
        expand = parts.settings.search_expand != "off"
        always = parts.settings.search_expand == "always"
    else:
        always = expand is True
    expand_hook: Expand | None = llm.expand if expand is True else (expand or None)
    rerank_hook: Rerank | None = llm.rerank if rerank is True else (rerank or None)
    model, moment = parts.facts_model, parts.clock().isoformat()

    def facts(text: str) -> list[str]:
        return fact_linked_memories(model, user, text, moment)

    if parts.settings.search_relevance == "off":
        return SearchHooks(llm, expand_hook, rerank_hook, always, facts)
    from mnemoledger.commands.judge import default_judge  # numpy and the models: on use
    from mnemoledger.commands.judge.text import clauses

    judge = default_judge()

    def replacing(pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The likeliest replacement of each older memory or of one of its clauses."""
        asked = [[(part, newer) for part in (older, *clauses(older))] for older, newer in pairs]
        read = iter(judge.relations([pair for parts in asked for pair in parts]))
        return [max(next(read).replaces for _ in parts) for parts in asked]

    return SearchHooks(llm, expand_hook, rerank_hook, always, facts, judge, replacing)
