"""Luminary notes (seed 002) in the Python API: `NotesMixin` adds `write_note`,
`merge_notes` and `notes` to `MnemoLedger`.

    class MnemoLedger(NotesMixin):  # commands/facade.py
        ...

    memory.write_note("Prefers short answers", user="maya", kind="rule",
                      evidence=["thread:42"], confidence=0.9)

The same operations are plain functions over any `NotesHost` (what `MnemoLedger` already
has), which the CLI calls, so they work whether or not the mixin is in the bases.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field

from commands.llm.stage import LLMProvider
from commands.models import MemoryOut
from commands.pipelines.notes import (
    DEFAULT_NOTE_CONFIDENCE,
    DEFAULT_NOTE_SCOPE,
    DEFAULT_NOTES_LIMIT,
    NotesPipeline,
    WriteNoteRequest,
)
from ledger import Ledger, Memory, Provenance, Settings
from ledger.policy import DEFAULT_SOURCE, NORMAL
from projections.layers import LayersProjection, MemoryRow
from projections.runner import Progress


class NoteResult(BaseModel):
    """What one note write or merge did."""

    command_id: str
    note: MemoryOut
    """The note written, or the summary the merge produced."""
    superseded: list[str] = Field(default_factory=list)
    """Ids of the notes it replaced (the previous profile note, or the merged originals)."""
    llm_calls: int = 0


class NotesHost(Protocol):
    """What the note operations use of `MnemoLedger`."""

    ledger: Ledger
    layers: LayersProjection
    llm: LLMProvider
    settings: Settings

    def refresh(self, progress: Progress | None = None) -> int: ...

    def _provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance: ...

    def _current(self, memory: Memory) -> MemoryOut: ...

    def _out(self, row: MemoryRow) -> MemoryOut: ...


def notes_pipeline(host: NotesHost) -> NotesPipeline:
    """The notes pipeline over the host's ledger, read model and LLM provider."""
    return NotesPipeline(host.ledger, host.layers, host.llm, host.settings, refresh=host.refresh)


def write_note(
    host: NotesHost,
    content: str,
    *,
    user: str,
    kind: str,
    stability: str | None = None,
    ttl_days: float | None = None,
    sensitivity: str = NORMAL,
    evidence: Sequence[str] = (),
    confidence: float = DEFAULT_NOTE_CONFIDENCE,
    tags: Sequence[str] = (),
    scope: str = DEFAULT_NOTE_SCOPE,
    source: str = DEFAULT_SOURCE,
    agent: str | None = None,
    thread: str | None = None,
) -> NoteResult:
    """writeNote (seed 002); see `MnemoLedger.write_note`."""
    host.refresh()
    request = WriteNoteRequest(
        content=content,
        kind=kind,
        stability=stability,
        ttl_days=ttl_days,
        sensitivity=sensitivity,
        evidence=tuple(evidence),
        confidence=confidence,
        tags=tuple(tags),
        scope=scope,
        source=source,
    )
    outcome = notes_pipeline(host).write(request, host._provenance(user, agent, thread))
    return _result(host, outcome.command_id, outcome.note, outcome.superseded, outcome.llm_calls)


def merge_notes(
    host: NotesHost,
    note_ids: Sequence[str],
    *,
    agent: str | None = None,
    thread: str | None = None,
) -> NoteResult:
    """mergeNotes (seed 002); see `MnemoLedger.merge_notes`."""
    outcome = notes_pipeline(host).merge(list(note_ids), host._provenance("", agent, thread))
    return _result(host, outcome.command_id, outcome.note, outcome.superseded, outcome.llm_calls)


def list_notes(
    host: NotesHost,
    user: str,
    *,
    kind: str | None = None,
    tags: Sequence[str] | None = None,
    limit: int = DEFAULT_NOTES_LIMIT,
    scope: str | None = None,
    now: datetime | None = None,
) -> list[MemoryOut]:
    """getNotes (seed 002); see `MnemoLedger.notes`."""
    host.refresh()
    rows = notes_pipeline(host).active_notes(user, kind, tags, limit, scope=scope, now=now)
    return [host._out(row) for row in rows]


class NotesMixin:
    """Luminary notes on `MnemoLedger` (seed 002): a note is a memory with `note_kind` set."""

    def write_note(
        self: NotesHost,
        content: str,
        *,
        user: str,
        kind: str,
        stability: str | None = None,
        ttl_days: float | None = None,
        sensitivity: str = NORMAL,
        evidence: Sequence[str] = (),
        confidence: float = DEFAULT_NOTE_CONFIDENCE,
        tags: Sequence[str] = (),
        scope: str = DEFAULT_NOTE_SCOPE,
        source: str = DEFAULT_SOURCE,
        agent: str | None = None,
        thread: str | None = None,
    ) -> NoteResult:
        """writeNote: save one note of `kind` (log, summary, rule, soul, agent, user).

        volatile needs `ttl_days`, permanent refuses it; a rule needs evidence and
        confidence 0.8+; a soul, agent or user note supersedes the user's previous one.
        The request is recorded first, so a refused injection still leaves its trace."""
        return write_note(
            self,
            content,
            user=user,
            kind=kind,
            stability=stability,
            ttl_days=ttl_days,
            sensitivity=sensitivity,
            evidence=evidence,
            confidence=confidence,
            tags=tags,
            scope=scope,
            source=source,
            agent=agent,
            thread=thread,
        )

    def merge_notes(
        self: NotesHost,
        note_ids: Sequence[str],
        *,
        agent: str | None = None,
        thread: str | None = None,
    ) -> NoteResult:
        """mergeNotes: 2+ active notes of one user become one `summary` note (one recorded
        LLM call); the originals are superseded by it in the same write."""
        return merge_notes(self, note_ids, agent=agent, thread=thread)

    def notes(
        self: NotesHost,
        user: str,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int = DEFAULT_NOTES_LIMIT,
        *,
        scope: str | None = None,
        now: datetime | None = None,
    ) -> list[MemoryOut]:
        """getNotes: active, unexpired, unsuperseded notes of `user`, newest first; `tags`
        match any (OR); sensitive notes are included with `sensitivity="sensitive"`."""
        return list_notes(self, user, kind=kind, tags=tags, limit=limit, scope=scope, now=now)


def _result(
    host: NotesHost,
    command_id: str,
    note: Memory | None,
    superseded: list[str],
    llm_calls: int,
) -> NoteResult:
    assert note is not None, "a completed note command always has a note"
    return NoteResult(
        command_id=command_id,
        note=host._current(note),
        superseded=superseded,
        llm_calls=llm_calls,
    )
