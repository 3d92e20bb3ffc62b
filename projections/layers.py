"""The `layers` read model: the current state of every memory, with an FTS5 keyword index.

SQLAlchemy defines the schema and owns the connection; the hot path uses executemany over
plain tuples, because a rebuild pushes every event of the log through here. Each page of
events is one transaction that also records the page's last position.
"""

from __future__ import annotations

import builtins
import json
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from sqlalchemy import (
    Column,
    Connection,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    text,
)
from sqlalchemy.exc import OperationalError

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.memory import merged_evidence
from mnemoledger.ledger.policy import (
    ACTIVE,
    CATEGORY_BY_NAMESPACE,
    CATEGORY_BY_NOTE_KIND,
    DEFAULT_CATEGORY,
    DEFAULT_STABILITY,
    ENTRY_LAYER,
    EPISODIC,
    EPISODIC_CATEGORY,
    EVICTED,
    EXPIRED,
    FORGOTTEN,
    NORMAL,
    PROCEDURAL,
    PROCEDURAL_CATEGORY,
    PURGED,
    SUPERSEDED,
)
from mnemoledger.ledger.sqlite_files import switch_journal_mode
from mnemoledger.projections import engram_state
from mnemoledger.projections.fts_text import fts_tags, fts_text
from mnemoledger.projections.sqlite_model import RowInsert, larger_cache
from mnemoledger.projections.user_terms import UserTermCounts

metadata = MetaData()

memories = Table(
    "memories",
    metadata,
    Column("seq", Integer, primary_key=True),  # also the FTS5 rowid
    Column("id", String(32), unique=True, nullable=False),
    Column("user_id", String, nullable=False, index=True),
    Column("content", Text, nullable=False),
    Column("kind", String, nullable=False),
    Column("tags", Text, nullable=False),
    Column("source", String, nullable=False),
    Column("namespace", String, nullable=False),
    Column("importance", Float, nullable=False),
    Column("layer", String, nullable=False),
    Column("state", String, nullable=False),
    Column("repetition_count", Integer, nullable=False),
    Column("expires_at", String),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("position", Integer, nullable=False),
    Column("key", String, index=True),
    Column("note_kind", String),
    Column("stability", String, nullable=False),
    Column("sensitivity", String, nullable=False),
    Column("confidence", Float),
    Column("evidence", Text),
    Column("metadata", Text),
    Column("superseded_by", String(32)),
    Column("category", String),  # as written; `effective_category` derives a missing one
    Column("agent_id", String),  # provenance of the MemoryAdded event (query filters)
    Column("actor", String),
    Column("thread_id", String),
    Column("causation_id", String),
    Column("access_count", Integer, nullable=False),  # memories served (RecallServed)
    Column("last_accessed", String),
    Column("said_at", String),  # an imported memory's said time (created_at holds it too)
)

positions = Table(
    "projection_position",
    metadata,
    Column("name", String, primary_key=True),
    Column("position", Integer, nullable=False),
)

_COLUMNS = [c.name for c in memories.columns]
_UPSERT = RowInsert(
    f"INSERT OR REPLACE INTO memories ({', '.join(_COLUMNS)})",
    len(_COLUMNS),
    nullable=[i for i, c in enumerate(memories.columns) if c.nullable and not c.primary_key],
)
"""Writes memory rows, their Nones as NULL in the statement (a dozen per row: see
`RowInsert`)."""
_NO_TAGS = json.dumps([])
"""The `tags` column of a memory without tags (most of them: written without encoding)."""
_FTS_COLUMNS = ["content", "key", "tags"]
"""Seed 004 §16 indexes key, value and tags; each holds `fts_text` of the memory's field
(CJK runs as bigrams), which is what `finish_bulk` rebuilds it from."""
_FTS_CREATE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5("
    "content, key, tags, content = 'memories', content_rowid = 'seq', "
    "tokenize = 'unicode61 remove_diacritics 2')"
)
_ASCII = "length({0}) = length(CAST({0} AS BLOB))"
"""SQL: the text `{0}` is ASCII (as many characters as UTF-8 bytes; a NUL makes it false),
which `fts_text` leaves as it is."""
_FTS_REBUILD = (
    "INSERT INTO memories_fts (rowid, content, key, tags) "
    "SELECT seq, "
    f"CASE WHEN {_ASCII.format('content')} THEN content "
    "ELSE mnemo_fts_text(content) END, "
    f"CASE WHEN key IS NULL THEN '' WHEN {_ASCII.format('key')} THEN key "
    "ELSE mnemo_fts_text(key) END, "
    f"CASE WHEN tags = '{_NO_TAGS}' THEN '' ELSE mnemo_fts_tags(tags) END "
    "FROM memories"
)
"""`fts_text` / `fts_tags` of each row, computed by SQLite itself where they change
nothing (ASCII, no tags): the build then calls back into Python (and waits for
its GIL, which a rebuild's other threads hold) only for the rest."""
_VOCAB_CREATE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_vocab USING fts5vocab(memories_fts, 'row')"
)
_FTS_PENDING = "layers:keyword-index-pending"
"""A row of `projection_position` while a bulk load has left the FTS5 index to build."""
_WORD = re.compile(r"\w+", re.UNICODE)
DF_CACHE_TERMS = 50_000
"""Document frequencies remembered per process (cleared when full or when the index has
grown by a tenth since they were counted: they only steer which words a query keeps)."""


