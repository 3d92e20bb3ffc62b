"""The library's SQLite recorder, letting a save write more events in its own transaction.

`Ledger.save` passes a hook (keyword `WITHIN_TRANSACTION`, which the library hands from
`Application.save(**kwargs)` to `insert_events`). The hook runs after the save's events
were inserted, before the commit, holding the log's write lock: it learns their positions,
may read the log as of that moment (its own uncommitted rows included) and may insert more
events, which commit or roll back with the save. The automatic seal (`ledger.tamper`) is
written this way: one synced commit of the log per batch instead of two. A save's events
are inserted with one `executemany` (see `LedgerSQLiteRecorder._insert_events`), and the
log's WAL is checkpointed every `LOG_WAL_AUTOCHECKPOINT_PAGES` pages, with a page cache of
`LOG_CACHE_KIB` per connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.sqlite import (
    SQLiteApplicationRecorder,
    SQLiteConnection,
    SQLiteCursor,
    SQLiteDatastore,
)

WITHIN_TRANSACTION = "mnemoledger_within_transaction"
"""The keyword argument of `save` (and `insert_events`) that carries the hook."""


class InTransaction:
    """What a hook may do inside the save's transaction."""

    def __init__(self, recorder: LedgerSQLiteRecorder, cursor: SQLiteCursor) -> None:
        self._recorder = recorder
        self._cursor = cursor

    def select_notifications(
        self, after: int, limit: int, topics: Sequence[str] = ()
    ) -> list[Notification]:
        """`select_notifications(after, limit, topics=..., inclusive_of_start=False)` of the
        library, read through the save's own connection."""
        table = self._recorder.events_table_name
        sql = f"SELECT rowid, originator_id, originator_version, topic, state FROM {table} "
        sql += "WHERE rowid > ? "
        params: list[Any] = [after]
        if topics:
            sql += f"AND topic IN ({', '.join('?' * len(topics))}) "
            params.extend(topics)
        sql += "ORDER BY rowid LIMIT ?"
        params.append(limit)
        self._cursor.execute(sql, params)
        convert = self._recorder.convert_originator_id
        return [
            Notification(
                id=row[0],
                originator_id=convert(row[1]),
                originator_version=row[2],
                topic=row[3],
                state=row[4],
            )
            for row in self._cursor.fetchall()
        ]

    def insert_unless_conflicting(self, stored_events: Sequence[StoredEvent]) -> list[int] | None:
        """Insert `stored_events` and return their positions; None, with nothing inserted
        and the save's own events kept, if one of them exists already."""
        cursor = self._cursor
        cursor.execute("SAVEPOINT mnemoledger_within")
        try:
            ids = self._recorder._insert_events(cursor, stored_events)
        except sqlite3.IntegrityError:
            cursor.execute("ROLLBACK TO mnemoledger_within")
            cursor.execute("RELEASE mnemoledger_within")
            return None
        cursor.execute("RELEASE mnemoledger_within")
        return list(ids or ())


Hook = Callable[[Sequence[StoredEvent], Sequence[int], InTransaction], None]
"""Called inside a save's transaction with its stored events and their positions."""


_LARGEST_ROWID = 2**63 - 1
"""Once a table holds this rowid, SQLite picks new rowids at random."""

LOG_WAL_AUTOCHECKPOINT_PAGES = 4000
"""The log's WAL is copied into the database file once it holds this many pages (16 MiB;
SQLite's default, 1000, is two or three batches of 1000 events). Each checkpoint costs two
fsyncs, and the next commit a third of the WAL's header; readers and durability are the
same either way (every commit syncs the WAL)."""

LOG_CACHE_KIB = 16 * 1024
"""Page cache of each connection to the log (SQLite's default: 2 MiB). Batches insert
under randomly keyed index pages: past ~50k events most of them no longer fit in 2 MiB and
are read again from the file (~3.5 µs of CPU per event at 60k events). Taken only as pages
are read."""


class LedgerSQLiteRecorder(SQLiteApplicationRecorder):
    """`SQLiteApplicationRecorder` running a save's `WITHIN_TRANSACTION` hook before the
    commit (any exception it raises rolls the save back), and inserting a save's events
    with one `executemany` instead of one statement each."""

    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = "stored_events"):
        super().__init__(datastore, events_table_name)
        pool = datastore.pool
        create = pool._create_connection

        def create_connection() -> SQLiteConnection:
            connection = create()
            sqlite = connection._sqlite_conn
            sqlite.execute(f"PRAGMA wal_autocheckpoint = {LOG_WAL_AUTOCHECKPOINT_PAGES}")
            sqlite.execute(f"PRAGMA cache_size = -{LOG_CACHE_KIB}")
            return connection

        pool._create_connection = create_connection  # type: ignore[method-assign]

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """The library's insert, in one `executemany`. Its events get consecutive
        positions ending at the table's largest rowid: the transaction holds the write lock
        from the first row on, and SQLite gives each new row the largest rowid plus one
        while that is below `_LARGEST_ROWID`, so a largest rowid below it afterwards means
        every row got one that way (otherwise each row's position is looked up by key)."""
        count = len(stored_events)
        if count < 2:
            return super()._insert_events(c, stored_events, **kwargs)
        c.executemany(
            self.insert_events_statement,
            [
                (
                    s.originator_id.hex if isinstance(s.originator_id, UUID) else s.originator_id,
                    s.originator_version,
                    s.topic,
                    s.state,
                )
                for s in stored_events
            ],
        )
        c.execute(self.select_max_notification_id_statement)
        last: int = c.fetchone()[0]
        if last < _LARGEST_ROWID:
            return list(range(last - count + 1, last + 1))
        return [self._position_of(c, s) for s in stored_events]

    def _position_of(self, c: SQLiteCursor, stored: StoredEvent) -> int:
        oid = stored.originator_id
        c.execute(
            f"SELECT rowid FROM {self.events_table_name} "
            "WHERE originator_id = ? AND originator_version = ?",
            (oid.hex if isinstance(oid, UUID) else oid, stored.originator_version),
        )
        position: int = c.fetchone()[0]
        return position

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        hook: Hook | None = kwargs.pop(WITHIN_TRANSACTION, None)
        if hook is None:
            return super().insert_events(stored_events, **kwargs)
        with self.datastore.transaction(commit=True) as cursor:
            ids = self._insert_events(cursor, stored_events, **kwargs)
            hook(stored_events, list(ids or ()), InTransaction(self, cursor))
        return ids
