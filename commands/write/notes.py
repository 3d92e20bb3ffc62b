"""Luminary notes (seed 002): writeNote, mergeNotes and getNotes over ledger memories.

A note is a memory with `note_kind` set. As in `add`, the raw request is saved first
(`NoteRequested`); everything the command then decides — the new note, its TTL, the notes it
supersedes, every LLM call, the outcome and an entry on the user's consistency stream — is
saved in ONE transaction. A concurrent write of the same user's memories makes that save
conflict; the command then runs again on fresh state.

Our reading of the seed where it is terse:

- `soul` notes: "only ONE active soul per user via supersededBy chain". `agent` and `user`
  notes are the same kind of permanent profile ("agent persona", "user profile ... synced
  on each request"), so they keep one active note per user too: writing a new one
  supersedes the previous active one (superseded_by = the new id) in the same save.
- Profile kinds default to `permanent` ("soul (permanent; ...)", "agent (permanent; ...)",
  "user (permanent; ...)"); every other kind defaults to `stable` (WriteNoteInput).
- A merged `summary` keeps the most durable stability of its originals, the latest expiry
  when every original expires, `sensitive` when any original is, and the lowest
  confidence; its evidence lists the merged note ids (each original keeps its own).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from mnemoledger.commands.llm.prompts import MERGE_NOTES
from mnemoledger.commands.llm.schemas import MergeNotesInput
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.write import consent_gate, replaying
from mnemoledger.commands.write.command_run import decide_until_saved
from mnemoledger.commands.write.recorded_llm import RecordedLLM, prompt_version
from mnemoledger.commands.write.replaying import recorded_id, recorded_ids, recorded_ttl
from mnemoledger.commands.write.sanitize import instructs_the_agent, screen
from mnemoledger.ledger import Ledger, Memory, NewMemory, Provenance, Settings, validation
from mnemoledger.ledger.command import Command, NoteCommand
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    ACTIVE,
    DEFAULT_SOURCE,
    EPISODIC,
    MAX_EVIDENCE_ITEMS,
    MAX_TAGS,
    NORMAL,
    NOTE_KINDS,
    PERMANENT,
    PROCEDURAL,
    SEMANTIC,
    SENSITIVE,
    SENSITIVITIES,
    STABILITIES,
    STABLE,
    VOLATILE,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.user import UserStream
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.layers import LayersProjection, MemoryRow

# --- seed 002 (Memory Note API, Kind Selection Guide) -----------------------------------
LOG: Final = "log"
SUMMARY: Final = "summary"
RULE: Final = "rule"
SOUL: Final = "soul"
AGENT: Final = "agent"
USER: Final = "user"
DEFAULT_NOTE_CONFIDENCE: Final = 1.0  # WriteNoteInput: "confidence?: number; default: 1.0"
DEFAULT_NOTE_SCOPE: Final = "user"  # WriteNoteInput: "scope?: string; default: 'user'"
DEFAULT_NOTES_LIMIT: Final = 50  # GetNotesFilter: "limit?: number; default: 50"
RULE_MIN_CONFIDENCE: Final = 0.8  # "rule (confidence 0.8+, evidence[] required)"
MERGE_MIN_NOTES: Final = 2  # mergeNotes: "Merges 2+ notes into a single summary note"
SINGLE_ACTIVE_KINDS: Final = (SOUL, AGENT, USER)
"""Kinds with one active note per user: soul by the seed, agent and user by our reading."""
PROFILE_STABILITY: Final = PERMANENT  # "soul/agent/user (permanent; ...)"
DEFAULT_NOTE_STABILITY: Final = STABLE  # WriteNoteInput: "default: 'stable'"

# Seed 002 is silent on engram's kind (seed 001 §1); our mapping of each note kind to it.
MEMORY_KIND_OF_NOTE: Final = {
    LOG: EPISODIC,  # raw record of requests and events
    SUMMARY: EPISODIC,  # what a job or session did
    RULE: PROCEDURAL,  # a rule to follow going forward
    SOUL: PROCEDURAL,  # the reasoning protocol and principles
    AGENT: SEMANTIC,  # the agent persona
    USER: SEMANTIC,  # the user profile
}
DURABILITY: Final = {VOLATILE: 0, STABLE: 1, PERMANENT: 2}
"""Stabilities from shortest- to longest-lived, to pick the most durable of several."""

"""Runs of one command before an optimistic-concurrency conflict is given up on."""
SUPERSEDED_BY_NEWER = "replaced by a newer note of the same kind"
SUPERSEDED_BY_MERGE = "merged into a summary note"
SUPERSEDED_BY_HAND = "superseded by hand"
AGENT_PROFILE_KEY: Final = "agent_profile"
"""The metadata key of an agent note's profile fields (seed 004 §9), as JSON text (metadata
values are scalars)."""


@dataclass(frozen=True)
class WriteNoteRequest:
    """writeNote's input (seed 002 WriteNoteInput), with the user in the provenance."""

    content: str
    kind: str
    stability: str | None = None
    """volatile, stable or permanent; None = permanent for profile kinds, else stable."""
    ttl_days: float | None = None
    """Refused for permanent; expires_at = now + ttl_days. A volatile note without one never
    expires: the maintenance loop merges it with others after a week (seed 002)."""
    sensitivity: str = NORMAL
    evidence: Sequence[str] = ()
    confidence: float = DEFAULT_NOTE_CONFIDENCE
    tags: Sequence[str] = ()
    scope: str = DEFAULT_NOTE_SCOPE
    source: str = DEFAULT_SOURCE
    category: str | None = None
    """Seed 003 §5: the note's category; None: derived from its kind (`effective_category`)."""
    job_id: str | None = None
    """The job or run that wrote the note (seed 002 WriteNoteInput.jobId); kept in metadata."""
    agent_profile: Mapping[str, Any] | None = None
    """An agent note's profile fields (seed 004 §9 agent_profile), already validated by the
    caller; kept in metadata under `agent_profile`."""

    @property
    def resolved_stability(self) -> str:
        if self.stability is not None:
            return self.stability
        return PROFILE_STABILITY if self.kind in SINGLE_ACTIVE_KINDS else DEFAULT_NOTE_STABILITY

    def as_input(self) -> dict[str, Any]:
        return {
            "operation": "write",
            "content": self.content,
            "kind": self.kind,
            "stability": self.stability,
            "ttl_days": self.ttl_days,
            "sensitivity": self.sensitivity,
            "evidence": list(self.evidence),
            "confidence": self.confidence,
            "tags": list(self.tags),
            "scope": self.scope,
            "source": self.source,
            **({} if self.category is None else {"category": self.category}),
            **({} if self.job_id is None else {"job_id": self.job_id}),
            **({} if self.agent_profile is None else {"agent_profile": dict(self.agent_profile)}),
        }