def effective_category(
    category: str | None, kind: str, namespace: str, note_kind: str | None
) -> str:
    """The category a query sees (seed 003 §5): the written one, else derived, first match
    wins: procedural kind -> `procedural` (§12); a Luminary note kind (seed 002); a Nebo
    namespace (seed 004 §3: tacit/preferences -> preferences, tacit/personality -> style,
    tacit/user -> profile, tacit/artifacts -> projects, entity/* -> relationships, daily/* ->
    event); episodic kind -> `event`; else `knowledge` (see `ledger.policy`)."""
    if category:
        return category
    if kind == PROCEDURAL:
        return PROCEDURAL_CATEGORY
    if note_kind is not None and note_kind in CATEGORY_BY_NOTE_KIND:
        return CATEGORY_BY_NOTE_KIND[note_kind]
    for prefix, mapped in CATEGORY_BY_NAMESPACE:
        if namespace == prefix or namespace.startswith(prefix + "/"):
            return mapped
    if kind == EPISODIC:
        return EPISODIC_CATEGORY
    return DEFAULT_CATEGORY


@dataclass(frozen=True)
class MemoryRow:
    """A memory as the read model holds it."""

    id: str
    user_id: str
    content: str
    kind: str
    tags: list[str]
    source: str
    namespace: str
    importance: float
    layer: str
    state: str
    repetition_count: int
    expires_at: str | None
    created_at: str
    updated_at: str
    version: int
    position: int
    key: str | None
    note_kind: str | None
    stability: str
    sensitivity: str
    confidence: float | None
    evidence: list[str] | None
    metadata: dict[str, Any] | None
    superseded_by: str | None
    category: str | None
    """The category its writer named (seed 003 §5), if any; see `effective_category`."""
    agent_id: str | None
    """The agent, actor, thread and command run of the event that created the memory."""
    actor: str | None
    thread_id: str | None
    causation_id: str | None
    access_count: int
    """How often the memory was served to an agent (RecallServed)."""
    last_accessed: str | None
    """When it was last served (ISO-8601 UTC), if ever."""
    said_at: str | None = None
    """When its content was said, if its add named a past time (an import): then
    `created_at` is that time, not when it was recorded."""

    @property
    def effective_category(self) -> str:
        """The written category, else the one derived from kind, note kind and namespace."""
        return effective_category(self.category, self.kind, self.namespace, self.note_kind)

    def is_expired(self, now: datetime | None = None) -> bool:
        if self.expires_at is None:
            return False
        return datetime.fromisoformat(self.expires_at) <= (now or datetime.now(UTC))

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "content": self.content,
            "layer": self.layer,
            "kind": self.kind,
            "state": self.state,
            "importance": self.importance,
            "tags": self.tags,
            "source": self.source,
            "namespace": self.namespace,
            "repetition_count": self.repetition_count,
            "expires_at": self.expires_at,
            "expired": self.is_expired(),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "version": self.version,
            "key": self.key,
            "note_kind": self.note_kind,
            "stability": self.stability,
            "sensitivity": self.sensitivity,
            "confidence": self.confidence,
            "evidence": self.evidence,
            "metadata": self.metadata,
            "superseded_by": self.superseded_by,
            "category": self.category,
        }


class RecallRow(NamedTuple):
    """What ranking a search candidate needs of a memory: a tenth of a `MemoryRow` to
    read and build (a search reads ~150 of them)."""

    id: str
    user_id: str
    content: str
    kind: str
    importance: float
    layer: str
    state: str
    expires_at: str | None
    updated_at: str
    namespace: str
    key: str | None = None
    evidence: str | None = None
    """Its evidence ids as stored (a JSON list), if any."""
    thread_id: str | None = None
    agent_id: str | None = None
    created_at: str | None = None

    def is_expired(self, now: datetime | None = None) -> bool:
        if self.expires_at is None:
            return False
        return datetime.fromisoformat(self.expires_at) <= (now or datetime.now(UTC))


_RECALL_COLUMNS = ", ".join(RecallRow._fields)


