"""One stream per user that every memory-changing command appends to.

Two commands that add memories for the same user at the same time would otherwise touch
disjoint streams (new memories are new aggregates) and both succeed, storing the same fact
twice. Appending to the user's stream makes the second save conflict (optimistic
concurrency), so it re-runs on fresh state and sees the first command's memories.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from mnemoledger.ledger.event import LedgerEvent

_USER_NAMESPACE = UUID("0b8f3f0e-7d2a-4f0e-9a51-5c2d3e4f6a7b")


@dataclass
class UserStream(Aggregate, created_event_name="UserStarted"):
    """The consistency boundary of one user's memories."""

    class Event(LedgerEvent):
        """Every event of a user stream carries the provenance metadata."""

    user_id: str
    """The user."""
    revision: int = field(default=0, init=False)
    """How many commands changed the user's memories."""

    @staticmethod
    def create_id(user_id: str) -> UUID:
        return uuid.uuid5(_USER_NAMESPACE, f"user:{user_id}")

    @event("MemoriesChanged")
    def changed(
        self, command_id: str, added: list[str], superseded: list[str], reinforced: list[str]
    ) -> None:
        self.revision += 1
