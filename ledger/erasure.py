"""Erasures: `UserErased`, the log's record that a user's data keys were destroyed.

The event holds the user id and the erasure's generation in the key store (its provenance
says who asked); the erased user's other events stay in the log, unreadable, and decode
redacted (see `ledger.encryption`).

An erasure runs in steps that can each be interrupted and finished by running it again:
the keys are destroyed first (from then on no process can decrypt the user's content),
then `UserErased` is recorded under an id derived from the user and the generation, so a
second run finds it instead of recording it twice. Readers learn of the erasure from that
event when they catch up, and rebuild their read models without the user.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from uuid import UUID

from eventsourcing.domain import Aggregate

from mnemoledger.ledger.event import LedgerEvent

_ERASURE_NAMESPACE = UUID("5d0c7f6e-3b1a-4c2e-8f9d-1a2b3c4d5e6f")

ERASED_EVENT = "UserErased"


@dataclass
class Erasure(Aggregate, created_event_name=ERASED_EVENT):
    """One crypto-shredding of one user's content."""

    class Event(LedgerEvent):
        """Every event of an erasure carries the provenance metadata."""

    user_id: str
    """The user whose data keys were destroyed."""
    generation: int = 0
    """The key store's erasure generation (0: recorded before generations existed)."""

    @staticmethod
    def create_id(user_id: str, generation: int = 0) -> UUID:
        if not generation:
            return uuid.uuid4()
        return erasure_id(user_id, generation)


def erasure_id(user_id: str, generation: int) -> UUID:
    """The stream of the `UserErased` that records erasure `generation` of `user_id`."""
    return uuid.uuid5(_ERASURE_NAMESPACE, f"erasure:{user_id}:{generation}")


@dataclass(frozen=True)
class ErasureOutcome:
    """What one run of `Ledger.erase` did, and what earlier runs had done."""

    user_id: str
    erasure_id: UUID
    erased_at: str
    """When the keys were destroyed (ISO-8601 UTC)."""
    keys_destroyed: int | None
    """Keys destroyed by this run (None: an earlier run had destroyed them)."""
    recorded: bool
    """Whether this run recorded `UserErased` (False: an earlier run had)."""
