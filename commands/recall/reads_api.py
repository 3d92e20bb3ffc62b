"""`Reads`: one memory, lists, the latest, hybrid search, core.md, the raw log and counts.

    memory.get(memory_id)
    memory.list(user="maya", namespace="tacit", order="access", limit=20)
    memory.search("where does she live", user="maya")
    memory.core(user="maya").markdown

Every read first brings the read models up to date with the log (a few milliseconds when
nothing changed), so a reader always sees every acknowledged write.
"""

from __future__ import annotations

import builtins
from datetime import datetime

from mnemoledger.commands.models import CoreOut, EventOut, MemoryOut, SearchHit, Stats
from mnemoledger.commands.parts import Parts
from mnemoledger.commands.recall.search import (
    Expand,
    Fusion,
    Rerank,
    SearchOptions,
    embed_early,
    hybrid_search,
    query_vector_of,
)
from mnemoledger.commands.recall.search_llm import search_hooks
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound
from mnemoledger.ledger.policy import (
    LATEST_DEFAULT_LIMIT,
    LATEST_MAX_LIMIT,
    LIST_ORDERS,
    MAX_LIST_LIMIT,
    SEARCH_DEFAULT_K,
    SEARCH_FUSION_CHOICES,
    SEARCH_MAX_K,
    SEARCH_MIN_SCORE,
    ListOrder,
)
from mnemoledger.ledger.validation import identifier


class Reads:
    """The memory reads of `MnemoLedger`, over the layers, vectors, core, graph and latest
    read models of the shared parts."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def get(self, memory_id: str) -> MemoryOut:
        """`MnemoLedger.get`: one memory, current state (documented there)."""
        parts = self.parts
        parts.refresh()
        row = parts.layers.get(parts.ledger.memory(memory_id).id.hex)
        if row is None:
            raise MemoryNotFound(memory_id)
        return parts.out(row)

    def list(
        self,
        *,
        user: str | None = None,
        layer: str | None = None,
        state: str | None = None,
        namespace: str | None = None,
        order: ListOrder = "id",
        limit: int | None = None,
    ) -> builtins.list[MemoryOut]:
        """`MnemoLedger.list`: current memories, filtered (documented there)."""
        if order not in LIST_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}; got {order!r}")
        if limit is not None and (isinstance(limit, bool) or not 1 <= limit <= MAX_LIST_LIMIT):
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST_LIMIT}; got {limit}")
        self.parts.refresh()
        rows = self.parts.layers.list(user, layer, state)
        if namespace:
            rows = [row for row in rows if row.namespace.startswith(namespace)]
        if order == "access":
            rows.sort(key=lambda row: row.updated_at, reverse=True)
            rows.sort(key=lambda row: -row.access_count)  # stable: ties stay newest first
        return [self.parts.out(row) for row in rows[:limit]]

    def latest(self, *, user: str, limit: int = LATEST_DEFAULT_LIMIT) -> builtins.list[MemoryOut]:
        """`MnemoLedger.latest`: a user's most recently written memories (documented there)."""
        identifier("user", user)
        if isinstance(limit, bool) or not 1 <= limit <= LATEST_MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {LATEST_MAX_LIMIT}; got {limit}")
        self.parts.refresh()
        entries = self.parts.latest_model.latest(user, limit)
        rows = self.parts.layers.get_many([e.id for e in entries])
        return [self.parts.out(rows[e.id]) for e in entries if e.id in rows]

    def search(
        self,
        query: str,
        *,
        user: str,
        k: int = SEARCH_DEFAULT_K,
        fusion: Fusion | None = None,
        min_score: float = SEARCH_MIN_SCORE,
        expand: Expand | bool | None = None,
        rerank: Rerank | bool | None = None,
        at: datetime | None = None,
        namespace: str | None = None,
    ) -> builtins.list[SearchHit]:
        """`MnemoLedger.search`: hybrid search of a user's memories (documented there)."""
        identifier("user", user)
        if not query.strip():
            raise InvalidInput("query is empty")
        if not 1 <= k <= SEARCH_MAX_K:
            raise InvalidInput(f"k must be between 1 and {SEARCH_MAX_K}; got {k}")
        if fusion is not None and fusion not in SEARCH_FUSION_CHOICES:
            choices = ", ".join(SEARCH_FUSION_CHOICES)
            raise InvalidInput(f"fusion must be one of {choices}; got {fusion}")
        parts = self.parts
        hooks = search_hooks(parts, query=query, user=user, expand=expand, rerank=rerank)
        names = parts.user_names
        before = query if names is None else names.asked(query, user, known_only=True)
        early = embed_early(parts.layers, parts.embedder, user, before)
        parts.refresh()
        asked = query if names is None else names.asked(query, user)
        early = early if asked == before else None  # a name's answer moved with the log
        hits = hybrid_search(
            parts.layers,
            parts.vectors,
            parts.embedder,
            asked,
            user,
            k,
            fusion=fusion,
            options=SearchOptions.of(parts.settings),
            min_score=min_score,
            expand=hooks.expand,
            rerank=hooks.rerank,
            expand_always=hooks.expand_always,
            facts=hooks.facts,
            relevance=hooks.relevance,
            replacing=hooks.replacing,
            now=at,
            namespace=None if namespace is None else identifier("namespace", namespace),
            query_vector=query_vector_of(early, parts.layers, parts.embedder, user, asked),
        )
        hooks.finish()
        return hits

    def core(self, *, user: str) -> CoreOut:
        """`MnemoLedger.core`: the user's core.md and its version (documented there)."""
        identifier("user", user)
        self.parts.refresh()
        markdown, version = self.parts.core_model.current(user)
        return CoreOut(
            user_id=user,
            markdown=markdown,
            version=version,
            path=str(self.parts.core_model.path(user)) if version else None,
        )

    def history(self, memory_id: str) -> builtins.list[EventOut]:
        """`MnemoLedger.history`: every event of one memory (documented there)."""
        return [EventOut(**r.as_json()) for r in self.parts.ledger.stream(memory_id)]

    def log(
        self,
        *,
        user: str | None = None,
        since: int = 0,
        event_type: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[EventOut]:
        """`MnemoLedger.log`: the raw event log after a position (documented there)."""
        if since < 0:
            raise InvalidInput("since must be a position >= 0")
        found: builtins.list[EventOut] = []
        after = since
        while limit is None or len(found) < limit:
            page = self.parts.ledger.read(after, 1000)
            if not page:
                break
            for record in page:
                if (user is None or record.user_id == user) and (
                    event_type is None or record.type == event_type
                ):
                    found.append(EventOut(**record.as_json()))
            after = page[-1].position or after
        return found[:limit] if limit is not None else found

    def stats(self) -> Stats:
        """`MnemoLedger.stats`: counts of the log and the read models (documented there)."""
        parts = self.parts
        parts.refresh()
        counts = parts.layers.counts()
        counts["links"] = parts.graph_model.counts()["edges"]
        return Stats(
            events=parts.ledger.last_position(),
            projections={p.name: p.position() for p in parts.runner.projections},
            embedder=parts.embedder.model,
            **counts,
        )
