"""`IntegrityMixin`: verify, seal and erase in the Python API (issue 5; seed 003 §8).

Mixed into `MnemoLedger`, which provides what the mixin uses (`ledger`, `settings`,
`embedder`, `rebuild()`, `_provenance()`):

    memory.verify()                      # every chain and seal; problems named
    memory.seal()                        # checkpoint the log since the last seal
    memory.erase(user="maya")            # crypto-shred maya, rebuild, leave no plaintext
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ledger import Ledger, Settings
from ledger.application import KEYS_FILE
from ledger.seal import Seal
from ledger.store import persistence_env
from ledger.validation import identifier
from projections.compact import compact_directory
from projections.embeddings.cache import CachedEmbedder

if TYPE_CHECKING:
    from commands.models import RebuildResult
    from ledger import Provenance
    from projections.runner import Progress


class ProblemOut(BaseModel):
    """One stored event that is not as written."""

    kind: str
    """changed, missing or reordered."""
    position: int | None
    stream: str | None
    version: int | None
    detail: str


class VerifyResult(BaseModel):
    """What `verify` found: `ok` when nothing."""

    ok: bool
    events: int
    """Stored events checked."""
    seals: int
    sealed_through: int
    """The last position covered by a seal (0: nothing sealed)."""
    problems: list[ProblemOut]


class SealOut(BaseModel):
    """One `Sealed` event."""

    id: str
    from_position: int
    to_position: int
    events: int
    root: str
    gaps: list[int]


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


class IntegrityMixin:
    """Check the log, checkpoint it, and erase a user's content from it and its readers."""

    ledger: Ledger
    settings: Settings
    embedder: CachedEmbedder

    if TYPE_CHECKING:

        def rebuild(
            self, projection: str | None = None, progress: Progress | None = None
        ) -> RebuildResult:
            raise NotImplementedError

        def _provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance:
            raise NotImplementedError

    def verify(self, progress: Progress | None = None) -> VerifyResult:
        """Walk every stored event: hashes, per-stream chains, seals, positions."""
        report = self.ledger.verify(progress)
        return VerifyResult(
            ok=report.ok,
            events=report.events,
            seals=report.seals,
            sealed_through=report.sealed_through,
            problems=[ProblemOut(**p.as_json()) for p in report.problems],
        )

    def seal(self, *, agent: str | None = None) -> builtins.list[SealOut]:
        """Seal the log from the last sealed position to the newest event (one `Sealed`
        event per SEAL_MAX_EVENTS events)."""
        seals = self.ledger.seal(self._provenance("", agent, None))
        return [_seal_out(seal) for seal in seals]

    def erase(
        self, *, user: str, agent: str | None = None, progress: Progress | None = None
    ) -> ErasureResult:
        """Crypto-shred `user`: record `UserErased` and destroy the user's data key, then
        rebuild every read model (the user's events now decode redacted), drop cached
        vectors nothing uses any more, and compact every SQLite file of the home."""
        identifier("user", user)
        erasure = self.ledger.erase(self._provenance(user, agent, None), user)
        seen: set[bytes] = set()
        self.embedder.seen = seen
        try:
            rebuilt = self.rebuild(progress=progress)
        finally:
            self.embedder.seen = None
        dropped = self.embedder.cache.retain_only(self.embedder.model, seen)
        compacted = compact_directory(self.settings.home, skip=self._event_store_files())
        return ErasureResult(
            user_id=user,
            erasure_id=erasure.id.hex,
            projections=rebuilt.projections,
            events=rebuilt.events,
            embeddings_dropped=dropped,
            files_compacted=[str(p) for p in compacted],
        )

    def _event_store_files(self) -> builtins.list[Path]:
        """The event log's SQLite file (never vacuumed: its positions are rowids) and the
        key store (compacted by itself)."""
        skip = [self.settings.home / KEYS_FILE]
        env: dict[str, Any] = persistence_env(self.settings)
        if dbname := env.get("SQLITE_DBNAME"):
            skip.append(Path(dbname))
        return skip


def _seal_out(seal: Seal) -> SealOut:
    return SealOut(
        id=seal.id.hex,
        from_position=seal.from_position,
        to_position=seal.to_position,
        events=seal.events,
        root=seal.root,
        gaps=list(seal.gaps),
    )
