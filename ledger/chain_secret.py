"""The chain secret and the log's witness, kept with the keys and never in the log.

One row holds:
- the secret that keys every event's hash (HMAC-SHA256, `ledger.integrity.ChainKey`), so
  whoever can write the log but cannot read this row cannot forge or rewrite an event;
- `legacy_through`: the last position written before the home had a secret (those events
  carry the old unkeyed chain);
- the tip: the position, stream, version and hash of the newest event any process has
  written, so a log cut short after its last seal still shows;
- the lost tip: the tip as it was when a later save found it deleted, so later writes
  cannot hide a truncation. On SQLite a save given the tip's own position finds it (SQLite
  hands a deleted row's position out again); on PostgreSQL, which never reuses one, the
  save's tip update asks whether the tip's row is still in the log;
- the last seal: the position of the newest `Sealed` event and the position it seals to;
- how many events were written since the secret exists, so rows deleted anywhere show
  even where positions may skip (PostgreSQL) and no seal covers them yet.

On SQLite the row lives in its own file beside the log (`chain.sqlite3`, 0600, WAL,
synchronous=FULL): advancing the tip after every save costs one append to its WAL and one
fsync (~0.7 ms measured), where the keys file, kept in rollback-journal mode for the data
keys' secure deletion, cost four (~4 ms). A home whose row is still in its keys file (written
before) has it moved on first open. On PostgreSQL the row is in its own table in the log's
schema, so every process on that log shares it.

What a crash can lose: the tip is advanced after the log's commit, both durable (fsync)
before they return. A crash between the two leaves the tip one save behind the log (and the
count short by that save's events): `verify` then sees a log longer than its witness, which
is never reported, so a truncation of exactly that last save before any seal would go
unnoticed. Nothing a crash does makes the witness name an event the log does not hold.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from eventsourcing.persistence import ApplicationRecorder

from mnemoledger.ledger.policy import CHAIN_SECRET_BYTES
from mnemoledger.ledger.sqlite_files import BUSY_TIMEOUT_SECONDS, connect_shared
from mnemoledger.ledger.store import private_file

if TYPE_CHECKING:
    from eventsourcing.postgres import PostgresDatastore

TABLE = "chain_secret"
"""The table in the chain file (SQLite; before, in the keys file)."""
CHAIN_FILE = "chain.sqlite3"
"""The chain secret and witness of a SQLite log, beside the log file."""
POSTGRES_TABLE = "mnemoledger_chain_secret"
"""The table in the log's schema (PostgreSQL), beside the library's `mnemoledger_events`."""

_CREATE_ATTEMPTS = 5
"""How often table creation is tried when other processes create the same table."""


@dataclass(frozen=True)
class Tip:
    """The newest event written to the log, as its writer saw it."""

    position: int
    stream: str
    """The stream id, hex."""
    version: int
    hash: str


@dataclass(frozen=True)
class ChainState:
    """What the store holds."""

    secret: bytes
    legacy_through: int
    """Positions up to here were written before the secret existed (0: none)."""
    created_at: str
    tip: Tip | None
    sealed_through: int
    """The last position covered by the newest seal this store heard of."""
    last_seal: int
    """The position of that seal's `Sealed` event (0: none)."""
    reused: Tip | None
    """A former tip a later save found deleted (None: never)."""
    written: int
    """Events saved since the secret was created (after `legacy_through`)."""


class ChainSecretStore(Protocol):
    """Where the chain secret and the witness live."""

    def load(self) -> ChainState | None:
        """The stored row, or None before the first secret."""
        ...

    def create(self, legacy_through: int) -> ChainState:
        """Store a new random secret unless one exists; the stored row either way."""
        ...

    def advance_tip(self, tip: Tip, first: int, events: int) -> None:
        """Count the `events` of a save whose first position is `first` and remember
        `tip`, its newest event, unless a later position is remembered already; if the
        remembered tip is gone from the log, remember it as lost (once)."""
        ...

    def sealed(self, sealed_through: int, seal_position: int) -> None:
        """Remember the newest seal unless a later one is remembered already."""
        ...

    def advance_tip_sealed(
        self, tip: Tip, first: int, events: int, sealed_through: int, seal_position: int
    ) -> None:
        """`advance_tip` and `sealed` in one write (a save that wrote its own seal)."""
        ...

    def close(self) -> None: ...


