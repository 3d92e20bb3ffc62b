"""The `checkpoints` read model (seed 003 §15's `supervisor_checkpoints`): the newest
checkpoint of each (user, thread), with when it was first and last saved.

Follows `CheckpointSaved`: each save replaces its thread's row (one row per user and
thread, unique), so a load is one indexed read. Earlier checkpoints stay in the log only
(`load_checkpoint(version=...)` reads them there). Rows are rebuilt from the log like every
read model's; an erased user's events never reach it, so their checkpoints leave it with
them.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from pathlib import Path

from mnemoledger.ledger import EventRecord
from mnemoledger.projections.sqlite_model import SQLiteReadModel

SAVED = "CheckpointSaved"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS checkpoints (id TEXT PRIMARY KEY, user_id TEXT NOT NULL,"
    " thread_id TEXT NOT NULL, data TEXT NOT NULL, revision INTEGER NOT NULL,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL, position INTEGER NOT NULL,"
    " agent_id TEXT, actor TEXT NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS checkpoints_by_thread ON checkpoints (user_id, thread_id)",
    "CREATE INDEX IF NOT EXISTS checkpoints_by_update ON checkpoints (updated_at DESC)",
    "CREATE INDEX IF NOT EXISTS checkpoints_by_user_update"
    " ON checkpoints (user_id, updated_at DESC, position DESC)",
)

_COLUMNS = (
    "id, user_id, thread_id, revision, created_at, updated_at, position, agent_id, actor,"
    " length(CAST(data AS BLOB))"
)


@dataclass(frozen=True)
class CheckpointRow:
    """One thread's newest checkpoint as the read model holds it (without its data)."""

    id: str
    """The checkpoint stream (derived from user and thread)."""
    user_id: str
    thread_id: str
    revision: int
    """How many checkpoints of the thread were saved; this is the newest."""
    created_at: str
    """When the thread's first checkpoint was saved (UTC, ISO 8601)."""
    updated_at: str
    """When this one was saved."""
    position: int
    """Its position in the log."""
    agent_id: str | None
    actor: str
    size: int
    """Bytes of its JSON text."""


class CheckpointsProjection(SQLiteReadModel):
    """Per (user, thread), the newest checkpoint."""

    name = "checkpoints"
    schema = _SCHEMA
    tables = ("checkpoints",)

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "checkpoints.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type != SAVED:
            return
        at = record.at.isoformat()
        self.db.execute(
            "INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (user_id, thread_id) DO UPDATE SET data = excluded.data,"
            " revision = excluded.revision, updated_at = excluded.updated_at,"
            " position = excluded.position, agent_id = excluded.agent_id,"
            " actor = excluded.actor",
            (
                record.stream_id,
                record.user_id,
                str(record.data["thread"]),
                str(record.data["data"]),
                int(record.data["revision"]),
                at,
                at,
                record.position,
                record.agent_id,
                record.actor,
            ),
        )

    def get(self, user_id: str, thread_id: str) -> tuple[CheckpointRow, str] | None:
        """The thread's newest checkpoint and its JSON text, or None if none was saved."""
        row = self.db.execute(
            f"SELECT {_COLUMNS}, data FROM checkpoints WHERE user_id = ? AND thread_id = ?",
            (user_id, thread_id),
        ).fetchone()
        return None if row is None else (_row(row), str(row[-1]))

    def list(self, user_id: str, limit: int) -> builtins.list[CheckpointRow]:
        """The user's threads with a checkpoint, most recently saved first."""
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE user_id = ?"
            " ORDER BY updated_at DESC, position DESC LIMIT ?",
            (user_id, limit),
        ).fetchall()
        return [_row(r) for r in rows]

    def count(self) -> int:
        """Threads with a checkpoint, of every user."""
        return int(self.db.execute("SELECT count(*) FROM checkpoints").fetchone()[0])


def _row(row: tuple[object, ...]) -> CheckpointRow:
    return CheckpointRow(
        id=str(row[0]),
        user_id=str(row[1]),
        thread_id=str(row[2]),
        revision=int(str(row[3])),
        created_at=str(row[4]),
        updated_at=str(row[5]),
        position=int(str(row[6])),
        agent_id=None if row[7] is None else str(row[7]),
        actor=str(row[8]),
        size=int(str(row[9])),
    )
