"""`Integrity`: verify, seal and erase in the Python API (seed 003 §8), over the
ledger and the runner of the shared parts:

    memory.verify()                      # every chain and seal; problems named
    memory.seal()                        # checkpoint the log since the last seal
    memory.erase(user="maya")            # crypto-shred maya, rebuild, leave no plaintext

`erase` can be run again: it finishes what an interrupted run left undone (the event not
recorded, the read models not yet rebuilt or compacted) and says what it did.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping

from pydantic import BaseModel

from mnemoledger.commands.parts import Parts
from mnemoledger.ledger.seal import Seal
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.runner import Progress


class ProblemOut(BaseModel):
    """One stored event that is not as written."""

    kind: str
    """changed, forged, unchained, missing, reordered, truncated or secret_missing."""
    position: int | None
    stream: str | None
    version: int | None
    detail: str


class SealOut(BaseModel):
    """One `Sealed` event."""

    id: str
    from_position: int
    to_position: int
    events: int
    root: str
    gaps: list[int]


class VerifyResult(BaseModel):
    """What `verify` found: `ok` when nothing."""

    ok: bool
    events: int
    """Stored events checked."""
    checked_through: int
    """The log's last position when the check started."""
    seals: int
    sealed_through: int
    """The last position covered by a seal found in the log (0: nothing sealed)."""
    problems: list[ProblemOut]
    legacy_through: int
    """Positions up to here were written before the home had a chain secret (0: none)."""
    notes: list[str]
    """What holds but is no problem (the legacy range and how far it is protected)."""
    sealed: list[SealOut]
    """Seals this check wrote: a clean check seals what it found unsealed."""


class ErasureResult(BaseModel):
    """What `erase` did."""

    user_id: str
    erasure_id: str
    """The stream of the `UserErased` event."""
    projections: list[str]
    """Read models rebuilt without the user's content."""
    events: int
    """Events replayed by the rebuild."""
    embeddings_dropped: int
    """Cached vectors no rebuilt read model uses (the erased user's among them)."""
    files_compacted: list[str]
    """SQLite files vacuumed so no deleted bytes remain."""
    completed: list[str]
    """What this run did, step by step, and which steps an earlier run (or another
    process of the home) had already done."""


class Integrity:
    """Check the log, checkpoint it, and erase a user's content from it and its readers."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def verify(
        self, progress: Progress | None = None, published: Mapping[int, str] | None = None
    ) -> VerifyResult:
        """`MnemoLedger.verify`: check every stored event and seal (documented there)."""
        report = self.parts.ledger.verify(progress, published)
        return VerifyResult(
            ok=report.ok,
            events=report.events,
            seals=report.seals,
            sealed_through=report.sealed_through,
            checked_through=report.checked_through,
            problems=[ProblemOut(**p.as_json()) for p in report.problems],
            legacy_through=report.legacy_through,
            notes=report.notes,
            sealed=[_seal_out(seal) for seal in report.new_seals],
        )

    def seal(self, *, agent: str | None = None) -> builtins.list[SealOut]:
        """`MnemoLedger.seal`: seal the log up to its newest event (documented there)."""
        seals = self.parts.ledger.seal(self.parts.provenance("", agent, None))
        return [_seal_out(seal) for seal in seals]

    def erase(
        self, *, user: str, agent: str | None = None, progress: Progress | None = None
    ) -> ErasureResult:
        """`MnemoLedger.erase`: crypto-shred a user (documented there)."""
        identifier("user", user)
        outcome = self.parts.ledger.erase(self.parts.provenance(user, agent, None), user)
        completed = [
            f"destroyed {outcome.keys_destroyed} data key(s)"
            if outcome.keys_destroyed is not None
            else f"data keys already destroyed at {outcome.erased_at}",
            "recorded UserErased" if outcome.recorded else "UserErased already recorded",
        ]
        purge = self.parts.runner.purge_erasures(progress)
        if purge is None:
            completed.append("read models already purged of the user")
            projections: builtins.list[str] = []
            events = dropped = 0
            compacted: builtins.list[str] = []
        else:
            projections, events, dropped = purge.projections, purge.events, purge.embeddings_dropped
            compacted = [str(p) for p in purge.files_compacted]
            completed += [
                f"rebuilt {len(projections)} read models from {events} events",
                f"dropped {dropped} cached vectors",
                f"compacted {len(compacted)} files",
            ]
        return ErasureResult(
            user_id=outcome.user_id,
            erasure_id=outcome.erasure_id.hex,
            projections=projections,
            events=events,
            embeddings_dropped=dropped,
            files_compacted=compacted,
            completed=completed,
        )


def _seal_out(seal: Seal) -> SealOut:
    return SealOut(
        id=seal.id.hex,
        from_position=seal.from_position,
        to_position=seal.to_position,
        events=seal.events,
        root=seal.root,
        gaps=list(seal.gaps),
    )
