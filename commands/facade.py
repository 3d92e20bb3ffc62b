"""`MnemoLedger`: the Python API. Every CLI command is one method here.

    from mnemoledger import MnemoLedger

    with MnemoLedger(home="~/.agent-memory", actor="me") as memory:
        result = memory.add(["I moved to Lisbon in May"], user="maya")
        hits = memory.search("where does she live", user="maya")

Writes go to the event log and return at once; reads first bring the read models up to
date with the log (a few milliseconds when nothing changed), so a reader always sees every
acknowledged write.
"""

from __future__ import annotations

import builtins
import getpass
import os
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from mnemoledger.commands.audit.export_api import ExportMixin
from mnemoledger.commands.audit.history_api import HistoryMixin
from mnemoledger.commands.audit.integrity_api import IntegrityMixin
from mnemoledger.commands.audit.replay_api import ReplayMixin
from mnemoledger.commands.audit.report_api import ReportMixin
from mnemoledger.commands.audit.timetravel_api import TimeTravelMixin
from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.lifecycle.consolidate_api import ConsolidateMixin
from mnemoledger.commands.llm import make_provider
from mnemoledger.commands.models import (
    AddResult,
    CoreOut,
    EdgeOut,
    EventOut,
    MemoryOut,
    RebuildResult,
    SearchHit,
    Stats,
    memory_out,
)
from mnemoledger.commands.recall.graph_api import GraphMixin
from mnemoledger.commands.recall.query_api import QueryMixin
from mnemoledger.commands.recall.recall_api import RecallMixin
from mnemoledger.commands.recall.relations import edges_of, update_linked
from mnemoledger.commands.recall.search import DEFAULT_FUSION, Expand, Fusion, Rerank, hybrid_search
from mnemoledger.commands.service.keys_api import KeysMixin
from mnemoledger.commands.service.project_api import ProjectMixin
from mnemoledger.commands.write.add import AddPipeline, AddRequest
from mnemoledger.commands.write.consent_api import ConsentMixin
from mnemoledger.commands.write.ingest_api import IngestMixin
from mnemoledger.commands.write.notes_api import NotesMixin
from mnemoledger.commands.write.sanitize import screen
from mnemoledger.ledger import Ledger, Memory, Provenance, Settings
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound
from mnemoledger.ledger.policy import (
    DEFAULT_IMPORTANCE,
    DEFAULT_KIND,
    DEFAULT_LINK_STRENGTH,
    DEFAULT_LINK_TYPE,
    DEFAULT_SOURCE,
    LATEST_DEFAULT_LIMIT,
    LATEST_MAX_LIMIT,
    LIST_ORDERS,
    MAX_LIST_LIMIT,
    SEARCH_DEFAULT_K,
    SEARCH_FUSIONS,
    SEARCH_MAX_K,
    SEARCH_MIN_SCORE,
    ListOrder,
)
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.core import CoreProjection
from mnemoledger.projections.delta import DeltaProjection
from mnemoledger.projections.embeddings import make_embedder
from mnemoledger.projections.embeddings.cache import CachedEmbedder, EmbeddingCache
from mnemoledger.projections.graph import GraphProjection
from mnemoledger.projections.history import HistoryProjection
from mnemoledger.projections.latest import LatestProjection
from mnemoledger.projections.layers import LayersProjection, MemoryRow
from mnemoledger.projections.runner import Progress, Runner
from mnemoledger.projections.topics import TopicsProjection
from mnemoledger.projections.transcripts import TranscriptsProjection
from mnemoledger.projections.vectors import VectorsProjection

ADD_READS = ("layers", "vectors", "consent")
"""The read models `add` decides from; the others catch up at the next read."""


def default_actor() -> str:
    """Who is acting when nobody says: `$MNEMOLEDGER_ACTOR`, else `cli:<login>`."""
    if actor := os.environ.get("MNEMOLEDGER_ACTOR"):
        return actor
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