def _new_row(legacy_through: int) -> tuple[bytes, int, str]:
    return os.urandom(CHAIN_SECRET_BYTES), legacy_through, datetime.now(UTC).isoformat()


def _tip(position: Any, stream: Any, version: Any, digest: Any) -> Tip | None:
    return None if not position else Tip(int(position), str(stream), int(version), str(digest))


def _state(row: Any) -> ChainState:
    secret, legacy, created = row[:3]
    through, seal = row[7:9]
    return ChainState(
        bytes(secret),
        int(legacy),
        str(created),
        _tip(*row[3:7]),
        int(through),
        int(seal),
        _tip(*row[9:13]),
        int(row[13]),
    )


_COLUMNS = (
    "secret, legacy_through, created_at, tip_position, tip_stream, tip_version, tip_hash, "
    "sealed_through, last_seal, reused_position, reused_stream, reused_version, reused_hash, "
    "written"
)

_TIP_COLUMNS = ("position", "stream", "version", "hash")

_ADVANCE = (
    "UPDATE {table} SET "
    + ", ".join(
        f"reused_{c} = CASE WHEN reused_position = 0 AND (tip_position BETWEEN {{p}} AND {{p}}"
        f"{{gone}}) THEN tip_{c} ELSE reused_{c} END"
        for c in _TIP_COLUMNS
    )
    + ", "
    + ", ".join(
        f"tip_{c} = CASE WHEN tip_position < {{p}} THEN {{p}} ELSE tip_{c} END"
        for c in _TIP_COLUMNS
    )
    + ", written = written + {p} WHERE id = 1"
)
"""One statement (every right-hand side reads the row as it was): the lost tip first,
then the new tip and the count. Placeholders in order: per reused column (first, last),
then per tip column (last position, new value), then the save's event count. `{gone}`
adds a test that the tip's row still exists, where the log is in the same database."""

_GONE = (
    " OR (tip_position > 0 AND NOT EXISTS"
    " (SELECT 1 FROM {events} WHERE notification_id = tip_position))"
)


def _advance_parameters(tip: Tip, first: int, events: int) -> tuple[Any, ...]:
    values = (tip.position, tip.stream, tip.version, tip.hash)
    reused = tuple(x for _ in _TIP_COLUMNS for x in (first, tip.position))
    return (*reused, *(x for v in values for x in (tip.position, v)), events)


_EXTRA_COLUMNS = (
    " reused_position {int} NOT NULL DEFAULT 0, reused_stream text NOT NULL DEFAULT '',"
    " reused_version {int} NOT NULL DEFAULT 0, reused_hash text NOT NULL DEFAULT '',"
    " written {int} NOT NULL DEFAULT 0,"
)
_ADD_WRITTEN = "ALTER TABLE {table} ADD COLUMN written {int} NOT NULL DEFAULT 0"
"""For a table created before the count existed (it then counts from zero: never more
than the log holds)."""


_SQLITE_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    " id INTEGER PRIMARY KEY CHECK (id = 1), secret BLOB NOT NULL,"
    " legacy_through INTEGER NOT NULL, created_at TEXT NOT NULL,"
    " tip_position INTEGER NOT NULL DEFAULT 0, tip_stream TEXT NOT NULL DEFAULT '',"
    " tip_version INTEGER NOT NULL DEFAULT 0, tip_hash TEXT NOT NULL DEFAULT '',"
    + _EXTRA_COLUMNS.format(int="INTEGER")
    + " sealed_through INTEGER NOT NULL DEFAULT 0, last_seal INTEGER NOT NULL DEFAULT 0)"
)


