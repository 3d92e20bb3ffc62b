"""The memory flush guard (Nebo, seed 004 §10): which compaction cycle of a thread was last
flushed, read back from the log.

Nebo keeps `memory_flush_compaction_count` on its sessions row and flushes only when it is
below the session's `compaction_count`. Here a flush is an ingest whose recorded input names
the thread and its compaction count (`IngestRequested.input.flush`); it counts once its
command completed having run (`CommandCompleted.outcome.flush.ran`). This small read model
folds those two events into one row per flush, so the guard survives restarts, is the same
for every process on the log, and each flush stays visible in the history (the command).

It is derived from the log alone and kept by the runner with the other read models (caught
up before each check, rebuilt from position 0 when its file is lost, purged of an erased
user with the others).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from mnemoledger.ledger import EventRecord
from mnemoledger.projections.sqlite_model import SQLiteReadModel

INGEST_REQUESTED: Final = "IngestRequested"
COMMAND_COMPLETED: Final = "CommandCompleted"
USER_ERASED: Final = "UserErased"
FLUSH_GUARD_DIR: Final = "flushes"
"""Its directory under the home's read models."""

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS flush_requests ("
    " command_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, thread_id TEXT NOT NULL,"
    " compaction INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS flushes ("
    " command_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, thread_id TEXT NOT NULL,"
    " compaction INTEGER NOT NULL, at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS flushes_by_thread ON flushes (user_id, thread_id, compaction)",
)


@dataclass(frozen=True)
class FlushRecord:
    """A flush the log records: the compaction count it ran at, its command and time."""

    compaction: int
    command_id: str
    at: str


def _flush_of(data: Mapping[str, Any]) -> tuple[str, int] | None:
    given = data.get("input")
    flush = given.get("flush") if isinstance(given, Mapping) else None
    if not isinstance(flush, Mapping):
        return None
    thread, compaction = flush.get("thread"), flush.get("compaction")
    if not isinstance(thread, str) or isinstance(compaction, bool):
        return None
    if not isinstance(compaction, int):
        return None
    return thread, compaction


def _ran(data: Mapping[str, Any]) -> bool:
    outcome = data.get("outcome")
    flush = outcome.get("flush") if isinstance(outcome, Mapping) else None
    return isinstance(flush, Mapping) and flush.get("ran") is True


class FlushGuard(SQLiteReadModel):
    """Flushes by (user, thread), from `IngestRequested` and its `CommandCompleted`."""

    name = "flushes"
    schema = _SCHEMA
    tables = ("flush_requests", "flushes")

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "flushes.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type == INGEST_REQUESTED:
            flush = _flush_of(record.data)
            if flush is not None:
                self.db.execute(
                    "INSERT OR REPLACE INTO flush_requests VALUES (?, ?, ?, ?)",
                    (record.stream_id, record.user_id, *flush),
                )
        elif record.type == COMMAND_COMPLETED and _ran(record.data):
            self.db.execute(
                "INSERT OR REPLACE INTO flushes SELECT command_id, user_id, thread_id,"
                " compaction, ? FROM flush_requests WHERE command_id = ?",
                (record.at.isoformat(), record.stream_id),
            )
        elif record.type == USER_ERASED:
            erased = record.data.get("user_id", record.user_id)
            for table in self.tables:
                self.db.execute(f"DELETE FROM {table} WHERE user_id = ?", (erased,))

    def last(self, user_id: str, thread_id: str) -> FlushRecord | None:
        """The flush of the thread at the highest compaction count, if any."""
        row = self.db.execute(
            "SELECT compaction, command_id, at FROM flushes WHERE user_id = ? AND thread_id = ?"
            " ORDER BY compaction DESC, at DESC LIMIT 1",
            (user_id, thread_id),
        ).fetchone()
        return None if row is None else FlushRecord(int(row[0]), str(row[1]), str(row[2]))
