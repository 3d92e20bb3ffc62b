"""`MnemoLedger`: the Python API. Every CLI command is one method here.

    from mnemoledger import MnemoLedger

    with MnemoLedger(home="~/.agent-memory", actor="me") as memory:
        result = memory.add(["I moved to Lisbon in May"], user="maya")
        hits = memory.search("where does she live", user="maya")

Writes go to the event log and return at once; reads first bring the read models up to
date with the log (a few milliseconds when nothing changed), so a reader always sees every
acknowledged write.

The class is a table of contents: `__init__` builds the shared `Parts` (the log, the read
models, the LLM provider, ...) and one object per capability over them (those a short-lived
process seldom uses are built on first use, their modules imported then); each public verb
below is a method with the capability method's parameters and the verb's docstring, and
calls that method (`add` runs `self._writes.add`; `Writes.add` points back here for its
documentation). tests/test_facade_verbs.py checks that each verb's signature is its
capability method's. A capability that uses another one receives it in its constructor.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from mnemoledger.commands.audit.export_api import Export
from mnemoledger.commands.audit.history_api import History
from mnemoledger.commands.audit.integrity_api import Integrity
from mnemoledger.commands.audit.replay_api import Replay
from mnemoledger.commands.audit.timetravel_api import TimeTravel
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.parts import Parts, part
from mnemoledger.commands.recall.facts_api import DEFAULT_FACT_HOPS, DEFAULT_FACTS_LIMIT, Facts
from mnemoledger.commands.recall.graph_api import Graph
from mnemoledger.commands.recall.reads_api import Reads
from mnemoledger.commands.service.keys import ApiKeyStore
from mnemoledger.commands.service.keys_api import Keys
from mnemoledger.commands.service.project_api import Project
from mnemoledger.commands.write.add import AddPipeline
from mnemoledger.commands.write.add_later import PENDING_ADD_GRACE_SECONDS
from mnemoledger.commands.write.categories import CategoriesConfig
from mnemoledger.commands.write.checkpoints_api import CHECKPOINTS_DEFAULT_LIMIT, Checkpoints
from mnemoledger.commands.write.commands_api import Commands
from mnemoledger.commands.write.consent import ConsentService
from mnemoledger.commands.write.consent_api import Consent
from mnemoledger.commands.write.ingest import STORE_SOURCE
from mnemoledger.commands.write.ingest_api import Ingest
from mnemoledger.commands.write.notes import (
    DEFAULT_NOTE_CONFIDENCE,
    DEFAULT_NOTE_SCOPE,
    DEFAULT_NOTES_LIMIT,
)
from mnemoledger.commands.write.notes_api import Notes
from mnemoledger.commands.write.writes_api import Writes
from mnemoledger.ledger import Ledger, Settings
from mnemoledger.ledger.policy import (
    AUDIT_SANDBOX_GUARDS,
    DEFAULT_IMPORTANCE,
    DEFAULT_KIND,
    DEFAULT_LINK_STRENGTH,
    DEFAULT_LINK_TYPE,
    DEFAULT_SOURCE,
    EXTRACTION_IDLE_SECONDS,
    LATEST_DEFAULT_LIMIT,
    NORMAL,
    QUERY_DEFAULT_RETURN,
    QUERY_DEFAULT_TOP_K,
    RELATED_BULLETS_MAX,
    RESUME_RECENT_HOURS,
    SEARCH_DEFAULT_K,
    SEARCH_MIN_SCORE,
    TOPIC_REBUILD_QUIET_SECONDS,
)
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.core import CoreProjection
from mnemoledger.projections.delta import DeltaProjection
from mnemoledger.projections.embeddings.cache import CachedEmbedder
from mnemoledger.projections.flushes import FlushGuard
from mnemoledger.projections.graph import GraphProjection
from mnemoledger.projections.history import HistoryProjection
from mnemoledger.projections.latest import LatestProjection
from mnemoledger.projections.layers import LayersProjection
from mnemoledger.projections.runner import FOLLOW_POLL_SECONDS, Runner
from mnemoledger.projections.topics import TopicsProjection
from mnemoledger.projections.transcripts import TranscriptsProjection
from mnemoledger.projections.vectors import VectorsProjection

if TYPE_CHECKING:
    import builtins
    import threading
    from collections.abc import Iterator, Mapping, Sequence
    from contextlib import AbstractContextManager
    from typing import Any

    from mnemoledger.commands.audit.diff import DiffReport
    from mnemoledger.commands.audit.export_api import ExportResult, ImportResult
    from mnemoledger.commands.audit.history_api import HistoryEntry
    from mnemoledger.commands.audit.integrity_api import ErasureResult, SealOut, VerifyResult
    from mnemoledger.commands.audit.replay import ReplayOptions, ReplayResult
    from mnemoledger.commands.audit.replay.engine import Mode
    from mnemoledger.commands.audit.report import Report
    from mnemoledger.commands.audit.report_api import Reports
    from mnemoledger.commands.audit.timepoints import Point
    from mnemoledger.commands.lifecycle.consolidate_api import (
        Consolidate,
        ConsolidateResult,
        TopicDetail,
        TopicsResult,
    )
    from mnemoledger.commands.lifecycle.consolidation import ConsolidationPipeline
    from mnemoledger.commands.models import (
        AddResult,
        CommandOut,
        CoreOut,
        EdgeOut,
        EventOut,
        MemoryOut,
        RebuildResult,
        SearchHit,
        Stats,
    )
    from mnemoledger.commands.recall.agent_profile_api import AgentProfileOut, AgentProfiles
    from mnemoledger.commands.recall.context import AgentContext
    from mnemoledger.commands.recall.facts_api import FactExtraction, FactOut
    from mnemoledger.commands.recall.query import QueryRequest, QueryResult
    from mnemoledger.commands.recall.query_api import DeltaOut, Query
    from mnemoledger.commands.recall.recall_api import Recall, TranscriptHit
    from mnemoledger.commands.recall.resume import ResumeOut, Topic
    from mnemoledger.commands.recall.search import Expand, Fusion, Rerank
    from mnemoledger.commands.service.keys import IssuedKey, KeyInfo, Principal
    from mnemoledger.commands.service.project_api import ProjectResult
    from mnemoledger.commands.write.checkpoints_api import CheckpointInfo, CheckpointOut
    from mnemoledger.commands.write.commands_api import PendingAddOut, ProcessedAdd
    from mnemoledger.commands.write.consent import ConsentOut, ProposalOutcome
    from mnemoledger.commands.write.ingest import Turn
    from mnemoledger.commands.write.ingest_api import IngestResult, StoreResult, TurnsSource
    from mnemoledger.commands.write.notes_api import NoteResult
    from mnemoledger.commands.write.turn_queue_api import (
        QueuedExtraction,
        QueuedOut,
        QueuedThreadOut,
        TurnQueue,
    )
    from mnemoledger.ledger import Provenance
    from mnemoledger.ledger.policy import ListOrder
    from mnemoledger.projections.runner import Progress


# Replay, diff and time travel load the replay engine (every stage and the consolidation
# pipeline), DuckDB and a scratch ledger: imported when one runs, not when a facade opens.


def replay(
    live: MnemoLedger, into: Path, options: ReplayOptions, progress: Progress | None
) -> ReplayResult:
    """`commands.audit.replay.replay`, imported on first use."""
    from mnemoledger.commands.audit.replay import replay as run

    return run(live, into, options, progress)


def diff_ledgers(a: MnemoLedger, b: MnemoLedger, user: str | None) -> DiffReport:
    """`commands.audit.diff.diff_ledgers`, imported on first use."""
    from mnemoledger.commands.audit.diff import diff_ledgers as compare

    return compare(a, b, user)


def read_models_at(
    live: MnemoLedger, point: str | int | Point, extra: Sequence[str] = ()
) -> AbstractContextManager[MnemoLedger]:
    """`commands.audit.timetravel.read_models_at`, imported on first use."""
    from mnemoledger.commands.audit.timetravel import read_models_at as view_at

    return view_at(live, point, extra)


def default_actor() -> str:
    """Who is acting when nobody says: `$MNEMOLEDGER_ACTOR`, else `cli:<login>`."""
    if actor := os.environ.get("MNEMOLEDGER_ACTOR"):
        return actor
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


class MnemoLedger:
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
        self.parts = parts = Parts(base, actor or default_actor())
        self._writes = Writes(parts)
        self._notes = Notes(parts)
        self._ingest = Ingest(parts)
        self._consent = Consent(parts)
        self._reads = Reads(parts)
        self._graph = Graph(parts)
        self._facts = Facts(parts)
        self._history = History(parts)
        self._time_travel = TimeTravel(parts, self, read_models_at)
        self._replay = Replay(parts, self, run=replay, compare=diff_ledgers, reopen=self._reopen)
        self._export = Export(parts)
        self._integrity = Integrity(parts)
        self._project = Project(parts)
        self._keys = Keys(parts)
        self._checkpoints = Checkpoints(parts)
        self._commands = Commands(parts)

    # The capabilities below are built, and their modules imported, on first use: a
    # short-lived process (a CLI `add`, `search`, `stats`) does not load query, recall,
    # consolidation, agent profiles, the turn queue and reports (~0.07 s of CPU).

    @cached_property
    def _query(self) -> Query:
        from mnemoledger.commands.recall.query_api import Query

        return Query(self.parts)

    @cached_property
    def _agent_profiles(self) -> AgentProfiles:
        from mnemoledger.commands.recall.agent_profile_api import AgentProfiles

        return AgentProfiles(self.parts)

    @cached_property
    def _recall(self) -> Recall:
        from mnemoledger.commands.recall.recall_api import Recall

        return Recall(self.parts, self._reads)

    @cached_property
    def _consolidate(self) -> Consolidate:
        from mnemoledger.commands.lifecycle.consolidate_api import Consolidate

        return Consolidate(self.parts)

    @cached_property
    def _reports(self) -> Reports:
        from mnemoledger.commands.audit.report_api import Reports

        return Reports(self.parts)

    @cached_property
    def _turn_queue(self) -> TurnQueue:
        from mnemoledger.commands.write.turn_queue_api import TurnQueue

        return TurnQueue(self.parts)

    def _reopen(self, settings: Settings) -> MnemoLedger:
        """Another ledger like this one (a scratch home, another home to compare with)."""
        return type(self)(settings=settings, actor=self.actor)

    # --- writes (commands/write) ---------------------------------------------------------

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
        role: str = "user",
        keep_all: bool = False,
        at: datetime | str | None = None,
        wait: bool = True,
    ) -> AddResult:
        """Remember one or more contents for `user`.

        The raw input is recorded first; related memories are reconstructed together with
        the new contents in one LLM pass, replaced ones are superseded, near-duplicates are
        reinforced instead of stored twice, and core.md is updated once, all in one atomic
        write. `category` files the new memories under it; an `agent` may only
        name a category of its allowlist (`CategoryNotWritable`, before anything is
        written). `metadata` is kept on every new memory.

        `role` says who wrote the contents (`user`, `assistant`, `tool`, `document`): the
        injection screen reads an assistant's advice to the user as advice, not as an
        instruction to the model. Pieces that are not worth keeping (greetings, thanks,
        acknowledgements, questions) are not stored and come back in `not_kept`, unless
        `keep_all`.

        `at` is when the contents were said, for importing a chat history or notes: an
        aware `datetime` or ISO-8601 text with its zone (`"2024-05-01T09:00:00Z"`); None
        is now. A time without a zone, or one in the future (beyond a few seconds of clock
        skew), is refused (`InvalidInput`). Each event keeps its own timestamp, when it
        was recorded; the time said is kept beside it (`said_at` on the request and on
        every memory the add writes or restatement it reinforces), and the memories'
        `created_at` and `updated_at` are that time, so recency, `list`, `get`, `history`
        and search show when it was said. A memory said later than `at` is never
        replaced by it: the older statement is stored beside it.

        With `wait=False` the call returns once the request is recorded (durable in the
        log), with its `command_id`, `pending=True` and no memories; the stages then run in
        a background thread of this process (closing the ledger waits for them), or, if the
        process stops first, in the next `mnemoledger worker` or `serve` on the log. Every
        later read of this process first waits for the adds it is still processing, so it
        sees them; `command(command_id)` tells whether an add is done and what it did.
        Input is checked before anything is recorded, so a refused input still raises
        here; a refusal the stages make (an instruction to the model) is recorded on the
        command as `failed`."""
        return self._writes.add(
            contents,
            user=user,
            agent=agent,
            thread=thread,
            kind=kind,
            tags=tags,
            source=source,
            namespace=namespace,
            importance=importance,
            evidence=evidence,
            category=category,
            metadata=metadata,
            role=role,
            keep_all=keep_all,
            at=at,
            wait=wait,
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
        return self._writes.update(memory_id, content, tags=tags, agent=agent, thread=thread)

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
        return self._writes.link(
            source_id, target_id, link_type=link_type, strength=strength, agent=agent
        )

    def ttl(
        self, memory_id: str, days: float, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """Make a memory expire after `days` (TTL); a `thread` sees it in its delta."""
        return self._writes.ttl(memory_id, days, agent=agent, thread=thread)

    def forget(
        self, memory_id: str, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """Soft-delete a memory; its history stays and `restore` brings it back; core.md
        drops what rested only on it, in the same save; a `thread` sees it in its delta."""
        return self._writes.forget(memory_id, agent=agent, thread=thread)

    def restore(
        self, memory_id: str, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """Bring back a soft-deleted memory (RESTORE); a `thread` sees it in its delta."""
        return self._writes.restore(memory_id, agent=agent, thread=thread)

    def write_note(
        self,
        content: str,
        *,
        user: str,
        kind: str,
        stability: str | None = None,
        ttl_days: float | None = None,
        sensitivity: str = NORMAL,
        evidence: Sequence[str] = (),
        confidence: float = DEFAULT_NOTE_CONFIDENCE,
        tags: Sequence[str] = (),
        scope: str = DEFAULT_NOTE_SCOPE,
        source: str = DEFAULT_SOURCE,
        agent: str | None = None,
        thread: str | None = None,
        category: str | None = None,
        job_id: str | None = None,
    ) -> NoteResult:
        """writeNote: save one note of `kind` (log, summary, rule, soul, agent, user).

        a volatile note without `ttl_days` is merged with others after a week,
        permanent refuses `ttl_days`; a rule needs evidence and
        confidence 0.8+; a soul, agent or user note supersedes the user's previous one.
        `category` files the note under it (default: derived from the kind);
        an `agent` some allowlist names may only name one of its allowlist; `job_id`
        names the job or run that wrote it (kept in the note's metadata).
        The request is recorded first, so a refused injection still leaves its trace."""
        return self._notes.write_note(
            content,
            user=user,
            kind=kind,
            stability=stability,
            ttl_days=ttl_days,
            sensitivity=sensitivity,
            evidence=evidence,
            confidence=confidence,
            tags=tags,
            scope=scope,
            source=source,
            agent=agent,
            thread=thread,
            category=category,
            job_id=job_id,
        )

    def merge_notes(
        self, note_ids: Sequence[str], *, agent: str | None = None, thread: str | None = None
    ) -> NoteResult:
        """mergeNotes: 2+ active notes of one user become one `summary` note (one recorded
        LLM call); the originals are superseded by it in the same write."""
        return self._notes.merge_notes(note_ids, agent=agent, thread=thread)

    def supersede_note(
        self, note_id: str, *, by: str, agent: str | None = None, thread: str | None = None
    ) -> NoteResult:
        """Mark an active note as replaced by another active note of the same user, by hand;
        it is kept in history but no longer listed. `note` in the result is `by`."""
        return self._notes.supersede_note(note_id, by=by, agent=agent, thread=thread)

    def ingest(
        self,
        path_or_turns: TurnsSource,
        *,
        user: str,
        agent: str | None = None,
        thread: str | None = None,
        multi_fact: bool = False,
        now: datetime | None = None,
        progress: Progress | None = None,
        flush: bool = False,
        compaction: int | None = None,
    ) -> IngestResult:
        """Extract durable facts from a conversation and store them for `user`.

        The turns are recorded first; one extraction per user turn over its last 6
        messages; preferences, entities, decisions (daily/<date>), styles and artifacts
        land in their namespaces (tacit/, entity/, daily/); styles are reinforced,
        duplicates skipped, changed
        values updated, injections refused (each with a reason); the personality directive
        is re-synthesized from 3+ live style observations. `multi_fact` adds the
        pass over long user turns. `now` is the ingest time (decay, style timestamps,
        undated decisions); default the current UTC time. Everything is one atomic write.
        A malformed file raises `InvalidInput` naming the line, before anything is written.

        `flush=True` with `thread` and `compaction` (how many times the caller compacted the
        thread so far): the turns are all the thread's messages, extracted once more before
        it compacts them. At most one flush runs per compaction count: when the thread was
        already flushed at `compaction` or later, nothing runs or is recorded and
        `result.flush.ran` is False with the reason. A fact already held is not reinforced
        by a flush (its messages were seen before).
        """
        return self._ingest.ingest(
            path_or_turns,
            user=user,
            agent=agent,
            thread=thread,
            multi_fact=multi_fact,
            now=now,
            progress=progress,
            flush=flush,
            compaction=compaction,
        )

    def store(
        self,
        key: str,
        value: str,
        *,
        user: str,
        namespace: str = "default",
        tags: Sequence[str] = (),
        agent: str | None = None,
        thread: str | None = None,
        source: str = STORE_SOURCE,
        now: datetime | None = None,
    ) -> StoreResult:
        """Store `value` under `key` in `namespace` for `user` (an upsert, one recorded
        write): a new key is a new memory; the same key with the same value changes
        nothing (`action` "unchanged"); a new value updates the key's memory, whose history
        keeps the old one. Keys are normalized (lowercase, `_` and spaces to `-`); a key
        longer than 128 characters, a value longer than 2048 or a value that looks like an
        instruction to the assistant raises `InvalidInput`. Keys under `tacit/user` (name,
        location, timezone, occupation, ...) feed `profile(user)`."""
        return self._ingest.store(
            key,
            value,
            user=user,
            namespace=namespace,
            tags=tags,
            agent=agent,
            thread=thread,
            source=source,
            now=now,
        )

    def queue_turns(
        self,
        turns: Sequence[Turn | Mapping[str, Any]],
        *,
        user: str,
        thread: str,
        agent: str | None = None,
    ) -> QueuedOut:
        """Hand over a thread's newest turns (`{"role","content","ts"?,"id"?}`) for
        extraction once the thread has been quiet for 5 seconds. They are in the log when
        this returns; nothing is extracted yet. Malformed turns raise `InvalidInput`
        naming the turn, before anything is recorded."""
        return self._turn_queue.queue_turns(turns, user=user, thread=thread, agent=agent)

    def extract_queued(
        self,
        *,
        now: datetime | None = None,
        idle_seconds: float = EXTRACTION_IDLE_SECONDS,
        user: str | None = None,
    ) -> builtins.list[QueuedExtraction]:
        """Extract the waiting turns of every thread quiet for `idle_seconds` (0: every
        thread now), one ingest per thread, oldest wait first. A failed extraction is
        reported (and recorded on its command) and does not stop the others."""
        return self._turn_queue.extract_queued(now=now, idle_seconds=idle_seconds, user=user)

    def process_pending_adds(
        self,
        *,
        user: str | None = None,
        older_than_seconds: float = PENDING_ADD_GRACE_SECONDS,
        now: datetime | None = None,
    ) -> builtins.list[ProcessedAdd]:
        """Process here, oldest first, the pending adds recorded at least
        `older_than_seconds` ago (0: all of them), but those this process is already
        processing. An add another process decides meanwhile is not decided twice. A
        failed add is reported (and recorded on its command) and does not stop the
        others."""
        return self._commands.process_pending_adds(
            user=user, older_than_seconds=older_than_seconds, now=now
        )

    def propose_consent(
        self,
        *,
        user: str,
        field: str,
        value: str,
        signals: int = 1,
        reason: str = "",
        agent: str | None = None,
        thread: str | None = None,
        now: datetime | None = None,
        tom_confidence: float | None = None,
    ) -> ProposalOutcome:
        """Propose setting a profile field: sensitive fields wait for consent (7 days);
        benign ones apply at once when corroborated by >= 2 signals, counting the signals
        of earlier pending proposals of the same value, or when a theory-of-mind insight
        proposes them with `tom_confidence` >= 0.8."""
        return self._consent.propose_consent(
            user=user,
            field=field,
            value=value,
            signals=signals,
            reason=reason,
            agent=agent,
            thread=thread,
            now=now,
            tom_confidence=tom_confidence,
        )

    def grant_consent(
        self, request_id: str, *, agent: str | None = None, now: datetime | None = None
    ) -> ConsentOut:
        """Consent to a pending request: its patch applies (ConsentGranted)."""
        return self._consent.grant_consent(request_id, agent=agent, now=now)

    def deny_consent(
        self, request_id: str, *, reason: str = "", agent: str | None = None
    ) -> ConsentOut:
        """Refuse a pending request: its patch never applies (ConsentDenied)."""
        return self._consent.deny_consent(request_id, reason=reason, agent=agent)

    def expire_consents(
        self, *, now: datetime | None = None, agent: str | None = None
    ) -> builtins.list[ConsentOut]:
        """Expire every pending request whose 7-day window is over (ConsentExpired)."""
        return self._consent.expire_consents(now=now, agent=agent)

    def save_checkpoint(
        self, user: str, thread: str, data: Mapping[str, Any], *, agent: str | None = None
    ) -> CheckpointOut:
        """Save `data` (a JSON object of at most MAX_CHECKPOINT_BYTES) as the thread's
        newest checkpoint: one `CheckpointSaved` event; the earlier ones stay in the log."""
        return self._checkpoints.save_checkpoint(user, thread, data, agent=agent)

    # --- recall (commands/recall) --------------------------------------------------------

    def get(self, memory_id: str) -> MemoryOut:
        """One memory, current state."""
        return self._reads.get(memory_id)

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
        return self._reads.list(
            user=user, layer=layer, state=state, namespace=namespace, order=order, limit=limit
        )

    def latest(self, *, user: str, limit: int = LATEST_DEFAULT_LIMIT) -> builtins.list[MemoryOut]:
        """The user's `limit` most recently written active memories
        (added, updated or merged), newest first."""
        return self._reads.latest(user=user, limit=limit)

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
        """Hybrid search (FAISS vectors + FTS5 keywords, `fusion` "rrf", "weighted" or
        "engram"; default: the setting `search_fusion`) ranked by the recall score;
        see `commands.search`. Recency and expiry are
        judged at `at` (default: now), which makes results reproducible. With `namespace`,
        only that namespace's memories and the shared `default` ones. `expand`: True asks
        the LLM for alternative phrasings and searches them too, False never, None when
        the best match is below 0.25 (setting `search_expand`: auto); `rerank=True` lets
        the LLM reorder the results. LLM calls are recorded on a
        `SearchRequested` command; nothing else is written."""
        return self._reads.search(
            query,
            user=user,
            k=k,
            fusion=fusion,
            min_score=min_score,
            expand=expand,
            rerank=rerank,
            at=at,
            namespace=namespace,
        )

    def core(self, *, user: str) -> CoreOut:
        """The user's core.md (the core layer) and its version number."""
        return self._reads.core(user=user)

    def history(self, memory_id: str) -> builtins.list[EventOut]:
        """Every event of one memory, oldest first."""
        return self._reads.history(memory_id)

    def log(
        self,
        *,
        user: str | None = None,
        since: int = 0,
        event_type: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[EventOut]:
        """The raw event log after position `since`, filtered by user and event type."""
        return self._reads.log(user=user, since=since, event_type=event_type, limit=limit)

    def stats(self) -> Stats:
        """Counts of the log and the read models."""
        return self._reads.stats()

    def notes(
        self,
        user: str,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int = DEFAULT_NOTES_LIMIT,
        *,
        scope: str | None = None,
        now: datetime | None = None,
    ) -> builtins.list[MemoryOut]:
        """getNotes: active, unexpired, unsuperseded notes of `user`, newest first; `tags`
        match any (OR); sensitive notes are included with `sensitivity="sensitive"`."""
        return self._notes.notes(user, kind, tags, limit, scope=scope, now=now)

    def profile(self, user: str) -> dict[str, str]:
        """The user's profile (display_name, location,
        timezone, ...) from the latest active memory of each mapped key in `tacit/user` (or
        `user/<key>` in the tacit layer). Derived from the log; nothing else is stored.
        Sensitive columns (display_name, location, pronouns, language) come from granted
        consent requests only."""
        return self._ingest.profile(user)

    def consents(
        self, *, user: str | None = None, status: str | None = None
    ) -> builtins.list[ConsentOut]:
        """Consent requests in log order, filtered by user and status."""
        return self._consent.consents(user=user, status=status)

    def profile_fields(self, *, user: str) -> dict[str, str]:
        """The user's applied profile fields: granted patches only."""
        return self._consent.profile_fields(user=user)

    def memory_query(self, request: QueryRequest | Mapping[str, Any]) -> QueryResult:
        """Seed 003 §6 as a tool call: `{"agent", "query", "categories", "filters": {"user_id",
        ...}, "top_k", "return", "budget_tokens", "threshold", "thread", "since_rev"}`, and
        the search's `fusion`, `expand`, `rerank` and `dry`."""
        return self._query.memory_query(request)

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
        """`memory.query` for `agent` over `user`'s memories: allowlist enforced first, then
        the delta header (with `thread`) and the results, as bullets or full memories,
        within `budget_tokens`. `filters` takes the other keys (agent_id, run_id, actor_id,
        role, category, pinned, importance_min/max on the 1-5 scale when a bound is above
        1 else 0-1, importance_scale, updated_after/before). `fusion` (rrf, weighted,
        engram), `expand`, `rerank` and `dry` steer the search: `dry`
        counts no access; otherwise results with relevance above 0.5 are touched."""
        return self._query.query(
            query,
            agent=agent,
            user=user,
            categories=categories,
            filters=filters,
            top_k=top_k,
            return_mode=return_mode,
            budget_tokens=budget_tokens,
            threshold=threshold,
            thread=thread,
            since_rev=since_rev,
            fusion=fusion,
            expand=expand,
            rerank=rerank,
            dry=dry,
        )

    def delta(
        self,
        thread: str,
        since: int | None = None,
        *,
        agent: str | None = None,
        user: str | None = None,
    ) -> DeltaOut:
        """The delta header of `thread` since revision `since`; without `since`, since the
        revision `agent` was last served there (with `agent`), else since rev 0. `agent`
        limits it to the agent's allowlist, `user` to one user's memories."""
        return self._query.delta(thread, since, agent=agent, user=user)

    def delta_changes(self, thread: str, since: int = 0) -> builtins.list[dict[str, Any]]:
        """The kept change-log rows of `thread` after `since`, newest first (for audits)."""
        return self._query.delta_changes(thread, since)

    def graph_edges(
        self,
        *,
        user: str,
        memory: str | None = None,
        min_strength: float = 0.0,
        active_only: bool = True,
    ) -> builtins.list[EdgeOut]:
        """The relations of `user` (each pair once, strongest first), or only those of
        `memory` (oriented from it), with strength >= `min_strength`; by default only
        edges whose both ends are active (not superseded, not forgotten)."""
        return self._graph.graph_edges(
            user=user, memory=memory, min_strength=min_strength, active_only=active_only
        )

    def related_edges(
        self, memory: str, *, limit: int = RELATED_BULLETS_MAX
    ) -> builtins.list[EdgeOut]:
        """The `limit` strongest relations of `memory` to active memories."""
        return self._graph.related_edges(memory, limit=limit)

    def state_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        memory: str,
        valid_from: str | None = None,
        keep_others: bool = False,
        agent: str | None = None,
        thread: str | None = None,
    ) -> FactOut:
        """Record that `memory` states `subject predicate object`, holding from `valid_from`
        (default now). The user's facts of the same subject and predicate that hold then
        end there, superseded by it, unless `keep_others` (a predicate that holds several
        objects at once, such as `likes`). The same fact stated again is returned as is."""
        return self._facts.state_fact(
            subject,
            predicate,
            object,
            memory=memory,
            valid_from=valid_from,
            keep_others=keep_others,
            agent=agent,
            thread=thread,
        )

    def end_fact(
        self,
        fact_id: str,
        *,
        valid_until: str | None = None,
        agent: str | None = None,
        thread: str | None = None,
    ) -> FactOut:
        """Say a fact stopped holding at `valid_until` (default now); it stays in history
        and in `facts(at=...)` for the time it held."""
        return self._facts.end_fact(fact_id, valid_until=valid_until, agent=agent, thread=thread)

    def extract_facts(
        self, memory: str, *, agent: str | None = None, thread: str | None = None
    ) -> FactExtraction:
        """Run the fact-extract stage over one active memory and state each triple it finds;
        the call is recorded on a `FactExtractRequested` command. A predicate that holds one
        object at a time (lives_in, works_at, ...) ends the user's earlier fact of it; the
        others add up."""
        return self._facts.extract_facts(memory, agent=agent, thread=thread)

    def facts(
        self,
        *,
        user: str,
        entity: str | None = None,
        predicate: str | None = None,
        hops: int = DEFAULT_FACT_HOPS,
        at: str | None = None,
        history: bool = False,
        limit: int = DEFAULT_FACTS_LIMIT,
    ) -> builtins.list[FactOut]:
        """The user's facts that hold now (or at `at`; every fact ever, with `history`),
        newest first; with `entity`, those naming it and, with `hops=2`, the facts about
        what they lead to."""
        return self._facts.facts(
            user=user,
            entity=entity,
            predicate=predicate,
            hops=hops,
            at=at,
            history=history,
            limit=limit,
        )

    def fact(self, fact_id: str) -> FactOut:
        """One fact by id, ended or not; `FactNotFound` if there is none."""
        return self._facts.fact(fact_id)

    def set_agent_profile(
        self,
        user: str,
        *,
        prompt: str | None = None,
        name: str | None = None,
        voice: str | None = None,
        response_length: str | None = None,
        emoji_usage: str | None = None,
        formality: str | None = None,
        proactivity: str | None = None,
        emoji: str | None = None,
        creature: str | None = None,
        role: str | None = None,
        vibe: str | None = None,
        tool_notes: str | None = None,
        agent: str | None = None,
        thread: str | None = None,
    ) -> AgentProfileOut:
        """Set the agent's profile for `user`: `name`, `voice` (neutral, warm, formal,
        casual), `response_length` (adaptive, brief, detailed), `emoji_usage` (moderate,
        minimal, abundant), `formality` (adaptive, formal, casual), `proactivity`
        (moderate, passive, aggressive), `emoji`, `creature`, `role`, `vibe`, `tool_notes`.
        Fields not given keep their current value; `prompt` is the identity text
        (`{name}` becomes the name). Written as the user's agent note."""
        return self._agent_profiles.set_agent_profile(
            user,
            prompt=prompt,
            name=name,
            voice=voice,
            response_length=response_length,
            emoji_usage=emoji_usage,
            formality=formality,
            proactivity=proactivity,
            emoji=emoji,
            creature=creature,
            role=role,
            vibe=vibe,
            tool_notes=tool_notes,
            agent=agent,
            thread=thread,
        )

    def agent_profile(self, user: str) -> AgentProfileOut | None:
        """The agent's profile for `user`, or None when no agent note carries one."""
        return self._agent_profiles.agent_profile(user)

    def resume(
        self,
        user: str,
        namespace: str | None = None,
        *,
        hours: float = RESUME_RECENT_HOURS,
        topics: Sequence[Topic] | None = None,
        now: datetime | None = None,
        epochs: int | None = None,
        compact: bool = False,
    ) -> ResumeOut:
        """The session resume: Core (core.md + core-layer memories, ~2k tokens),
        Recent (non-core changes of the last `hours`, ~1k), Topics (the user's topic tree,
        or the `topics` given, ~500), Triggers (~200). A project `namespace` also reads
        `default`; without one, only `default` is read. `epochs`: Recent holds the changes
        of the last `epochs` consolidation cycles instead of the last `hours`.
        `compact`: Core and recent Working memories are kept only when related to
        what the user does now (the Buffer and the recent window, by the resume's
        thresholds). Reads only: nothing is written to the log."""
        return self._recall.resume(
            user, namespace, hours=hours, topics=topics, now=now, epochs=epochs, compact=compact
        )

    def context(
        self,
        user: str,
        message: str | None = None,
        *,
        environment: str | None = None,
        now: datetime | None = None,
        files_dir: str | Path | None = None,
        turns: Sequence[object] | None = None,
        tool_instructions: bool = False,
    ) -> AgentContext:
        """The agent context: agent, soul, personality,
        environment, user, rules (10) and summaries (5) nearest to `message` (else the
        newest), then What You Know (tacit memories, 50 at most, 10 of them personality);
        sensitive, low-confidence (< 0.65) and procedural memories left out. `environment`
        replaces the OS line of this machine. `files_dir`: SOUL.md / AGENTS.md / MEMORY.md
        rendered when the ledger has no context for the user (the setting
        `context_files_dir` is looked in after it). `turns`: the thread's recent turns
        ({"role", "content", "memory_stored"?}, oldest first) for the memoryNudge in
        `steering`. `tool_instructions`: end with how to use the memory
        tools, for an agent that has them. Reads only: the files and
        turns are not recorded."""
        return self._recall.context(
            user,
            message,
            environment=environment,
            now=now,
            files_dir=files_dir,
            turns=turns,
            tool_instructions=tool_instructions,
        )

    def transcripts(
        self, query: str, user: str, k: int = SEARCH_DEFAULT_K
    ) -> builtins.list[TranscriptHit]:
        """Search the user's session transcripts (ingested conversations):
        FTS5 + vectors, scores dampened x 0.6. Reads only."""
        return self._recall.transcripts(query, user, k)

    def search_all(
        self, query: str, *, user: str, k: int = SEARCH_DEFAULT_K
    ) -> builtins.list[SearchHit | TranscriptHit]:
        """Memories and session transcript chunks merged by score, best first, as seed
        004 §6 merges them (chunks dampened x 0.6: "less precise than dedicated memory
        records"). Reads only."""
        return self._recall.search_all(query, user=user, k=k)

    def load_checkpoint(
        self, user: str, thread: str, *, version: int | None = None
    ) -> CheckpointOut | None:
        """The thread's newest checkpoint (or checkpoint number `version`: 1 is the first
        saved), None if there is none."""
        return self._checkpoints.load_checkpoint(user, thread, version=version)

    def checkpoints(
        self, user: str, limit: int = CHECKPOINTS_DEFAULT_LIMIT
    ) -> builtins.list[CheckpointInfo]:
        """The user's threads with a checkpoint, most recently saved first: each one's
        newest checkpoint without its data."""
        return self._checkpoints.checkpoints(user, limit)

    def queued_threads(self, *, user: str | None = None) -> builtins.list[QueuedThreadOut]:
        """Threads with turns waiting for extraction (of `user`, or of everyone), the
        longest waiting first."""
        return self._turn_queue.queued_threads(user=user)

    def command(self, command_id: str) -> CommandOut:
        """A recorded command (an add, an ingest, a note, ...): what was asked, by whom,
        and whether it is still `requested` (not processed yet), `completed` or `failed`,
        with what it did or why it failed. `CommandNotFound` when no command has this id."""
        return self._commands.command(command_id)

    def pending_adds(self, *, user: str | None = None) -> builtins.list[PendingAddOut]:
        """Adds recorded and not processed yet (of `user`, or of everyone), oldest first:
        those being processed now, and those whose process stopped before processing
        them."""
        return self._commands.pending_adds(user=user)

    # --- lifecycle (commands/lifecycle) --------------------------------------------------

    def consolidate(
        self,
        *,
        user: str | None = None,
        dry_run: bool = False,
        now: datetime | None = None,
        audit: bool | None = None,
        daily: bool | None = False,
        agent: str | None = None,
        llm_level: str | None = None,
        audit_guards: bool = AUDIT_SANDBOX_GUARDS,
    ) -> ConsolidateResult:
        """One consolidation cycle for `user` (or every user with memories): lifecycle rules,
        promotion, triage, gate, reconcile, distillation, dedup, merge, audit, decay. With
        `dry_run`, the planned operations are returned and nothing is written. `daily`
        adds the daily pass and insights (None: when 24 h have passed).
        `llm_level` (None: the `llm_level` setting, `MNEMOLEDGER_LLM_LEVEL`):
        `auto`, or `off`: triage and gate by heuristics, no other LLM stage, no LLM call.
        `audit_guards` (on by default): the audit leaves alone memories written in the last
        48 hours or changed in the last 24."""
        return self._consolidate.consolidate(
            user=user,
            dry_run=dry_run,
            now=now,
            audit=audit,
            daily=daily,
            agent=agent,
            llm_level=llm_level,
            audit_guards=audit_guards,
        )

    def build_topics(self, *, user: str, agent: str | None = None) -> dict[str, Any]:
        """Build and name the user's topic tree now (a `TopicsRequested` command); the
        previous tree stays when a topic could not be named."""
        return self._consolidate.build_topics(user=user, agent=agent)

    def topics(self, *, user: str, rebuild: bool = False) -> TopicsResult:
        """The user's topic tree: leaves (`kb1`, ...) most members first, then parents
        (`kp1`, ...). Built first when the user has none yet, or when `rebuild`."""
        return self._consolidate.topics(user=user, rebuild=rebuild)

    def topic_memories(self, *, user: str, ids: Sequence[str]) -> dict[str, TopicDetail]:
        """Drill down: each named topic's memories, as they are now (active ones)."""
        return self._consolidate.topic_memories(user=user, ids=ids)

    def users_with_memories(self) -> builtins.list[str]:
        """Every user the layers read model knows, ordered."""
        return self._consolidate.users_with_memories()

    def topics_due(
        self, *, now: datetime | None = None, quiet_seconds: float = TOPIC_REBUILD_QUIET_SECONDS
    ) -> dict[str, int]:
        """Users whose memories changed after their topic tree was built (or who have no
        tree yet) and not in the last `quiet_seconds` (a debounce), each with
        the log position of the user's newest memory change."""
        return self._consolidate.topics_due(now=now, quiet_seconds=quiet_seconds)

    def consolidation_pipeline(self) -> ConsolidationPipeline:
        """The consolidation pipeline over this ledger (its log, read models, embedder and
        LLM): what `consolidate` runs, and what a replay runs a recorded cycle with."""
        return self._consolidate.consolidation_pipeline()

    # --- audit (commands/audit) ----------------------------------------------------------

    def memory_history(self, memory_id: str) -> builtins.list[HistoryEntry]:
        """Every event of one memory, oldest first, with actor, agent, causation and the LLM
        call (stage, prompt version, model, tokens) that decided it. A memory of an erased
        user: its raw events, whose content reads `[erased]` (the read models hold nothing
        of the user, and no LLM call is named)."""
        return self._history.memory_history(memory_id)

    def timeline(
        self,
        *,
        user: str | None = None,
        types: Sequence[str] = (),
        since: str | int | datetime | None = None,
        until: str | int | datetime | None = None,
        actor: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[EventOut]:
        """The log, oldest first, filtered by user, event types, actor and a range: `since`
        (after a position, or from a time) and `until` (up to a position or time)."""
        return self._history.timeline(
            user=user, types=types, since=since, until=until, actor=actor, limit=limit
        )

    @contextmanager
    def as_of(self, point: str | int | datetime, *, search: bool = False) -> Iterator[MnemoLedger]:
        """A read-only view whose list, get, core (and, with `search`, search) answer as
        the ledger stood at `point`: a log position, or a time."""
        with self._time_travel.as_of(point, search=search) as past:
            yield past

    def position_at(self, point: str | int | datetime) -> int:
        """The log position reached at `point` (a position, or a time)."""
        return self._time_travel.position_at(point)

    def replay(
        self,
        into: str | Path,
        *,
        mode: Mode = "recorded",
        prompts: Mapping[str, str | Path] | None = None,
        model: str | None = None,
        provider: str | None = None,
        base_url: str | None = None,
        since: str | int | datetime | None = None,
        until: str | int | datetime | None = None,
        user: str | None = None,
        progress: Progress | None = None,
    ) -> ReplayResult:
        """Execute the log again into a new ledger in `into`: every recorded command
        through its pipeline (LLM answers from the record in `recorded` mode; in `live`
        mode the stages run again, with `prompts` {stage: file}, `model`, `provider`, and
        `base_url` for the OpenAI-compatible server they call);
        `since`/`until` (TIME|POSITION) and `user` limit what is executed again."""
        return self._replay.replay(
            into,
            mode=mode,
            prompts=prompts,
            model=model,
            provider=provider,
            base_url=base_url,
            since=since,
            until=until,
            user=user,
            progress=progress,
        )

    def diff(self, a: str | Path, b: str | Path, *, user: str | None = None) -> DiffReport:
        """What differs between the ledgers in directories `a` and `b` (memories, core.md,
        flipped decisions, LLM calls and tokens)."""
        return self._replay.diff(a, b, user=user)

    @contextmanager
    def _opened(self, home: str | Path) -> Iterator[MnemoLedger]:
        """`Replay.opened` on this ledger (documented there)."""
        with self._replay.opened(home) as ledger:
            yield ledger

    def export(self, *, user: str, format: str, path: str | Path) -> ExportResult:
        """Write `user`'s events: `jsonl` (the faithful, importable event stream) or
        `parquet` / `csv` (the timeline table, through DuckDB)."""
        return self._export.export(user=user, format=format, path=path)

    def import_events(self, path: str | Path, progress: Progress | None = None) -> ImportResult:
        """Append the events of an exported JSONL file (same ids, versions, times and
        provenance), then bring the read models up to date."""
        return self._export.import_events(path, progress)

    def report(self, *, user: str | None = None, bucket: str = "day") -> Report:
        """Operations by node, op and status per `bucket` (hour, day, week, month), and LLM
        calls, tokens and latency by stage and model (one user's, or everyone's)."""
        return self._reports.report(user=user, bucket=bucket)

    def verify(
        self, progress: Progress | None = None, published: Mapping[int, str] | None = None
    ) -> VerifyResult:
        """Walk every stored event: keyed hashes, per-stream chains, seals, positions, the
        witness of the newest event and seal, and the seal roots `published` elsewhere
        (last position sealed -> root); when all is well, seal what was unsealed."""
        return self._integrity.verify(progress, published)

    def seal(self, *, agent: str | None = None) -> builtins.list[SealOut]:
        """Seal the log from the last sealed position to the newest event (one `Sealed`
        event per SEAL_MAX_EVENTS events)."""
        return self._integrity.seal(agent=agent)

    def erase(
        self, *, user: str, agent: str | None = None, progress: Progress | None = None
    ) -> ErasureResult:
        """Crypto-shred `user`: destroy the user's data keys and record `UserErased`, then
        purge the home's read models (rebuilt without the user, cached vectors nothing uses
        dropped, every SQLite file compacted). Every other process and home on the log
        purges itself when it next catches up. Running it again finishes an interrupted
        erasure; `UnknownUser` if the user never wrote anything."""
        return self._integrity.erase(user=user, agent=agent, progress=progress)

    # --- service (commands/service): read models, API keys -------------------------------

    def refresh(self, progress: Progress | None = None) -> int:
        """Bring the read models up to date with the log; returns events processed."""
        return self._project.refresh(progress)

    def rebuild(
        self, projection: str | None = None, progress: Progress | None = None
    ) -> RebuildResult:
        """Drop read models (one, or all) and replay them from position 0."""
        return self._project.rebuild(projection, progress)

    def project(
        self,
        *,
        follow: bool = False,
        stop: threading.Event | None = None,
        poll_seconds: float = FOLLOW_POLL_SECONDS,
        caught_up: Callable[[int], None] | None = None,
    ) -> ProjectResult:
        """Bring every read model up to date with the log; with `follow`, keep doing so
        until `stop` is set. `caught_up(n)` hears of each catch-up that applied n events."""
        return self._project.project(
            follow=follow, stop=stop, poll_seconds=poll_seconds, caught_up=caught_up
        )

    def create_key(
        self,
        *,
        agent: str,
        users: Sequence[str],
        categories: Sequence[str] | None = None,
        admin: bool = False,
    ) -> IssuedKey:
        """A new key for `agent` acting for `users`. A non-admin key's agent must have an
        allowlist in the categories config, and `categories` must be a subset of it."""
        return self._keys.create_key(agent=agent, users=users, categories=categories, admin=admin)

    def keys(self) -> builtins.list[KeyInfo]:
        """Every key (never the key itself), revoked ones included."""
        return self._keys.keys()

    def revoke_key(self, key_id: str) -> KeyInfo:
        """Revoke a key: every later request with it gets 401."""
        return self._keys.revoke_key(key_id)

    def authenticate(self, key: str | None) -> Principal:
        """Who `key` is; `InvalidKey` for a missing, unknown or revoked key."""
        return self._keys.authenticate(key)

    @property
    def api_key_store(self) -> ApiKeyStore:
        """The key store of the log, opened on first use."""
        return self._keys.api_key_store

    # --- the shared parts, read and replaced through the facade --------------------------

    settings: part[Settings] = part()
    actor: part[str] = part()
    clock: part[Callable[[], datetime]] = part()
    ledger: part[Ledger] = part()
    embedder: part[CachedEmbedder] = part()
    layers: part[LayersProjection] = part()
    vectors: part[VectorsProjection] = part()
    core_model: part[CoreProjection] = part()
    consent_model: part[ConsentProjection] = part()
    delta_model: part[DeltaProjection] = part()
    graph_model: part[GraphProjection] = part()
    transcripts_model: part[TranscriptsProjection] = part()
    history_model: part[HistoryProjection] = part()
    topics_model: part[TopicsProjection] = part()
    latest_model: part[LatestProjection] = part()
    flushes_model: part[FlushGuard] = part()
    runner: part[Runner] = part()
    llm: part[LLMProvider] = part()
    add_pipeline: part[AddPipeline] = part()

    def _provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance:
        """`Parts.provenance` (documented there)."""
        return self.parts.provenance(user, agent, thread)

    @property
    def categories_config(self) -> CategoriesConfig:
        """The categories config, read once from the configured file."""
        return self.parts.categories_config

    @property
    def consent_service(self) -> ConsentService:
        """The consent use cases over this ledger and its consent read model."""
        return self._consent.consent_service

    # --- opening and closing -------------------------------------------------------------

    def close(self) -> None:
        """Finish the adds given to the background, then release everything."""
        self.parts.close()

    def __enter__(self) -> MnemoLedger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
