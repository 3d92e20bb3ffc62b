"""`History`: the audit trail of the Python API (seed 003 §8), over the history read model
of the shared parts (kept up to date by the runner).

    memory.memory_history(memory_id)          # every event of one memory, and who decided it
    memory.timeline(user="maya", types=["MemoryUpdated"], since="2026-05-01", actor="cli:me")
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.audit.timepoints import after, at_or_before, parse_point
from mnemoledger.commands.models import EventOut
from mnemoledger.commands.parts import Parts
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound
from mnemoledger.projections.history import HistoryRow, event_name

LOG_PAGE = 1000
"""Events read per page of the log."""


class LLMCallOut(BaseModel):
    """The LLM call whose answer an event carries out."""

    command_id: str
    stage: str
    prompt: str
    """`prompt_id@version`."""
    provider: str | None
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float


class HistoryEntry(BaseModel):
    """One event of a memory, as the audit table keeps it."""

    position: int
    event: str
    """ADD, UPDATE, DELETE, MERGE, LINK, TTL, RESTORE, REINFORCE, or the event's own name."""
    type: str
    version: int
    at: str
    """When the event was recorded (UTC, ISO 8601)."""
    said_at: str | None = None
    """When the contents were said, if the write named a past time (an imported history);
    `at` stays when it was recorded."""
    user_id: str
    actor: str | None
    agent_id: str | None
    thread_id: str | None
    causation_id: str | None
    prompt_version: str | None
    old_ref: str | None
    new_ref: str | None
    data: dict[str, Any]
    llm: LLMCallOut | None = None
    """The call that decided the event, when an LLM decided it."""


class History:
    """Who changed a memory, when, and on which LLM answer; the filtered log."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def memory_history(self, memory_id: str) -> builtins.list[HistoryEntry]:
        """`MnemoLedger.memory_history`: one memory's events, explained (documented there)."""
        try:
            memory = self.parts.ledger.memory(memory_id)
        except MemoryNotFound:
            erased = self._erased_history(memory_id)
            if erased is None:
                raise
            return erased
        self.parts.refresh()
        rows = self.parts.history_model.of_memory(memory.id.hex)
        if not rows:
            raise MemoryNotFound(memory_id)
        return [self._entry(row) for row in rows]

    def _erased_history(self, memory_id: str) -> builtins.list[HistoryEntry] | None:
        """The events of an erased user's memory `memory_id` as the log holds them (with
        their log positions), or None if it is no such memory."""
        ledger = self.parts.ledger
        try:
            events = ledger.stream(memory_id)
        except MemoryNotFound:
            return None
        if events[0].type != "MemoryAdded" or ledger.keys.erasure(events[0].user_id) is None:
            return None
        stream = events[0].stream_id
        positions: dict[int, int] = {}
        after_position = 0
        while len(positions) < len(events) and (page := ledger.read(after_position, LOG_PAGE)):
            for record in page:
                if record.stream_id == stream and record.position is not None:
                    positions[record.version] = record.position
            after_position = page[-1].position or after_position
        return [
            HistoryEntry(
                position=positions.get(event.version, 0),
                event=event_name(event.type),
                type=event.type,
                version=event.version,
                at=event.at.isoformat(),
                said_at=_text(event.data.get("said_at")),
                user_id=event.user_id,
                actor=event.actor or None,
                agent_id=event.agent_id,
                thread_id=event.thread_id,
                causation_id=event.causation_id or None,
                prompt_version=event.prompt_version,
                old_ref=None,
                new_ref=_text(event.data.get("content")),
                data=event.data,
            )
            for event in events
        ]

    def _entry(self, row: HistoryRow) -> HistoryEntry:
        call = self.parts.history_model.deciding_call(row.causation_id, row.prompt_version)
        return HistoryEntry(
            position=row.position,
            event=row.event,
            type=row.type,
            version=row.version,
            at=row.ts,
            said_at=_text(row.meta.get("said_at")),
            user_id=row.user_id,
            actor=row.actor,
            agent_id=row.agent_id,
            thread_id=row.thread_id,
            causation_id=row.causation_id,
            prompt_version=row.prompt_version,
            old_ref=row.old_ref,
            new_ref=row.new_ref,
            data=row.meta,
            llm=None
            if call is None
            else LLMCallOut(
                command_id=call.command_id,
                stage=call.stage,
                prompt=call.prompt,
                provider=call.provider,
                model=call.model,
                prompt_tokens=call.prompt_tokens,
                completion_tokens=call.completion_tokens,
                latency_ms=call.latency_ms,
            ),
        )

    def timeline(
        self,
        *,
        user: str | None = None,
        types: Sequence[str] = (),
        since: str | int | datetime | None = None,
        until: str | int | datetime | None = None,
        actor: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[EventOut]:
        """`MnemoLedger.timeline`: the log, filtered, oldest first (documented there)."""
        if limit is not None and limit < 1:
            raise InvalidInput("limit must be >= 1")
        start = parse_point(since) if since is not None else 0
        end = parse_point(until) if until is not None else None
        wanted = set(types)
        found: builtins.list[EventOut] = []
        position = start if isinstance(start, int) else 0
        stop = end if isinstance(end, int) else None
        while limit is None or len(found) < limit:
            page = self.parts.ledger.read(position, LOG_PAGE, stop)
            if not page:
                break
            for record in page:
                if end is not None and not at_or_before(record, end):
                    continue
                if (
                    after(record, start)
                    and (user is None or record.user_id == user)
                    and (not wanted or record.type in wanted)
                    and (actor is None or record.actor == actor)
                ):
                    found.append(EventOut(**record.as_json()))
            position = page[-1].position or position
            if stop is not None and position >= stop:
                break
        return found[:limit] if limit is not None else found


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
