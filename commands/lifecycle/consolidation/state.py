"""What one cycle sees of a user: every memory as the read models hold it at the cycle's
position, plus the engram facts (epochs, gate rejections, pair keys), and a working copy
that each rule updates, so later rules see earlier rules' effects (seed 001 §3's order).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from mnemoledger.ledger.policy import (
    ACTIVE,
    BUFFER,
    CORE,
    EXPIRED,
    FORGOTTEN,
    LAYER_RANK,
    REPETITION_WEIGHT,
    SESSION_TAG,
    SHARED_NAMESPACE,
    WORKING,
)
from mnemoledger.projections import engram_state
from mnemoledger.projections.layers import LayersProjection, MemoryRow
from mnemoledger.projections.vectors import VectorsProjection

Vector = npt.NDArray[np.float32]


@dataclass
class MemoryState:
    """One memory in the cycle's working copy."""

    id: str
    content: str
    kind: str
    tags: list[str]
    source: str
    namespace: str
    importance: float
    layer: str
    state: str
    repetition_count: int
    access_count: int
    created_at: datetime
    last_accessed: datetime | None
    position: int
    updated_at: datetime
    """Its last change: the time of the last event on its stream (serving it is no change)."""
    evidence: list[str] | None
    confidence: float | None
    expires_at: str | None
    note_kind: str | None
    entered_epoch: int
    used_epoch: int
    """Epochs completed when it was created or last served (seed 001 §2.4's idle clock)."""
    gate_rejections: int
    gate_retry_epoch: int | None
    triaged: bool
    purge_at: str | None

    @property
    def active(self) -> bool:
        return self.state == ACTIVE

    @property
    def reinforcement(self) -> float:
        """Seed 001 §2.2: access_count + repetition_count x 2.5."""
        return self.access_count + self.repetition_count * REPETITION_WEIGHT

    @property
    def rank(self) -> int:
        return LAYER_RANK[self.layer]

    @property
    def is_session_note(self) -> bool:
        """Seed 001 §2.6: `source: session` or `tag: session`."""
        return self.source == SESSION_TAG or SESSION_TAG in self.tags

    def age_seconds(self, now: datetime) -> float:
        return (now - self.created_at).total_seconds()

    def modified_seconds(self, now: datetime) -> float:
        """Seconds since its last change (seed 001 §5.2's `mod=`)."""
        return (now - self.updated_at).total_seconds()


