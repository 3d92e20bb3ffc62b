"""The `core` read model: each user's `core.md` as a file, and every version of it.

The file is replaced atomically (write a temporary file, then rename), and every
`CoreUpdated` is kept as a numbered version in a small SQLite table that also records the
projection's position, in the same transaction; next to it, each version's bullets and the
memory ids each rests on (none for versions written before they were recorded).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.core import parse_sections
from mnemoledger.projections.sqlite_model import SQLiteReadModel

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS core_versions ("
    " user_id TEXT NOT NULL, version INTEGER NOT NULL, markdown TEXT NOT NULL,"
    " at TEXT NOT NULL, position INTEGER NOT NULL, causation_id TEXT,"
    " PRIMARY KEY (user_id, version))",
    "CREATE TABLE IF NOT EXISTS core_bullets ("
    " user_id TEXT NOT NULL, version INTEGER NOT NULL, ordinal INTEGER NOT NULL,"
    " section TEXT NOT NULL, bullet TEXT NOT NULL, memory_ids TEXT NOT NULL,"
    " PRIMARY KEY (user_id, version, ordinal))",
)


@dataclass(frozen=True)
class CoreBulletRow:
    """A bullet of core.md as the read model keeps it."""

    section: str
    text: str
    memory_ids: list[str]
    """The memories the bullet rests on (empty: written before sources were recorded)."""


class CoreProjection(SQLiteReadModel):
    """`core.md` per user under `directory/<user>/core.md`, with its version history."""

    name = "core"
    schema = _SCHEMA
    tables = ("core_versions", "core_bullets")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._written: dict[str, str] = {}
        super().__init__(directory / "core.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type != "CoreUpdated":
            return
        (current,) = self.db.execute(
            "SELECT COALESCE(MAX(version), 0) FROM core_versions WHERE user_id = ?",
            (record.user_id,),
        ).fetchone()
        self.db.execute(
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
        sources = record.data.get("sources") or {}
        bullets = [
            (section, bullet)
            for section, texts in parse_sections(record.data["markdown"]).items()
            for bullet in texts
        ]
        self.db.executemany(
            "INSERT INTO core_bullets VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    record.user_id,
                    current + 1,
                    ordinal,
                    section,
                    bullet,
                    json.dumps(list(sources.get(bullet) or [])),
                )
                for ordinal, (section, bullet) in enumerate(bullets)
            ],
        )
        self._written[record.user_id] = record.data["markdown"]

    def after_commit(self) -> None:
        written, self._written = self._written, {}
        for user_id, markdown in written.items():
            _replace_file(self.path(user_id), markdown)

    def after_rollback(self) -> None:
        self._written = {}

    def reset(self) -> None:
        super().reset()
        for path in self.directory.glob("*/core.md"):
            path.unlink()

    # --- queries -------------------------------------------------------------------------

    def path(self, user_id: str) -> Path:
        """Where the user's core.md lives (the directory name is readable, and unique)."""
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in user_id)[:64]
        digest = hashlib.sha1(user_id.encode()).hexdigest()[:8]
        return self.directory / f"{safe}-{digest}" / "core.md"

    def current(self, user_id: str) -> tuple[str, int]:
        """The latest markdown and its version (empty and 0 before the first update)."""
        row = self.db.execute(
            "SELECT markdown, version FROM core_versions WHERE user_id = ? "
            "ORDER BY version DESC LIMIT 1",
            (user_id,),
        ).fetchone()
        return (row[0], int(row[1])) if row else ("", 0)

    def bullets(self, user_id: str) -> list[CoreBulletRow]:
        """The current version's bullets in order, each with the memory ids it rests on."""
        rows = self.db.execute(
            "SELECT section, bullet, memory_ids FROM core_bullets WHERE user_id = ? AND"
            " version = (SELECT MAX(version) FROM core_versions WHERE user_id = ?)"
            " ORDER BY ordinal",
            (user_id, user_id),
        ).fetchall()
        return [CoreBulletRow(section, text, json.loads(ids)) for section, text, ids in rows]

    def versions(self, user_id: str) -> list[dict[str, object]]:
        """Every version, oldest first."""
        rows = self.db.execute(
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
