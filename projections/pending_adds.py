"""Adds recorded but not yet processed, read from the log.

`AddRequested` makes an add pending; the `CommandCompleted` or `CommandFailed` of its
stream ends it. An add whose process died between recording the request and saving the
decision stays pending, so `mnemoledger worker` and `serve` find it again after a restart
and process it from its recorded input: nothing acknowledged is lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

from mnemoledger.ledger import EventRecord
from mnemoledger.projections.sqlite_model import SQLiteReadModel

ADD_REQUESTED: Final = "AddRequested"
COMMAND_ENDED: Final = frozenset({"CommandCompleted", "CommandFailed"})
USER_ERASED: Final = "UserErased"
PENDING_ADDS_DIR: Final = "pending_adds"
"""Its directory under the home's read models."""

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS pending_adds ("
    " command_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, position INTEGER NOT NULL,"
    " at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS pending_by_position ON pending_adds (position)",
)


@dataclass(frozen=True)
class PendingAdd:
    """An add whose request is in the log and whose decision is not."""

    command_id: str
    """The add's command stream."""
    user_id: str
    """Whose memory it adds to."""
    requested_at: datetime
    """When the request was recorded."""


class PendingAdds(SQLiteReadModel):
    """`AddRequested` commands with neither `CommandCompleted` nor `CommandFailed`."""

    name = "pending_adds"
    schema = _SCHEMA
    tables = ("pending_adds",)

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "pending_adds.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type == ADD_REQUESTED and record.version == 1:
            self.db.execute(
                "INSERT OR REPLACE INTO pending_adds VALUES (?, ?, ?, ?)",
                (record.stream_id, record.user_id, record.position or 0, record.at.isoformat()),
            )
        elif record.type in COMMAND_ENDED:
            self.db.execute("DELETE FROM pending_adds WHERE command_id = ?", (record.stream_id,))
        elif record.type == USER_ERASED:
            erased = record.data.get("user_id", record.user_id)
            self.db.execute("DELETE FROM pending_adds WHERE user_id = ?", (erased,))

    def pending(self, user_id: str | None = None) -> list[PendingAdd]:
        """The pending adds (of one user, or of everyone), oldest first."""
        rows = self.db.execute(
            "SELECT command_id, user_id, at FROM pending_adds"
            " WHERE ? IS NULL OR user_id = ? ORDER BY position",
            (user_id, user_id),
        ).fetchall()
        return [PendingAdd(str(c), str(u), datetime.fromisoformat(str(at))) for c, u, at in rows]