_SQLITE_SEALED = (
    f"UPDATE {TABLE} SET sealed_through = ?, last_seal = ? WHERE id = 1 AND last_seal < ?"
)


class SQLiteChainSecrets:
    """The row in the chain file beside a SQLite log (`CHAIN_FILE`), in WAL mode.

    `legacy`: the keys file where homes written before kept the row; it is moved from there
    (in one transaction of the chain file, so that two processes opening the home at once
    both find it) and dropped from the keys file."""

    def __init__(self, path: Path, legacy: Path | None = None) -> None:
        private_file(path)
        self._lock = threading.Lock()
        self._db = connect_shared(path)
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute(_SQLITE_CREATE)
        columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({TABLE})")}
        if "written" not in columns:
            self._db.execute(_ADD_WRITTEN.format(table=TABLE, int="INTEGER"))
        if legacy is not None and legacy.exists() and legacy.resolve() != path.resolve():
            self._adopt(legacy)

    def _adopt(self, legacy: Path) -> None:
        """Move the row of an older home's keys file here, unless this file has one."""
        old = sqlite3.connect(legacy, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        try:
            if not old.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
            ).fetchone():
                return
            found = {row[1] for row in old.execute(f"PRAGMA table_info({TABLE})")}
            columns = [c.strip() for c in _COLUMNS.split(",") if c.strip() in found]
            names = ", ".join(columns)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if self._db.execute(f"SELECT 1 FROM {TABLE} WHERE id = 1").fetchone() is None:
                    row = old.execute(f"SELECT {names} FROM {TABLE} WHERE id = 1").fetchone()
                    if row is not None:
                        marks = ", ".join("?" * (len(columns) + 1))
                        self._db.execute(
                            f"INSERT INTO {TABLE} (id, {names}) VALUES ({marks})", (1, *row)
                        )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            old.execute("PRAGMA secure_delete = ON")
            old.execute(f"DROP TABLE IF EXISTS {TABLE}")
        finally:
            old.close()

    def load(self) -> ChainState | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM {TABLE} WHERE id = 1").fetchone()
        return None if row is None else _state(row)

    def create(self, legacy_through: int) -> ChainState:
        with self._lock:
            self._db.execute(
                f"INSERT OR IGNORE INTO {TABLE} (id, secret, legacy_through, created_at) "
                "VALUES (1, ?, ?, ?)",
                _new_row(legacy_through),
            )
        state = self.load()
        assert state is not None
        return state

    def advance_tip(self, tip: Tip, first: int, events: int) -> None:
        with self._lock:
            self._db.execute(
                _ADVANCE.format(table=TABLE, p="?", gone=""),
                _advance_parameters(tip, first, events),
            )

    def sealed(self, sealed_through: int, seal_position: int) -> None:
        with self._lock:
            self._db.execute(_SQLITE_SEALED, (sealed_through, seal_position, seal_position))

    def advance_tip_sealed(
        self, tip: Tip, first: int, events: int, sealed_through: int, seal_position: int
    ) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    _ADVANCE.format(table=TABLE, p="?", gone=""),
                    _advance_parameters(tip, first, events),
                )
                self._db.execute(_SQLITE_SEALED, (sealed_through, seal_position, seal_position))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_store(
    recorder: ApplicationRecorder, chain_file: Path, legacy: Path | None = None
) -> ChainSecretStore:
    """The store for the log held by `recorder`: its PostgreSQL database, else `chain_file`
    (taking over the row an older home kept in `legacy`, its keys file)."""
    # a PostgreSQL recorder was built from `eventsourcing.postgres`, so the module is loaded
    # by then; importing it to ask would load psycopg in every SQLite process (~0.1 s CPU)
    postgres = sys.modules.get("eventsourcing.postgres")
    if postgres is not None and isinstance(recorder, postgres.PostgresApplicationRecorder):
        return PostgresChainSecrets(recorder.datastore, recorder.events_table_name)
    return SQLiteChainSecrets(chain_file, legacy)


