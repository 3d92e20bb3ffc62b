"""Which event store the ledger uses: the library's persistence modules, chosen by URL.

`sqlite:///PATH` (or nothing: `ledger.sqlite3` in the data directory) selects
`eventsourcing.sqlite`; `postgresql://USER:PASSWORD@HOST:PORT/DBNAME?schema=NAME` selects
`eventsourcing.postgres` (install the `postgres` extra). The schema must exist; without
`schema` the tables go in `public`.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qs, unquote, urlparse

from mnemoledger.ledger.errors import InvalidInput, LedgerError
from mnemoledger.ledger.settings import Settings
from mnemoledger.ledger.sqlite_files import connect_shared

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

POSTGRES_SCHEMES = ("postgresql://", "postgres://")

POSTGRES_RECORDER = "mnemoledger.ledger.postgres_recorder:LedgerPostgresRecorder"
"""The library's recorder with large saves chunked and table creation retried (see
ledger/postgres_recorder.py)."""


SQLITE_RECORDER = "mnemoledger.ledger.sqlite_recorder:LedgerSQLiteRecorder"
"""The library's recorder, running a save's hook inside its transaction (the automatic
seal; see ledger/sqlite_recorder.py)."""


def is_postgres(url: str | None) -> bool:
    return bool(url) and str(url).startswith(POSTGRES_SCHEMES)


def persistence_env(settings: Settings) -> dict[str, str]:
    """The library's environment for `settings`: SQLite in `home` unless a URL says otherwise."""
    url = settings.db
    private_directory(settings.home)
    if not url or url.startswith("sqlite:///"):
        # sqlite:///relative/path or sqlite:////absolute/path, as SQLAlchemy spells them
        path = private_file(sqlite_file(settings))
        # the library's own switch to WAL is not retried when another process races it
        connect_shared(path).close()
        return {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(path),
            "APPLICATION_RECORDER_TOPIC": SQLITE_RECORDER,
        }
    if is_postgres(url):
        return postgres_env(url)
    raise InvalidInput(f"unsupported database URL {url!r}: use sqlite:///PATH or postgresql://")


def postgres_env(url: str) -> dict[str, str]:
    """`eventsourcing.postgres` settings from a `postgresql://` URL."""
    parsed = urlparse(url)
    query = parse_qs(parsed.query)
    unknown = set(query) - {"schema"}
    if unknown:
        raise InvalidInput(f"unsupported database URL option(s): {', '.join(sorted(unknown))}")
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": unquote(parsed.path.lstrip("/")) or "postgres",
        "POSTGRES_HOST": parsed.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(parsed.port or 5432),
        "POSTGRES_USER": unquote(parsed.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parsed.password or ""),
        "APPLICATION_RECORDER_TOPIC": POSTGRES_RECORDER,
        # the library's insert function does not take the table lock that keeps
        # positions in commit order (followers rely on it)
        "POSTGRES_ENABLE_DB_FUNCTIONS": "n",
    }
    if schema := query.get("schema", [""])[-1]:
        env["POSTGRES_SCHEMA"] = schema
    return env


def postgres_schema(url: str) -> str:
    """The schema the URL's tables live in (`public` unless `?schema=` names one)."""
    return parse_qs(urlparse(url).query).get("schema", [""])[-1] or "public"


# --- files of a home ---------------------------------------------------------------------

PRIVATE_DIRECTORY_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_directory(path: Path) -> Path:
    """`path`, created readable by its owner only if it does not exist (parents as the
    umask says: they may be shared directories)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=PRIVATE_DIRECTORY_MODE, exist_ok=True)
    return path


def private_file(path: Path) -> Path:
    """`path`, created empty and readable by its owner only if it does not exist; an empty
    file is a valid new SQLite database, and SQLite gives its -wal and -shm files the
    database file's mode."""
    if not path.exists():
        private_directory(path.parent)
        with suppress(FileExistsError):
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE_MODE))
    return path


# --- one writer per user at a time ----------------------------------------------------------

WRITER_LOCK_TIMEOUT_SECONDS = 300.0
"""How long a write waits for another writer of the same user before it gives up (a
decision holds the lock for the LLM calls it makes)."""

_LOCK_SLOTS = 2**31 - 1
"""Users hash onto this many lock slots; two users in one slot only wait for each other."""


class WriterBusy(LedgerError):
    """Another writer of the same user held the lock longer than the timeout."""

    def __str__(self) -> str:
        return (
            f"another writer of user {self.args[0]!r} has been deciding for more than "
            f"{self.args[1]:g} s; try again"
        )


