"""Queued conversation turns not yet extracted (seed 004 §3 Trigger 1), read from the log.

`TurnsQueued` adds a pending hand-over of one (user, thread); the ingest that extracts it
names it in `IngestRequested.input.queued`, and once that command completes or fails the
hand-over is no longer pending (a failed extraction is recorded on its command and is not
retried forever). An ingest whose process died before completing leaves its hand-overs
pending, so they are extracted again after a restart: nothing handed over is lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from mnemoledger.ledger import EventRecord
from mnemoledger.projections.sqlite_model import SQLiteReadModel

TURNS_QUEUED: Final = "TurnsQueued"
INGEST_REQUESTED: Final = "IngestRequested"
COMMAND_ENDED: Final = frozenset({"CommandCompleted", "CommandFailed"})
USER_ERASED: Final = "UserErased"
TURN_QUEUE_DIR: Final = "turn_queue"
"""Its directory under the home's read models."""

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS queued_turns ("
    " queue_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, thread_id TEXT NOT NULL,"
    " position INTEGER NOT NULL, turns INTEGER NOT NULL, at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS queued_by_thread ON queued_turns (user_id, thread_id, position)",
    "CREATE TABLE IF NOT EXISTS queue_claims ("
    " command_id TEXT NOT NULL, queue_id TEXT NOT NULL, user_id TEXT NOT NULL,"
    " PRIMARY KEY (command_id, queue_id))",
)


@dataclass(frozen=True)
class QueuedThread:
    """A thread with turns waiting: how many hand-overs and turns, and the newest's time."""

    user_id: str
    thread_id: str
    queued: int
    turns: int
    last_at: datetime


def _claimed(data: Mapping[str, Any]) -> list[str]:
    given = data.get("input")
    queued = given.get("queued") if isinstance(given, Mapping) else None
    if not isinstance(queued, list):
        return []
    return [q for q in queued if isinstance(q, str)]


class PendingTurns(SQLiteReadModel):
    """Hand-overs of turns by (user, thread), until an ingest that consumed them ends."""

    name = "turn_queue"
    schema = _SCHEMA
    tables = ("queued_turns", "queue_claims")

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "turn_queue.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type == TURNS_QUEUED:
            turns = record.data.get("turns")
            self.db.execute(
                "INSERT OR REPLACE INTO queued_turns VALUES (?, ?, ?, ?, ?, ?)",
                (
                    record.stream_id,
                    record.user_id,
                    str(record.data.get("thread", record.thread_id)),
                    record.position or 0,
                    len(turns) if isinstance(turns, list) else 0,
                    record.at.isoformat(),
                ),
            )
        elif record.type == INGEST_REQUESTED:
            for queue_id in _claimed(record.data):
                self.db.execute(
                    "INSERT OR REPLACE INTO queue_claims VALUES (?, ?, ?)",
                    (record.stream_id, queue_id, record.user_id),
                )
        elif record.type in COMMAND_ENDED:
            self.db.execute(
                "DELETE FROM queued_turns WHERE queue_id IN"
                " (SELECT queue_id FROM queue_claims WHERE command_id = ?)",
                (record.stream_id,),
            )
            self.db.execute("DELETE FROM queue_claims WHERE command_id = ?", (record.stream_id,))
        elif record.type == USER_ERASED:
            erased = record.data.get("user_id", record.user_id)
            for table in self.tables:
                self.db.execute(f"DELETE FROM {table} WHERE user_id = ?", (erased,))

    def threads(self, user_id: str | None = None) -> list[QueuedThread]:
        """Threads with turns waiting (of one user, or of everyone), oldest wait first."""
        rows = self.db.execute(
            "SELECT user_id, thread_id, COUNT(*), SUM(turns), MAX(at) FROM queued_turns"
            " WHERE ? IS NULL OR user_id = ? GROUP BY user_id, thread_id ORDER BY MAX(at)",
            (user_id, user_id),
        ).fetchall()
        return [
            QueuedThread(str(u), str(t), int(n), int(k), datetime.fromisoformat(str(at)))
            for u, t, n, k, at in rows
        ]

    def queue_ids(self, user_id: str, thread_id: str) -> list[str]:
        """The thread's pending hand-overs, in the order they were logged."""
        rows = self.db.execute(
            "SELECT queue_id FROM queued_turns WHERE user_id = ? AND thread_id = ?"
            " ORDER BY position",
            (user_id, thread_id),
        ).fetchall()
        return [str(r[0]) for r in rows]
