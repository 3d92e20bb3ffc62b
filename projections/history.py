"""The `history` read model: seed 003 §8's audit table, one row per event of a memory.

Every event on a memory stream becomes a row naming what happened (ADD, UPDATE, DELETE,
MERGE, LINK, TTL, RESTORE, REINFORCE; consolidation's PROMOTE, DEMOTE, EVICT, EXPIRE, LAPSE,
PURGE; any other event type by its own name), the old and new value where there is one,
who did it (actor, agent, thread), which command caused it and the prompt that decided it.
The LLM calls of every command are kept beside it, so a row can name the call (stage,
prompt version, model, tokens) that decided it.

A purge (seed 003 §7: "content removed from read models; the event remains") blanks the
content of every row of the memory: old and new text, and the content-bearing fields of
each row's event data (`PURGED_FIELDS`). The file deletes securely, so no old text stays
in its free pages.
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemoledger.ledger import EventRecord
from mnemoledger.projections.sqlite_model import SQLiteReadModel

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS history ("
    " id TEXT PRIMARY KEY, position INTEGER NOT NULL, memory_id TEXT NOT NULL,"
    " user_id TEXT NOT NULL, event TEXT NOT NULL, type TEXT NOT NULL, version INTEGER NOT NULL,"
    " old_ref TEXT, new_ref TEXT, actor TEXT, agent_id TEXT, thread_id TEXT,"
    " causation_id TEXT, prompt_version TEXT, meta TEXT NOT NULL, ts TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS history_by_memory ON history (memory_id, ts DESC)",
    "CREATE INDEX IF NOT EXISTS history_by_user ON history (user_id, position)",
    "CREATE TABLE IF NOT EXISTS history_contents (memory_id TEXT PRIMARY KEY, content TEXT)",
    "CREATE TABLE IF NOT EXISTS llm_calls ("
    " command_id TEXT NOT NULL, seq INTEGER NOT NULL, position INTEGER NOT NULL,"
    " user_id TEXT NOT NULL, stage TEXT NOT NULL, prompt TEXT NOT NULL, provider TEXT,"
    " model TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, latency_ms REAL,"
    " ts TEXT NOT NULL, PRIMARY KEY (command_id, seq))",
)

SEED_EVENTS = {
    "MemoryAdded": "ADD",
    "MemoryUpdated": "UPDATE",
    "MemorySoftDeleted": "DELETE",
    "MemorySuperseded": "MERGE",
    "MemoryLinked": "LINK",
    "TTLSet": "TTL",
    "MemoryRestored": "RESTORE",
    "MemoryReinforced": "REINFORCE",
    "MemoryMerged": "MERGE",
    "MemoryPromoted": "PROMOTE",
    "MemoryDemoted": "DEMOTE",
    "MemoryEvicted": "EVICT",
    "MemoryExpired": "EXPIRE",
    "MemoryLapsed": "LAPSE",
    "MemoryPurged": "PURGE",
}
"""Seed 003 §8's event names; REINFORCE (a restatement merged into a memory) and the
consolidation's moves and ends (seed 001 §1-§5, 003 §7) added in the seed's style."""

_NEW_REF = {
    "MemorySuperseded": "superseded_by",
    "MemoryLinked": "target_id",
    "TTLSet": "expires_at",
    "MemoryPromoted": "to_layer",
    "MemoryDemoted": "to_layer",
    "MemoryExpired": "expired_at",
    "MemoryLapsed": "purge_at",
    "ImportanceAdjusted": "importance",
}
"""Which field of an event is its `new_ref`, where it is not the content."""

PURGED_FIELDS = ("content", "tags", "evidence", "metadata", "key", "reason")
"""Fields of a row's event data a purge blanks: the memory's text and what may quote it
(an LLM's or a rule's free-text reason)."""

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

_COLUMNS = (
    "id",
    "position",
    "memory_id",
    "user_id",
    "event",
    "type",
    "version",
    "old_ref",
    "new_ref",
    "actor",
    "agent_id",
    "thread_id",
    "causation_id",
    "prompt_version",
    "meta",
    "ts",
)


@dataclass(frozen=True)
class LLMCallRow:
    """One recorded LLM call of a command."""

    command_id: str
    seq: int
    stage: str
    prompt: str
    """`prompt_id@version`, as decision events name it."""
    provider: str | None
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float


@dataclass(frozen=True)
class HistoryRow:
    """One row of the audit table."""

    id: str
    position: int
    memory_id: str
    user_id: str
    event: str
    type: str
    version: int
    old_ref: str | None
    new_ref: str | None
    actor: str | None
    agent_id: str | None
    thread_id: str | None
    causation_id: str | None
    prompt_version: str | None
    meta: dict[str, Any]
    ts: str


def event_name(event_type: str) -> str:
    """The seed's name of an event type; others by their own name (`GateDecided` ->
    `GATE_DECIDED`)."""
    if event_type in SEED_EVENTS:
        return SEED_EVENTS[event_type]
    name = event_type.removeprefix("Memory") or event_type
    return _WORD_BOUNDARY.sub("_", name).upper()


class HistoryProjection(SQLiteReadModel):
    """The audit table of every memory, and the LLM calls of every command."""

    name = "history"
    schema = _SCHEMA
    tables = ("history", "history_contents", "llm_calls")

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "history.sqlite3")
        self.db.execute("PRAGMA secure_delete = ON")  # a purged text leaves no free-page copy

    def handle(self, record: EventRecord) -> None:
        if record.type == "LLMCallRecorded":
            self._llm_call(record)
            return
        previous = self._content(record.stream_id)
        if record.type == "MemoryAdded":
            previous = None
        elif previous is None:
            return  # not a memory stream
        if record.type == "MemoryPurged":
            self._purge(record.stream_id)
        content = record.data.get("content")
        new_content = content if isinstance(content, str) else None
        field = _NEW_REF.get(record.type)
        new_ref = record.data.get(field) if field else new_content
        old_ref = previous if new_content is not None and record.type != "MemoryAdded" else None
        row = (
            f"{record.stream_id}:{record.version}",
            record.position or 0,
            record.stream_id,
            record.user_id,
            event_name(record.type),
            record.type,
            record.version,
            old_ref,
            None if new_ref is None else str(new_ref),
            record.actor or None,
            record.agent_id,
            record.thread_id,
            record.causation_id or None,
            record.prompt_version,
            json.dumps(record.data, ensure_ascii=False, sort_keys=True),
            record.at.isoformat(),
        )
        self.db.execute(
            f"INSERT OR REPLACE INTO history VALUES ({', '.join('?' * len(_COLUMNS))})", row
        )
        if new_content is not None or record.type == "MemoryAdded":
            self.db.execute(
                "INSERT OR REPLACE INTO history_contents VALUES (?, ?)",
                (record.stream_id, new_content or ""),
            )

    def _purge(self, memory_id: str) -> None:
        """Blank the text of every earlier row of `memory_id` (seed 003 §7)."""
        rows = self.db.execute(
            "SELECT id, meta FROM history WHERE memory_id = ?", (memory_id,)
        ).fetchall()
        for row_id, meta in rows:
            data = json.loads(meta)
            for name in PURGED_FIELDS:
                if name in data:
                    data[name] = None
            self.db.execute(
                "UPDATE history SET old_ref = NULL, meta = ?,"
                " new_ref = CASE WHEN json_extract(?, '$.content') IS NULL THEN new_ref END"
                " WHERE id = ?",
                (json.dumps(data, ensure_ascii=False, sort_keys=True), meta, row_id),
            )
        self.db.execute(
            "UPDATE history_contents SET content = '' WHERE memory_id = ?", (memory_id,)
        )

    def _content(self, memory_id: str) -> str | None:
        row = self.db.execute(
            "SELECT content FROM history_contents WHERE memory_id = ?", (memory_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def _llm_call(self, record: EventRecord) -> None:
        data = record.data
        self.db.execute(
            "INSERT OR REPLACE INTO llm_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.stream_id,
                record.version,
                record.position or 0,
                record.user_id,
                str(data.get("stage", "")),
                f"{data.get('prompt_id', '')}@{data.get('version', '')}",
                data.get("provider"),
                data.get("model"),
                int(data.get("prompt_tokens") or 0),
                int(data.get("completion_tokens") or 0),
                float(data.get("latency_ms") or 0.0),
                record.at.isoformat(),
            ),
        )

    # --- readers -------------------------------------------------------------------------

    def of_memory(self, memory_id: str) -> builtins.list[HistoryRow]:
        """Every row of one memory, oldest first."""
        rows = self.db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM history WHERE memory_id = ? ORDER BY version",
            (memory_id,),
        ).fetchall()
        return [_row(r) for r in rows]

    def rows(self, user_id: str | None = None) -> builtins.list[HistoryRow]:
        """Every row (of one user), in log order."""
        where, args = ("WHERE user_id = ?", (user_id,)) if user_id else ("", ())
        rows = self.db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM history {where} ORDER BY position, id", args
        ).fetchall()
        return [_row(r) for r in rows]

    def llm_calls(self, command_id: str) -> builtins.list[LLMCallRow]:
        """The LLM calls of one command, in the order they were made."""
        rows = self.db.execute(
            "SELECT command_id, seq, stage, prompt, provider, model, prompt_tokens,"
            " completion_tokens, latency_ms FROM llm_calls WHERE command_id = ? ORDER BY seq",
            (command_id,),
        ).fetchall()
        return [LLMCallRow(*r) for r in rows]

    def deciding_call(self, causation_id: str | None, prompt: str | None) -> LLMCallRow | None:
        """The last call of command `causation_id` made with `prompt` (`prompt_id@version`):
        the one whose answer the event carries out."""
        if not causation_id or not prompt:
            return None
        calls = [c for c in self.llm_calls(causation_id) if c.prompt == prompt]
        return calls[-1] if calls else None


def _row(values: Sequence[Any]) -> HistoryRow:
    fields = dict(zip(_COLUMNS, values, strict=True))
    fields["meta"] = json.loads(fields["meta"])
    return HistoryRow(**fields)
