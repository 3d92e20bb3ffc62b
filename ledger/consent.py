"""Consent requests: one stream per proposed profile patch (seed 003 §10).

A sensitive profile field (preferred name, pronouns, city, language) changes only after
consent: the proposal is recorded as `ConsentRequested` and stays pending for
`CONSENT_WINDOW_DAYS`; a person then grants or denies it, or it expires. Every decision is
an event of the request's stream, so the audit trail (seed 003 §8) holds it with its actor.
Decisions are taken only from `pending`; anything else is an `InvalidTransition` and
writes nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime

from eventsourcing.domain import Aggregate, event

from mnemoledger.ledger.errors import InvalidTransition, MemoryNotFound
from mnemoledger.ledger.event import LedgerEvent
from mnemoledger.ledger.policy import (
    CONSENT_DENIED,
    CONSENT_EXPIRED,
    CONSENT_GRANTED,
    CONSENT_PENDING,
)


class ConsentNotFound(MemoryNotFound):
    """No consent request has this id (a bad-input error, like an unknown memory)."""

    def __str__(self) -> str:
        return f"no consent request with id {self.args[0]!r}"


@dataclass
class ConsentRequest(Aggregate, created_event_name="ConsentRequested"):
    """A proposed change of one profile field of one user, waiting for a decision."""

    class Event(LedgerEvent):
        """Every event of a consent request carries the provenance metadata."""

    user_id: str
    """The user whose profile would change."""
    field: str
    """The profile field (seed 003 §10: sensitive or benign)."""
    proposed_value: str
    """The value the field would take once granted."""
    reason: str
    """Why the change was proposed (free text; may be empty)."""
    expires_at: str
    """ISO-8601 UTC end of the consent window (requested + CONSENT_WINDOW_DAYS)."""
    sensitive: bool
    """Whether the field needed a person's consent when the request was made."""
    signals: int = 1
    """How many independent signals corroborate the change (benign fields: >= 2 auto-apply)."""
    tom_confidence: float | None = None
    """A theory-of-mind insight's confidence in the change, when one proposed it (benign
    fields apply alone from `CONSENT_TOM_MIN_CONFIDENCE`)."""
    status: str = dataclasses.field(default=CONSENT_PENDING, init=False)
    """pending, granted, denied or expired."""
    decided_by: str | None = dataclasses.field(default=None, init=False)
    """Who granted or denied (`auto` for a corroborated benign patch)."""
    decision_reason: str | None = dataclasses.field(default=None, init=False)
    """Why it was denied, if it was."""

    def window_closed(self, now: datetime) -> bool:
        """Whether the consent window is over at `now`."""
        return _aware(now) >= datetime.fromisoformat(self.expires_at)

    def grant(self, by: str, now: datetime | None = None) -> None:
        """Apply the patch; refused unless pending and inside the window."""
        self._require_pending("granted")
        if self.window_closed(now or datetime.now(UTC)):
            raise InvalidTransition(
                f"consent request {self.id.hex} expired at {self.expires_at}; propose it again"
            )
        self._grant(by)

    def deny(self, by: str, reason: str = "") -> None:
        """Refuse the patch for good; refused unless pending."""
        self._require_pending("denied")
        self._deny(by, reason)

    def expire(self, now: datetime | None = None) -> None:
        """Close the window; refused unless pending and past `expires_at`."""
        self._require_pending("expired")
        if not self.window_closed(now or datetime.now(UTC)):
            raise InvalidTransition(
                f"consent request {self.id.hex} is open until {self.expires_at}"
            )
        self._expire()

    def _require_pending(self, verb: str) -> None:
        if self.status != CONSENT_PENDING:
            raise InvalidTransition(
                f"consent request {self.id.hex} is {self.status}; only a pending request "
                f"can be {verb}"
            )

    @event("ConsentGranted")
    def _grant(self, by: str) -> None:
        self.status = CONSENT_GRANTED
        self.decided_by = by

    @event("ConsentDenied")
    def _deny(self, by: str, reason: str) -> None:
        self.status = CONSENT_DENIED
        self.decided_by = by
        self.decision_reason = reason

    @event("ConsentExpired")
    def _expire(self) -> None:
        self.status = CONSENT_EXPIRED


def _aware(moment: datetime) -> datetime:
    """`moment` with a time zone: a naive one is taken to be UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
