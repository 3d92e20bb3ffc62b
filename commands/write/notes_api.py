"""Luminary notes in the Python API: `Notes` gives `MnemoLedger` its
`write_note`, `merge_notes` and `notes`.

    memory.write_note("Prefers short answers", user="maya", kind="rule",
                      evidence=["thread:42"], confidence=0.9)
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field

from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.parts import Parts
from mnemoledger.commands.write.notes import (
    DEFAULT_NOTE_CONFIDENCE,
    DEFAULT_NOTE_SCOPE,
    DEFAULT_NOTES_LIMIT,
    NotesPipeline,
    WriteNoteRequest,
)
from mnemoledger.ledger import Ledger, Memory, Settings
from mnemoledger.ledger.policy import DEFAULT_SOURCE, NORMAL
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.layers import LayersProjection
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
    """What the notes pipeline is built from: the shared `Parts` (or a `MnemoLedger`)."""

    ledger: Ledger
    layers: LayersProjection
    llm: LLMProvider
    settings: Settings
    consent_model: ConsentProjection

    def refresh(self, progress: Progress | None = None) -> int: ...


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


class Notes:
    """Notes on `MnemoLedger`: a note is a memory with `note_kind` set."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def write_note(
        self,
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
        job_id: str | None = None,
    ) -> NoteResult:
        """`MnemoLedger.write_note`: save one note of `kind` (documented there)."""
        category = self.parts.categories_config.check_write(agent, category)
        self.parts.refresh()
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
            job_id=job_id,
        )
        outcome = notes_pipeline(self.parts).write(
            request, self.parts.provenance(user, agent, thread)
        )
        return _result(
            self.parts, outcome.command_id, outcome.note, outcome.superseded, outcome.llm_calls
        )

    def merge_notes(
        self,
        note_ids: Sequence[str],
        *,
        agent: str | None = None,
        thread: str | None = None,
    ) -> NoteResult:
        """`MnemoLedger.merge_notes`: merge 2+ notes into one summary (documented there)."""
        outcome = notes_pipeline(self.parts).merge(
            list(note_ids), self.parts.provenance("", agent, thread)
        )
        return _result(
            self.parts, outcome.command_id, outcome.note, outcome.superseded, outcome.llm_calls
        )

    def supersede_note(
        self,
        note_id: str,
        *,
        by: str,
        agent: str | None = None,
        thread: str | None = None,
    ) -> NoteResult:
        """`MnemoLedger.supersede_note`: mark a note replaced by another (documented there)."""
        outcome = notes_pipeline(self.parts).supersede(
            note_id, by, self.parts.provenance("", agent, thread)
        )
        replacement = self.parts.ledger.memory(by)
        return _result(self.parts, outcome.command_id, replacement, outcome.superseded, 0)

    def notes(
        self,
        user: str,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int = DEFAULT_NOTES_LIMIT,
        *,
        scope: str | None = None,
        now: datetime | None = None,
    ) -> builtins.list[MemoryOut]:
        """`MnemoLedger.notes`: a user's active notes, newest first (documented there)."""
        self.parts.refresh()
        rows = notes_pipeline(self.parts).active_notes(
            user, kind, tags, limit, scope=scope, now=now
        )
        return [self.parts.out(row) for row in rows]


def _result(
    parts: Parts,
    command_id: str,
    note: Memory | None,
    superseded: list[str],
    llm_calls: int,
) -> NoteResult:
    assert note is not None, "a completed note command always has a note"
    return NoteResult(
        command_id=command_id,
        note=parts.current(note),
        superseded=superseded,
        llm_calls=llm_calls,
    )
