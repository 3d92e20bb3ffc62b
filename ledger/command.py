"""Command runs: one stream per command, holding its raw input, every LLM call and the outcome.

The raw input is saved before any decision is taken, so a request that is later refused, or
whose process dies, still leaves its trace. Replays re-execute commands from these streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventsourcing.domain import Aggregate, event

from mnemoledger.ledger.event import LedgerEvent

REQUESTED = "requested"
COMPLETED = "completed"
FAILED = "failed"


@dataclass
class Command(Aggregate):
    """One run of a write pipeline (add, ingest, note, ...)."""

    class Event(LedgerEvent):
        """Every event of a command carries the provenance metadata."""

    input: dict[str, Any]
    """The raw input, exactly as the caller gave it."""
    status: str = field(default=REQUESTED, init=False)
    """requested, completed or failed."""
    llm_calls: int = field(default=0, init=False)
    """How many LLM calls the command made."""
    outcome: dict[str, Any] | None = field(default=None, init=False)
    """What the command did (ids added, superseded, reinforced) or why it failed."""

    @event("LLMCallRecorded")
    def record_llm_call(
        self,
        stage: str,
        prompt_id: str,
        version: str,
        provider: str,
        model: str,
        request: dict[str, Any],
        response: str,
        prompt_tokens: int,
        completion_tokens: int,
        latency_ms: float,
        fallback: dict[str, Any] | None = None,
    ) -> None:
        """`fallback` (issue 31; absent from events recorded before it, read as None): set
        when the model's answers failed validation twice and another provider (the offline
        rules) decided; it holds who decided and the invalid answers with their errors."""
        self.llm_calls += 1

    @event("CommandCompleted")
    def complete(self, outcome: dict[str, Any]) -> None:
        self.status = COMPLETED
        self.outcome = outcome

    @event("CommandFailed")
    def fail(self, error: str, kind: str) -> None:
        self.status = FAILED
        self.outcome = {"error": error, "kind": kind}


@dataclass
class AddCommand(Command, created_event_name="AddRequested"):
    """HAEMA add(): one or more raw contents (seed 000)."""


@dataclass
class IngestCommand(Command, created_event_name="IngestRequested"):
    """Nebo extraction over conversation turns (seed 004 §3)."""


@dataclass
class NoteCommand(Command, created_event_name="NoteRequested"):
    """A Luminary note write or merge (seed 002)."""