class MnemoLedger(
    NotesMixin,
    IngestMixin,
    ConsentMixin,
    QueryMixin,
    GraphMixin,
    RecallMixin,
    ProjectMixin,
    HistoryMixin,
    TimeTravelMixin,
    ReplayMixin,
    ExportMixin,
    ReportMixin,
    KeysMixin,
    ConsolidateMixin,
    IntegrityMixin,
):
    """An agent-memory ledger in one data directory (or on PostgreSQL, by settings)."""

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        actor: str | None = None,
        settings: Settings | None = None,
    ) -> None:
        base = settings or Settings()
        if home is not None:
            base = base.model_copy(update={"home": Path(home).expanduser()})
        self.settings = base
        self.actor = actor or default_actor()
        self.ledger = Ledger(self.settings)
        directory = self.settings.projections_dir
        self.embedder = CachedEmbedder(
            make_embedder(self.settings), EmbeddingCache(self.settings.home / "embeddings.sqlite3")
        )
        self.layers = LayersProjection(directory / "layers.sqlite3")
        self.vectors = VectorsProjection(directory / "vectors", self.embedder)
        self.core_model = CoreProjection(directory / "core")
        self.consent_model = ConsentProjection(directory / "consent")
        self.delta_model = DeltaProjection(directory / "delta")
        self.graph_model = GraphProjection(directory / "graph")
        self.transcripts_model = TranscriptsProjection(directory / "transcripts", self.embedder)
        self.history_model = HistoryProjection(directory / "history")
        self.topics_model = TopicsProjection(directory / "topics")
        self.latest_model = LatestProjection(directory / "latest")
        self.runner = Runner(
            self.ledger,
            [
                self.layers,
                self.vectors,
                self.core_model,
                self.consent_model,
                self.delta_model,
                self.graph_model,
                self.transcripts_model,
                self.history_model,
                self.topics_model,
                self.latest_model,
            ],
            directory / ".lock",
        )
        self.llm = make_provider(self.settings)
        self.add_pipeline = AddPipeline(
            self.ledger,
            self.layers,
            self.vectors,
            self.embedder,
            self.llm,
            self.settings,
            refresh=self._refresh_for_add,
            consent=self.consent_model,
        )

    # --- writes --------------------------------------------------------------------------

    def add(
        self,
        contents: Sequence[str],
        *,
        user: str,
        agent: str | None = None,
        thread: str | None = None,
        kind: str = DEFAULT_KIND,
        tags: Sequence[str] = (),
        source: str = DEFAULT_SOURCE,
        namespace: str = "default",
        importance: float = DEFAULT_IMPORTANCE,
        evidence: Sequence[str] | None = None,
        category: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> AddResult:
        """HAEMA add(): remember one or more contents for `user`.

        The raw input is recorded first; related memories are reconstructed together with
        the new contents in one LLM pass, replaced ones are superseded, near-duplicates are
        reinforced instead of stored twice, and core.md is updated once, all in one atomic
        write. `category` (seed 003 §5) files the new memories under it; an `agent` may only
        name a category of its allowlist (`CategoryNotWritable`, before anything is
        written). `metadata` is kept on every new memory."""
        if isinstance(contents, str):
            contents = [contents]
        category = self.categories_config.check_write(agent, category)
        self._refresh_for_add()
        request = AddRequest(
            contents=list(contents),
            kind=kind,
            tags=tuple(tags),
            source=source,
            namespace=namespace,
            importance=importance,
            evidence=evidence,
            category=category,
            metadata=metadata,
        )
        outcome = self.add_pipeline.run(request, self._provenance(user, agent, thread))
        return AddResult(
            command_id=outcome.command_id,
            memories=[memory_out(m) for m in outcome.added],
            superseded=outcome.superseded,
            reinforced=[memory_out(m) for m in outcome.reinforced],
            core_updated=outcome.core_updated,
            fallback=outcome.fallback,
            llm_calls=outcome.llm_calls,
        )

    def core(self, *, user: str) -> CoreOut:
        """The user's core.md (HAEMA core layer) and its version number."""
        identifier("user", user)
        self.refresh()
        markdown, version = self.core_model.current(user)
        return CoreOut(
            user_id=user,
            markdown=markdown,
            version=version,
            path=str(self.core_model.path(user)) if version else None,
        )

    def update(
        self,
        memory_id: str,
        content: str,
        *,
        tags: Sequence[str] | None = None,
        agent: str | None = None,
        thread: str | None = None,
    ) -> MemoryOut:
        """Replace a memory's content (UPDATE); it links to the memories its new content is
        close to, and core.md follows, in the same save."""
        provenance = self._provenance("", agent, thread)
        self.refresh()
        memory = update_linked(
            self.ledger, provenance, memory_id, screen(content), tags, self.embedder, self.vectors
        )
        return self._current(memory)

    def link(
        self,
        source_id: str,
        target_id: str,
        *,
        link_type: str = DEFAULT_LINK_TYPE,
        strength: float = DEFAULT_LINK_STRENGTH,
        agent: str | None = None,
    ) -> EdgeOut:
        """Relate two memories of the same user (LINK)."""
        memory = self.ledger.link(
            self._provenance("", agent, None), source_id, target_id, link_type, strength
        )
        target = self.ledger.memory(target_id).id.hex
        edge = memory.links[target]
        return EdgeOut(
            from_id=memory.id.hex, to=target, type=edge["type"], strength=edge["strength"]
        )

    def ttl(
        self, memory_id: str, days: float, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """Make a memory expire after `days` (TTL); a `thread` sees it in its delta."""
        memory = self.ledger.set_ttl(self._provenance("", agent, thread), memory_id, days)
        return self._current(memory)

    def forget(
        self, memory_id: str, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """Soft-delete a memory; its history stays and `restore` brings it back; core.md
        drops what rested only on it, in the same save; a `thread` sees it in its delta."""
        memory = core_sync.forget(self.ledger, self._provenance("", agent, thread), memory_id)
        return self._current(memory)

    def restore(
        self, memory_id: str, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """Bring back a soft-deleted memory (RESTORE); a `thread` sees it in its delta."""
        memory = self.ledger.restore(self._provenance("", agent, thread), memory_id)
        return self._current(memory)

    # --- reads ---------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryOut:
        """One memory, current state."""
        self.refresh()
        row = self.layers.get(self.ledger.memory(memory_id).id.hex)
        if row is None:
            raise MemoryNotFound(memory_id)
        return self._out(row)

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
        """Current memories filtered by user, layer, state and `namespace` (a prefix:
        `tacit` lists `tacit/preferences` too); ordered by id, or with `order="access"`
        most often served first (then most recently changed); at most `limit`."""
        if order not in LIST_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}; got {order!r}")
        if limit is not None and (isinstance(limit, bool) or not 1 <= limit <= MAX_LIST_LIMIT):
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST_LIMIT}; got {limit}")
        self.refresh()
        rows = self.layers.list(user, layer, state)
        if namespace:
            rows = [row for row in rows if row.namespace.startswith(namespace)]
        if order == "access":
            rows.sort(key=lambda row: row.updated_at, reverse=True)
            rows.sort(key=lambda row: -row.access_count)  # stable: ties stay newest first
        return [self._out(row) for row in rows[:limit]]

    def latest(self, *, user: str, limit: int = LATEST_DEFAULT_LIMIT) -> builtins.list[MemoryOut]:
        """HAEMA `get_latest`: the user's `limit` most recently written active memories
        (added, updated or merged), newest first."""
        identifier("user", user)
        if isinstance(limit, bool) or not 1 <= limit <= LATEST_MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {LATEST_MAX_LIMIT}; got {limit}")
        self.refresh()
        entries = self.latest_model.latest(user, limit)
        rows = self.layers.get_many([e.id for e in entries])
        return [self._out(rows[e.id]) for e in entries if e.id in rows]

    def search(
        self,
        query: str,
        *,
        user: str,
        k: int = SEARCH_DEFAULT_K,
        fusion: Fusion = DEFAULT_FUSION,
        min_score: float = SEARCH_MIN_SCORE,
        expand: Expand | None = None,
        rerank: Rerank | None = None,
        at: datetime | None = None,
    ) -> builtins.list[SearchHit]:
        """Hybrid search (FAISS vectors + FTS5 keywords, `fusion` "rrf" or "weighted")
        ranked by engram's recall score; see `commands.search`. Recency and expiry are
        judged at `at` (default: now), which makes results reproducible."""
        identifier("user", user)
        if not query.strip():
            raise InvalidInput("query is empty")
        if not 1 <= k <= SEARCH_MAX_K:
            raise InvalidInput(f"k must be between 1 and {SEARCH_MAX_K}; got {k}")
        if fusion not in SEARCH_FUSIONS:
            raise InvalidInput(f"fusion must be one of {', '.join(SEARCH_FUSIONS)}; got {fusion}")
        self.refresh()
        return hybrid_search(
            self.layers,
            self.vectors,
            self.embedder,
            query,
            user,
            k,
            fusion=fusion,
            min_score=min_score,
            expand=expand,
            rerank=rerank,
            now=at,
        )

    def history(self, memory_id: str) -> builtins.list[EventOut]:
        """Every event of one memory, oldest first."""
        return [EventOut(**r.as_json()) for r in self.ledger.stream(memory_id)]

    def log(
        self,
        *,
        user: str | None = None,
        since: int = 0,
        event_type: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[EventOut]:
        """The raw event log after position `since`, filtered by user and event type."""
        if since < 0:
            raise InvalidInput("since must be a position >= 0")
        found: builtins.list[EventOut] = []
        after = since
        while limit is None or len(found) < limit:
            page = self.ledger.read(after, 1000)
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
        """Counts of the log and the read models."""
        self.refresh()
        counts = self.layers.counts()
        counts["links"] = self.graph_model.counts()["edges"]
        return Stats(
            events=self.ledger.last_position(),
            projections={p.name: p.position() for p in self.runner.projections},
            embedder=self.embedder.model,
            **counts,
        )

    # --- read models ---------------------------------------------------------------------

    def refresh(self, progress: Progress | None = None) -> int:
        """Bring the read models up to date with the log; returns events processed."""
        return self.runner.catch_up(progress)

    def _refresh_for_add(self) -> int:
        """Bring up to date only the read models an add decides from (its duplicates and
        related memories, the consent requests already made): the others (graph, delta,
        history, topics, transcripts, core files, latest) follow the add's events at the
        next read that catches up, off the add's path."""
        return self.runner.catch_up(names=ADD_READS)

    def rebuild(
        self, projection: str | None = None, progress: Progress | None = None
    ) -> RebuildResult:
        """Drop read models (one, or all) and replay them from position 0."""
        names = [p.name for p in self.runner.projections]
        if projection is not None and projection not in names:
            raise InvalidInput(f"unknown projection {projection!r}; choose from {', '.join(names)}")
        chosen = [projection] if projection else names
        started = time.perf_counter()
        events = self.runner.rebuild(chosen, progress)
        return RebuildResult(
            projections=chosen, events=events, seconds=round(time.perf_counter() - started, 3)
        )

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        self.runner.close()
        self.embedder.close()
        self.ledger.close()

    def __enter__(self) -> MnemoLedger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- internals -----------------------------------------------------------------------

    def _provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance:
        return Provenance(
            user_id=user,
            actor=self.actor,
            agent_id=identifier("agent", agent, required=False),
            thread_id=identifier("thread", thread, required=False),
        )

    def _current(self, memory: Memory) -> MemoryOut:
        self.refresh()
        row = self.layers.get(memory.id.hex)
        if row is None:  # pragma: no cover - the refresh above guarantees the row
            raise MemoryNotFound(memory.id.hex)
        return self._out(row)

    def _out(self, row: MemoryRow) -> MemoryOut:
        return MemoryOut(**row.as_json(), links=edges_of(self.graph_model, row.id))
