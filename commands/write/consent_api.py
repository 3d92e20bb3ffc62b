"""`Consent`: the consent policy's methods of the Python API (seed 003 §10), over the
ledger and its consent read model:

    memory.propose_consent(user="maya", field="city", value="Lisbon")  # pending
    memory.grant_consent(request_id)                                   # applied
    memory.profile_fields(user="maya")                                 # {"city": "Lisbon"}
"""

from __future__ import annotations

import builtins
from datetime import datetime

from mnemoledger.commands.parts import Parts
from mnemoledger.commands.write.consent import ConsentOut, ConsentService, ProposalOutcome


class Consent:
    """Propose, grant, deny and expire profile patches; read requests and the profile,
    over the ledger and its consent read model (kept up to date by the runner)."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    @property
    def consent_service(self) -> ConsentService:
        """The consent use cases over this ledger and its consent read model."""
        return ConsentService(self.parts.ledger, self.parts.consent_model)

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
        tom_confidence: float | None = None,
    ) -> ProposalOutcome:
        """`MnemoLedger.propose_consent`: propose setting a profile field (documented there)."""
        self.parts.runner.catch_up(names=("consent",))
        return self.consent_service.propose(
            user,
            field,
            value,
            provenance=self.parts.provenance(user, agent, thread),
            signals=signals,
            reason=reason,
            now=now,
            tom_confidence=tom_confidence,
        )

    def grant_consent(
        self, request_id: str, *, agent: str | None = None, now: datetime | None = None
    ) -> ConsentOut:
        """`MnemoLedger.grant_consent`: consent to a pending request (documented there)."""
        return self.consent_service.grant(
            request_id, self.parts.provenance("", agent, None), now=now
        )

    def deny_consent(
        self, request_id: str, *, reason: str = "", agent: str | None = None
    ) -> ConsentOut:
        """`MnemoLedger.deny_consent`: refuse a pending request (documented there)."""
        return self.consent_service.deny(request_id, reason, self.parts.provenance("", agent, None))

    def expire_consents(
        self, *, now: datetime | None = None, agent: str | None = None
    ) -> builtins.list[ConsentOut]:
        """`MnemoLedger.expire_consents`: expire overdue pending requests (documented there)."""
        self.parts.refresh()
        return self.consent_service.expire_due(
            now, provenance=self.parts.provenance("", agent, None)
        )

    def consents(
        self, *, user: str | None = None, status: str | None = None
    ) -> builtins.list[ConsentOut]:
        """`MnemoLedger.consents`: consent requests, filtered (documented there)."""
        self.parts.refresh()
        return self.consent_service.list(user, status)

    def profile_fields(self, *, user: str) -> dict[str, str]:
        """`MnemoLedger.profile_fields`: the user's applied profile fields (documented there)."""
        self.parts.refresh()
        return self.consent_service.profile_fields(user)
