"""The library's PostgreSQL recorder, made safe for large saves and simultaneous starts.

- One `save()` of several thousand events hangs in psycopg's pipeline mode (measured:
  6,000 events of ~100 bytes or 3,000 of ~4 kB hang; see STACK.md). A save larger than
  `INSERT_CHUNK` events is inserted here in chunks, outside pipeline mode, in the same
  single transaction: still all or nothing, and still under the library's table lock,
  so positions are committed in order and a follower never passes over a gap that is
  filled later. (The library's alternative, `POSTGRES_ENABLE_DB_FUNCTIONS`, inserts
  without that lock, and its `CREATE OR REPLACE FUNCTION` fails when processes start
  together: not used.)
- Processes starting together race on `CREATE ... IF NOT EXISTS` in the catalog
  ("tuple concurrently updated"): table creation is retried.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import IntegrityError, InternalError, StoredEvent
from eventsourcing.postgres import PostgresAggregateRecorder, PostgresApplicationRecorder

INSERT_CHUNK = 1000
"""Events per INSERT statement of a large save."""

CREATE_ATTEMPTS = 5
"""How often table creation is tried when other processes create the same tables."""


class LedgerPostgresRecorder(PostgresApplicationRecorder):
    """`PostgresApplicationRecorder` with chunked large saves and retried table creation."""

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        if len(stored_events) <= INSERT_CHUNK:
            ids: Sequence[int] | None = super().insert_events(stored_events, **kwargs)
            return ids
        notification_ids: list[int] = []
        with (
            self.datastore.get_connection() as conn,
            conn.transaction(),
            conn.cursor() as curs,
        ):
            self._lock_table(curs)
            self._notify_channel(curs)
            for first in range(0, len(stored_events), INSERT_CHUNK):
                chunk = stored_events[first : first + INSERT_CHUNK]
                # the plain INSERT (with RETURNING), without taking the lock again
                PostgresAggregateRecorder._insert_stored_events(self, curs, chunk)
                notification_ids.extend(row["notification_id"] for row in curs.fetchall())
        return notification_ids

    def create_table(self) -> None:
        for attempt in range(CREATE_ATTEMPTS):
            try:
                super().create_table()
                return
            except (InternalError, IntegrityError):
                if attempt == CREATE_ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
