"""The library's SQLite recorder, letting a save write more events in its own transaction.

`Ledger.save` passes a hook (keyword `WITHIN_TRANSACTION`, which the library hands from
`Application.save(**kwargs)` to `insert_events`). The hook runs after the save's events
were inserted, before the commit, holding the log's write lock: it learns their positions,
may read the log as of that moment (its own uncommitted rows included) and may insert more
events, which commit or roll back with the save. The automatic seal (`ledger.tamper`) is
written this way: one synced commit of the log per batch instead of two.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor

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


class LedgerSQLiteRecorder(SQLiteApplicationRecorder):
    """`SQLiteApplicationRecorder` running a save's `WITHIN_TRANSACTION` hook before the
    commit (any exception it raises rolls the save back)."""

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
