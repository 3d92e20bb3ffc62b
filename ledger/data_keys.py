"""The per-user data keys, kept beside the event log but never in it: destroying one erases
a user.

The keys live where the log lives, so every process and every host on one log reads and
writes the same users with the same keys:

- SQLite log: `keys.sqlite3` beside the log file (in the data directory by default).
  Deletion overwrites the key's bytes (`secure_delete`), runs in rollback-journal mode
  (no WAL keeping old pages) and is followed by `VACUUM`.
- PostgreSQL log: the tables `mnemoledger_data_keys` and `mnemoledger_erasures` in the log's
  schema. Deletion is followed by `VACUUM FULL`, which rewrites the table without the dead
  row (the server's WAL and backups keep what they kept: see the README).

A key is committed before any event encrypted with it, so an event whose key is missing
was erased. Each erasure is a row of `erasures` with a growing `generation`: a process
compares the newest generation with the one it saw last (`sync`, before every read of the
log) and drops the erased users' keys it holds in memory. A process asks at most once per
`SYNC_SECONDS` (a round trip to PostgreSQL costs ~0.4 ms, and folding one memory asks), and
`destroy` returns only `SYNC_SECONDS` after its commit: once it has returned, every later
read in any process asks again or asked after the commit, so no process decrypts with a
key another process destroyed.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mnemoledger.ledger.pg_connection import connect
from mnemoledger.ledger.policy import DATA_KEY_BITS
from mnemoledger.ledger.settings import Settings
from mnemoledger.ledger.sqlite_files import connect_shared
from mnemoledger.ledger.store import is_postgres

KEYS_FILE = "keys.sqlite3"
"""The users' data keys of a home whose log is SQLite (in the data directory)."""

PG_DATA_KEYS = "mnemoledger_data_keys"
PG_ERASURES = "mnemoledger_erasures"

PG_LOCK_CLASS = 0x6D6E6B79
"""First key of the (class, key) advisory locks taken here: the creation of the key tables
(key 0; key 1 is the API keys' table, commands/service/keys.py) and each user's key creation
and destruction (key: a hash of schema and user). The two-key space never meets the one-key
locks other parts of the ledger take."""


SYNC_SECONDS = 0.05
"""How long a process trusts its last look at the erasures (and how long `destroy` waits
after its commit before it returns)."""

KeyRow = tuple[str, str, bytes, str]
"""(kid, user_id, key, created_at) as stored."""


@dataclass(frozen=True)
class ErasureRecord:
    """One destruction of a user's keys."""

    user_id: str
    generation: int
    """Grows by one with every erasure of the store (any user)."""
    erased_at: str
    """ISO-8601 UTC."""
    keys: int
    """How many keys were destroyed."""


