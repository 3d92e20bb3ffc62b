"""The consent policy (seed 003 §10): no sensitive profile change without consent.

- A sensitive field (preferred_name, pronouns, city, language) is never applied on a
  proposal: a `ConsentRequest` is saved, pending for `CONSENT_WINDOW_DAYS` (7), until a
  person grants or denies it or it expires.
- A benign field (tone, goals_add) is applied at once when corroborated by at least
  `BENIGN_MIN_SIGNALS` (2) signals: the request and its `ConsentGranted(by="auto")` are
  saved together, in one transaction. With fewer signals it is queued like a sensitive one.
- A granted sensitive field enters the user's core.md as a field bullet ("City: Porto") in
  the same transaction as the grant (`commands.consent_gate`); nothing else puts it there.
- An unknown field is `InvalidInput`; deciding anything but a pending request, or granting
  after the window, is `InvalidTransition`. A refusal writes nothing.

Every proposal and decision is an event of the request's stream, with the provenance of
whoever made it, so the audit trail holds the whole decision. The applied profile is read
from the `consent` projection, which must be caught up before reading (the facade does it).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from eventsourcing.application import AggregateNotFoundError
from pydantic import BaseModel

from mnemoledger.commands.write.consent_gate import granted_core
from mnemoledger.ledger import Ledger, Provenance, validation
from mnemoledger.ledger.application import parse_memory_id, retry_on_conflict
from mnemoledger.ledger.consent import ConsentNotFound, ConsentRequest
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound
from mnemoledger.ledger.policy import (
    AUTO_CONSENT,
    BENIGN_MIN_SIGNALS,
    CONSENT_PENDING,
    CONSENT_STATUSES,
    CONSENT_TOM_MIN_CONFIDENCE,
    CONSENT_WINDOW_DAYS,
    MAX_CONSENT_REASON_CHARS,
    MAX_PROFILE_VALUE_CHARS,
    MAX_SIGNALS,
    PROFILE_FIELDS,
    SENSITIVE_PROFILE_FIELDS,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.consent import ConsentProjection, ConsentRow


class ConsentOut(BaseModel):
    """One consent request: the proposed patch, its status and its decision."""

    id: str
    user_id: str
    field: str
    proposed_value: str
    reason: str
    signals: int
    sensitive: bool
    status: str
    requested_at: str
    expires_at: str
    decided_by: str | None = None
    decision_reason: str | None = None
    tom_confidence: float | None = None
    """The proposing theory-of-mind insight's confidence (in the proposal's answer and its
    event; lists leave it out)."""


class ProposalOutcome(BaseModel):
    """What a proposal did: queued for consent, or applied at once."""

    request: ConsentOut
    applied: bool
    """True when the patch took effect now (a corroborated benign field)."""


@dataclass
class ConsentService:
    """Proposals, decisions and expiry of profile patches, over the ledger."""

    ledger: Ledger
    projection: ConsentProjection

    def propose(
        self,
        user: str,
        field: str,
        value: str,
        *,
        provenance: Provenance,
        signals: int = 1,
        reason: str = "",
        now: datetime | None = None,
        tom_confidence: float | None = None,
    ) -> ProposalOutcome:
        """Queue (sensitive, or benign with too few signals) or apply (benign, corroborated
        or proposed by a confident theory-of-mind insight) a patch of `field` to `value`."""
        user_id = str(validation.identifier("user", user))
        field = validation.choice("profile field", field, PROFILE_FIELDS)
        value = _text("value", value, MAX_PROFILE_VALUE_CHARS, required=True)
        reason = _text("reason", reason, MAX_CONSENT_REASON_CHARS, required=False)
        # an unbounded count was recorded, then failed every catch-up of the consent read
        # model (OverflowError into SQLite), so every read of the home
        if isinstance(signals, bool) or not isinstance(signals, int):
            raise InvalidInput(f"signals must be a whole number; got {signals!r}")
        if not 1 <= signals <= MAX_SIGNALS:
            raise InvalidInput(f"signals must be between 1 and {MAX_SIGNALS}; got {signals}")
        if tom_confidence is not None and not (
            isinstance(tom_confidence, int | float) and 0.0 <= tom_confidence <= 1.0
        ):
            raise InvalidInput(f"tom_confidence must be between 0 and 1; got {tom_confidence!r}")
        sensitive = field in SENSITIVE_PROFILE_FIELDS
        confident = tom_confidence is not None and tom_confidence >= CONSENT_TOM_MIN_CONFIDENCE
        expires_at = _utc(now) + timedelta(days=CONSENT_WINDOW_DAYS)
        acting = replace(provenance, user_id=user_id)

        def attempt() -> ConsentRequest:
            # earlier pending proposals of the same benign value corroborate this one: their
            # signals add up, and once there are enough all of them apply together
            earlier = [] if sensitive else self._same_pending(user_id, field, value, now)
            with acting_as(acting):
                request = ConsentRequest(
                    user_id=user_id,
                    field=field,
                    proposed_value=value,
                    reason=reason,
                    expires_at=expires_at.isoformat(),
                    sensitive=sensitive,
                    signals=signals,
                    **({} if tom_confidence is None else {"tom_confidence": tom_confidence}),
                )
                total = signals + sum(r.signals for r in earlier)
                if not sensitive and (total >= BENIGN_MIN_SIGNALS or confident):
                    for corroborated in (request, *earlier):
                        corroborated.grant(AUTO_CONSENT, now)
                else:
                    earlier = []
            self.ledger.save(request, *earlier)
            return request

        request = retry_on_conflict(attempt)
        return ProposalOutcome(
            request=consent_out(request), applied=request.status != CONSENT_PENDING
        )

    def _same_pending(
        self, user_id: str, field: str, value: str, now: datetime | None
    ) -> builtins.list[ConsentRequest]:
        """The user's pending proposals of `value` for `field` whose window is still open
        (from the projection, each confirmed pending in its stream)."""
        moment = _utc(now)
        wanted = " ".join(value.split()).casefold()
        found: builtins.list[ConsentRequest] = []
        for row in self.projection.pending(user_id):
            if row.field != field or " ".join(row.proposed_value.split()).casefold() != wanted:
                continue
            if datetime.fromisoformat(row.expires_at) <= moment:
                continue
            request = self.request(row.id)
            if request.status == CONSENT_PENDING:
                found.append(request)
        return found

    def grant(
        self, request_id: str, provenance: Provenance, *, now: datetime | None = None
    ) -> ConsentOut:
        """A person consents: the patch applies. Only a pending request inside its window.
        A sensitive field enters the user's core.md (USER) in the same save."""
        return self._decide(
            request_id, provenance, lambda r: r.grant(provenance.actor, now), follow_core=True
        )

    def deny(self, request_id: str, reason: str, provenance: Provenance) -> ConsentOut:
        """A person refuses: the patch never applies. Only a pending request."""
        reason = _text("reason", reason, MAX_CONSENT_REASON_CHARS, required=False)
        return self._decide(request_id, provenance, lambda r: r.deny(provenance.actor, reason))

    def expire_due(
        self, now: datetime | None = None, *, provenance: Provenance | None = None
    ) -> builtins.list[ConsentOut]:
        """Mark every pending request whose window is over at `now` as expired, in one
        transaction; returns them. Reads candidates from the (caught-up) projection; the
        actor is the system's unless a provenance says otherwise."""
        moment = _utc(now)
        actor = provenance or Provenance()

        def attempt() -> builtins.list[ConsentRequest]:
            due: builtins.list[ConsentRequest] = []
            for row in self.projection.pending():
                if datetime.fromisoformat(row.expires_at) > moment:
                    continue
                request = self.request(row.id)
                if request.status != CONSENT_PENDING:  # decided since the projection saw it
                    continue
                with acting_as(replace(actor, user_id=request.user_id)):
                    request.expire(moment)
                due.append(request)
            if due:
                self.ledger.save(*due)
            return due

        return [consent_out(request) for request in retry_on_conflict(attempt)]

    def list(self, user: str | None = None, status: str | None = None) -> builtins.list[ConsentOut]:
        """Requests in log order, filtered by user and status (from the projection)."""
        if user is not None:
            validation.identifier("user", user)
        validation.optional_choice("status", status, CONSENT_STATUSES)
        return [row_out(row) for row in self.projection.list(user, status)]

    def profile_fields(self, user: str) -> dict[str, str]:
        """The user's applied profile: only granted patches (from the projection)."""
        return self.projection.profile_fields(str(validation.identifier("user", user)))

    def request(self, request_id: str) -> ConsentRequest:
        """A consent request, folded from its stream."""
        try:
            found: object = self.ledger.repository.get(parse_memory_id(request_id))
        except (AggregateNotFoundError, MemoryNotFound):
            raise ConsentNotFound(request_id) from None
        if not isinstance(found, ConsentRequest):
            raise ConsentNotFound(request_id)
        return found

    def _decide(
        self,
        request_id: str,
        provenance: Provenance,
        decide: Callable[[ConsentRequest], None],
        *,
        follow_core: bool = False,
    ) -> ConsentOut:
        def attempt() -> ConsentRequest:
            request = self.request(request_id)
            decided = replace(provenance, user_id=request.user_id)
            with acting_as(decided):
                decide(request)
            core = None
            if follow_core and request.field in SENSITIVE_PROFILE_FIELDS:
                core = granted_core(
                    self.ledger, decided, request.user_id, request.field, request.proposed_value
                )
            self.ledger.save(request, *([core] if core is not None else []))
            return request

        return consent_out(retry_on_conflict(attempt))


