"""`ConsentMixin`: the consent policy's methods of the Python API (seed 003 §10).

Mixed into `MnemoLedger`, which provides what the mixin uses:

    class MnemoLedger(ConsentMixin):
        def __init__(...):
            ...
            self.consent_model = ConsentProjection(directory / "consent")
            self.runner = Runner(self.ledger, [..., self.consent_model], directory / ".lock")

    memory.propose_consent(user="maya", field="city", value="Lisbon")  # pending
    memory.grant_consent(request_id)                                   # applied
    memory.profile_fields(user="maya")                                 # {"city": "Lisbon"}
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import TYPE_CHECKING

from mnemoledger.commands.write.consent import ConsentOut, ConsentService, ProposalOutcome
from mnemoledger.ledger import Ledger, Provenance
from mnemoledger.projections.consent import ConsentProjection

if TYPE_CHECKING:
    from mnemoledger.projections.runner import Progress


class ConsentMixin:
    """Propose, grant, deny and expire profile patches; read requests and the profile.

    Expects on `self`: `ledger` (the `Ledger`), `consent_model` (a `ConsentProjection`
    that the runner keeps up to date), `refresh()` and `_provenance(user, agent, thread)`.
    """

    ledger: Ledger
    consent_model: ConsentProjection

    if TYPE_CHECKING:

        def refresh(self, progress: Progress | None = None) -> int:
            raise NotImplementedError

        def _provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance:
            raise NotImplementedError

    @property
    def consent_service(self) -> ConsentService:
        """The consent use cases over this ledger and its consent read model."""
        return ConsentService(self.ledger, self.consent_model)

    def propose_consent(
        self,
        *,
        user: str,
        field: str,
        value: str,
        signals: int = 1,
        reason: str = "",
        agent: str | None = None,
        thread: str | None = None,
        now: datetime | None = None,
    ) -> ProposalOutcome:
        """Propose setting a profile field: sensitive fields wait for consent (7 days);
        benign ones apply at once when corroborated by >= 2 signals."""
        return self.consent_service.propose(
            user,
            field,
            value,
            provenance=self._provenance(user, agent, thread),
            signals=signals,
            reason=reason,
            now=now,
        )

    def grant_consent(
        self, request_id: str, *, agent: str | None = None, now: datetime | None = None
    ) -> ConsentOut:
        """Consent to a pending request: its patch applies (ConsentGranted)."""
        return self.consent_service.grant(request_id, self._provenance("", agent, None), now=now)

    def deny_consent(
        self, request_id: str, *, reason: str = "", agent: str | None = None
    ) -> ConsentOut:
        """Refuse a pending request: its patch never applies (ConsentDenied)."""
        return self.consent_service.deny(request_id, reason, self._provenance("", agent, None))

    def expire_consents(
        self, *, now: datetime | None = None, agent: str | None = None
    ) -> builtins.list[ConsentOut]:
        """Expire every pending request whose 7-day window is over (ConsentExpired)."""
        self.refresh()
        return self.consent_service.expire_due(now, provenance=self._provenance("", agent, None))

    def consents(
        self, *, user: str | None = None, status: str | None = None
    ) -> builtins.list[ConsentOut]:
        """Consent requests in log order, filtered by user and status."""
        self.refresh()
        return self.consent_service.list(user, status)

    def profile_fields(self, *, user: str) -> dict[str, str]:
        """The user's applied profile fields: granted patches only."""
        self.refresh()
        return self.consent_service.profile_fields(user)
