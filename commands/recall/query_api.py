"""`Query`: seed 003's `memory.query` (§6, §11) and delta header (§1) on the Python API,
over the shared parts (the delta read model among them, kept up to date by the runner).

    answer = memory.query("deployment plan", agent="planner", user="maya",
                          categories=["tasks"], top_k=3, budget_tokens=512, thread="t1")
    answer.header, answer.results      # "Memory updates since rev 0:\\n- +created: ...", bullets
    memory.delta("t1")                 # DeltaOut(rev=..., header=...)
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.parts import Parts
from mnemoledger.commands.recall.query import (
    QueryRequest,
    QueryResult,
    memory_query,
    parse_request,
)
from mnemoledger.commands.recall.search import SearchOptions
from mnemoledger.commands.recall.search_llm import search_hooks
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import PROCEDURAL_CATEGORY, QUERY_DEFAULT_RETURN, QUERY_DEFAULT_TOP_K
from mnemoledger.ledger.validation import identifier

QUERY_READS = ("layers", "vectors", "delta", "graph", "facts")
"""The read models `memory.query` answers from (its memories, their vectors and keywords,
the delta header, the relations, the fact channel): a query catches up only these, so its
catch-up of the `RecallServed` the previous query wrote skips the nine others (core,
consent, transcripts, history, topics, latest, checkpoints, flushes, turn queue), which
follow at the next read that needs them."""


class DeltaOut(BaseModel):
    """A thread's revision and its delta header since `since` (None: nothing changed)."""

    thread: str
    rev: int
    since: int
    header: str | None


class Query:
    """`query` / `memory_query` and `delta` (§1)."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def memory_query(self, request: QueryRequest | Mapping[str, Any]) -> QueryResult:
        """`MnemoLedger.memory_query`: seed 003 §6 query as a tool call (documented there)."""
        req = parse_request(request)
        hooks = search_hooks(
            self.parts,
            query=req.query,
            user=req.filters.user_id,
            expand=req.expand,
            rerank=req.rerank,
            agent=req.agent,
            thread=req.thread,
        )
        return memory_query(
            req,
            ledger=self.parts.ledger,
            layers=self.parts.layers,
            vectors=self.parts.vectors,
            embedder=self.parts.embedder,
            delta=self.parts.delta_model,
            categories=self.parts.categories_config,
            actor=self.parts.actor,
            refresh=self._refresh_for_query,
            graph=self.parts.graph_model,
            options=SearchOptions.of(self.parts.settings),
            hooks=hooks,
            user_names=self.parts.user_names,
        )

    def _refresh_for_query(self) -> int:
        return self.parts.runner.catch_up(names=QUERY_READS)

    def query(
        self,
        query: str,
        *,
        agent: str,
        user: str,
        categories: Sequence[str] | None = None,
        filters: Mapping[str, Any] | None = None,
        top_k: int = QUERY_DEFAULT_TOP_K,
        return_mode: str = QUERY_DEFAULT_RETURN,
        budget_tokens: int | None = None,
        threshold: float | None = None,
        thread: str | None = None,
        since_rev: int | None = None,
        fusion: str | None = None,
        expand: bool | None = None,
        rerank: bool = False,
        dry: bool = False,
    ) -> QueryResult:
        """`MnemoLedger.query`: `agent`'s query over a user's memories (documented there)."""
        given = dict(filters or {})
        if given.get("user_id", user) != user:
            raise InvalidInput("filters.user_id differs from user")
        given["user_id"] = user
        return self.memory_query(
            {
                "agent": agent,
                "query": query,
                "categories": None if categories is None else list(categories),
                "filters": given,
                "top_k": top_k,
                "return": return_mode,
                "budget_tokens": budget_tokens,
                "threshold": threshold,
                "thread": thread,
                "since_rev": since_rev,
                "fusion": fusion,
                "expand": expand,
                "rerank": rerank,
                "dry": dry,
            }
        )

    def delta(
        self,
        thread: str,
        since: int | None = None,
        *,
        agent: str | None = None,
        user: str | None = None,
    ) -> DeltaOut:
        """`MnemoLedger.delta`: a thread's delta header since a revision (documented there)."""
        thread_id = str(identifier("thread", thread))
        agent_id = identifier("agent", agent, required=False)
        user_id = identifier("user", user, required=False)
        if since is not None and (isinstance(since, bool) or since < 0):
            raise InvalidInput(f"since must be a revision >= 0; got {since}")
        allowed: set[str] | None = None
        if agent_id is not None:
            allowed = set(self.parts.categories_config.allowlist(agent_id)) - {PROCEDURAL_CATEGORY}
        self.parts.refresh()
        if since is None:
            served = None
            if agent_id is not None:
                served = self.parts.delta_model.served_revision(thread_id, agent_id)
            since = served or 0
        header = self.parts.delta_model.header(
            thread_id, since, user_id=user_id, categories=allowed
        )
        return DeltaOut(
            thread=thread_id,
            rev=self.parts.delta_model.revision(thread_id),
            since=since,
            header=header,
        )

    def delta_changes(self, thread: str, since: int = 0) -> builtins.list[dict[str, Any]]:
        """`MnemoLedger.delta_changes`: a thread's kept change-log rows (documented there)."""
        self.parts.refresh()
        return [
            {
                "rev": c.rev,
                "memory_id": c.memory_id,
                "event": c.event,
                "meta": c.meta,
                "ts": c.ts,
            }
            for c in self.parts.delta_model.changes(str(identifier("thread", thread)), since)
        ]