@dataclass
class NoteOutcome:
    """What one note write or merge did."""

    command_id: str
    note: Memory | None = None
    superseded: list[str] = field(default_factory=list)
    llm_calls: int = 0

    def as_outcome(self) -> dict[str, Any]:
        return {
            "note": self.note.id.hex if self.note is not None else None,
            "superseded": self.superseded,
        }


@dataclass
class NotesPipeline:
    """Everything writeNote, mergeNotes and getNotes read and write."""

    ledger: Ledger
    layers: LayersProjection
    provider: LLMProvider
    settings: Settings
    refresh: Callable[[], object] = lambda: None
    """Brings `layers` up to date; called before a retry after a concurrent write."""
    consent: ConsentProjection | None = None
    """The consent read model: which sensitive fields were already proposed or decided."""

    # --- writeNote -----------------------------------------------------------------------

    def write(self, request: WriteNoteRequest, provenance: Provenance) -> NoteOutcome:
        """Save one note; a profile note supersedes the user's previous active one."""
        user_id = str(validation.identifier("user", provenance.user_id))
        provenance = replace(provenance, user_id=user_id)
        check_write_request(request)
        # the decisive save validates every field again; failing here writes nothing
        self.ledger.draft(provenance, [_new_note(request, validation.content(request.content))])
        with acting_as(provenance):
            command: Command = recorded_id(NoteCommand(input=request.as_input()))
        self.ledger.save(command)
        decided = replace(provenance, causation_id=command.id.hex)
        return self._run(command, decided, lambda c, user: self._write(c, user, request, decided))

    def _write(
        self,
        command: Command,
        user: UserStream,
        request: WriteNoteRequest,
        provenance: Provenance,
    ) -> NoteOutcome:
        content = screen(
            validation.content(request.content), instructs=instructs_the_agent(request.kind, None)
        )
        [note] = recorded_ids(self.ledger.draft(provenance, [_new_note(request, content)]))
        if request.ttl_days is not None:
            days = validation.ttl_days(request.ttl_days)
            with acting_as(provenance):
                note.set_ttl(*recorded_ttl(days, _expiry(days)))
        superseded: list[Memory] = []
        if request.kind in SINGLE_ACTIVE_KINDS:
            for previous in self._active_of_kind(provenance.user_id, request.kind):
                with acting_as(provenance):
                    previous.supersede(note.id.hex, SUPERSEDED_BY_NEWER)
                superseded.append(previous)
        outcome = NoteOutcome(
            command_id=command.id.hex, note=note, superseded=[m.id.hex for m in superseded]
        )
        self._changed(command, user, provenance, outcome)
        consents = consent_gate.proposals(
            [content], provenance, self.consent, now=consent_gate.asked_at(command)
        )
        self.ledger.save(command, user, note, *superseded, *consents)
        return outcome

    def _active_of_kind(self, user_id: str, kind: str) -> list[Memory]:
        """The user's active notes of `kind`: found by the read model, confirmed by the log."""
        rows = [r for r in self.layers.list(user_id, state=ACTIVE) if r.note_kind == kind]
        memories = [self.ledger.memory(row.id) for row in rows]
        return [m for m in memories if m.state == ACTIVE and m.note_kind == kind]

    # --- mergeNotes ----------------------------------------------------------------------

    def merge(self, note_ids: Sequence[str], provenance: Provenance) -> NoteOutcome:
        """Merge 2+ active notes of one user into one `summary` note (MERGE_NOTES stage);
        the originals are superseded by it in the same save."""
        notes = self._mergeable(note_ids)
        provenance = replace(provenance, user_id=notes[0].user_id)
        with acting_as(provenance):
            command: Command = recorded_id(
                NoteCommand(input={"operation": "merge", "note_ids": [m.id.hex for m in notes]})
            )
        self.ledger.save(command)
        decided = replace(
            provenance, causation_id=command.id.hex, prompt_version=prompt_version(MERGE_NOTES)
        )
        ids = [m.id.hex for m in notes]
        return self._run(command, decided, lambda c, user: self._merge(c, user, ids, decided))

    def _mergeable(self, note_ids: Sequence[str]) -> list[Memory]:
        """The notes to merge, oldest first, or InvalidInput saying why they cannot be."""
        if isinstance(note_ids, str):
            raise InvalidInput("give the note ids as a list, not one string")
        notes = [self.ledger.memory(note_id) for note_id in note_ids]
        ids = [m.id.hex for m in notes]
        if len(set(ids)) != len(ids):
            raise InvalidInput("the same note is given more than once")
        if len(notes) < MERGE_MIN_NOTES:
            raise InvalidInput(f"give at least {MERGE_MIN_NOTES} notes to merge")
        if len(notes) > MAX_EVIDENCE_ITEMS:
            raise InvalidInput(
                f"{len(notes)} notes given; a summary's evidence lists at most "
                f"{MAX_EVIDENCE_ITEMS} notes"
            )
        now = replaying.now()
        for memory in notes:
            if memory.note_kind is None:
                raise InvalidInput(f"memory {memory.id.hex} is not a note")
            if memory.state != ACTIVE:
                raise InvalidInput(f"note {memory.id.hex} is {memory.state}, not active")
            if _expired(memory.expires_at, now):
                raise InvalidInput(f"note {memory.id.hex} expired at {memory.expires_at}")
        if len({m.user_id for m in notes}) > 1:
            raise InvalidInput("notes of different users cannot be merged")
        if len({_scope_of(m.metadata) for m in notes}) > 1:
            raise InvalidInput("notes of different scopes cannot be merged")
        return sorted(notes, key=lambda m: m.created_on)

    def _merge(
        self, command: Command, user: UserStream, note_ids: list[str], provenance: Provenance
    ) -> NoteOutcome:
        originals = self._mergeable(note_ids)  # fresh state: a retry re-checks everything
        llm = RecordedLLM(self.provider, command, provenance)
        output = llm.run(MERGE_NOTES, MergeNotesInput(notes=[m.content for m in originals]))
        content = screen(validation.content(validation.normalize_text(output.summary)))
        expires_at = _latest_expiry(originals)
        stability = max((m.stability for m in originals), key=DURABILITY.__getitem__)
        if stability == PERMANENT:
            expires_at = None
        summary = NewMemory(
            content=content,
            kind=MEMORY_KIND_OF_NOTE[SUMMARY],
            tags=_union_of_tags(originals),
            source=originals[-1].source,
            namespace=originals[-1].namespace,
            note_kind=SUMMARY,
            stability=stability,
            sensitivity=(
                SENSITIVE if any(m.sensitivity == SENSITIVE for m in originals) else NORMAL
            ),
            confidence=min(
                (m.confidence for m in originals if m.confidence is not None),
                default=DEFAULT_NOTE_CONFIDENCE,
            ),
            evidence=note_ids,
            metadata={"scope": _scope_of(originals[0].metadata)},
        )
        [note] = recorded_ids(self.ledger.draft(provenance, [summary]))
        with acting_as(provenance):
            if expires_at is not None:
                days = (datetime.fromisoformat(expires_at) - replaying.now()) / timedelta(days=1)
                note.set_ttl(*recorded_ttl(round(days, 6), expires_at))
            for original in originals:
                original.supersede(note.id.hex, SUPERSEDED_BY_MERGE)
        outcome = NoteOutcome(
            command_id=command.id.hex,
            note=note,
            superseded=[m.id.hex for m in originals],
            llm_calls=command.llm_calls,
        )
        self._changed(command, user, provenance, outcome)
        consents = consent_gate.proposals(
            [content], provenance, self.consent, now=consent_gate.asked_at(command)
        )
        self.ledger.save(command, user, note, *originals, *consents)
        return outcome

    def _changed(
        self, command: Command, user: UserStream, provenance: Provenance, outcome: NoteOutcome
    ) -> None:
        """Completes the command and appends it to the user's consistency stream, so two
        concurrent writes of one user's notes conflict instead of both succeeding."""
        added = [outcome.note.id.hex] if outcome.note is not None else []
        with acting_as(provenance):
            command.complete(outcome.as_outcome())
            user.changed(command.id.hex, added, outcome.superseded, [])

    # --- superseded_by set by hand ------------------------------------------------------

    def supersede(self, note_id: str, by: str, provenance: Provenance) -> NoteOutcome:
        """Mark an active note superseded by another active note of the same user (seed 002:
        "manual superseded_by set"); getNotes no longer lists it."""
        old, new = self._supersedable(note_id, by)
        provenance = replace(provenance, user_id=old.user_id)
        with acting_as(provenance):
            command: Command = recorded_id(
                NoteCommand(
                    input={"operation": "supersede", "note_id": old.id.hex, "by": new.id.hex}
                )
            )
        self.ledger.save(command)
        decided = replace(provenance, causation_id=command.id.hex)
        ids = (old.id.hex, new.id.hex)
        return self._run(command, decided, lambda c, user: self._supersede(c, user, ids, decided))

    def _supersedable(self, note_id: str, by: str) -> tuple[Memory, Memory]:
        old, new = self.ledger.memory(note_id), self.ledger.memory(by)
        if old.id == new.id:
            raise InvalidInput("a note cannot supersede itself")
        for memory in (old, new):
            if memory.note_kind is None:
                raise InvalidInput(f"memory {memory.id.hex} is not a note")
            if memory.state != ACTIVE:
                raise InvalidInput(f"note {memory.id.hex} is {memory.state}, not active")
        if old.user_id != new.user_id:
            raise InvalidInput("a note can only be superseded by a note of the same user")
        return old, new

    def _supersede(
        self, command: Command, user: UserStream, ids: tuple[str, str], provenance: Provenance
    ) -> NoteOutcome:
        old, new = self._supersedable(*ids)  # fresh state: a retry re-checks everything
        with acting_as(provenance):
            old.supersede(new.id.hex, SUPERSEDED_BY_HAND)
        outcome = NoteOutcome(command_id=command.id.hex, note=None, superseded=[old.id.hex])
        self._changed(command, user, provenance, outcome)
        self.ledger.save(command, user, old)
        return outcome

    # --- getNotes ------------------------------------------------------------------------

    def active_notes(
        self,
        user: str,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int = DEFAULT_NOTES_LIMIT,
        *,
        scope: str | None = None,
        now: datetime | None = None,
    ) -> list[MemoryRow]:
        """getNotes: the user's active notes, not expired (expires_at > now), not superseded,
        of `kind` and `scope` when given, carrying any of `tags` (OR), newest first.

        Sensitive notes are included (their `sensitivity` says so); keeping them out of an
        agent's context is the context builder's filter (seed 002, Filtering Rules)."""
        user_id = str(validation.identifier("user", user))
        validation.optional_choice("note kind", kind, NOTE_KINDS)
        wanted_tags = set(validation.tags(tags))
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"limit must be a whole number of at least 1; got {limit!r}")
        moment = now or datetime.now(UTC)
        notes = [
            row
            for row in self.layers.list(user_id, state=ACTIVE)
            if row.note_kind is not None
            and row.superseded_by is None
            and not row.is_expired(moment)
            and (kind is None or row.note_kind == kind)
            and (scope is None or _scope_of(row.metadata) == scope)
            and (not wanted_tags or not wanted_tags.isdisjoint(row.tags))
        ]
        notes.sort(key=lambda row: (row.created_at, row.position), reverse=True)
        return notes[:limit]

    # --- failures and retries ------------------------------------------------------------

    def _run(
        self,
        command: Command,
        provenance: Provenance,
        decide: Callable[[Command, UserStream], NoteOutcome],
    ) -> NoteOutcome:
        """`decide` on fresh state until it saves; a failure is recorded on the command."""
        return decide_until_saved(self.ledger, command, provenance, decide, self.refresh)