def lock_slot(namespace: str, user_id: str) -> int:
    """A stable signed 64-bit number for (store, user): PostgreSQL's advisory lock key,
    and modulo `_LOCK_SLOTS` the byte of the SQLite lock file."""
    digest = hashlib.blake2b(f"{namespace}\0{user_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class WriterLocks:
    """Exclusive per-user locks shared by every process writing to one event store.

    A decision reads the user's stream, decides and saves; under optimistic concurrency
    alone a long decision (a new memory: reconstruction, links, core update) loses to the
    short ones (a restatement) every time they overlap, so a bounded retry turns that
    starvation into failed writes. Holding the user's lock from the read to the save makes
    the writers of one user take turns; the version check stays as the safety net for
    writers that do not take it. Reentrant within a thread.
    """

    def __init__(self, settings: Settings, timeout: float = WRITER_LOCK_TIMEOUT_SECONDS) -> None:
        self._url = settings.db
        self._postgres = is_postgres(self._url)
        self.timeout = timeout
        # advisory locks are per database: homes that spell the URL differently still meet
        self.namespace = (
            f"postgresql schema {postgres_schema(str(self._url))}"
            if self._postgres
            else str(sqlite_file(settings))
        )
        self._local = threading.local()
        self._guard = threading.Lock()
        self._threads: dict[int, threading.RLock] = {}
        self._file: int | None = None

    @contextmanager
    def hold(self, user_id: str) -> Iterator[None]:
        slot = lock_slot(self.namespace, user_id)
        held: dict[int, int] = self._local.__dict__.setdefault("held", {})
        if held.get(slot):
            held[slot] += 1
            try:
                yield
            finally:
                held[slot] -= 1
            return
        release = self._acquire(slot, user_id)
        held[slot] = 1
        try:
            yield
        finally:
            held[slot] = 0
            release()

    def holding(self) -> bool:
        """Whether this thread holds any user's lock."""
        held: dict[int, int] = self._local.__dict__.get("held", {})
        return any(held.values())

    def __del__(self) -> None:
        # per-thread PostgreSQL sessions close when their thread-local storage goes
        descriptor = getattr(self, "_file", None)
        if descriptor is not None:
            os.close(descriptor)

    def _acquire(self, slot: int, user_id: str) -> Callable[[], None]:
        if self._postgres:
            return self._acquire_advisory(slot, user_id)
        return self._acquire_file(slot, user_id)

    def _acquire_advisory(self, slot: int, user_id: str) -> Callable[[], None]:
        # one session per thread: advisory locks belong to the session, so threads sharing
        # one would not exclude each other
        import psycopg

        connection = self._local.__dict__.get("connection")
        if connection is None or connection.closed:
            env = postgres_env(str(self._url))
            connection = psycopg.connect(
                dbname=env["POSTGRES_DBNAME"],
                host=env["POSTGRES_HOST"],
                port=env["POSTGRES_PORT"],
                user=env["POSTGRES_USER"],
                password=env["POSTGRES_PASSWORD"] or None,
                autocommit=True,
            )
            connection.execute(f"SET lock_timeout = {max(1, int(self.timeout * 1000))}")
            self._local.connection = connection
        try:
            connection.execute("SELECT pg_advisory_lock(%s)", (slot,))
        except psycopg.errors.LockNotAvailable:
            raise WriterBusy(user_id, self.timeout) from None

        def release() -> None:
            connection.execute("SELECT pg_advisory_unlock(%s)", (slot,))

        return release

    def _acquire_file(self, slot: int, user_id: str) -> Callable[[], None]:
        # POSIX record locks belong to the process: threads of one process are kept apart
        # by an in-process lock per slot first
        with self._guard:
            thread_lock = self._threads.setdefault(slot, threading.RLock())
        if not thread_lock.acquire(timeout=self.timeout):
            raise WriterBusy(user_id, self.timeout)
        try:
            unlock_file = self._lock_file_range(slot % _LOCK_SLOTS, user_id)
        except BaseException:
            thread_lock.release()
            raise

        def release() -> None:
            try:
                unlock_file()
            finally:
                thread_lock.release()

        return release

    def _lock_file_range(self, offset: int, user_id: str) -> Callable[[], None]:
        if fcntl is None:  # pragma: no cover - Windows: the version check alone decides
            return lambda: None
        with self._guard:
            if self._file is None:
                path = private_file(Path(f"{self.namespace}.locks"))
                self._file = os.open(path, os.O_RDWR)
            descriptor = self._file
        deadline = time.monotonic() + self.timeout
        pause = 0.001
        while True:
            try:
                fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise WriterBusy(user_id, self.timeout) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.005)
        return lambda: fcntl.lockf(descriptor, fcntl.LOCK_UN, 1, offset)


_SHARED: weakref.WeakValueDictionary[str, WriterLocks] = weakref.WeakValueDictionary()
_SHARED_GUARD = threading.Lock()


def writer_locks(settings: Settings) -> WriterLocks:
    """The process's one `WriterLocks` for the settings' store: POSIX record locks belong
    to the process, and closing any descriptor of the lock file drops all of them, so
    every ledger of the process on one store shares it (for as long as one holds it)."""
    locks = WriterLocks(settings)
    with _SHARED_GUARD:
        return _SHARED.setdefault(locks.namespace, locks)


def sqlite_file(settings: Settings) -> Path:
    """The SQLite database file the settings name (the default one in the home)."""
    url = settings.db
    return Path(url.removeprefix("sqlite:///")) if url else settings.sqlite_path
