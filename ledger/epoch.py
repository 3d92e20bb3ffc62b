"""The engram epoch (seed 001 §1-§3): one stream per user counting consolidation cycles,
and the command stream of one cycle.

Importance decay is never written per memory: projections derive it from
`ConsolidationEpochCompleted` (rates by kind, floor 0), so idle time decays nothing. The
epoch event also carries the pair keys a cycle examined (merged, reconciled, overlapping
Core pairs, daily-worker fingerprints), so no pair is checked twice.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from mnemoledger.ledger.command import Command
from mnemoledger.ledger.event import LedgerEvent

_EPOCH_NAMESPACE = UUID("6c1f2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b")


@dataclass
class EngramClock(Aggregate, created_event_name="EngramStarted"):
    """The consolidation epochs of one user."""

    class Event(LedgerEvent):
        """Every event of the clock carries the provenance metadata."""

    user_id: str
    """The user."""
    epoch: int = field(default=0, init=False)
    """How many consolidation cycles completed (0 = none yet)."""
    last_insight_at: str | None = field(default=None, init=False)
    """When the last theory-of-mind insight was written (seed 003 §3: one per 24 h)."""
    last_daily_at: str | None = field(default=None, init=False)
    """When the last daily consolidation pass ran (seed 003 §4: once a day per user)."""

    @staticmethod
    def create_id(user_id: str) -> UUID:
        return uuid.uuid5(_EPOCH_NAMESPACE, f"engram:{user_id}")

    @event("ConsolidationEpochCompleted")
    def complete_epoch(
        self,
        epoch: int,
        command_id: str,
        now: str,
        decay: float,
        operations: int,
        pairs: list[list[str]],
        decided_at: int = 0,
    ) -> None:
        """One cycle done: every active memory of the user decays by `decay` x its kind's
        rate (in the projections); `pairs` are [kind, key] never examined again;
        `decided_at` is the log position the cycle's decisions read (the next cycle scans
        pairs of the memories changed after it)."""
        self.epoch = epoch

    @event("InsightsWritten")
    def insights_written(self, at: str, memory_ids: list[str]) -> None:
        """Theory-of-mind insights were stored (seed 003 §3)."""
        self.last_insight_at = at

    @event("DailyConsolidationCompleted")
    def daily_completed(self, at: str, pairs_checked: int, tokens: int) -> None:
        """The daily pass (seed 003 §4) ran at `at`: pairs sent to the LLM, tokens spent."""
        self.last_daily_at = at


@dataclass
class ConsolidationCommand(Command, created_event_name="ConsolidationRequested"):
    """One engram cycle (or lifecycle pass) for one user: its input holds the clock value
    every decision was taken at; its LLM calls, audit proposals and verdicts follow."""

    @event("AuditProposed")
    def audit_proposed(self, operations: list[dict[str, Any]], score: float) -> None:
        """The audit LLM's operations, resolved to full ids, and the sandbox's safety score."""

    @event("AuditOpChecked")
    def audit_op_checked(self, index: int, verdict: str, rule: str | None, executed: bool) -> None:
        """The sandbox's verdict on one proposed operation (Good/Bad, the failing rule)."""


@dataclass
class TopicsCommand(Command, created_event_name="TopicsRequested"):
    """One Topiary build (seed 001 §6) for one user: the LLM naming calls, then the tree."""

    @event("TopicTreeBuilt")
    def tree_built(self, user: str, position: int, topics: list[dict[str, Any]]) -> None:
        """The named tree, as of log `position`: each topic's id, name, parent, and its
        member memory ids (leaves) or child topic ids (parents)."""