class PostgresChainSecrets:
    """The row in its own table of the log's PostgreSQL schema (through the log's pool)."""

    def __init__(self, datastore: PostgresDatastore, events_table: str) -> None:
        from psycopg.errors import InternalError_, UniqueViolation
        from psycopg.sql import SQL, Identifier

        self._datastore = datastore
        schema = datastore.schema or "public"
        table = SQL("{}.{}").format(Identifier(schema), Identifier(POSTGRES_TABLE))
        create = SQL(
            "CREATE TABLE IF NOT EXISTS {} ("
            " id integer PRIMARY KEY CHECK (id = 1), secret bytea NOT NULL,"
            " legacy_through bigint NOT NULL, created_at text NOT NULL,"
            " tip_position bigint NOT NULL DEFAULT 0, tip_stream text NOT NULL DEFAULT '',"
            " tip_version bigint NOT NULL DEFAULT 0, tip_hash text NOT NULL DEFAULT '',"
            + _EXTRA_COLUMNS.format(int="bigint")
            + " sealed_through bigint NOT NULL DEFAULT 0, last_seal bigint NOT NULL DEFAULT 0)"
        ).format(table)
        self._select = SQL("SELECT " + _COLUMNS + " FROM {} WHERE id = 1").format(table)
        self._insert = SQL(
            "INSERT INTO {} (id, secret, legacy_through, created_at)"
            " VALUES (1, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
        ).format(table)
        gone = _GONE.format(events="{events}")
        self._tip = SQL(_ADVANCE.format(table="{table}", p="%s", gone=gone)).format(
            table=table, events=SQL("{}.{}").format(Identifier(schema), Identifier(events_table))
        )
        self._lock_row = SQL("SELECT 1 FROM {} WHERE id = 1 FOR UPDATE").format(table)
        self._seal = SQL(
            "UPDATE {} SET sealed_through = %s, last_seal = %s WHERE id = 1 AND last_seal < %s"
        ).format(table)
        add_written = SQL(_ADD_WRITTEN.format(table="{}", int="bigint")).format(table)
        for attempt in range(_CREATE_ATTEMPTS):
            try:
                with datastore.transaction(commit=True) as curs:
                    curs.execute(create)
                    curs.execute(
                        "SELECT 1 FROM information_schema.columns WHERE table_schema = %s"
                        " AND table_name = %s AND column_name = 'written'",
                        (schema, POSTGRES_TABLE),
                    )
                    if curs.fetchone() is None:
                        curs.execute(add_written)
                return
            except (InternalError_, UniqueViolation):  # created by another process meanwhile
                if attempt == _CREATE_ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def load(self) -> ChainState | None:
        with self._datastore.transaction(commit=False) as curs:
            curs.execute(self._select)
            row = curs.fetchone()
        return None if row is None else _state(list(row.values()))

    def create(self, legacy_through: int) -> ChainState:
        with self._datastore.transaction(commit=True) as curs:
            curs.execute(self._insert, _new_row(legacy_through))
        state = self.load()
        assert state is not None
        return state

    def advance_tip(self, tip: Tip, first: int, events: int) -> None:
        with self._datastore.transaction(commit=True) as curs:
            # The row lock first: the UPDATE, a statement of its own, then reads the log
            # as of after the previous tip's writer committed, so that tip's row shows.
            curs.execute(self._lock_row)
            curs.execute(self._tip, _advance_parameters(tip, first, events))

    def sealed(self, sealed_through: int, seal_position: int) -> None:
        with self._datastore.transaction(commit=True) as curs:
            curs.execute(self._seal, (sealed_through, seal_position, seal_position))

    def advance_tip_sealed(
        self, tip: Tip, first: int, events: int, sealed_through: int, seal_position: int
    ) -> None:
        with self._datastore.transaction(commit=True) as curs:
            curs.execute(self._lock_row)
            curs.execute(self._tip, _advance_parameters(tip, first, events))
            curs.execute(self._seal, (sealed_through, seal_position, seal_position))

    def close(self) -> None:
        """The pool belongs to the log's recorder, which closes it."""
