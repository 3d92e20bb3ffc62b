"""The `topics` read model: each user's latest named Topiary tree (seed 001 §6), from
`TopicTreeBuilt` events. The tree is an index, not a source of truth (§10.11): it reflects
the log position it was built at and lags later writes until the next build."""

from __future__ import annotations

import builtins
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemoledger.ledger import EventRecord
from mnemoledger.projections.sqlite_model import SQLiteReadModel

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS topics (user_id TEXT NOT NULL, topic_id TEXT NOT NULL,"
    " name TEXT NOT NULL, parent TEXT, members INTEGER NOT NULL, children TEXT NOT NULL,"
    " signature TEXT NOT NULL, built_at TEXT NOT NULL, built_position INTEGER NOT NULL,"
    " PRIMARY KEY (user_id, topic_id))",
    "CREATE TABLE IF NOT EXISTS topic_members (user_id TEXT NOT NULL, topic_id TEXT NOT NULL,"
    " memory_id TEXT NOT NULL, PRIMARY KEY (user_id, topic_id, memory_id))",
    "CREATE TABLE IF NOT EXISTS topic_builds (user_id TEXT PRIMARY KEY,"
    " built_position INTEGER NOT NULL)",
)


@dataclass(frozen=True)
class TopicRow:
    id: str
    name: str
    parent: str | None
    members: int
    """Memories in the topic (a parent counts its children's)."""
    children: list[str]
    built_at: str
    built_position: int

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "parent": self.parent,
            "members": self.members,
            "children": self.children,
        }


class TopicsProjection(SQLiteReadModel):
    """The latest topic tree per user, with its members."""

    name = "topics"
    schema = _SCHEMA
    tables = ("topics", "topic_members", "topic_builds")

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "topics.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type != "TopicTreeBuilt":
            return
        user = record.data["user"]
        self.db.execute(
            "INSERT OR REPLACE INTO topic_builds VALUES (?, ?)", (user, record.data["position"])
        )
        self.db.execute("DELETE FROM topics WHERE user_id = ?", (user,))
        self.db.execute("DELETE FROM topic_members WHERE user_id = ?", (user,))
        topics = record.data["topics"]
        sizes = {t["id"]: len(t["members"]) for t in topics}
        for topic in topics:
            size = sizes[topic["id"]] + sum(sizes.get(c, 0) for c in topic["children"])
            self.db.execute(
                "INSERT INTO topics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    user,
                    topic["id"],
                    topic["name"],
                    topic["parent"],
                    size,
                    json.dumps(topic["children"]),
                    topic["signature"],
                    record.at.isoformat(),
                    record.data["position"],
                ),
            )
            self.db.executemany(
                "INSERT OR IGNORE INTO topic_members VALUES (?, ?, ?)",
                [(user, topic["id"], m) for m in topic["members"]],
            )

    def tree(self, user_id: str) -> builtins.list[TopicRow]:
        """Every topic of the user: leaves by members (most first), then parents."""
        rows = self.db.execute(
            "SELECT topic_id, name, parent, members, children, built_at, built_position "
            "FROM topics WHERE user_id = ?",
            (user_id,),
        ).fetchall()
        found = [TopicRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6]) for r in rows]
        return sorted(found, key=lambda t: (bool(t.children), -t.members, _number(t.id)))

    def built_positions(self) -> dict[str, int]:
        """Per user, the log position the user's newest tree was built from (a tree of no
        topics included)."""
        rows = self.db.execute("SELECT user_id, built_position FROM topic_builds").fetchall()
        return {str(user): int(position) for user, position in rows}

    def members(self, user_id: str, topic_id: str) -> builtins.list[str]:
        """Memory ids of a leaf, or of every leaf under a parent."""
        rows = self.db.execute(
            "SELECT memory_id FROM topic_members WHERE user_id = ? AND (topic_id = ? OR "
            "topic_id IN (SELECT value FROM topics, json_each(topics.children) "
            "WHERE topics.user_id = ? AND topics.topic_id = ?)) ORDER BY memory_id",
            (user_id, topic_id, user_id, topic_id),
        ).fetchall()
        return [r[0] for r in rows]

    def names_by_signature(self, user_id: str) -> dict[str, str]:
        """Names of the current tree's topics by member signature (reused when unchanged)."""
        rows = self.db.execute(
            "SELECT signature, name FROM topics WHERE user_id = ?", (user_id,)
        ).fetchall()
        return {r[0]: r[1] for r in rows}


def _number(topic_id: str) -> int:
    digits = "".join(c for c in topic_id if c.isdigit())
    return int(digits) if digits else 0
