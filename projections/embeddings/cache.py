"""The embedding cache: every vector ever computed, by (model, sha256(text)).

It lives beside the read models, not inside them, so dropping and rebuilding a read model
never embeds a text twice. One SQLite file (WAL), shared safely by several processes.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from projections.embeddings.embedder import Embedder, Vectors

MAX_PARAMETERS = 500
"""Bound parameters per statement (SQLite builds before 3.32 allow at most 999)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
)
"""


def text_key(text: str) -> bytes:
    """The cache key of a text: its SHA-256 digest."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """float32 vectors stored as blobs in a SQLite file, keyed by (model, text digest)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA page_size = 16384")  # vectors are 1.5 KB: fewer, fuller pages
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute(_SCHEMA)

    def get_many(self, model: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored vectors (raw float32 bytes) of those `keys` that are cached."""
        found: dict[bytes, bytes] = {}
        step = MAX_PARAMETERS - 1  # one parameter is the model
        with self._lock:
            for start in range(0, len(keys), step):
                chunk = keys[start : start + step]
                marks = ", ".join("?" * len(chunk))
                rows = self._db.execute(
                    "SELECT text_sha256, vector FROM embeddings "
                    f"WHERE model = ? AND text_sha256 IN ({marks})",
                    (model, *chunk),
                )
                found.update(rows)
        return found

    def put_many(self, model: str, items: Iterable[tuple[bytes, bytes]]) -> None:
        """Store (key, float32 bytes) pairs; keys already present keep their vector."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR IGNORE INTO embeddings (model, text_sha256, vector) "
                    "VALUES (?, ?, ?)",
                    ((model, key, vector) for key, vector in items),
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

    def query(self, text: str) -> Vectors:
        """Queries are not cached: they rarely repeat and each would cost a write."""
        return self.embedder.query(text)

    def close(self) -> None:
        """Close the cache."""
        self.cache.close()
