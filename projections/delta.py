"""The `delta` read model: per-thread revisions and change log for the delta header (seed 003 §1).

A thread's revision counts the memory-changing commands made in it: every event that
changes a memory (`MemoryAdded`, `MemoryUpdated`, `MemorySuperseded`, `MemorySoftDeleted`,
`MemoryRestored`, `TTLSet`) and carries a `thread_id` belongs to the revision of its
command (`causation_id`), so one command — however many memories it touches — raises the
revision by exactly one ("rev increments atomically"). Each such event is one change-log row
(thread, rev, memory, event, meta, ts); the last `DELTA_CHANGE_LOG_REVISIONS` revisions of a
thread are kept. A command that creates a memory and supersedes others into it is one
`merged` row. `RecallServed` events record the revision each agent was last served in a
thread, the default "since" of the next query.

Consolidation's changes count the same way when their command runs in a thread: a
`MemoryMerged` winner is a `merged` row (its new text, "replaces N" for the memories it
absorbed, whose `MemorySuperseded` events fold into it); an evicted, expired, lapsed (seed
003 §7 soft delete) or purged memory is a `deleted` row. A purge, in a thread or not, also
removes the memory's text from every earlier row and from the model's copy of the memory
(seed 003 §7: "content removed from read models"); such rows read "(purged)". The file
deletes securely, so no old text stays in its free pages.

The header names at most `DELTA_MAX_BULLETS` changes, newest first, one per memory (its net
change: a memory created and then edited is `created` with its latest text; one created
and deleted, or deleted and restored, inside the window is left out):

    Memory updates since rev 4:
    - +created: [Preferences] Maya prefers green tea (imp=3)
    - ↑updated: [Tasks] Ship v1 by Sep
    - ↔merged: [Knowledge] Maya lives in Berlin (replaces 1)
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.policy import (
    DELTA_BULLET_MAX_CHARS,
    DELTA_CHANGE_LOG_REVISIONS,
    DELTA_HEADER_TITLE,
    DELTA_MAX_BULLETS,
    DELTA_SYMBOLS,
    SENSITIVE,
)
from mnemoledger.projections.layers import effective_category
from mnemoledger.projections.sqlite_model import SQLiteReadModel

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS thread_revision (thread_id TEXT PRIMARY KEY, rev INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS command_revision ("
    " thread_id TEXT NOT NULL, causation_id TEXT NOT NULL, rev INTEGER NOT NULL,"
    " PRIMARY KEY (thread_id, causation_id))",
    "CREATE TABLE IF NOT EXISTS change_log ("
    " id INTEGER PRIMARY KEY,"  # the event's position in the log
    " thread_id TEXT NOT NULL, rev INTEGER NOT NULL, memory_id TEXT NOT NULL,"
    " user_id TEXT NOT NULL, event TEXT NOT NULL, meta TEXT NOT NULL, ts TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS change_log_by_thread ON change_log (thread_id, rev DESC)",
    "CREATE TABLE IF NOT EXISTS delta_memories ("
    " id TEXT PRIMARY KEY, user_id TEXT NOT NULL, content TEXT NOT NULL,"
    " category TEXT NOT NULL, importance REAL NOT NULL, sensitive INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS served_revision ("
    " thread_id TEXT NOT NULL, agent_id TEXT NOT NULL, rev INTEGER NOT NULL,"
    " PRIMARY KEY (thread_id, agent_id))",
)

CREATED = "created"
UPDATED = "updated"
MERGED = "merged"
DELETED = "deleted"
RESTORED = "restored"
TTL = "ttl"

CHANGE_EVENTS = {
    "MemoryAdded": CREATED,
    "MemoryUpdated": UPDATED,
    "MemorySuperseded": MERGED,
    "MemorySoftDeleted": DELETED,
    "MemoryRestored": RESTORED,
    "TTLSet": TTL,
    "MemoryMerged": MERGED,
    "MemoryEvicted": DELETED,
    "MemoryExpired": DELETED,
    "MemoryLapsed": DELETED,
    "MemoryPurged": DELETED,
}
"""Memory events that count as a change of a thread (seed 003 §1: created, updated, merged,
deleted/soft_deleted, restored; and TTL changes). Layer moves, tags and importance changes
are consolidation's bookkeeping, not news for the supervisor."""

