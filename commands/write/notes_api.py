"""Luminary notes (seed 002) in the Python API: `NotesMixin` adds `write_note`,
`merge_notes` and `notes` to `MnemoLedger`.

    class MnemoLedger(NotesMixin):  # commands/facade.py
        ...

    memory.write_note("Prefers short answers", user="maya", kind="rule",
                      evidence=["thread:42"], confidence=0.9)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field

from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.write.categories import CategoriesConfig
from mnemoledger.commands.write.notes import (
    DEFAULT_NOTE_CONFIDENCE,
    DEFAULT_NOTE_SCOPE,
    DEFAULT_NOTES_LIMIT,
    NotesPipeline,
    WriteNoteRequest,
)
from mnemoledger.ledger import Ledger, Memory, Provenance, Settings
from mnemoledger.ledger.policy import DEFAULT_SOURCE, NORMAL
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.layers import LayersProjection, MemoryRow
from mnemoledger.projections.runner import Progress


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
    consent_model: ConsentProjection

    @property
    def categories_config(self) -> CategoriesConfig: ...

    def refresh(self, progress: Progress | None = None) -> int: ...

    def _provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance: ...

    def _current(self, memory: Memory) -> MemoryOut: ...

    def _out(self, row: MemoryRow) -> MemoryOut: ...


def notes_pipeline(host: NotesHost) -> NotesPipeline:
    """The notes pipeline over the host's ledger, read model and LLM provider."""
    return NotesPipeline(
        host.ledger,
        host.layers,
        host.llm,
        host.settings,
        refresh=host.refresh,
        consent=host.consent_model,
    )


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
        category: str | None = None,
    ) -> NoteResult:
        """writeNote: save one note of `kind` (log, summary, rule, soul, agent, user).

        volatile needs `ttl_days`, permanent refuses it; a rule needs evidence and
        confidence 0.8+; a soul, agent or user note supersedes the user's previous one.
        `category` (seed 003 §5) files the note under it (default: derived from the kind);
        an `agent` some allowlist names may only name one of its allowlist.
        The request is recorded first, so a refused injection still leaves its trace."""
        category = self.categories_config.check_write(agent, category)
        self.refresh()
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
            category=category,
        )
        outcome = notes_pipeline(self).write(request, self._provenance(user, agent, thread))
        return _result(
            self, outcome.command_id, outcome.note, outcome.superseded, outcome.llm_calls
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
        outcome = notes_pipeline(self).merge(list(note_ids), self._provenance("", agent, thread))
        return _result(
            self, outcome.command_id, outcome.note, outcome.superseded, outcome.llm_calls
        )

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
        self.refresh()
        rows = notes_pipeline(self).active_notes(user, kind, tags, limit, scope=scope, now=now)
        return [self._out(row) for row in rows]


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