class KeyStore(ABC):
    """AES-GCM data keys by user and by key id, cached in memory; thread-safe."""

    def __init__(self) -> None:
        self._cache_lock = threading.Lock()
        self._by_user: dict[str, tuple[str, AESGCM]] = {}
        self._by_kid: dict[str, tuple[str, AESGCM] | None] = {}
        self._synced_at = time.monotonic()  # taken before the query: errs on the safe side
        self._generation = self._latest_generation()

    # --- what every process asks ---------------------------------------------------------

    def for_user(self, user_id: str) -> tuple[str, AESGCM]:
        """The user's key id and cipher, created (and committed) on first use."""
        found = self._by_user.get(user_id)
        if found is not None:
            return found
        kid, key = self._load_or_create(user_id)
        found = (kid, AESGCM(key))
        with self._cache_lock:
            self._by_user[user_id] = found
            self._by_kid[kid] = (user_id, found[1])
        return found

    def by_id(self, kid: str) -> AESGCM | None:
        """The cipher of key `kid`, or None once its user was erased."""
        try:
            found = self._by_kid[kid]
        except KeyError:
            row = self._load(kid)
            found = None if row is None else (row[0], AESGCM(row[1]))
            with self._cache_lock:
                self._by_kid[kid] = found
        return None if found is None else found[1]

    def sync(self) -> list[str]:
        """Learn of erasures made by any process since the last sync: their users' keys are
        dropped from memory. Returns those users (at most one cheap query per
        `SYNC_SECONDS`)."""
        now = time.monotonic()
        if now - self._synced_at < SYNC_SECONDS:
            return []
        self._synced_at = now
        records = self._erased_after(self._generation)
        if not records:
            return []
        users = [r.user_id for r in records]
        with self._cache_lock:
            for user_id in users:
                self._drop(user_id)
            self._generation = max(r.generation for r in records)
        return users

    def forget(self, user_id: str) -> None:
        """Drop the user's keys held in memory (they are read again from the store)."""
        with self._cache_lock:
            self._drop(user_id)

    def has_keys(self, user_id: str) -> bool:
        """Whether the user has a data key (wrote anything since the last erasure)."""
        return self._has_keys(user_id)

    def erasure(self, user_id: str) -> ErasureRecord | None:
        """The user's latest erasure, if ever."""
        return self._erasure(user_id)

    def erased_at(self, user_id: str) -> str | None:
        """When the user was last erased (ISO-8601 UTC), if ever."""
        record = self._erasure(user_id)
        return None if record is None else record.erased_at

    def destroy(self, user_id: str) -> ErasureRecord:
        """Delete every key of the user, beyond recovery, and record the erasure."""
        record = self._destroy(user_id)
        with self._cache_lock:
            self._drop(user_id)
        time.sleep(SYNC_SECONDS)  # every other process's next read now sees the erasure
        return record

    def adopt(self, local: SQLiteKeyStore) -> int:
        """Take over the keys and erasures of a home's own `keys.sqlite3` (written before
        the keys lived where the log lives); returns the keys taken."""
        keys, erasures = local.all_rows()
        self._import(keys, erasures)
        return len(keys)

    def _drop(self, user_id: str) -> None:
        self._by_user.pop(user_id, None)
        for kid, found in list(self._by_kid.items()):
            if found is not None and found[0] == user_id:
                self._by_kid[kid] = None

    # --- the store -------------------------------------------------------------------------

    @abstractmethod
    def _load_or_create(self, user_id: str) -> tuple[str, bytes]:
        """The user's newest (kid, key), created in one transaction if there is none."""

    @abstractmethod
    def _load(self, kid: str) -> tuple[str, bytes] | None:
        """(user, key) of key `kid`, if it exists."""

    @abstractmethod
    def _has_keys(self, user_id: str) -> bool: ...

    @abstractmethod
    def _erasure(self, user_id: str) -> ErasureRecord | None: ...

    @abstractmethod
    def _erased_after(self, generation: int) -> list[ErasureRecord]:
        """Erasures with a larger generation, oldest first."""

    @abstractmethod
    def _latest_generation(self) -> int: ...

    @abstractmethod
    def _destroy(self, user_id: str) -> ErasureRecord:
        """Delete the user's keys and add an erasure, in one transaction; then compact."""

    @abstractmethod
    def all_rows(self) -> tuple[list[KeyRow], list[ErasureRecord]]:
        """Every key and every erasure (to move them into another store)."""

    @abstractmethod
    def _import(self, keys: list[KeyRow], erasures: list[ErasureRecord]) -> None:
        """Add keys (unless present) and erasures (as newer generations), in one transaction."""

    @abstractmethod
    def close(self) -> None: ...


def _new_key() -> tuple[str, bytes, str]:
    """(kid, key, created_at) of a fresh key."""
    key = AESGCM.generate_key(bit_length=DATA_KEY_BITS)
    return os.urandom(8).hex(), key, datetime.now(UTC).isoformat()


