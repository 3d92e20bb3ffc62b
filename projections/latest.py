"""The `latest` read model: HAEMA's recency index (seed 000: `latest.sqlite3`, served by
`get_latest`), each user's memories by when their content was last written.

- a memory enters when it is added, and moves to the front when its content is written
  again (`MemoryUpdated`, or `MemoryMerged`: it absorbed others);
- it leaves while it is not active: superseded (a reconstruction or a merge replaced it;
  the replacement is the newer entry), forgotten, lapsed, evicted, expired or purged;
  `MemoryRestored` brings it back at its last write, not as a new one.

Only ids, users and write times are kept: the content is read from the `layers` model, so
an erased user's text is never held here.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from pathlib import Path

from mnemoledger.ledger import EventRecord
from mnemoledger.projections.sqlite_model import SQLiteReadModel

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS latest (id TEXT PRIMARY KEY, user_id TEXT NOT NULL,"
    " at TEXT NOT NULL, position INTEGER NOT NULL, active INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS latest_by_user ON latest (user_id, active, position)",
)

WRITTEN = frozenset({"MemoryAdded", "MemoryUpdated", "MemoryMerged"})
"""Events that write a memory's content."""
ENDED = frozenset(
    {
        "MemorySuperseded",
        "MemorySoftDeleted",
        "MemoryLapsed",
        "MemoryEvicted",
        "MemoryExpired",
        "MemoryPurged",
    }
)
"""Events after which a memory is no longer active."""
RESTORED = "MemoryRestored"


@dataclass(frozen=True)
class LatestEntry:
    id: str
    at: str
    """When the memory's content was last written (UTC, ISO 8601)."""
    position: int
    """The log position of that write."""


class LatestProjection(SQLiteReadModel):
    """Per user, the active memories newest write first."""

    name = "latest"
    schema = _SCHEMA
    tables = ("latest",)

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "latest.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type == "MemoryAdded":
            self.db.execute(
                "INSERT OR REPLACE INTO latest VALUES (?, ?, ?, ?, 1)",
                (record.stream_id, record.user_id, record.at.isoformat(), record.position),
            )
        elif record.type in WRITTEN:
            self.db.execute(
                "UPDATE latest SET at = ?, position = ? WHERE id = ?",
                (record.at.isoformat(), record.position, record.stream_id),
            )
        elif record.type in ENDED:
            self.db.execute("UPDATE latest SET active = 0 WHERE id = ?", (record.stream_id,))
        elif record.type == RESTORED:
            self.db.execute("UPDATE latest SET active = 1 WHERE id = ?", (record.stream_id,))

    def latest(self, user_id: str, limit: int) -> builtins.list[LatestEntry]:
        """`get_latest`: the user's `limit` most recently written active memories, newest
        first."""
        rows = self.db.execute(
            "SELECT id, at, position FROM latest WHERE user_id = ? AND active = 1 "
            "ORDER BY position DESC LIMIT ?",
            (user_id, limit),
        ).fetchall()
        return [LatestEntry(r[0], r[1], int(r[2])) for r in rows]
