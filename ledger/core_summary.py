"""engram's compressed Core summary (seed 001 §3 step 19: "Update compressed summary in
`engram_meta` for resume"): one stream per user holding, for each resume view (a
namespace with `default`), the summary of the Core memories resume's Core budget leaves
out. A consolidation cycle writes it (its `resume_compress` LLM call recorded with it);
resume reads it. Its texts are the user's content, encrypted like every other."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from mnemoledger.ledger.event import LedgerEvent

_SUMMARY_NAMESPACE = UUID("0b7d6c52-93a1-4f0e-9d2b-5e8c1a7f3d46")


@dataclass
class CoreSummary(Aggregate, created_event_name="CoreSummaryStarted"):
    """The compressed Core summaries of one user, by resume view."""

    class Event(LedgerEvent):
        """Every event of the summary carries the provenance metadata."""

    user_id: str
    views: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    """By view (the namespace resume is asked for; `default` alone): `summary`, the
    `memory_ids` it covers, their `fingerprint`, the `epoch` that wrote it."""

    @staticmethod
    def create_id(user_id: str) -> UUID:
        return uuid.uuid5(_SUMMARY_NAMESPACE, f"core-summary:{user_id}")

    @event("CoreSummaryUpdated")
    def update(
        self, view: str, summary: str, memory_ids: list[str], fingerprint: str, epoch: int
    ) -> None:
        """The view's summary is now `summary` over `memory_ids` (none: the Core memories
        fit the budget again, and resume needs no summary)."""
        if memory_ids:
            self.views[view] = {
                "summary": summary,
                "memory_ids": list(memory_ids),
                "fingerprint": fingerprint,
                "epoch": epoch,
            }
        else:
            self.views.pop(view, None)
