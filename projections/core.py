"""The `core` read model: each user's `core.md` as a file, and every version of it.

The file is replaced atomically (write a temporary file, then rename), and every
`CoreUpdated` is kept as a numbered version in a small SQLite table that also records the
projection's position, in the same transaction.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ledger import EventRecord

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS core_versions ("
    " user_id TEXT NOT NULL, version INTEGER NOT NULL, markdown TEXT NOT NULL,"
    " at TEXT NOT NULL, position INTEGER NOT NULL, causation_id TEXT,"
    " PRIMARY KEY (user_id, version))",
    "CREATE TABLE IF NOT EXISTS projection_position (name TEXT PRIMARY KEY, position INTEGER)",
)


class CoreProjection:
    """`core.md` per user under `directory/<user>/core.md`, with its version history."""

    name = "core"

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._db = sqlite3.connect(directory / "core.sqlite3", isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=30000")
        for statement in _SCHEMA:
            self._db.execute(statement)

    def position(self) -> int:
        row = self._db.execute(
            "SELECT position FROM projection_position WHERE name = ?", (self.name,)
        ).fetchone()
        return int(row[0]) if row else 0

    def apply(self, records: Sequence[EventRecord]) -> None:
        if not records:
            return
        latest: dict[str, str] = {}
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for record in records:
                if record.type != "CoreUpdated":
                    continue
                (current,) = self._db.execute(
                    "SELECT COALESCE(MAX(version), 0) FROM core_versions WHERE user_id = ?",
                    (record.user_id,),
                ).fetchone()
                self._db.execute(
                    "INSERT INTO core_versions VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        record.user_id,
                        current + 1,
                        record.data["markdown"],
                        record.at.isoformat(),
                        record.position,
                        record.causation_id,
                    ),
                )
                latest[record.user_id] = record.data["markdown"]
            self._db.execute(
                "INSERT OR REPLACE INTO projection_position VALUES (?, ?)",
                (self.name, records[-1].position),
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        for user_id, markdown in latest.items():
            _replace_file(self.path(user_id), markdown)

    def reset(self) -> None:
        self._db.execute("DELETE FROM core_versions")
        self._db.execute("DELETE FROM projection_position")
        for path in self.directory.glob("*/core.md"):
            path.unlink()

    def close(self) -> None:
        self._db.close()

    # --- queries -------------------------------------------------------------------------

    def path(self, user_id: str) -> Path:
        """Where the user's core.md lives (the directory name is readable, and unique)."""
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in user_id)[:64]
        digest = hashlib.sha1(user_id.encode()).hexdigest()[:8]
        return self.directory / f"{safe}-{digest}" / "core.md"

    def current(self, user_id: str) -> tuple[str, int]:
        """The latest markdown and its version (empty and 0 before the first update)."""
        row = self._db.execute(
            "SELECT markdown, version FROM core_versions WHERE user_id = ? "
            "ORDER BY version DESC LIMIT 1",
            (user_id,),
        ).fetchone()
        return (row[0], int(row[1])) if row else ("", 0)

    def versions(self, user_id: str) -> list[dict[str, object]]:
        """Every version, oldest first."""
        rows = self._db.execute(
            "SELECT version, markdown, at, position, causation_id FROM core_versions "
            "WHERE user_id = ? ORDER BY version",
            (user_id,),
        ).fetchall()
        keys = ("version", "markdown", "at", "position", "causation_id")
        return [dict(zip(keys, row, strict=True)) for row in rows]


def _replace_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".core-", suffix=".md")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
