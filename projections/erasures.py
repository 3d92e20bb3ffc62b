"""What one home's read models know of the log's erasures.

Every `UserErased` the runner finds in the log is noted here (position and user id: no
content), together with how far the log was scanned for them and through which erasure the
home's read models were last purged (rebuilt without the erased users, their cached
vectors dropped, every SQLite file compacted). An erasure noted but not yet purged makes
the next catch-up purge first, in whichever process of the home gets there first; a purge
cut short is simply done again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mnemoledger.ledger.sqlite_files import connect_shared

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS erasures (position INTEGER PRIMARY KEY, user_id TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS erasure_state (name TEXT PRIMARY KEY, position INTEGER NOT NULL)",
)

SCANNED = "scanned"
"""The last log position looked at for `UserErased` events."""
PURGED = "purged"
"""The position of the last erasure the read models were purged of."""


class ErasureLog:
    """The erasures a home has seen and purged, in `erasures.sqlite3` beside the read models."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = connect_shared(path)
        self._db.execute("PRAGMA synchronous=NORMAL")  # as layers, vectors: rebuildable
        for statement in _SCHEMA:
            self._db.execute(statement)

    def _state(self, name: str) -> int:
        row = self._db.execute(
            "SELECT position FROM erasure_state WHERE name = ?", (name,)
        ).fetchone()
        return int(row[0]) if row else 0

    def scanned(self) -> int:
        return self._state(SCANNED)

    def purged(self) -> int:
        return self._state(PURGED)

    def note(self, found: Sequence[tuple[int, str]], scanned_through: int) -> None:
        """Record erasures found at (position, user) and how far the log was scanned."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany("INSERT OR IGNORE INTO erasures VALUES (?, ?)", found)
            self._db.execute(
                "INSERT INTO erasure_state VALUES (?, ?) ON CONFLICT (name) DO UPDATE"
                " SET position = MAX(position, excluded.position)",
                (SCANNED, scanned_through),
            )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def latest(self) -> int:
        """The position of the newest erasure noted (0: none)."""
        row = self._db.execute("SELECT COALESCE(MAX(position), 0) FROM erasures").fetchone()
        return int(row[0])

    def pending(self) -> bool:
        """Whether an erasure was noted that the read models were not purged of."""
        return self.latest() > self.purged()

    def by_user(self) -> dict[str, int]:
        """Each erased user's newest erasure position: their events before it are gone."""
        rows = self._db.execute(
            "SELECT user_id, MAX(position) FROM erasures GROUP BY user_id"
        ).fetchall()
        return {str(user): int(position) for user, position in rows}

    def mark_purged(self, position: int) -> None:
        self._db.execute("INSERT OR REPLACE INTO erasure_state VALUES (?, ?)", (PURGED, position))

    def close(self) -> None:
        self._db.close()
