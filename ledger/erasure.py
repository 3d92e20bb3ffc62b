"""Erasures: `UserErased`, the log's record that a user's data key was destroyed.

The event holds the user id only (its provenance says who asked); the erased user's other
events stay in the log, unreadable, and decode redacted (see `ledger.encryption`).
"""

from __future__ import annotations

from dataclasses import dataclass

from eventsourcing.domain import Aggregate

from ledger.event import LedgerEvent


@dataclass
class Erasure(Aggregate, created_event_name="UserErased"):
    """One crypto-shredding of one user's content."""

    class Event(LedgerEvent):
        """Every event of an erasure carries the provenance metadata."""

    user_id: str
    """The user whose data keys were destroyed."""
