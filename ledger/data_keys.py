"""The per-user data keys, kept OUTSIDE the event log: destroying one erases a user.

One small SQLite file (`keys.sqlite3` in the data directory) holds an AES-GCM key per user
and the list of erased users. A key is committed before any event encrypted with it, so an
event whose key is missing was erased. Deletion overwrites the key's bytes
(`secure_delete`), runs in rollback-journal mode (no WAL keeping old pages) and is
followed by `VACUUM`, so no copy of a destroyed key stays in the file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ledger.policy import DATA_KEY_BITS

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS data_keys ("
    " kid TEXT PRIMARY KEY, user_id TEXT NOT NULL, key BLOB NOT NULL, created_at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS data_keys_by_user ON data_keys (user_id)",
    "CREATE TABLE IF NOT EXISTS erased_users ("
    " user_id TEXT PRIMARY KEY, erased_at TEXT NOT NULL, keys INTEGER NOT NULL)",
)


class KeyStore:
    """AES-GCM data keys by user and by key id; thread-safe, shared by processes."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = DELETE")
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA secure_delete = ON")
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._by_user: dict[str, tuple[str, AESGCM]] = {}
        self._by_kid: dict[str, tuple[str, AESGCM] | None] = {}

    def for_user(self, user_id: str) -> tuple[str, AESGCM]:
        """The user's key id and cipher, created (and committed) on first use."""
        found = self._by_user.get(user_id)
        if found is not None:
            return found
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT kid, key FROM data_keys WHERE user_id = ? "
                    "ORDER BY created_at DESC LIMIT 1",
                    (user_id,),
                ).fetchone()
                if row is None:
                    key = AESGCM.generate_key(bit_length=DATA_KEY_BITS)
                    row = (os.urandom(8).hex(), key)
                    self._db.execute(
                        "INSERT INTO data_keys VALUES (?, ?, ?, ?)",
                        (row[0], user_id, key, datetime.now(UTC).isoformat()),
                    )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        found = (str(row[0]), AESGCM(bytes(row[1])))
        self._by_user[user_id] = found
        self._by_kid[found[0]] = (user_id, found[1])
        return found

    def by_id(self, kid: str) -> AESGCM | None:
        """The cipher of key `kid`, or None once its user was erased."""
        try:
            found = self._by_kid[kid]
        except KeyError:
            with self._lock:
                row = self._db.execute(
                    "SELECT user_id, key FROM data_keys WHERE kid = ?", (kid,)
                ).fetchone()
            found = None if row is None else (str(row[0]), AESGCM(bytes(row[1])))
            self._by_kid[kid] = found
        return None if found is None else found[1]

    def has_keys(self, user_id: str) -> bool:
        """Whether the user has a data key (wrote anything since the last erasure)."""
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM data_keys WHERE user_id = ? LIMIT 1", (user_id,)
            ).fetchone()
        return row is not None

    def erased_at(self, user_id: str) -> str | None:
        """When the user was last erased (ISO-8601 UTC), if ever."""
        with self._lock:
            row = self._db.execute(
                "SELECT erased_at FROM erased_users WHERE user_id = ?", (user_id,)
            ).fetchone()
        return None if row is None else str(row[0])

    def destroy(self, user_id: str) -> int:
        """Delete every key of the user, beyond recovery; returns how many."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                (count,) = self._db.execute(
                    "SELECT COUNT(*) FROM data_keys WHERE user_id = ?", (user_id,)
                ).fetchone()
                self._db.execute("DELETE FROM data_keys WHERE user_id = ?", (user_id,))
                self._db.execute(
                    "INSERT OR REPLACE INTO erased_users VALUES (?, ?, ?)",
                    (user_id, datetime.now(UTC).isoformat(), count),
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._db.execute("VACUUM")
            self._by_user.pop(user_id, None)
            for kid, found in list(self._by_kid.items()):
                if found is not None and found[0] == user_id:
                    self._by_kid[kid] = None
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._db.close()