def check_write_request(request: WriteNoteRequest) -> None:
    """The seed's rules of writeNote, as InvalidInput a person can act on."""
    kind = validation.choice("note kind", request.kind, NOTE_KINDS)
    stability = validation.choice("stability", request.resolved_stability, STABILITIES)
    validation.choice("sensitivity", request.sensitivity, SENSITIVITIES)
    validation.identifier("scope", request.scope)
    validation.identifier("job id", request.job_id, required=False)
    if request.agent_profile is not None and kind != AGENT:
        raise InvalidInput("an agent profile belongs on an agent note")
    if request.ttl_days is not None:
        validation.ttl_days(request.ttl_days)
    if stability == PERMANENT and request.ttl_days is not None:
        raise InvalidInput("a permanent note never expires: drop ttl_days or choose stable")
    confidence = validation.unit_interval("confidence", request.confidence)
    if kind == RULE:
        if not validation.evidence(request.evidence):
            raise InvalidInput("a rule note needs evidence (seed 002: evidence[] required)")
        if confidence < RULE_MIN_CONFIDENCE:
            raise InvalidInput(
                f"a rule note needs confidence {RULE_MIN_CONFIDENCE} or more; got {confidence}"
            )


def _new_note(request: WriteNoteRequest, content: str) -> NewMemory:
    return NewMemory(
        content=content,
        kind=MEMORY_KIND_OF_NOTE[request.kind],
        tags=tuple(request.tags),
        source=request.source,
        note_kind=request.kind,
        stability=request.resolved_stability,
        sensitivity=request.sensitivity,
        confidence=request.confidence,
        evidence=list(request.evidence),
        metadata={
            "scope": request.scope,
            **({} if request.job_id is None else {"job_id": request.job_id}),
            **(
                {}
                if request.agent_profile is None
                else {AGENT_PROFILE_KEY: json.dumps(dict(request.agent_profile), sort_keys=True)}
            ),
        },
        category=request.category,
    )


def _scope_of(metadata: dict[str, Any] | None) -> str:
    scope = (metadata or {}).get("scope")
    return scope if isinstance(scope, str) else DEFAULT_NOTE_SCOPE


def _expiry(days: float) -> str:
    """writeNote's TTL: expires_at = now + ttlDays (seed 002, TTL Calculation)."""
    return (datetime.now(UTC) + timedelta(days=days)).isoformat()


def _expired(expires_at: str | None, now: datetime) -> bool:
    return expires_at is not None and datetime.fromisoformat(expires_at) <= now


def _latest_expiry(notes: Sequence[Memory]) -> str | None:
    """The latest expiry of `notes`, or None when any of them never expires."""
    expiries = [m.expires_at for m in notes]
    if any(e is None for e in expiries):
        return None
    return max((e for e in expiries if e is not None), key=datetime.fromisoformat)


def _union_of_tags(notes: Sequence[Memory]) -> list[str]:
    tags: dict[str, None] = {}
    for memory in notes:
        tags.update(dict.fromkeys(memory.tags))
    return list(tags)[:MAX_TAGS]