def consent_out(request: ConsentRequest) -> ConsentOut:
    """The output model of a request folded from its stream."""
    return ConsentOut(
        id=request.id.hex,
        user_id=request.user_id,
        field=request.field,
        proposed_value=request.proposed_value,
        reason=request.reason,
        signals=request.signals,
        sensitive=request.sensitive,
        status=request.status,
        requested_at=request.created_on.isoformat(),
        expires_at=request.expires_at,
        decided_by=request.decided_by,
        decision_reason=request.decision_reason,
        tom_confidence=request.tom_confidence,
    )


def row_out(row: ConsentRow) -> ConsentOut:
    """The output model of a request as the projection holds it."""
    return ConsentOut(
        id=row.id,
        user_id=row.user_id,
        field=row.field,
        proposed_value=row.proposed_value,
        reason=row.reason,
        signals=row.signals,
        sensitive=row.sensitive,
        status=row.status,
        requested_at=row.requested_at,
        expires_at=row.expires_at,
        decided_by=row.decided_by,
        decision_reason=row.decision_reason,
    )


def _text(name: str, value: object, limit: int, *, required: bool) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text")
    text = " ".join(validation.normalize_text(value).split())
    if required and not text:
        raise InvalidInput(f"{name} is empty")
    if len(text) > limit:
        raise InvalidInput(f"{name} has {len(text)} characters; the limit is {limit}")
    return text


def _utc(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    return now.astimezone(UTC) if now.tzinfo is not None else now.replace(tzinfo=UTC)