def create_private_file(path: Path) -> None:
    """Create `path` readable and writable by its owner only (0600), if it is missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


_SQLITE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS data_keys ("
    " kid TEXT PRIMARY KEY, user_id TEXT NOT NULL, key BLOB NOT NULL, created_at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS data_keys_by_user ON data_keys (user_id)",
    "CREATE TABLE IF NOT EXISTS erasures ("
    " generation INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL,"
    " erased_at TEXT NOT NULL, keys INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS erasures_by_user ON erasures (user_id)",
)

_LEGACY_ERASURES = (
    "INSERT INTO erasures (user_id, erased_at, keys) "
    "SELECT user_id, erased_at, keys FROM erased_users ORDER BY erased_at"
)
"""Homes written before erasures had generations kept one row per user."""


class SQLiteKeyStore(KeyStore):
    """The keys of a home whose log is SQLite, in `keys.sqlite3` (created 0600)."""

    def __init__(self, path: Path) -> None:
        create_private_file(path)
        self.path = path
        self._lock = threading.Lock()
        self._db = connect_shared(path, journal_mode="DELETE")
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA secure_delete = ON")
        with self._write():
            for statement in _SQLITE_SCHEMA:
                self._db.execute(statement)
            legacy = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'erased_users'"
            ).fetchone()
            if legacy:
                self._db.execute(_LEGACY_ERASURES)
                self._db.execute("DROP TABLE erased_users")
        super().__init__()

    def _write(self) -> _SQLiteTransaction:
        return _SQLiteTransaction(self._db, self._lock)

    def _load_or_create(self, user_id: str) -> tuple[str, bytes]:
        with self._write():
            row = self._db.execute(
                "SELECT kid, key FROM data_keys WHERE user_id = ? ORDER BY created_at DESC LIMIT 1",
                (user_id,),
            ).fetchone()
            if row is None:
                kid, key, created_at = _new_key()
                self._db.execute(
                    "INSERT INTO data_keys VALUES (?, ?, ?, ?)", (kid, user_id, key, created_at)
                )
                return kid, key
        return str(row[0]), bytes(row[1])

    def _load(self, kid: str) -> tuple[str, bytes] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT user_id, key FROM data_keys WHERE kid = ?", (kid,)
            ).fetchone()
        return None if row is None else (str(row[0]), bytes(row[1]))

    def _has_keys(self, user_id: str) -> bool:
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM data_keys WHERE user_id = ? LIMIT 1", (user_id,)
            ).fetchone()
        return row is not None

    def _erasure(self, user_id: str) -> ErasureRecord | None:
        with self._lock:
            row = self._db.execute(
                "SELECT user_id, generation, erased_at, keys FROM erasures WHERE user_id = ?"
                " ORDER BY generation DESC LIMIT 1",
                (user_id,),
            ).fetchone()
        return None if row is None else ErasureRecord(*row)

    def _erased_after(self, generation: int) -> list[ErasureRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT user_id, generation, erased_at, keys FROM erasures"
                " WHERE generation > ? ORDER BY generation",
                (generation,),
            ).fetchall()
        return [ErasureRecord(*row) for row in rows]

    def _latest_generation(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COALESCE(MAX(generation), 0) FROM erasures").fetchone()
        return int(row[0])

    def _destroy(self, user_id: str) -> ErasureRecord:
        erased_at = datetime.now(UTC).isoformat()
        with self._write():
            (count,) = self._db.execute(
                "SELECT COUNT(*) FROM data_keys WHERE user_id = ?", (user_id,)
            ).fetchone()
            self._db.execute("DELETE FROM data_keys WHERE user_id = ?", (user_id,))
            cursor = self._db.execute(
                "INSERT INTO erasures (user_id, erased_at, keys) VALUES (?, ?, ?)",
                (user_id, erased_at, count),
            )
            generation = int(cursor.lastrowid or 0)
        with self._lock:
            self._db.execute("VACUUM")
        return ErasureRecord(user_id, generation, erased_at, int(count))

    def _import(self, keys: list[KeyRow], erasures: list[ErasureRecord]) -> None:
        with self._write():
            self._db.executemany("INSERT OR IGNORE INTO data_keys VALUES (?, ?, ?, ?)", keys)
            self._db.executemany(
                "INSERT INTO erasures (user_id, erased_at, keys) VALUES (?, ?, ?)",
                [(r.user_id, r.erased_at, r.keys) for r in erasures],
            )

    def all_rows(self) -> tuple[list[KeyRow], list[ErasureRecord]]:
        """Every key and every erasure (to move them into another store)."""
        with self._lock:
            keys = self._db.execute("SELECT kid, user_id, key, created_at FROM data_keys")
            found = [(str(k), str(u), bytes(b), str(c)) for k, u, b, c in keys.fetchall()]
        return found, self._erased_after(0)

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _SQLiteTransaction:
    """`BEGIN IMMEDIATE` ... `COMMIT` (or `ROLLBACK`) under the store's lock."""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock) -> None:
        self._db = db
        self._lock = lock

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise
        return self._db

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        try:
            self._db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self._lock.release()


