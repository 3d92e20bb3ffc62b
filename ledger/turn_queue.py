"""Conversation turns handed over for extraction once the thread goes quiet (seed 004 §3,
Trigger 1: Nebo extracts 5 seconds after an agent loop's last message, and a newer message
restarts the wait).

Each hand-over is one `TurnsQueued` stream holding the turns exactly as given. They are in
the log before the caller gets its answer, so a crash or a restart loses none: the pending
read model (`projections.turn_queue`) is rebuilt from the log, and the ingest that extracts
them names the hand-overs it consumed (`IngestRequested.input.queued`). The turns are
content: sealed with the user's data key, so erasing the user shreds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eventsourcing.domain import Aggregate

from mnemoledger.ledger.event import LedgerEvent


@dataclass
class QueuedTurns(Aggregate, created_event_name="TurnsQueued"):
    """Turns of one thread waiting for the thread to go quiet before they are extracted."""

    class Event(LedgerEvent):
        """Every event of a hand-over carries the provenance metadata."""

    thread: str
    """The thread (conversation) the turns belong to."""
    turns: list[dict[str, Any]]
    """The turns as given (`{"role","content","ts"?,"id"?}`)."""
