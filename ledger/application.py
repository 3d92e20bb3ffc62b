"""The ledger: a thin application of verbs over the memory aggregate.

Each verb gets what it changes, changes it and saves it in one transaction. A concurrent
writer that touched the same stream first makes the save fail with the library's
IntegrityError; the verb then re-runs against fresh state.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, TypeVar
from uuid import UUID, SafeUUID

from eventsourcing.application import AggregateNotFoundError, Application, ProcessingEvent
from eventsourcing.domain import Aggregate, MutableOrImmutableAggregate
from eventsourcing.persistence import EventStore, IntegrityError, Mapper, Recording, Transcoder
from eventsourcing.sqlite import SQLiteApplicationRecorder
from eventsourcing.utils import get_topic

from mnemoledger.ledger import validation
from mnemoledger.ledger.chain_secret import CHAIN_FILE, open_store
from mnemoledger.ledger.command import Command
from mnemoledger.ledger.core import CoreDocument
from mnemoledger.ledger.data_keys import KEYS_FILE as KEYS_FILE  # where integrity_api finds it
from mnemoledger.ledger.data_keys import creating_library_tables, key_file, open_key_store
from mnemoledger.ledger.epoch import EngramClock
from mnemoledger.ledger.erasure import Erasure, ErasureOutcome, erasure_id
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound, UnknownUser
from mnemoledger.ledger.mapper import LedgerEventStore, LedgerMapper
from mnemoledger.ledger.memory import Memory
from mnemoledger.ledger.policy import (
    DEFAULT_IMPORTANCE,
    DEFAULT_KIND,
    DEFAULT_LINK_TYPE,
    DEFAULT_SOURCE,
    DEFAULT_STABILITY,
    ERASED_TEXT,
    NORMAL,
    NOTE_KINDS,
    SENSITIVITIES,
    STABILITIES,
)
from mnemoledger.ledger.provenance import Provenance, acting_as
from mnemoledger.ledger.recall import Recall
from mnemoledger.ledger.records import EventRecord, RecordDecoder
from mnemoledger.ledger.seal import Seal
from mnemoledger.ledger.settings import Settings
from mnemoledger.ledger.sqlite_recorder import WITHIN_TRANSACTION, LedgerSQLiteRecorder
from mnemoledger.ledger.store import persistence_env
from mnemoledger.ledger.tamper import TamperEvidence
from mnemoledger.ledger.transcoding import OrjsonTranscoder
from mnemoledger.ledger.user import UserStream
from mnemoledger.ledger.verify import Progress, Report

T = TypeVar("T")

CONFLICT_RETRIES = 5
"""How often a verb re-runs after an optimistic-concurrency conflict before giving up."""

SNAPSHOT_INTERVAL = 100
"""Every this many events of a user's long streams (core document, consistency stream),
the library stores a snapshot, so reading the stream folds at most this many events."""


SERVED_SYNC_EVERY = 64
"""Served-recall records (`RecallServed`) are committed without waiting for the disk; one
fsync makes at most this many of them durable at once (group commit)..."""
SERVED_SYNC_SECONDS = 1.0
"""...and none waits longer than this for it (or for the next durable save, whose commit
syncs the log file with every record written before it)."""

_NO_STOP = 2**63 - 1
"""The largest SQLite rowid: `read` without a stop reads to the end of the log."""

_UNSYNCED_COMMIT: ContextVar[bool] = ContextVar("unsynced_commit", default=False)
"""Set while a save's commit need not wait for the disk (SQLite: synchronous=NORMAL)."""