class LayersProjection:
    """Current state of every memory (layer, kind, state, counters, TTL) + keyword index."""

    name = "layers"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.engine: Engine = create_engine(
            f"sqlite:///{path}",
            connect_args={"timeout": 30},  # the WAL switch may wait
        )
        event.listen(self.engine, "connect", _configure_sqlite)
        self._df_cache: dict[str, int] = {}
        self._df_counted_at = 0
        self._quoted: set[tuple[str, str]] = set()
        self._unquoted: dict[tuple[str, str], int] = {}
        self._bulk = False
        """Inside `bulk`: pages leave the keyword index to be built at the end."""
        self.user_terms = UserTermCounts(self.engine)
        self._create()

    def _create(self) -> None:
        try:
            self._create_tables()
        except OperationalError as error:
            # two processes opening a fresh home (server workers) both found no table;
            # the other created them first: now they are found
            if "already exists" not in str(error):
                raise
            self._create_tables()

    def _create_tables(self) -> None:
        with self.engine.begin() as conn:
            found = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(memories)")]
            indexed = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(memories_fts)")]
            if (
                (found and found != _COLUMNS)
                or (indexed and indexed != _FTS_COLUMNS)
                or engram_state.outdated(conn)
            ):
                # written by an older schema: drop it; the runner replays it from the log
                conn.exec_driver_sql("DROP TABLE IF EXISTS memories_fts")
                metadata.drop_all(conn)
                engram_state.drop(conn)
            metadata.create_all(conn)
            engram_state.create(conn)
            conn.exec_driver_sql(_FTS_CREATE)
            conn.exec_driver_sql(_VOCAB_CREATE)

    # --- Projection ----------------------------------------------------------------------

    def position(self) -> int:
        with self.engine.connect() as conn:
            value = conn.execute(
                text("SELECT position FROM projection_position WHERE name = :name"),
                {"name": self.name},
            ).scalar()
        return int(value or 0)

    def reset(self) -> None:
        with self.engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE IF EXISTS memories_fts_vocab")
            conn.exec_driver_sql("DROP TABLE IF EXISTS memories_fts")
            metadata.drop_all(conn)
            engram_state.drop(conn)
        self._df_cache.clear()
        self._df_counted_at = 0
        self._quoted.clear()
        self._unquoted.clear()
        self.user_terms.clear()
        self._create()

    def close(self) -> None:
        self.engine.dispose()

    # --- bulk loading (a rebuild; see projections.projection.BulkLoading) -----------------

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Pages applied inside leave the keyword index alone, which is built once at the
        end from the memory rows (FTS5 `rebuild`: measured twice as fast as indexing page
        by page, which was half of a rebuild's writing). Every page also marks the index
        as pending, in its own transaction: a load interrupted midway is finished by the
        next `finish_bulk` (the runner's next catch-up)."""
        self._bulk = True
        try:
            yield
        finally:
            self._bulk = False
        self.finish_bulk()

    def finish_bulk(self) -> None:
        """Build the keyword index if a bulk load left it pending (crashed or finished)."""
        with self.engine.begin() as conn:
            pending = conn.exec_driver_sql(
                "SELECT 1 FROM projection_position WHERE name = ?", (_FTS_PENDING,)
            ).first()
            if pending is None:
                return
            with larger_cache(conn.exec_driver_sql), _larger_fts_hash(conn.exec_driver_sql):
                # not FTS5's 'rebuild', which would index the raw fields: CJK runs as bigrams
                conn.exec_driver_sql("INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')")
                conn.exec_driver_sql(_FTS_REBUILD)
            conn.exec_driver_sql("DELETE FROM projection_position WHERE name = ?", (_FTS_PENDING,))
        self._df_cache.clear()
        self._df_counted_at = 0
        self.user_terms.clear()

    def apply(self, records: Sequence[EventRecord]) -> None:
        if not records:
            return
        if not self._bulk:
            with self.engine.begin() as conn:
                self._apply(conn, records)
            return
        # a bulk load's page: a larger page cache, and a WAL checkpoint only once the WAL
        # holds BULK_WAL_PAGES (not at each page's commit, which copied the page's ~15 MB
        # into the database file and synced it): the commit of the keyword index's build
        # (`finish_bulk`) checkpoints the rest
        with self.engine.connect() as conn:
            # on the driver's connection: SQLAlchemy would begin a transaction
            execute = conn.connection.driver_connection.execute  # type: ignore[union-attr]
            with larger_cache(execute), _fewer_checkpoints(execute), conn.begin():
                conn.exec_driver_sql(
                    "INSERT OR REPLACE INTO projection_position (name, position) VALUES (?, 0)",
                    (_FTS_PENDING,),
                )
                self._apply(conn, records)

    def _apply(self, conn: Connection, records: Sequence[EventRecord]) -> None:
        """Fold `records` into the tables and note the position, in `conn`'s transaction."""
        # an epoch decays every memory the user has so far: the events before it are
        # written first; rows the events after it touch are decayed before they are
        # read, all the user's rows at the end of the page (see engram_state)
        decayed: set[str] = set()
        for segment, epoch in engram_state.segments(records):
            if segment:
                if decayed:
                    ids = engram_state.touched(segment)
                    for user_id in sorted(decayed):
                        engram_state.materialize(conn, user_id, ids)
                _Page(conn, index=not self._bulk).apply(segment)
                engram_state.apply(conn, segment)
            if epoch is not None:
                engram_state.apply_epoch(conn, epoch)
                decayed.add(epoch.user_id)
        for user_id in sorted(decayed):
            engram_state.materialize(conn, user_id)
        conn.exec_driver_sql(
            "INSERT OR REPLACE INTO projection_position (name, position) VALUES (?, ?)",
            (self.name, records[-1].position),
        )

    # --- queries -------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRow | None:
        with self.engine.connect() as conn:
            rows = _select(conn, "WHERE id = ?", (memory_id,))
        return rows[0] if rows else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRow]:
        found: dict[str, MemoryRow] = {}
        with self.engine.connect() as conn:
            for chunk in _chunks(list(memory_ids), 500):
                marks = ", ".join("?" * len(chunk))
                for row in _select(conn, f"WHERE id IN ({marks})", tuple(chunk)):
                    found[row.id] = row
        return found

    def recall_rows(self, memory_ids: Sequence[str]) -> dict[str, RecallRow]:
        """`RecallRow`s of the given memories that exist, by id."""
        found: dict[str, RecallRow] = {}
        with self.engine.connect() as conn:
            cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
            try:
                for chunk in _chunks(list(memory_ids), 500):
                    marks = ", ".join("?" * len(chunk))
                    cursor.execute(
                        f"SELECT {_RECALL_COLUMNS} FROM memories WHERE id IN ({marks})", chunk
                    )
                    found.update((r[0], RecallRow(*r)) for r in cursor.fetchall())
            finally:
                cursor.close()
        return found

    def list(
        self, user_id: str | None = None, layer: str | None = None, state: str | None = None
    ) -> builtins.list[MemoryRow]:
        """Memories ordered by id, filtered by user, layer and state when given."""
        clauses, params = [], []
        for column, value in (("user_id", user_id), ("layer", layer), ("state", state)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        with self.engine.connect() as conn:
            return _select(conn, where + " ORDER BY id", tuple(params))

    def ids_in_categories(
        self, user_id: str, categories: Collection[str], state: str = ACTIVE
    ) -> builtins.list[str]:
        """Ids of `user_id`'s memories in `state` whose effective category is one of
        `categories` (seed 003 §5), ordered by id."""
        wanted = set(categories)
        # A user has thousands of memories but a handful of (category, kind, namespace,
        # note_kind) combinations: the category is derived once per combination.
        with self.engine.connect() as conn:
            combinations = conn.exec_driver_sql(
                "SELECT DISTINCT category, kind, namespace, note_kind FROM memories "
                "WHERE user_id = ? AND state = ?",
                (user_id, state),
            ).fetchall()
            matching = [c for c in combinations if effective_category(*c) in wanted]
            if not matching:
                return []
            ids: builtins.list[str] = []
            for combination in matching:
                ids += [
                    row[0]
                    for row in conn.exec_driver_sql(
                        "SELECT id FROM memories WHERE user_id = ? AND state = ? AND "
                        "category IS ? AND kind IS ? AND namespace IS ? AND note_kind IS ?",
                        (user_id, state, *combination),
                    )
                ]
            return sorted(ids)

    def keyword_search(self, user_id: str, query: str, k: int) -> builtins.list[tuple[str, float]]:
        """Active memories of `user_id` matching any word of `query`, best BM25 first."""
        words = _WORD.findall(query.lower())
        if not words:
            return []
        match = " OR ".join('"' + w + '"' for w in dict.fromkeys(words))
        with self.engine.connect() as conn:
            result = conn.exec_driver_sql(
                "SELECT m.id, bm25(memories_fts) AS rank FROM memories_fts "
                "JOIN memories m ON m.seq = memories_fts.rowid "
                "WHERE memories_fts MATCH ? AND m.user_id = ? AND m.state = ? "
                "ORDER BY rank LIMIT ?",
                (match, user_id, ACTIVE, k),
            )
            return [(r[0], -float(r[1])) for r in result]

    def fts_search(self, user_id: str, expression: str, k: int) -> builtins.list[tuple[str, float]]:
        """Active memories of `user_id` matching the FTS5 MATCH `expression`, best first:
        (memory id, raw bm25 rank: negative, lower is better). A malformed expression or a
        damaged index raises (sqlalchemy.exc.DBAPIError)."""
        with self.engine.connect() as conn:
            result = conn.exec_driver_sql(
                "SELECT m.id, bm25(memories_fts) AS rank FROM memories_fts "
                "JOIN memories m ON m.seq = memories_fts.rowid "
                "WHERE memories_fts MATCH ? AND m.user_id = ? AND m.state = ? "
                "ORDER BY rank, m.id LIMIT ?",
                (expression, user_id, ACTIVE, k),
            )
            return [(r[0], float(r[1])) for r in result]

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """(how many indexed memories contain each term (what a MATCH on it reads), every
        user and state counted; the newest memory's sequence number, which dates these and
        the per-user counts). Terms are matched lower-case and without diacritics, as the
        index stores them; recent counts come from a cache."""
        folded = {term: fold_term(term) for term in terms}
        with self.engine.connect() as conn:
            size = int(
                conn.exec_driver_sql("SELECT COALESCE(MAX(seq), 0) FROM memories").scalar() or 0
            )
            if len(self._df_cache) > DF_CACHE_TERMS or size > 1.1 * self._df_counted_at:
                self._df_cache.clear()
                self._df_counted_at = size
            missing = sorted({f for f in folded.values() if f not in self._df_cache})
            counts = dict.fromkeys(missing, 0)
            for chunk in _chunks(missing, 500):
                marks = ", ".join("?" * len(chunk))
                counts.update(
                    conn.exec_driver_sql(
                        f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({marks})",
                        tuple(chunk),
                    ).all()
                )
        self._df_cache.update(counts)
        return {term: self._df_cache.get(f, 0) for term, f in folded.items()}, size

    def user_document_frequency(self, user_id: str, term: str, cap: int, newest: int) -> int:
        """How many of `user_id`'s memories contain `term`, counted up to `cap + 1`, as of
        the index's `newest` sequence number (from `document_frequencies`)."""
        return self.user_terms.documents(user_id, fold_term(term), cap, newest)

    def user_memory_count(self, user_id: str, newest: int) -> int:
        """How many memories of `user_id` the index holds, every state counted, as of the
        index's `newest` sequence number (from `document_frequencies`)."""
        return self.user_terms.memories(user_id, newest)

    def quoted_speakers(self, user_id: str, names: Sequence[str]) -> builtins.list[str]:
        """Those of `names` that a memory of `user_id` quotes as its speaker ("Caroline: ..."
        or "[8 May 2023] Caroline: ..."), in order. A name found stays found for this
        process; a name not found is looked up again once the read model has moved on."""
        newest: int | None = None
        found = []
        with self.engine.connect() as conn:
            for name in names:
                key = (user_id, name)
                if key in self._quoted:
                    found.append(name)
                    continue
                if newest is None:  # the read model's log position: any change moves it
                    newest = int(
                        conn.execute(
                            text("SELECT position FROM projection_position WHERE name = :name"),
                            {"name": self.name},
                        ).scalar()
                        or 0
                    )
                if self._unquoted.get(key) == newest:
                    continue
                escaped = _like_escaped(name)
                quoted = conn.exec_driver_sql(
                    "SELECT 1 FROM memories WHERE user_id = ? AND (content LIKE ? ESCAPE '\\' "
                    "OR content LIKE ? ESCAPE '\\') LIMIT 1",
                    (user_id, f"{escaped}: %", f"[%] {escaped}: %"),
                ).first()
                if quoted:
                    self._quoted.add(key)
                    found.append(name)
                else:
                    self._unquoted[key] = newest
        return found

    def holding_word(self, user_id: str, word: str, k: int) -> builtins.list[str]:
        """The texts of up to `k` active memories of `user_id` that hold `word` (as the
        keyword index reads words: case and accents aside), oldest first."""
        folded = fold_term(word)
        if not folded or k <= 0:
            return []
        with self.engine.connect() as conn:
            result = conn.exec_driver_sql(
                "SELECT m.content FROM memories_fts CROSS JOIN memories m "
                "ON m.seq = memories_fts.rowid WHERE memories_fts MATCH ? AND m.user_id = ? "
                "AND m.state = ? ORDER BY m.seq LIMIT ?",
                ('"' + folded.replace('"', '""') + '"', user_id, ACTIVE, k),
            )
            return [r[0] for r in result]

    def like_search(self, user_id: str, words: Sequence[str], k: int) -> builtins.list[str]:
        """Active memories of `user_id` whose content contains any of `words` (SQL LIKE,
        no index: the fallback when FTS5 fails, seed 004 §6), newest first."""
        words = [w for w in words if w]
        if not words or k <= 0:
            return []
        escaped = [_like_escaped(w) for w in words]
        where = " OR ".join("content LIKE ? ESCAPE '\\'" for _ in escaped)
        with self.engine.connect() as conn:
            result = conn.exec_driver_sql(
                f"SELECT id FROM memories WHERE user_id = ? AND state = ? AND ({where}) "
                "ORDER BY seq DESC LIMIT ?",
                (user_id, ACTIVE, *(f"%{w}%" for w in escaped), k),
            )
            return [r[0] for r in result]

    def counts(self) -> dict[str, Any]:
        with self.engine.connect() as conn:
            by = conn.exec_driver_sql(
                "SELECT layer, state, COUNT(*) FROM memories GROUP BY layer, state"
            ).all()
            users = conn.exec_driver_sql("SELECT COUNT(DISTINCT user_id) FROM memories").scalar()
        return {
            "memories": sum(r[2] for r in by),
            "users": int(users or 0),
            "by_layer": _sum_by(by, 0),
            "by_state": _sum_by(by, 1),
        }


class _Page:
    """Folds one page of events into rows, then writes them with a few executemany calls."""

    def __init__(self, conn: Connection, index: bool = True) -> None:
        self.conn = conn
        self.index = index
        """Whether to keep the FTS5 index up to date (not in a bulk load)."""
        self.rows: dict[str, list[Any]] = {}
        self.new: set[str] = set()
        self.reindex: set[str] = set()
        self.indexed: dict[str, tuple[str, str, str]] = {}  # what the FTS index holds, by id
        self._next_seq = (
            int(conn.exec_driver_sql("SELECT COALESCE(MAX(seq), 0) FROM memories").scalar() or 0)
            + 1
        )

    def apply(self, records: Sequence[EventRecord]) -> None:
        ids: set[str] = set()
        for record in records:
            if record.type == "RecallServed":
                ids.update(record.data.get("memory_ids") or ())
            elif record.type != "MemoryAdded" and record.type in _HANDLED:
                ids.add(record.stream_id)
        self._load(ids)
        for record in records:
            handler = _HANDLED.get(record.type)
            if handler is not None:
                handler(self, record)
        self._write()

    def _load(self, ids: set[str]) -> None:
        for chunk in _chunks(sorted(ids), 500):
            marks = ", ".join("?" * len(chunk))
            result = self.conn.exec_driver_sql(
                f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE id IN ({marks})",
                tuple(chunk),
            )
            for row in result:
                self.rows[row[1]] = list(row)
                self.indexed[row[1]] = _indexed_fields(row)

    def _row(self, record: EventRecord) -> list[Any] | None:
        """The memory's row, at the event's version; changed now (`updated_at`) unless the
        event belongs to the add that wrote it with a past said time (its links): an
        imported memory was last changed when it was said."""
        row = self.rows.get(record.stream_id)
        if row is not None:
            row[_I["version"]] = record.version
            if row[_I["said_at"]] is None or record.causation_id != row[_I["causation_id"]]:
                row[_I["updated_at"]] = record.at.isoformat()
            row[_I["position"]] = record.position
        return row

    def added(self, record: EventRecord) -> None:
        d = record.data
        said_at = d.get("said_at")  # an import: created when it was said
        at = said_at or record.at.isoformat()
        self.rows[record.stream_id] = [
            self._next_seq,
            record.stream_id,
            record.user_id,
            d["content"],
            d["kind"],
            json.dumps(d["tags"]) if d["tags"] else _NO_TAGS,
            d["source"],
            d["namespace"],
            d["importance"],
            ENTRY_LAYER,
            ACTIVE,
            0,
            None,
            at,
            at,
            record.version,
            record.position,
            d.get("key"),
            d.get("note_kind"),
            d.get("stability", DEFAULT_STABILITY),
            d.get("sensitivity", NORMAL),
            d.get("confidence"),
            _json_or_none(d.get("evidence")),
            _json_or_none(d.get("metadata")),
            None,
            d.get("category"),
            record.agent_id,
            record.actor,
            record.thread_id,
            record.causation_id,
            0,
            None,
            said_at,
        ]
        self._next_seq += 1
        self.new.add(record.stream_id)

    def updated(self, record: EventRecord) -> None:
        row = self._row(record)
        if row is None:
            return
        row[_I["content"]] = record.data["content"]
        if record.data.get("tags") is not None:
            row[_I["tags"]] = json.dumps(record.data["tags"])
        self.reindex.add(record.stream_id)

    def reinforced(self, record: EventRecord) -> None:
        """A restatement; one said at a past time (an import) moves `updated_at` to that time
        only if it is later than the memory's last change."""
        before = self.rows.get(record.stream_id)
        last_change = None if before is None else before[_I["updated_at"]]
        row = self._row(record)
        if row is not None:
            said_at = record.data.get("said_at")
            if said_at is not None:
                row[_I["updated_at"]] = max(last_change, said_at, key=datetime.fromisoformat)
            row[_I["repetition_count"]] += 1
            if record.data.get("confidence") is not None:
                row[_I["confidence"]] = record.data["confidence"]
            if record.data.get("metadata") is not None:
                row[_I["metadata"]] = _json_or_none(record.data["metadata"])
            if record.data.get("evidence"):
                old = json.loads(row[_I["evidence"]]) if row[_I["evidence"]] else None
                row[_I["evidence"]] = json.dumps(merged_evidence(old, record.data["evidence"]))

    def superseded(self, record: EventRecord) -> None:
        row = self._row(record)
        if row is not None:
            row[_I["state"]] = SUPERSEDED
            row[_I["superseded_by"]] = record.data["superseded_by"]

    def ttl_set(self, record: EventRecord) -> None:
        row = self._row(record)
        if row is not None:
            row[_I["expires_at"]] = record.data["expires_at"]

    def soft_deleted(self, record: EventRecord) -> None:
        row = self._row(record)
        if row is not None:
            row[_I["state"]] = FORGOTTEN

    def restored(self, record: EventRecord) -> None:
        row = self._row(record)
        if row is not None:
            row[_I["state"]] = ACTIVE

    # --- consolidation and lifecycle (seed 001 §2-§5, 003 §7) ----------------------------

    def moved(self, record: EventRecord) -> None:
        """MemoryPromoted / MemoryDemoted: a new layer."""
        row = self._row(record)
        if row is not None:
            row[_I["layer"]] = record.data["to_layer"]

    def ended(self, record: EventRecord) -> None:
        """MemoryEvicted / MemoryExpired / MemoryLapsed: out of every reader."""
        row = self._row(record)
        if row is not None:
            row[_I["state"]] = _END_STATES[record.type]

    def merged(self, record: EventRecord) -> None:
        """MemoryMerged: the winner's new content, the union of what it absorbed."""
        row = self._row(record)
        if row is None:
            return
        d = record.data
        row[_I["content"]] = d["content"]
        row[_I["tags"]] = json.dumps(d["tags"])
        row[_I["importance"]] = d["importance"]
        row[_I["access_count"]] += d["access_added"]
        row[_I["repetition_count"]] += d["repetition_added"]
        row[_I["evidence"]] = _json_or_none(d["evidence"])
        row[_I["layer"]] = d["layer"]
        row[_I["namespace"]] = d["namespace"]
        self.reindex.add(record.stream_id)

    def decided(self, record: EventRecord) -> None:
        """GateDecided / ReconcileDecided: a decision on the memory's stream (its version)."""
        self._row(record)

    def linked(self, record: EventRecord) -> None:
        """MemoryLinked: the memory's version; its edges live in the `graph` read model."""
        self._row(record)

    def triaged(self, record: EventRecord) -> None:
        row = self._row(record)
        if row is not None and record.data.get("kind") is not None:
            row[_I["kind"]] = record.data["kind"]

    def importance_adjusted(self, record: EventRecord) -> None:
        row = self._row(record)
        if row is not None:
            row[_I["importance"]] = record.data["importance"]

    def tagged(self, record: EventRecord) -> None:
        row = self._row(record)
        if row is not None:
            row[_I["tags"]] = json.dumps(record.data["tags"])

    def purged(self, record: EventRecord) -> None:
        """Seed 003 §7: the content leaves the read models (the log keeps the event)."""
        row = self._row(record)
        if row is None:
            return
        row[_I["state"]] = PURGED
        row[_I["content"]] = ""
        row[_I["tags"]] = "[]"
        for name in ("evidence", "metadata", "key"):
            row[_I[name]] = None
        self.reindex.add(record.stream_id)

    def recall_served(self, record: EventRecord) -> None:
        """Seed 003 §6 / DESIGN: every memory served and touched (seed 001 §4.5: `touched`,
        when the recall says; older recalls touched all they served) counts one access;
        not a change of the memory, so its version and `updated_at` stay."""
        at = record.at.isoformat()
        touched = record.data.get("touched")
        served = record.data.get("memory_ids") if touched is None else touched
        for memory_id in dict.fromkeys(served or ()):
            row = self.rows.get(memory_id)
            if row is not None:
                row[_I["access_count"]] += 1
                row[_I["last_accessed"]] = at

    def _write(self) -> None:
        if self.rows:
            _UPSERT.run(self.conn.exec_driver_sql, self.rows.values())
        if not self.index:
            return
        seq = _I["seq"]
        # an external-content FTS5 index forgets a row only when told its old fields; a row
        # is indexed again whenever what the index holds of it (content, key, tags) changed
        stale: list[tuple[Any, ...]] = []
        fresh: list[tuple[Any, ...]] = []
        for memory_id, row in self.rows.items():
            fields = _indexed_fields(row)
            old = None if memory_id in self.new else self.indexed.get(memory_id)
            if old == fields:
                continue
            if old is not None:
                stale.append((row[seq], *old))
            fresh.append((row[seq], *fields))
        if stale:
            self.conn.exec_driver_sql(
                "INSERT INTO memories_fts (memories_fts, rowid, content, key, tags) "
                "VALUES ('delete', ?, ?, ?, ?)",
                stale,
            )
        if fresh:
            self.conn.exec_driver_sql(
                "INSERT INTO memories_fts (rowid, content, key, tags) VALUES (?, ?, ?, ?)", fresh
            )


@contextmanager
def _bulk_cache(conn: Connection, bulk: bool) -> Iterator[None]:
    """A larger page cache for the page's transaction inside a bulk load."""
    if not bulk:
        yield
        return
    with larger_cache(conn.exec_driver_sql):
        yield


FTS_DEFAULT_HASH_BYTES = 1 << 20
"""FTS5's `hashsize`: the terms it buffers in memory before writing them out as a new
index segment (1 MiB, its default)."""

FTS_BULK_HASH_BYTES = 8 << 20
"""`hashsize` while the keyword index is built from every memory row at once: fewer,
larger segments and less merging of them (measured on the bench's 18k memories: the build
9.3 -> 7.9 µs CPU per memory, 414 -> 118 index rows; the same matches and BM25 ranks)."""


@contextmanager
def _larger_fts_hash(execute: Callable[..., Any]) -> Iterator[None]:
    """FTS5 buffers `FTS_BULK_HASH_BYTES` of terms inside the block, then its default again
    (a setting stored in the index's config table, in the block's transaction)."""
    setting = "INSERT INTO memories_fts(memories_fts, rank) VALUES ('hashsize', ?)"
    execute(setting, (FTS_BULK_HASH_BYTES,))
    yield
    execute(setting, (FTS_DEFAULT_HASH_BYTES,))


BULK_WAL_PAGES = 16_384
"""A bulk load's pages checkpoint the WAL once it holds this many pages (64 MiB of 4 KiB
pages; SQLite's default is 1,000): fewer copies of the same index pages into the file, and
a WAL file that stays bounded however long the log."""


@contextmanager
def _fewer_checkpoints(execute: Callable[[str], Any]) -> Iterator[None]:
    """WAL checkpoints only every `BULK_WAL_PAGES` at the commits inside the block of the
    connection whose `execute` is given."""
    (before,) = execute("PRAGMA wal_autocheckpoint").fetchone()
    execute(f"PRAGMA wal_autocheckpoint = {BULK_WAL_PAGES}")
    try:
        yield
    finally:
        execute(f"PRAGMA wal_autocheckpoint = {int(before)}")


def _indexed_fields(row: Sequence[Any]) -> tuple[str, str, str]:
    """What the keyword index holds of a memory row: content, key, tags (`fts_text`)."""
    return (
        fts_text(row[_I["content"]]),
        fts_text(row[_I["key"]]),
        fts_tags(row[_I["tags"]]),
    )


_I = {name: index for index, name in enumerate(_COLUMNS)}
_HANDLED = {
    "MemoryAdded": _Page.added,
    "MemoryUpdated": _Page.updated,
    "MemoryReinforced": _Page.reinforced,
    "TTLSet": _Page.ttl_set,
    "MemorySoftDeleted": _Page.soft_deleted,
    "MemoryRestored": _Page.restored,
    "MemorySuperseded": _Page.superseded,
    "MemoryLinked": _Page.linked,
    "RecallServed": _Page.recall_served,
    "MemoryPromoted": _Page.moved,
    "MemoryDemoted": _Page.moved,
    "MemoryEvicted": _Page.ended,
    "MemoryExpired": _Page.ended,
    "MemoryLapsed": _Page.ended,
    "MemoryMerged": _Page.merged,
    "ImportanceAdjusted": _Page.importance_adjusted,
    "MemoryTagged": _Page.tagged,
    "TriageDecided": _Page.triaged,
    "GateDecided": _Page.decided,
    "ReconcileDecided": _Page.decided,
    "MemoryPurged": _Page.purged,
}
_END_STATES = {"MemoryEvicted": EVICTED, "MemoryExpired": EXPIRED, "MemoryLapsed": FORGOTTEN}


def fold_term(term: str) -> str:
    """A word as the index stores it: lower-case, without diacritics (unicode61,
    remove_diacritics 2)."""
    decomposed = unicodedata.normalize("NFKD", term.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _configure_sqlite(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.create_function("mnemo_fts_text", 1, fts_text, deterministic=True)
    dbapi_connection.create_function("mnemo_fts_tags", 1, fts_tags, deterministic=True)
    cursor = dbapi_connection.cursor()
    switch_journal_mode(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    # measured: a search's ~160 random row lookups at 100k memories take half the time
    # with a 32 MB page cache and memory-mapped reads instead of the 2 MB default
    cursor.execute("PRAGMA cache_size=-32768")
    cursor.execute("PRAGMA mmap_size=268435456")
    cursor.close()


def _select(conn: Connection, where: str, params: tuple[Any, ...]) -> builtins.list[MemoryRow]:
    # the DB-API cursor itself: SQLAlchemy's per-row processing is slower than SQLite here
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        sql = f"SELECT {', '.join(_COLUMNS[1:])} FROM memories {where}"
        result = cursor.execute(sql, params).fetchall()
    finally:
        cursor.close()
    rows = []
    for r in result:
        values = list(r)
        for name in ("tags", "evidence", "metadata"):
            raw = values[_I[name] - 1]
            values[_I[name] - 1] = None if raw is None else orjson.loads(raw)
        rows.append(MemoryRow(*values))
    return rows


def _like_escaped(word: str) -> str:
    """`word` matched literally by `LIKE ... ESCAPE '\\'`."""
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _sum_by(rows: Sequence[Any], column: int) -> dict[str, int]:
    totals: dict[str, int] = {}
    for row in rows:
        totals[row[column]] = totals.get(row[column], 0) + row[2]
    return totals


def _json_or_none(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def ids_starting_with(layers: LayersProjection, prefix: str, limit: int = 2) -> list[str]:
    """Ids of the memories (any state) whose id starts with `prefix`, in id order, at most
    `limit`: with the default 2, one id means the prefix is unique, two that it is
    ambiguous. `prefix` is lowercase hex like every id; it is matched through the id's
    unique index (a range scan), so a lookup stays fast at any size."""
    if not prefix or any(c not in "0123456789abcdef" for c in prefix):
        return []
    with layers.engine.connect() as conn:
        # every id is lowercase hex ('0'-'f' < 'g'): those starting with `prefix` are
        # exactly the ids in [prefix, prefix + 'g')
        rows = conn.exec_driver_sql(
            "SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, prefix + "g", limit),
        ).fetchall()
    return [str(row[0]) for row in rows]