@dataclass
class UserState:
    """A user's memories and engram facts at one position, with vector access."""

    user_id: str
    epoch: int
    """The number of the cycle being decided (epochs completed + 1)."""
    last_epoch_position: int
    memories: dict[str, MemoryState]
    pairs: dict[str, set[str]]
    """Pair keys already examined, by kind (merge, reconcile, overlap, daily)."""
    vectors: VectorsProjection
    _vector_cache: dict[str, Vector | None] = field(default_factory=dict)
    _hits: dict[tuple[str, int], list[tuple[str, float]]] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        user_id: str,
        layers: LayersProjection,
        vectors: VectorsProjection,
        fingerprint_since: str | None = None,
    ) -> UserState:
        clock = engram_state.user_epoch(layers.engine, user_id)
        facts = engram_state.memory_facts(layers.engine, user_id)
        # what the rules can still act on: active memories, soft-deleted ones (purge) and
        # expired ones (pruneExpired); evicted, superseded and purged ones are never read
        rows = [
            r for state in (ACTIVE, FORGOTTEN, EXPIRED) for r in layers.list(user_id, state=state)
        ]
        memories = {
            row.id: _state(row, facts.get(row.id)) for row in sorted(rows, key=lambda r: r.id)
        }
        pairs = {
            kind: engram_state.pair_keys(layers.engine, user_id, kind)
            for kind in ("merge", "reconcile", "overlap")
        }
        pairs["daily"] = engram_state.pair_keys(layers.engine, user_id, "daily", fingerprint_since)
        return cls(user_id, clock.epoch + 1, clock.position, memories, pairs, vectors)

    def active(self, layer: str | None = None) -> list[MemoryState]:
        """Active memories (of `layer`), ordered by id."""
        return [
            m for m in self.memories.values() if m.active and (layer is None or m.layer == layer)
        ]

    def vector(self, memory_id: str) -> Vector | None:
        if memory_id not in self._vector_cache:
            self._vector_cache[memory_id] = self.vectors.vector(memory_id)
        return self._vector_cache[memory_id]

    def changed_since_last_epoch(self) -> list[MemoryState]:
        """Active memories written to since the previous cycle decided, its own changes
        included (all, before the first cycle)."""
        return [m for m in self.active() if m.position > self.last_epoch_position]

    def neighbours(self, memory: MemoryState, k: int) -> list[tuple[MemoryState, float]]:
        """The `k` most similar other active memories, by the vector index (k-NN, not a
        scan of all pairs), most similar first."""
        key = (memory.id, k)
        if key not in self._hits:
            # the index does not change during a cycle: one search per memory serves every
            # rule (reconcile, merge, dedup, daily, audit hints)
            vector = self.vector(memory.id)
            self._hits[key] = (
                [] if vector is None else self.vectors.similar(self.user_id, vector, k + 1)
            )
        found = []
        for other_id, similarity in self._hits[key]:
            other = self.memories.get(other_id)
            if other is not None and other.id != memory.id and other.active:
                found.append((other, similarity))
        return found[:k]

    def similarity(self, a: Vector | None, b: Vector | None) -> float:
        """Similarity of two passage vectors on the reference scale; 0 without both."""
        if a is None or b is None:
            return 0.0
        return self.vectors.calibration.to_reference(float(np.dot(a, b)))


def pair_key(a: str, b: str) -> str:
    """Seed 001 §3.1: one key per unordered pair."""
    return ":".join(sorted((a, b)))


def namespaces_compatible(a: MemoryState, b: MemoryState) -> bool:
    """Seed 001 §7: across namespaces only when one side is `default`."""
    return a.namespace == b.namespace or SHARED_NAMESPACE in (a.namespace, b.namespace)


def merged_namespace(a: MemoryState, b: MemoryState) -> str:
    """Seed 001 §7: the result of a cross-namespace merge stays in `default`."""
    return a.namespace if a.namespace == b.namespace else SHARED_NAMESPACE


def by_age(memories: Iterable[MemoryState]) -> list[MemoryState]:
    """Oldest first (ties by id)."""
    return sorted(memories, key=lambda m: (m.created_at, m.id))


def _parse(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _state(row: MemoryRow, facts: engram_state.MemoryFacts | None) -> MemoryState:
    created = datetime.fromisoformat(row.created_at)
    return MemoryState(
        id=row.id,
        content=row.content,
        kind=row.kind,
        tags=list(row.tags),
        source=row.source,
        namespace=row.namespace,
        importance=row.importance,
        layer=row.layer,
        state=row.state,
        repetition_count=row.repetition_count,
        access_count=row.access_count,
        created_at=created,
        last_accessed=_parse(row.last_accessed),
        position=row.position,
        updated_at=datetime.fromisoformat(row.updated_at),
        evidence=list(row.evidence) if row.evidence else None,
        confidence=row.confidence,
        expires_at=row.expires_at,
        note_kind=row.note_kind,
        entered_epoch=facts.entered_epoch if facts else 0,
        used_epoch=facts.used_epoch if facts else 0,
        gate_rejections=facts.gate_rejections if facts else 0,
        gate_retry_epoch=facts.gate_retry_epoch if facts else None,
        triaged=facts.triaged if facts else False,
        purge_at=facts.purge_at if facts else None,
    )


LAYERS_UP: dict[str, str] = {BUFFER: WORKING, WORKING: CORE}
LAYERS_DOWN: dict[str, str] = {CORE: WORKING, WORKING: BUFFER}


def as_json(memory: MemoryState) -> dict[str, Any]:
    return {"id": memory.id, "layer": memory.layer, "content": memory.content}