def _commit_unsynced_on_request(datastore: Any) -> None:
    """Make the SQLite datastore's write transactions commit without an fsync while
    `_UNSYNCED_COMMIT` is set (the library's recorder asks `datastore.transaction`). In WAL
    mode such a commit is in the log file at once, visible to every reader and safe from a
    crash of the process; the next fsync of that file (any durable commit, or
    `Ledger.sync_served`) makes it safe from a crash of the machine too."""
    durable = datastore.transaction

    @contextmanager
    def transaction(*, commit: bool) -> Iterator[Any]:
        if not (commit and _UNSYNCED_COMMIT.get()):
            with durable(commit=commit) as cursor:
                yield cursor
            return
        with datastore.get_connection(commit=True) as connection:
            raw = connection._sqlite_conn
            level = raw.execute("PRAGMA synchronous").fetchone()[0]
            raw.execute("PRAGMA synchronous = NORMAL")
            try:
                with connection.transaction(commit=True) as cursor:
                    yield cursor
            finally:
                raw.execute(f"PRAGMA synchronous = {int(level)}")

    datastore.transaction = transaction


@dataclass(frozen=True)
class NewMemory:
    """What a caller asks to remember."""

    content: str
    kind: str = DEFAULT_KIND
    tags: Sequence[str] = ()
    source: str = DEFAULT_SOURCE
    namespace: str = "default"
    importance: float = DEFAULT_IMPORTANCE
    key: str | None = None
    note_kind: str | None = None
    stability: str = DEFAULT_STABILITY
    sensitivity: str = NORMAL
    confidence: float | None = None
    evidence: Sequence[str] | None = None
    metadata: Mapping[str, Any] | None = None
    category: str | None = None
    """Seed 003 §5: the memory's category (an identifier), if the writer names one."""
    said_at: str | None = None
    """When the content was said (ISO-8601 with its zone), if not now: an imported history."""