PURGED_TEXT = "(purged)"
"""What a change-log row of a purged memory shows in place of its text."""


@dataclass(frozen=True)
class Change:
    """One row of a thread's change log."""

    thread_id: str
    rev: int
    memory_id: str
    user_id: str
    event: str
    meta: dict[str, Any]
    ts: str
    position: int

    @property
    def category(self) -> str:
        return str(self.meta.get("category", ""))

    def bullet(self) -> str:
        """`- +created: [Category] text (imp=N)` (seed 003 §1), N on the seed's 1-5 scale."""
        meta = self.meta
        suffix = ""
        if self.event == CREATED:
            suffix = f" (imp={seed_importance(float(meta.get('importance', 0.0)))})"
        elif self.event == MERGED and meta.get("replaces"):
            suffix = f" (replaces {meta['replaces']})"
        elif self.event == MERGED:
            suffix = " (superseded)"
        elif self.event == TTL and meta.get("expires_at"):
            suffix = f" (expires {str(meta['expires_at'])[:10]})"
        label = self.category.replace("_", " ")
        label = label[:1].upper() + label[1:]
        text = PURGED_TEXT if meta.get("purged") else _short(str(meta.get("content", "")))
        return f"- {DELTA_SYMBOLS.get(self.event, '*')}{self.event}: [{label}] {text}{suffix}"


