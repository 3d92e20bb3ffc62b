"""Conversation ingest (seed 004 §3-§5) in the Python API: `Ingest` gives `MnemoLedger` its
`ingest`, `store` (by key) and `profile`.

    result = memory.ingest("chat.jsonl", user="maya", agent="helper")
    memory.ingest(turns, user="maya", thread="t1", flush=True, compaction=2)  # before compacting
    memory.store("timezone", "Europe/Lisbon", user="maya", namespace="tacit/user")
    memory.profile("maya")  # {"display_name": "Maya", "location": "Porto", "timezone": ...}

"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.models import AddResult, MemoryOut
from mnemoledger.commands.parts import Parts
from mnemoledger.commands.write.consent_gate import consented_profile
from mnemoledger.commands.write.ingest import (
    STORE_ADDED,
    STORE_SOURCE,
    STORE_UNCHANGED,
    STORE_UPDATED,
    IngestOutcome,
    IngestPipeline,
    Progress,
    Turn,
    load_turns,
    user_profile,
)
from mnemoledger.ledger import Ledger, Settings
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import ACTIVE
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.embeddings.cache import CachedEmbedder
from mnemoledger.projections.flushes import FlushGuard
from mnemoledger.projections.layers import LayersProjection
from mnemoledger.projections.runner import Progress as RefreshProgress
from mnemoledger.projections.vectors import VectorsProjection

TurnsSource = str | Path | Sequence[Turn | Mapping[str, Any]]
"""A JSONL file, or the turns themselves (`Turn`s or `{"role","content","ts"?,"id"?}`)."""


class SkippedFact(BaseModel):
    """A fact the ingest did not write, and why."""

    namespace: str
    key: str | None
    value: str
    """The value as extracted (at most 200 characters of it)."""
    reason: str
    evidence: list[str] = Field(default_factory=list)


class IngestResult(AddResult):
    """What one ingest did: `add`'s result summed over the conversation, plus the rest."""

    updated: list[MemoryOut] = Field(default_factory=list)
    """Memories whose key got a new value (upsert), and a re-synthesized directive."""
    skipped: list[SkippedFact] = Field(default_factory=list)
    """Duplicates and refused facts, each with its reason."""
    directive_updated: bool = False
    """True when the personality directive was synthesized anew."""
    profile_updated: list[str] = Field(default_factory=list)
    """Profile fields this ingest wrote."""
    turns: int = 0
    extractions: int = 0
    unchanged: list[MemoryOut] = Field(default_factory=list)
    """A store whose key already held the value: the memory, as it was."""
    flush: FlushOut | None = None
    """A pre-compaction flush: whether it ran (None for a plain ingest)."""


class FlushOut(BaseModel):
    """What a pre-compaction flush request came to: at most one per compaction cycle."""

    thread: str
    compaction: int
    ran: bool
    reason: str | None = None
    """Why it did not run (nothing was recorded then, and `command_id` is empty)."""
    flushed_at: int | None = None
    """The compaction count of the thread's latest flush before this request."""
    flushed_by: str | None = None
    """The command of that flush."""


class StoreResult(AddResult):
    """What storing a value under a key did: a new memory, a new value for the key's
    memory (its history keeps the old one), or nothing new."""

    action: Literal["added", "updated", "unchanged"] | None = None
    """None when contents were stored without a key (as `add`)."""
    memory: MemoryOut | None = None
    """The memory under the key, as it now is."""
    updated: list[MemoryOut] = Field(default_factory=list)
    profile_updated: list[str] = Field(default_factory=list)
    """Profile fields the value feeds (a `tacit/user` key)."""


def store_result(outcome: IngestOutcome) -> StoreResult:
    """The keyed store's outcome as its answer."""
    data = IngestResult.model_validate(outcome.as_json())
    for action, memories in (
        (STORE_ADDED, data.memories),
        (STORE_UPDATED, data.updated),
        (STORE_UNCHANGED, data.unchanged),
    ):
        if memories:
            return StoreResult(
                command_id=data.command_id,
                memories=data.memories,
                updated=data.updated,
                llm_calls=data.llm_calls,
                action=action,  # type: ignore[arg-type]
                memory=memories[0],
                profile_updated=data.profile_updated,
            )
    raise AssertionError("a keyed store adds, updates or leaves one memory")


class IngestHost(Protocol):
    """What the ingest pipeline is built from: the shared `Parts` (or a `MnemoLedger`)."""

    ledger: Ledger
    layers: LayersProjection
    llm: LLMProvider
    settings: Settings
    consent_model: ConsentProjection
    embedder: CachedEmbedder
    vectors: VectorsProjection
    flushes_model: FlushGuard

    def refresh(self, progress: RefreshProgress | None = None) -> int: ...


def ingest_pipeline(host: IngestHost) -> IngestPipeline:
    """The ingest pipeline over the host's ledger, read model and LLM provider."""
    return IngestPipeline(
        host.ledger,
        host.layers,
        host.llm,
        host.settings,
        refresh=host.refresh,
        consent=host.consent_model,
        embedder=host.embedder,
        vectors=host.vectors,
        flushes=host.flushes_model,
    )


class Ingest:
    """Conversation ingest on `MnemoLedger`: what a conversation says, extracted."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def ingest(
        self,
        path_or_turns: TurnsSource,
        *,
        user: str,
        agent: str | None = None,
        thread: str | None = None,
        multi_fact: bool = False,
        now: datetime | None = None,
        progress: Progress | None = None,
        flush: bool = False,
        compaction: int | None = None,
    ) -> IngestResult:
        """`MnemoLedger.ingest`: extract and store a conversation's facts (documented there)."""
        provenance = self.parts.provenance(user, agent, thread)
        identifier("user", user)
        if flush and compaction is None:
            raise InvalidInput("a flush names the thread's compaction count: give compaction")
        if not flush and compaction is not None:
            raise InvalidInput("compaction is only for a flush: give flush=True")
        if isinstance(path_or_turns, str | Path):
            turns: Sequence[Turn | Mapping[str, Any]] = load_turns(path_or_turns)
            name: str | None = str(path_or_turns)
        else:
            turns, name = path_or_turns, None
        outcome = ingest_pipeline(self.parts).run(
            turns,
            provenance,
            multi_fact=multi_fact,
            now=now,
            source=name,
            progress=progress,
            flush=compaction if flush else None,
        )
        return IngestResult.model_validate(outcome.as_json())

    def store(
        self,
        key: str,
        value: str,
        *,
        user: str,
        namespace: str = "default",
        tags: Sequence[str] = (),
        agent: str | None = None,
        thread: str | None = None,
        source: str = STORE_SOURCE,
        now: datetime | None = None,
    ) -> StoreResult:
        """`MnemoLedger.store`: upsert `value` under `key` (documented there)."""
        provenance = self.parts.provenance(user, agent, thread)
        identifier("user", user)
        outcome = ingest_pipeline(self.parts).remember_keyed(
            namespace, key, value, provenance, tags=tags, source=source, now=now
        )
        return store_result(outcome)

    def profile(self, user: str) -> dict[str, str]:
        """`MnemoLedger.profile`: the user's profile from `tacit/user` (documented there)."""
        identifier("user", user)
        self.parts.refresh()
        return consented_profile(
            user_profile(self.parts.layers.list(user, state=ACTIVE)),
            self.parts.consent_model.profile_fields(user),
        )