class Ledger(Application[UUID]):
    """The event-sourced memory ledger: every change is an event in one log."""

    name = "mnemoledger"
    snapshotting_intervals: ClassVar[dict[type[MutableOrImmutableAggregate[Any]], int]] = {
        CoreDocument: SNAPSHOT_INTERVAL,
        UserStream: SNAPSHOT_INTERVAL,
        EngramClock: SNAPSHOT_INTERVAL,  # one event per cycle: 48 a day per user
    }

    def __init__(self, settings: Settings | None = None, **kwargs: Any) -> None:
        self.settings = settings or Settings()
        env = dict(persistence_env(self.settings))
        env.update(kwargs.pop("env", None) or {})
        self.keys = open_key_store(self.settings)
        with creating_library_tables(self.settings):  # and the chain secret's table
            super().__init__(env=env, **kwargs)
            mapper = self.mapper
            assert isinstance(mapper, LedgerMapper)
            self._mapper: LedgerMapper = mapper
            keys = key_file(self.settings)
            self._evidence = TamperEvidence(
                self.recorder, mapper, open_store(self.recorder, keys.parent / CHAIN_FILE, keys)
            )
        self._decoder = RecordDecoder(mapper, mapper.content)
        self._served_wal: str | None = None
        """The SQLite log's WAL file, when served recalls are group-committed (PostgreSQL:
        every save is durable as it returns)."""
        self._log_select: str | None = None
        """SQLite: the query `read` runs (the library's `select_notifications`)."""
        if isinstance(self.recorder, SQLiteApplicationRecorder):
            self._log_select = (
                "SELECT rowid, originator_id, originator_version, topic, state FROM "
                f"{self.recorder.events_table_name} WHERE rowid > ? AND rowid <= ? "
                "ORDER BY rowid LIMIT ?"
            )
            database = str(self.recorder.datastore.pool.db_name)
            if not self.recorder.datastore.pool.is_sqlite_memory_mode:
                _commit_unsynced_on_request(self.recorder.datastore)
                self._served_wal = f"{database}-wal"
        self._seals_within = isinstance(self.recorder, LedgerSQLiteRecorder)
        """Whether the automatic seal can be written in the transaction of the save it
        follows (`ledger.sqlite_recorder`)."""
        self._unsynced: list[Recording[UUID]] = []
        """Served-recall recordings in the log not yet synced to disk, nor witnessed by the
        tamper evidence (its witness must never name an event a machine crash can lose)."""
        self._witness_lock = threading.RLock()
        self._served_timer: threading.Timer | None = None

    # --- library hooks -------------------------------------------------------------------

    def construct_transcoder(self) -> Transcoder:
        """The library's JSON format, written and read with orjson (see ledger.transcoding);
        a `TRANSCODER_TOPIC` in the environment still chooses another transcoder."""
        if self.env.get(self.factory.TRANSCODER_TOPIC):
            return super().construct_transcoder()
        transcoder = OrjsonTranscoder()
        self.register_transcodings(transcoder)
        return transcoder

    def construct_mapper(self) -> Mapper[UUID]:
        """The library's mapper plus per-user content encryption and the hash chain (see
        ledger.mapper), with the application-wide cipher and compressor if configured."""
        return LedgerMapper(
            self.construct_transcoder(),
            self.keys,
            compressor=self.factory.compressor(),
            cipher=self.factory.cipher(),
        )

    def construct_event_store(self) -> EventStore[UUID]:
        """The library's event store, mapping each save's events as one batch (see
        ledger.mapper.LedgerEventStore)."""
        return LedgerEventStore(mapper=self.mapper, recorder=self.recorder)

    def save(self, *objs: Any, **kwargs: Any) -> list[Recording[UUID]]:
        """The library's `save`, collecting the events of aggregates directly.

        `ProcessingEvent.collect_events` tells aggregates from events with two
        runtime-checkable Protocol `isinstance` checks per object, which on Python 3.11
        re-read the protocols' members every time: ~15 µs per aggregate, as much as its SQL
        insert. Aggregates are recognised by class here; anything else goes through the
        library's collection, in the given order. Python's cyclic garbage collector is
        paused meanwhile (`collector_paused`).
        """
        with collector_paused():
            return self._save(objs, kwargs)

    def _save(self, objs: Sequence[Any], kwargs: dict[str, Any]) -> list[Recording[UUID]]:
        self.keys.sync()  # never seal with a key another process destroyed
        if self._served_wal is not None and objs and all(type(o) is Recall for o in objs):
            return self._save_served(objs, kwargs)
        processing_event: ProcessingEvent[UUID] = ProcessingEvent()
        events = processing_event.events
        aggregates = processing_event.aggregates
        for obj in objs:
            if isinstance(obj, Aggregate):
                if type(obj).collect_events is _COLLECT_EVENTS:
                    # what the library's `collect_events` does, without popping one by one
                    pending = obj.pending_events
                    events.extend(pending)
                    pending.clear()
                else:
                    events.extend(obj.collect_events())
                aggregates[obj.id] = obj
            else:
                processing_event.collect_events(obj)
        processing_event.saved_kwargs.update(kwargs)
        within = None
        if self._seals_within and not self._evidence.sealing and WITHIN_TRANSACTION not in kwargs:
            # the automatic seal, when due, commits with this save (one synced commit less)
            with self._witness_lock:
                within = self._evidence.seal_within(self._unsynced)
            processing_event.saved_kwargs[WITHIN_TRANSACTION] = within
        with self._mapper.chain.batch():
            recordings = self._record(processing_event)
        with self._witness_lock:
            # this commit synced the log file, and with it every served recall before it
            witnessed, self._unsynced = [*self._unsynced, *recordings], []
            self._evidence.saved(witnessed, self.save, within)  # the tip; a seal every N
        self._take_snapshots(processing_event)
        if within is not None and within.written is not None:
            self._notify([*recordings, *within.written.recordings])
        else:
            self._notify(recordings)
        self.notify(processing_event.events)  # deprecated in the library, still called
        return recordings

    def _take_snapshots(self, processing_event: ProcessingEvent[UUID]) -> None:
        """The library's, skipped when no aggregate saved is of a snapshotted kind (its
        loop looks up every event's aggregate: ~0.5 µs per event of a batch of memories)."""
        intervals = self.snapshotting_intervals
        if intervals and not intervals.keys().isdisjoint(
            set(map(type, processing_event.aggregates.values()))
        ):
            super()._take_snapshots(processing_event)

    def _save_served(self, recalls: Sequence[Any], kwargs: dict[str, Any]) -> list[Recording[UUID]]:
        """Record served recalls (`RecallServed`) with a group commit: in the log at once,
        synced to disk with the next durable save, at most SERVED_SYNC_EVERY records or
        SERVED_SYNC_SECONDS later, or on `close` (see `sync_served`)."""
        processing_event: ProcessingEvent[UUID] = ProcessingEvent()
        for recall in recalls:
            processing_event.events.extend(recall.collect_events())
            processing_event.aggregates[recall.id] = recall
        processing_event.saved_kwargs.update(kwargs)
        token = _UNSYNCED_COMMIT.set(True)
        try:
            with self._mapper.chain.batch():
                recordings = self._record(processing_event)
        finally:
            _UNSYNCED_COMMIT.reset(token)
        with self._witness_lock:
            self._unsynced.extend(recordings)
            due = len(self._unsynced) >= SERVED_SYNC_EVERY
            if not due and self._served_timer is None:
                # within SERVED_SYNC_SECONDS the records reach the disk; the timer's thread
                # only syncs the file (witnessing, which may seal, stays in savers' threads)
                self._served_timer = threading.Timer(SERVED_SYNC_SECONDS, self._sync_log_file)
                self._served_timer.daemon = True
                self._served_timer.start()
        if due:
            self.sync_served()
        self._notify(recordings)
        self.notify(processing_event.events)
        return recordings

    def _sync_log_file(self) -> None:
        """The group commit's timer: one fsync of the log's WAL file."""
        with self._witness_lock:
            self._served_timer = None
        if self._served_wal is not None:
            _fsync(self._served_wal)

    def sync_served(self) -> int:
        """Make the served recalls committed without an fsync durable (one fsync of the
        log's WAL file) and let the tamper evidence witness them; returns how many."""
        with self._witness_lock:
            if self._served_timer is not None:
                self._served_timer.cancel()
                self._served_timer = None
            pending, self._unsynced = self._unsynced, []
            if not pending:
                return 0
            if self._served_wal is not None:
                _fsync(self._served_wal)
            self._evidence.saved(pending, self.save)
            return len(pending)

    # --- verbs ---------------------------------------------------------------------------

    def add(self, provenance: Provenance, items: Sequence[NewMemory]) -> list[Memory]:
        """Remember one or more things for `provenance.user_id`, in one transaction."""
        with collector_paused():
            memories = self.draft(provenance, items)
            self.save(*memories)
        return memories

    def draft(self, provenance: Provenance, items: Sequence[NewMemory]) -> list[Memory]:
        """Validated new memories for `provenance.user_id`, not yet saved: a pipeline saves
        them together with whatever else its command changes, in one transaction."""
        user_id = str(validation.identifier("user", provenance.user_id))
        if not items:
            raise InvalidInput("nothing to add: give at least one content")
        checked: dict[tuple[Any, ...], dict[str, Any]] = {}

        def other_fields(item: NewMemory) -> dict[str, Any]:
            """`item`'s validated fields but its content, checked once per distinct
            combination in this call (a batch's items mostly share them); its lists are
            its own."""
            key = _settings_key(item)
            found = None
            if key is not None:
                try:
                    found = checked.get(key)
                except TypeError:  # unhashable: validation says what is wrong with it
                    key = None
            if found is None:
                found = {
                    "kind": validation.kind(item.kind),
                    "tags": validation.tags(item.tags),
                    "source": validation.source(item.source),
                    "namespace": validation.identifier("namespace", item.namespace) or "default",
                    "importance": validation.unit_interval("importance", item.importance),
                    "key": validation.memory_key(item.key),
                    "note_kind": validation.optional_choice(
                        "note kind", item.note_kind, NOTE_KINDS
                    ),
                    "stability": validation.choice("stability", item.stability, STABILITIES),
                    "sensitivity": validation.choice(
                        "sensitivity", item.sensitivity, SENSITIVITIES
                    ),
                    "confidence": (
                        None
                        if item.confidence is None
                        else validation.unit_interval("confidence", item.confidence)
                    ),
                    "evidence": validation.evidence(item.evidence),
                    "metadata": validation.metadata(item.metadata),
                    "category": validation.identifier("category", item.category, required=False),
                }
                if key is not None:
                    checked[key] = found
            evidence = found["evidence"]
            return {
                **found,
                "tags": found["tags"][:],
                "evidence": None if evidence is None else evidence[:],
            }

        # What `Memory(...)` does (`Memory._create`: the created event, then the aggregate
        # folded from it by the event's `mutate`), without the generic argument handling of
        # the library's aggregate metaclass and of `mutate`. Ids are random UUIDs as
        # `uuid4()` makes them, from one read of the OS's random source for the batch. The
        # first event and memory are constructed by their classes; the others are copies of
        # their fields with their own id, time and content (the provenance fields are the
        # batch's; the memory's empty containers new ones).
        added = Memory.MemoryAdded  # type: ignore[attr-defined]  # from created_event_name
        topic = get_topic(Memory)
        ids = random_uuids(len(items))
        memories: list[Memory] = []
        template: dict[str, Any] | None = None
        memory_template: _MemoryTemplate | None = None
        new_object = object.__new__
        set_fields = object.__setattr__
        create_timestamp = added.create_timestamp
        with acting_as(provenance):
            for originator_id, item in zip(ids, items, strict=True):
                fields: dict[str, Any] = {
                    "user_id": user_id,
                    "content": validation.content(item.content),
                    **other_fields(item),
                    "said_at": validation.said_at(item.said_at, "said_at"),
                }
                timestamp = create_timestamp()
                if template is None:
                    created = added(
                        originator_topic=topic,
                        originator_id=originator_id,
                        originator_version=Memory.INITIAL_VERSION,
                        timestamp=timestamp,
                        **fields,
                    )
                    template = _copyable_fields(vars(created), fields)
                else:
                    state = template.copy()
                    state["originator_id"] = originator_id
                    state["timestamp"] = timestamp
                    state.update(fields)
                    created = new_object(added)
                    set_fields(created, "__dict__", state)
                if memory_template is None:
                    memory: Memory = new_object(Memory)
                    memory.__base_init__(originator_id, Memory.INITIAL_VERSION, timestamp)
                    memory.__init__(**fields)  # type: ignore[misc]
                    created.apply(memory)
                    memory.pending_events.append(created)
                    memory_template = _MemoryTemplate.of(memory, fields)
                else:
                    memory = new_object(Memory)
                    set_fields(memory, "__dict__", memory_template.state(fields, created))
                memories.append(memory)
        return memories

    def update(
        self,
        provenance: Provenance,
        memory_id: str,
        content: str,
        tags: Sequence[str] | None = None,
    ) -> Memory:
        """Replace a memory's content (and tags, if given)."""
        new_content = validation.content(content)
        new_tags = validation.tags(tags) if tags is not None else None
        return self._change(
            provenance, memory_id, lambda memory: memory.update(new_content, new_tags)
        )

    def reinforce(self, provenance: Provenance, memory_id: str) -> Memory:
        """Count one more statement of the same fact (a dedup hit)."""
        return self._change(provenance, memory_id, lambda memory: memory.reinforce())

    def link(
        self,
        provenance: Provenance,
        source_id: str,
        target_id: str,
        link_type: str = DEFAULT_LINK_TYPE,
        strength: float = 1.0,
    ) -> Memory:
        """Record a relation edge from one memory to another of the same user."""
        link_type = str(validation.identifier("link type", link_type))
        strength = validation.unit_interval("strength", strength)
        target = self.memory(target_id)
        source = self.memory(source_id)
        if source.id == target.id:
            raise InvalidInput("a memory cannot be linked to itself")
        if source.user_id != target.user_id:
            raise InvalidInput("memories of different users cannot be linked")
        return self._change(
            provenance,
            source_id,
            lambda memory: memory.link(target.id.hex, link_type, strength),
        )

    def set_ttl(self, provenance: Provenance, memory_id: str, days: float) -> Memory:
        """Make a memory expire `days` from now."""
        days = validation.ttl_days(days)
        expires_at = (datetime.now(UTC) + timedelta(days=days)).isoformat()
        return self._change(provenance, memory_id, lambda memory: memory.set_ttl(days, expires_at))

    def forget(self, provenance: Provenance, memory_id: str) -> Memory:
        """Soft-delete a memory: hidden from readers, restorable, its events kept."""
        return self._change(provenance, memory_id, lambda memory: memory.forget())

    def restore(self, provenance: Provenance, memory_id: str) -> Memory:
        """Bring a soft-deleted memory back."""
        return self._change(provenance, memory_id, lambda memory: memory.restore())

    # --- readers of the write model ------------------------------------------------------

    def memory(self, memory_id: str | UUID) -> Memory:
        """The memory's current state, folded from its events."""
        uuid = parse_memory_id(memory_id)
        self.keys.sync()
        try:
            memory: object = self.repository.get(uuid)
        except AggregateNotFoundError:
            raise MemoryNotFound(str(memory_id)) from None
        if not isinstance(memory, Memory):
            raise MemoryNotFound(str(memory_id))
        if memory.content == ERASED_TEXT and self.keys.erasure(memory.user_id) is not None:
            raise MemoryNotFound(str(memory_id))  # erased: gone for readers and writers
        return memory

    def core_document(self, provenance: Provenance, user_id: str) -> CoreDocument:
        """The user's core document, started (unsaved) if the user has none yet."""
        try:
            document: object = self.repository.get(CoreDocument.create_id(user_id))
        except AggregateNotFoundError:
            with acting_as(replace(provenance, user_id=user_id)):
                return CoreDocument(user_id=user_id)
        assert isinstance(document, CoreDocument)
        return document

    def user_stream(self, provenance: Provenance, user_id: str) -> UserStream:
        """The user's consistency stream, started (unsaved) if the user has none yet."""
        try:
            stream: object = self.repository.get(UserStream.create_id(user_id))
        except AggregateNotFoundError:
            with acting_as(replace(provenance, user_id=user_id)):
                return UserStream(user_id=user_id)
        assert isinstance(stream, UserStream)
        return stream

    def command(self, command_id: str | UUID) -> Command:
        """A command run, folded from its stream."""
        try:
            command: object = self.repository.get(parse_memory_id(command_id))
        except AggregateNotFoundError:
            raise MemoryNotFound(str(command_id)) from None
        if not isinstance(command, Command):
            raise MemoryNotFound(str(command_id))
        return command

    def stream(self, memory_id: str | UUID) -> list[EventRecord]:
        """Every event of one stream, oldest first."""
        uuid = parse_memory_id(memory_id)
        self.keys.sync()
        stored = self.recorder.select_events(uuid)
        if not stored:
            raise MemoryNotFound(str(memory_id))
        return [
            self._decoder.decode(None, s.originator_id, s.originator_version, s.topic, s.state)
            for s in stored
        ]

    def read(self, after: int = 0, limit: int = 1000, stop: int | None = None) -> list[EventRecord]:
        """Up to `limit` events of the global log with positions greater than `after`."""
        self.keys.sync()
        if self._log_select is not None:
            # the library's own query, without its per-row UUID and Notification objects
            # (a third of reading the log)
            with self.recorder.datastore.transaction(commit=False) as cursor:  # type: ignore[attr-defined]
                cursor.execute(self._log_select, (after, _NO_STOP if stop is None else stop, limit))
                rows = cursor.fetchall()
            return self._decoder.decode_rows(rows)
        notifications = self.recorder.select_notifications(
            after, limit, stop=stop, inclusive_of_start=False
        )
        return self._decoder.decode_rows(
            (n.id, n.originator_id, n.originator_version, n.topic, n.state) for n in notifications
        )

    def last_position(self) -> int:
        """The position of the newest event in the log (0 when empty)."""
        return self.recorder.max_notification_id() or 0

    # --- integrity and erasure (ledger.integrity, ledger.seal, ledger.verify) -------------

    def verify(
        self, progress: Progress | None = None, published: Mapping[int, str] | None = None
    ) -> Report:
        """Check every stored event, chain and seal against the chain secret and the
        witness kept with it, and the seal roots `published` elsewhere (last position
        sealed -> root); the report names each problem. A clean check seals what was
        unsealed (ledger.tamper)."""
        contiguous = isinstance(self.recorder, SQLiteApplicationRecorder)
        return self._evidence.verify(self.save, contiguous, progress, published)

    def seal(self, provenance: Provenance) -> list[Seal]:
        """Seal the log from the last sealed position to the newest event."""
        seals = self._evidence.seal(self.save, provenance)
        if not seals:
            raise InvalidInput("nothing to seal: the log is empty or already sealed")
        return seals

    def erase(self, provenance: Provenance, user_id: str) -> ErasureOutcome:
        """Crypto-shred a user: destroy the user's data keys, then record `UserErased`.

        Idempotent: a run interrupted after the keys were destroyed is finished by the next
        one (which records the event if it is missing); `UnknownUser` if the user never had
        a key. Readers rebuild without the user when they catch up to the event."""
        user_id = str(validation.identifier("user", user_id))
        self.keys.sync()
        destroyed: int | None = None
        if self.keys.has_keys(user_id):
            record = self.keys.destroy(user_id)
            destroyed = record.keys
        else:
            found = self.keys.erasure(user_id)
            if found is None:
                raise UnknownUser(user_id)
            record = found
        stream = erasure_id(user_id, record.generation)
        recorded = False
        try:
            self.repository.get(stream)
        except AggregateNotFoundError:
            with acting_as(replace(provenance, user_id=user_id)):
                erasure = Erasure(user_id=user_id, generation=record.generation)
            try:
                self.save(erasure)
                recorded = True
            except IntegrityError:  # another run recorded it at the same moment
                pass
        return ErasureOutcome(
            user_id=user_id,
            erasure_id=stream,
            erased_at=record.erased_at,
            keys_destroyed=destroyed,
            recorded=recorded,
        )

    def close(self) -> None:
        self.sync_served()  # a clean stop loses no served recall
        super().close()
        self._evidence.close()
        self.keys.close()

    # --- internals -----------------------------------------------------------------------

    def _change(
        self, provenance: Provenance, memory_id: str, change: Callable[[Memory], None]
    ) -> Memory:
        def attempt() -> Memory:
            memory = self.memory(memory_id)
            with acting_as(replace(provenance, user_id=memory.user_id)):
                change(memory)
            self.save(memory)
            return memory

        return retry_on_conflict(attempt)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (a save, drafting a batch, a
    rebuild's decoding).

    A batch of 1000 memories allocates ~20 containers per memory (the aggregate, its event,
    their fields, the stored rows) and keeps them alive until the save returns: the
    collector, run every 700 allocations, walks them (and the rest of the heap, when it
    reaches the oldest generation) again and again, ~8 µs per event measured. The block
    makes no reference cycles that matter; what it leaves is collected once it ends. Another
    thread in such a block at the same time may end it first and turn the collector back
    on: the other then only runs as before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _settings_key(item: NewMemory) -> tuple[Any, ...] | None:
    """What decides `item`'s fields but its content, as a key that only items with the
    same validated fields share (numbers with their types: True == 1 == 1.0, and -0.0 ==
    0.0), or None when it holds something mutable (metadata, lists) or a zero."""
    tags, evidence, importance, confidence = (
        item.tags,
        item.evidence,
        item.importance,
        item.confidence,
    )
    if (
        item.metadata is not None
        or type(tags) is not tuple
        or (evidence is not None and type(evidence) is not tuple)
        or not importance
        or (confidence is not None and not confidence)
    ):
        return None
    return (
        item.kind,
        tags,
        item.source,
        item.namespace,
        type(importance),
        importance,
        item.key,
        item.note_kind,
        item.stability,
        item.sensitivity,
        type(confidence),
        confidence,
        evidence,
        item.category,
    )


_IMMUTABLE = (str, int, float, bool, type(None), UUID, datetime)

_COLLECT_EVENTS = Aggregate.collect_events

_V4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_V4_SET = (0x8000 << 48) | (4 << 76)


def random_uuids(count: int) -> list[UUID]:
    """`count` random UUIDs, each what `uuid4()` makes (its variant and version bits set
    on 16 random bytes), from one read of the OS's random source."""
    random = os.urandom(16 * count)
    from_bytes = int.from_bytes
    new_object = object.__new__
    set_field = object.__setattr__
    unknown = SafeUUID.unknown
    uuids = []
    for start in range(0, 16 * count, 16):
        uuid = new_object(UUID)
        set_field(uuid, "int", from_bytes(random[start : start + 16], "big") & _V4_CLEAR | _V4_SET)
        set_field(uuid, "is_safe", unknown)
        uuids.append(uuid)
    return uuids


class _MemoryTemplate:
    """The state of the first memory of a batch, for the others: a copy with their own id,
    times, fields and pending event, and new empty containers where it has them."""

    def __init__(self, state: dict[str, Any], fresh: tuple[tuple[str, type], ...]) -> None:
        self._state = state
        self._fresh = fresh

    @classmethod
    def of(cls, memory: Memory, fields: Mapping[str, Any]) -> _MemoryTemplate | None:
        """None when the memory holds something the copies could not share (a non-empty
        container, or an object of another kind, that its construction made)."""
        state = dict(vars(memory))
        fresh: list[tuple[str, type]] = []
        for name, value in state.items():
            if name in fields or name in _PER_MEMORY or isinstance(value, _IMMUTABLE):
                continue
            if type(value) in (dict, list, set) and not value:
                fresh.append((name, type(value)))
                continue
            return None
        return cls(state, tuple(fresh))

    def state(self, fields: Mapping[str, Any], created: Any) -> dict[str, Any]:
        state = self._state.copy()
        state.update(fields)
        for name, container in self._fresh:
            state[name] = container()
        state["_id"] = created.originator_id
        state["_created_on"] = state["_modified_on"] = created.timestamp
        state["_pending_events"] = [created]
        return state


_PER_MEMORY = frozenset({"_id", "_created_on", "_modified_on", "_pending_events"})
"""What `Aggregate.__base_init__` sets per memory (besides the version, the same for all)."""


def _copyable_fields(state: dict[str, Any], own: Mapping[str, Any]) -> dict[str, Any] | None:
    """`state` (an event's fields) as a template for the events of the same batch, or None
    when a field the copies would share is mutable (then each event is constructed)."""
    shared = (value for name, value in state.items() if name not in own)
    return state.copy() if all(isinstance(value, _IMMUTABLE) for value in shared) else None


def retry_on_conflict(attempt: Callable[[], T]) -> T:
    """Run `attempt`; on an optimistic-concurrency conflict run it again on fresh state."""
    for _ in range(CONFLICT_RETRIES - 1):
        try:
            return attempt()
        except IntegrityError:
            continue
    return attempt()


def parse_memory_id(memory_id: str | UUID) -> UUID:
    if isinstance(memory_id, UUID):
        return memory_id
    try:
        return UUID(str(memory_id).strip())
    except ValueError:
        raise MemoryNotFound(str(memory_id)) from None


def _fsync(path: str) -> None:
    """Flush `path` to disk, if it exists (a checkpoint may have emptied the WAL away)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