class DeltaProjection(SQLiteReadModel):
    """Per-thread revisions, change log and served revisions under `directory/delta.sqlite3`."""

    name = "delta"
    schema = _SCHEMA
    tables = (
        "thread_revision",
        "command_revision",
        "change_log",
        "delta_memories",
        "served_revision",
    )

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        super().__init__(directory / "delta.sqlite3")
        self.db.execute("PRAGMA secure_delete = ON")  # a purged text leaves no free-page copy

    # --- folding -------------------------------------------------------------------------

    def handle(self, record: EventRecord) -> None:
        if record.type == "MemoryAdded":
            self._remember(record)
        elif record.type in ("MemoryUpdated", "MemoryMerged"):
            self.db.execute(
                "UPDATE delta_memories SET content = ? WHERE id = ?",
                (record.data["content"], record.stream_id),
            )
        elif record.type == "MemoryPurged":
            self._purge(record.stream_id)
        elif record.type == "RecallServed":
            self._served(record)
            return
        event = CHANGE_EVENTS.get(record.type)
        if event is None or not record.thread_id:
            return
        memory = self._memory(record.stream_id)
        if memory is None:
            return
        rev = self._revision_of(record.thread_id, record.causation_id)
        meta: dict[str, Any] = dict(memory)
        if record.type == "TTLSet":
            meta["expires_at"] = record.data.get("expires_at")
        if record.type == "MemoryMerged":
            absorbed = [str(i) for i in record.data.get("absorbed") or ()]
            meta["absorbed"] = absorbed
            meta["replaces"] = len(absorbed)
        if record.type == "MemoryPurged":
            meta["purged"] = True
        if record.type == "MemorySuperseded":
            replacement = str(record.data.get("superseded_by", ""))
            meta["superseded_by"] = replacement
            if self._merge_into(record.thread_id, rev, replacement, record.stream_id):
                return
        self.db.execute(
            "INSERT OR REPLACE INTO change_log VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.position,
                record.thread_id,
                rev,
                record.stream_id,
                record.user_id,
                event,
                json.dumps(meta, ensure_ascii=False, sort_keys=True),
                record.at.isoformat(),
            ),
        )

    def _remember(self, record: EventRecord) -> None:
        data = record.data
        self.db.execute(
            "INSERT OR REPLACE INTO delta_memories VALUES (?, ?, ?, ?, ?, ?)",
            (
                record.stream_id,
                record.user_id,
                data["content"],
                effective_category(
                    data.get("category"), data["kind"], data["namespace"], data.get("note_kind")
                ),
                float(data.get("importance", 0.0)),
                int(data.get("sensitivity") == SENSITIVE),
            ),
        )

    def _memory(self, memory_id: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT content, category, importance, sensitive FROM delta_memories WHERE id = ?",
            (memory_id,),
        ).fetchone()
        if row is None:
            return None
        return {
            "content": row[0],
            "category": row[1],
            "importance": row[2],
            "sensitive": bool(row[3]),
        }

    def _revision_of(self, thread_id: str, causation_id: str) -> int:
        """The revision of this command in this thread: a new one for its first event."""
        row = self.db.execute(
            "SELECT rev FROM command_revision WHERE thread_id = ? AND causation_id = ?",
            (thread_id, causation_id),
        ).fetchone()
        if row is not None:
            return int(row[0])
        rev = self.revision(thread_id) + 1
        self.db.execute("INSERT OR REPLACE INTO thread_revision VALUES (?, ?)", (thread_id, rev))
        self.db.execute(
            "INSERT INTO command_revision VALUES (?, ?, ?)", (thread_id, causation_id, rev)
        )
        oldest_kept = rev - DELTA_CHANGE_LOG_REVISIONS
        for table in ("change_log", "command_revision"):
            self.db.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND rev <= ?", (thread_id, oldest_kept)
            )
        return rev

    def _purge(self, memory_id: str) -> None:
        """Seed 003 §7: the memory's text leaves the model and every change-log row of it."""
        self.db.execute("UPDATE delta_memories SET content = '' WHERE id = ?", (memory_id,))
        rows = self.db.execute(
            "SELECT id, meta FROM change_log WHERE memory_id = ?", (memory_id,)
        ).fetchall()
        for row_id, text in rows:
            meta = {**json.loads(text), "content": "", "purged": True}
            self.db.execute(
                "UPDATE change_log SET meta = ? WHERE id = ?",
                (json.dumps(meta, ensure_ascii=False, sort_keys=True), row_id),
            )

    def _merge_into(self, thread_id: str, rev: int, replacement: str, superseded: str) -> bool:
        """Count a superseded memory on its replacement's row when the same command created
        that replacement or merged it into it (one `merged` change); False when it did
        not."""
        row = self.db.execute(
            "SELECT id, meta FROM change_log WHERE thread_id = ? AND rev = ? AND memory_id = ?"
            " AND event IN (?, ?) ORDER BY id LIMIT 1",
            (thread_id, rev, replacement, CREATED, MERGED),
        ).fetchone()
        if row is None:
            return False
        meta = json.loads(row[1])
        if superseded in meta.get("absorbed", ()):
            return True  # the merge's row already counts it
        meta["replaces"] = int(meta.get("replaces", 0)) + 1
        self.db.execute(
            "UPDATE change_log SET event = ?, meta = ? WHERE id = ?",
            (MERGED, json.dumps(meta, ensure_ascii=False, sort_keys=True), row[0]),
        )
        return True

    def _served(self, record: EventRecord) -> None:
        rev = record.data.get("rev")
        if record.thread_id and record.agent_id and rev is not None:
            self.db.execute(
                "INSERT OR REPLACE INTO served_revision VALUES (?, ?, ?)",
                (record.thread_id, record.agent_id, int(rev)),
            )

    # --- queries -------------------------------------------------------------------------

    def revision(self, thread_id: str) -> int:
        """The thread's revision: how many memory-changing commands were made in it."""
        row = self.db.execute(
            "SELECT rev FROM thread_revision WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def served_revision(self, thread_id: str, agent_id: str) -> int | None:
        """The revision `agent_id` was last served in `thread_id` (RecallServed), if ever."""
        row = self.db.execute(
            "SELECT rev FROM served_revision WHERE thread_id = ? AND agent_id = ?",
            (thread_id, agent_id),
        ).fetchone()
        return int(row[0]) if row else None

    def changes(self, thread_id: str, since_rev: int = 0) -> builtins.list[Change]:
        """The kept change-log rows of `thread_id` after `since_rev`, newest first."""
        rows = self.db.execute(
            "SELECT thread_id, rev, memory_id, user_id, event, meta, ts, id FROM change_log"
            " WHERE thread_id = ? AND rev > ? ORDER BY rev DESC, id DESC",
            (thread_id, since_rev),
        ).fetchall()
        return [
            Change(r[0], int(r[1]), r[2], r[3], r[4], json.loads(r[5]), r[6], int(r[7]))
            for r in rows
        ]

    def header(
        self,
        thread_id: str,
        since_rev: int = 0,
        *,
        user_id: str | None = None,
        categories: Collection[str] | None = None,
        max_bullets: int = DELTA_MAX_BULLETS,
    ) -> str | None:
        """Seed 003 §1: "Memory updates since rev {X}:" and at most `max_bullets` (<= 3)
        net changes, newest first; None when nothing changed since `since_rev`. Only changes
        of `user_id`'s memories in `categories` (when given) that are not sensitive."""
        bullets = [
            c.bullet()
            for c in self.net_changes(thread_id, since_rev, user_id=user_id, categories=categories)
        ][: max(0, min(max_bullets, DELTA_MAX_BULLETS))]
        if not bullets:
            return None
        return "\n".join([DELTA_HEADER_TITLE.format(rev=since_rev), *bullets])

    def net_changes(
        self,
        thread_id: str,
        since_rev: int = 0,
        *,
        user_id: str | None = None,
        categories: Collection[str] | None = None,
    ) -> builtins.list[Change]:
        """One change per memory since `since_rev`, newest first: its net effect."""
        by_memory: dict[str, builtins.list[Change]] = {}
        for change in self.changes(thread_id, since_rev):
            if user_id is not None and change.user_id != user_id:
                continue
            if categories is not None and change.category not in categories:
                continue
            if change.meta.get("sensitive"):
                continue
            by_memory.setdefault(change.memory_id, []).append(change)
        net: builtins.list[Change] = []
        for history in by_memory.values():  # newest first: dicts keep insertion order
            outcome = _net(history)
            if outcome is not None:
                net.append(outcome)
        return net


def _net(history: list[Change]) -> Change | None:
    """The net change of one memory from its changes in the window (newest first)."""
    newest = history[0]
    events = {c.event for c in history}
    born = next(
        (
            c
            for c in history
            if c.event == CREATED
            or (c.event == MERGED and c.meta.get("replaces") and "absorbed" not in c.meta)
        ),
        None,
    )
    gone = newest.event == DELETED or (newest.event == MERGED and not newest.meta.get("replaces"))
    if gone and born is not None and born is not newest:
        return None  # created, then deleted or superseded, inside the window: nothing to tell
    if newest.event == RESTORED and DELETED in events and born is None:
        return None  # deleted and restored inside the window: as it was
    if born is not None and newest.event in (UPDATED, TTL, RESTORED):
        # born inside the window and still there: one bullet for its birth, as it reads now
        content = next((c.meta["content"] for c in history if "content" in c.meta), None)
        meta = {**born.meta, "content": content or born.meta.get("content")}
        return Change(
            newest.thread_id,
            newest.rev,
            newest.memory_id,
            newest.user_id,
            born.event,
            meta,
            newest.ts,
            newest.position,
        )
    return newest


def _short(text: str) -> str:
    """One line, at most `DELTA_BULLET_MAX_CHARS` characters."""
    line = " ".join(text.split())
    if len(line) <= DELTA_BULLET_MAX_CHARS:
        return line
    return line[: DELTA_BULLET_MAX_CHARS - 1].rstrip() + "…"


def seed_importance(importance: float) -> int:
    """Our 0-1 importance on seed 003's 1-5 scale (0 -> 1, 0.5 -> 3, 1 -> 5)."""
    return 1 + round(4 * min(max(importance, 0.0), 1.0))