def key_file(settings: Settings) -> Path:
    """Where the keys of a SQLite log live: beside the log file (in the home by default),
    so homes that share one log file share its keys."""
    url = settings.db
    log = Path(url.removeprefix("sqlite:///")) if url else settings.sqlite_path
    return log.parent / KEYS_FILE


LIBRARY_TABLES_LOCK = 2
"""Second key of the advisory lock held while the event store creates its own tables (the
first, 0, guards the data key tables; 1 the API keys' table)."""


@contextlib.contextmanager
def creating_library_tables(settings: Settings) -> Iterator[None]:
    """On PostgreSQL, one process at a time through the creation of the log's tables (the
    library's events and snapshots, the chain secret's): `CREATE TABLE IF NOT EXISTS` races
    on the catalog when two server workers start on a fresh schema together
    (UniqueViolation on pg_type, seen in the two-worker test)."""
    if not is_postgres(settings.db):
        yield
        return
    with connect(str(settings.db)) as conn:
        conn.execute("SELECT pg_advisory_lock(%s, %s)", (PG_LOCK_CLASS, LIBRARY_TABLES_LOCK))
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (PG_LOCK_CLASS, LIBRARY_TABLES_LOCK))


def open_key_store(settings: Settings) -> KeyStore:
    """The data keys of the log `settings` name: PostgreSQL tables beside a PostgreSQL log,
    else `keys.sqlite3` beside the SQLite log. The keys of a home's own older `keys.sqlite3`
    elsewhere are taken over by that store, then wiped from it."""
    store: KeyStore
    if is_postgres(settings.db):
        from mnemoledger.ledger.pg_data_keys import PostgresKeyStore  # psycopg: only then

        store = PostgresKeyStore(str(settings.db))
    else:
        path = key_file(settings)
        store = SQLiteKeyStore(path)
    own = settings.home / KEYS_FILE
    shared = not (isinstance(store, SQLiteKeyStore) and own.exists() and own.samefile(store.path))
    if shared and holds_rows(own, ("data_keys", "erased_users")):
        old = SQLiteKeyStore(own)
        try:
            store.adopt(old)
        finally:
            old.close()
        wipe_sqlite_tables(own, ("data_keys", "erasures", "erased_users"))
    return store


def holds_rows(path: Path, tables: Sequence[str]) -> bool:
    """Whether the SQLite file `path` exists and one of `tables` has a row."""
    if not path.exists():
        return False
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        present = {
            str(row[0]) for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        return any(
            db.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None
            for table in tables
            if table in present
        )
    finally:
        db.close()


def wipe_sqlite_tables(path: Path, tables: Sequence[str]) -> None:
    """Overwrite the rows of `tables` with zeros and drop them; remove the file when no
    other table is left in it (it may hold what other parts keep beside the keys)."""
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        db.execute("PRAGMA secure_delete = ON")
        for table in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            db.execute(f"DROP TABLE IF EXISTS {quoted}")
        db.execute("VACUUM")
        (left,) = db.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchone()
    finally:
        db.close()
    if not left:
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
