"""The embedding cache: every vector ever computed, by (model, sha256(text)).

It lives beside the read models, not inside them, so dropping and rebuilding a read model
never embeds a text twice. One SQLite file (WAL), shared safely by several processes.

Each vector remembers when it was last used (stored or read, to the day); opening the
cache evicts the vectors unused for `MAX_UNUSED_DAYS` (30, as Nebo does on startup, seed
004 §7). A rebuild after that embeds an evicted text again, once.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from mnemoledger.ledger.policy import EMBEDDING_CACHE_MAX_UNUSED_DAYS
from mnemoledger.ledger.sqlite_files import connect_shared
from mnemoledger.projections.embeddings.embedder import Embedder, Vectors

MAX_PARAMETERS = 500
"""Bound parameters per statement (SQLite builds before 3.32 allow at most 999)."""

MAX_UNUSED_DAYS = EMBEDDING_CACHE_MAX_UNUSED_DAYS
"""Vectors neither stored nor read for this many days are evicted when the cache opens."""
MMAP_BYTES = 1 << 30
"""Bytes of the cache file SQLite reads through a memory map (address space, not memory:
the pages are the OS's file cache)."""
TOUCH_SECONDS = 86_400
"""A read refreshes a vector's last use only when it is older than this (a day), so most
reads write nothing."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    last_used INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (model, text_sha256)
)
"""
_INDEX = "CREATE INDEX IF NOT EXISTS embeddings_last_used ON embeddings (last_used)"


def text_key(text: str) -> bytes:
    """The cache key of a text: its SHA-256 digest."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """float32 vectors stored as blobs in a SQLite file, keyed by (model, text digest)."""

    def __init__(
        self,
        path: Path,
        *,
        max_unused_days: float | None = MAX_UNUSED_DAYS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Open (or create) the cache at `path` and evict the vectors unused for
        `max_unused_days` (None: keep everything). `clock` gives the time in seconds."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.clock = clock
        self._lock = threading.Lock()
        # vectors are 1.5 KB: fewer, fuller pages
        self._db = connect_shared(path, page_size=16384)
        self._db.execute("PRAGMA synchronous = NORMAL")
        # vectors read through a memory map, not copied page by page into SQLite's 2 MB
        # cache: a rebuild reads every cached vector (measured: 15 -> 8.5 µs per vector
        # over the bench's 19k cached vectors, 30 MB)
        self._db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        self._db.execute(_SCHEMA)
        self._add_last_used()
        self._db.execute(_INDEX)
        self.evicted = 0 if max_unused_days is None else self.evict_unused(max_unused_days)
        """How many vectors opening the cache evicted."""

    def _add_last_used(self) -> None:
        """A cache written before vectors had a last use: every vector counts as used now."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(embeddings)")}
        if "last_used" in columns:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(embeddings)")}
            if "last_used" not in columns:  # another process may have added it meanwhile
                self._db.execute(
                    "ALTER TABLE embeddings ADD COLUMN last_used INTEGER NOT NULL DEFAULT 0"
                )
                self._db.execute("UPDATE embeddings SET last_used = ?", (self._now(),))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _now(self) -> int:
        return int(self.clock())

    def evict_unused(self, days: float) -> int:
        """Delete the vectors neither stored nor read in the last `days` days; returns how
        many were deleted."""
        if days < 0:
            raise ValueError(f"days must be >= 0; got {days}")
        cutoff = self._now() - int(days * 86_400)
        with self._lock:
            deleted = self._db.execute(
                "DELETE FROM embeddings WHERE last_used < ?", (cutoff,)
            ).rowcount
        return int(deleted)

    def get_many(self, model: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored vectors (raw float32 bytes) of those `keys` that are cached."""
        found: dict[bytes, bytes] = {}
        stale: list[bytes] = []
        now = self._now()
        step = MAX_PARAMETERS - 1  # one parameter is the model
        with self._lock:
            for start in range(0, len(keys), step):
                chunk = keys[start : start + step]
                marks = ", ".join("?" * len(chunk))
                # keys bound as bytearrays: the same blobs, without the adapter lookup
                # Python 3.11's sqlite3 makes for each bytes value (~1.3 µs)
                rows = self._db.execute(
                    "SELECT text_sha256, vector, last_used FROM embeddings "
                    f"WHERE model = ? AND text_sha256 IN ({marks})",
                    (model, *map(bytearray, chunk)),
                )
                for key, vector, last_used in rows:
                    found[key] = vector
                    if last_used < now - TOUCH_SECONDS:
                        stale.append(key)
            if stale:
                self._db.executemany(
                    "UPDATE embeddings SET last_used = ? WHERE model = ? AND text_sha256 = ?",
                    ((now, model, key) for key in stale),
                )
        return found

    def put_many(self, model: str, items: Iterable[tuple[bytes, bytes]]) -> None:
        """Store (key, float32 bytes) pairs, used now; keys already present keep their
        vector."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                now = self._now()
                self._db.executemany(
                    "INSERT OR IGNORE INTO embeddings (model, text_sha256, vector, last_used) "
                    "VALUES (?, ?, ?, ?)",
                    ((model, key, vector, now) for key, vector in items),
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def retain_only(self, model: str, keys: Iterable[bytes]) -> int:
        """Delete every vector but those of `model` under `keys` (after an erasure: the
        vectors the rebuilt read models asked for); returns how many were deleted."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("CREATE TEMP TABLE IF NOT EXISTS kept (key BLOB PRIMARY KEY)")
                self._db.execute("DELETE FROM temp.kept")
                self._db.executemany(
                    "INSERT OR IGNORE INTO temp.kept VALUES (?)", ((key,) for key in keys)
                )
                deleted = self._db.execute(
                    "DELETE FROM embeddings WHERE model != ? "
                    "OR text_sha256 NOT IN (SELECT key FROM temp.kept)",
                    (model,),
                ).rowcount
                self._db.execute("DELETE FROM temp.kept")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return int(deleted)

    def count(self, model: str | None = None) -> int:
        """How many vectors are stored (for `model`, or for all models)."""
        with self._lock:
            if model is None:
                row = self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()
            else:
                row = self._db.execute(
                    "SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)
                ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedEmbedder:
    """An `Embedder` that asks the cache first and embeds only what it has never seen."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.embedder = embedder
        self.cache = cache
        self.model = embedder.model
        self.seen: set[bytes] | None = None
        """When a set: collects the cache keys of every passage embedded (see retain_only)."""

    @property
    def dimensions(self) -> int:
        return self.embedder.dimensions

    @dimensions.setter
    def dimensions(self, value: int) -> None:
        self.embedder.dimensions = value

    def passages(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return self.embedder.passages([])
        keys = [text_key(text) for text in texts]
        if self.seen is not None:
            self.seen.update(keys)
        found = self.cache.get_many(self.model, list(dict.fromkeys(keys)))
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        if missing:
            vectors = np.ascontiguousarray(
                self.embedder.passages(list(missing.values())), dtype=np.float32
            )
            computed = {key: vector.tobytes() for key, vector in zip(missing, vectors, strict=True)}
            self.cache.put_many(self.model, computed.items())
            found.update(computed)
        joined = b"".join([found[key] for key in keys])
        return np.frombuffer(joined, dtype=np.float32).reshape(len(texts), -1).copy()

    def passage_blobs(self, texts: Sequence[str], batch: int) -> list[bytes]:
        """Each text's vector as float32 bytes, as `passages` gives it: the cache read in
        one pass (keys in order, so its index is walked once), the texts it lacks embedded
        `batch` at a time and stored. For a rebuild, which needs every vector once."""
        keys = [text_key(text) for text in texts]
        if self.seen is not None:
            self.seen.update(keys)
        found = self.cache.get_many(self.model, sorted(set(keys)))
        missing = list(
            {key: text for key, text in zip(keys, texts, strict=True) if key not in found}.items()
        )
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            vectors = np.ascontiguousarray(
                self.embedder.passages([text for _, text in chunk]), dtype=np.float32
            )
            computed = {
                key: vector.tobytes() for (key, _), vector in zip(chunk, vectors, strict=True)
            }
            self.cache.put_many(self.model, computed.items())
            found.update(computed)
        return [found[key] for key in keys]

    def query(self, text: str) -> Vectors:
        """Queries are not cached: they rarely repeat and each would cost a write."""
        return self.embedder.query(text)

    def close(self) -> None:
        """Close the cache."""
        self.cache.close()
