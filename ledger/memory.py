"""The memory aggregate: one stream of events per memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventsourcing.domain import Aggregate, event

from mnemoledger.ledger.errors import InvalidTransition
from mnemoledger.ledger.event import LedgerEvent
from mnemoledger.ledger.policy import (
    ACTIVE,
    BUFFER,
    DEFAULT_IMPORTANCE,
    DEFAULT_STABILITY,
    ENTRY_LAYER,
    EVICTED,
    EXPIRED,
    FORGOTTEN,
    LAYER_RANK,
    MAX_EVIDENCE_ITEMS,
    NORMAL,
    PURGED,
    SUPERSEDED,
)


@dataclass
class Memory(Aggregate, created_event_name="MemoryAdded"):
    """Something an agent learned about a user, in one of the engram layers."""

    class Event(LedgerEvent):
        """Every event of a memory carries the provenance metadata."""

    user_id: str
    """The user the memory belongs to."""
    content: str
    """The memory's text."""
    kind: str
    """semantic, episodic or procedural (seed 001 §1)."""
    tags: list[str]
    """Free labels, at most 20 of at most 32 characters."""
    source: str
    """Where the memory came from (api, cli, extraction, ...)."""
    namespace: str
    """The project namespace; `default` is shared by all (seed 001, namespace merging)."""
    importance: float = DEFAULT_IMPORTANCE
    """0.0-1.0; decays per consolidation epoch, derived by projections."""
    key: str | None = None
    """A path-like retrieval key (Nebo, seed 004 §2), e.g. `person/sarah`."""
    note_kind: str | None = None
    """Luminary note kind (seed 002): log, summary, rule, soul, agent, user."""
    stability: str = DEFAULT_STABILITY
    """volatile (expires after its TTL; without one, batch-merged after 7 days), stable or
    permanent (seed 002)."""
    sensitivity: str = NORMAL
    """normal or sensitive; sensitive memories stay out of agent context (seed 002)."""
    confidence: float | None = None
    """How sure the writer was (seed 004 §14: explicit 0.9, inferred 0.6, unknown 0.75)."""
    evidence: list[str] | None = None
    """Where the memory came from: source turn ids, note ids, documents."""
    metadata: dict[str, Any] | None = None
    """Writer-specific facts, e.g. a style observation's reinforcement count."""
    category: str | None = None
    """The memory's category (seed 003 §5), if the writer named one; readers otherwise
    derive one from kind, note kind and namespace (`projections.layers.effective_category`)."""
    said_at: str | None = None
    """When the contents were said (ISO-8601 UTC), if the writer named a past time (an import
    of a chat history or notes); None: when it was recorded (the event's `timestamp`, which
    stays the recording time either way). Absent from events written before it."""
    layer: str = field(default=ENTRY_LAYER, init=False)
    """buffer, working or core: every write enters the buffer."""
    state: str = field(default=ACTIVE, init=False)
    """active or forgotten (soft-deleted)."""
    repetition_count: int = field(default=0, init=False)
    """How often the same fact was stated again (dedup hits)."""
    expires_at: str | None = field(default=None, init=False)
    """ISO-8601 UTC time after which the memory expires, if a TTL was set."""
    links: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    """Relation edges to other memories, by target id."""
    superseded_by: str | None = field(default=None, init=False)
    """The memory that replaced this one, if any."""
    gate_rejections: int = field(default=0, init=False)
    """How often the LLM gate refused Core (seed 001 §2.5: three strikes)."""
    triaged: bool = field(default=False, init=False)
    """Buffer triage kept it (seed 001 §2.3 `_triaged`)."""
    purge_at: str | None = field(default=None, init=False)
    """When a lapsed (auto soft-deleted) memory is purged (seed 003 §7)."""
    facts: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    """Subject-predicate-object facts the memory states (seed 001 §9 fact graph), by id."""

    @event("MemoryUpdated")
    def update(self, content: str, tags: list[str] | None = None) -> None:
        self.content = content
        if tags is not None:
            self.tags = tags

    @event("MemoryReinforced")
    def reinforce(
        self,
        confidence: float | None = None,
        metadata: dict[str, Any] | None = None,
        evidence: list[str] | None = None,
        said_at: str | None = None,
    ) -> None:
        """The same fact stated again; `evidence` is the restatement's (kept with the rest),
        `said_at` when it was said if the writer named a past time (absent from events
        written before it)."""
        self.repetition_count += 1
        if confidence is not None:
            self.confidence = confidence
        if metadata is not None:
            self.metadata = metadata
        if evidence:
            self.evidence = merged_evidence(self.evidence, evidence)

    def supersede(self, replacement_id: str, reason: str) -> None:
        if self.state == SUPERSEDED:
            raise InvalidTransition(f"memory {self.id} is already superseded")
        self._supersede(replacement_id, reason)

    @event("MemorySuperseded")
    def _supersede(self, superseded_by: str, reason: str) -> None:
        self.state = SUPERSEDED
        self.superseded_by = superseded_by

    @event("MemoryLinked")
    def link(self, target_id: str, link_type: str, strength: float) -> None:
        self.links[target_id] = {"type": link_type, "strength": strength}

    @event("FactStated")
    def state_fact(
        self, fact_id: str, subject: str, predicate: str, object: str, valid_from: str
    ) -> None:
        """A fact this memory states, valid from `valid_from` (UTC, ISO 8601) on."""
        self.facts[fact_id] = {
            "subject": subject,
            "predicate": predicate,
            "object": object,
            "valid_from": valid_from,
            "valid_until": None,
            "superseded_by": None,
        }

    def end_fact(self, fact_id: str, valid_until: str, superseded_by: str | None) -> None:
        fact = self.facts.get(fact_id)
        if fact is None:
            raise InvalidTransition(f"memory {self.id} states no fact {fact_id}")
        if fact["valid_until"] is not None:
            raise InvalidTransition(f"fact {fact_id} already ended at {fact['valid_until']}")
        self._end_fact(fact_id, valid_until, superseded_by)

    @event("FactEnded")
    def _end_fact(self, fact_id: str, valid_until: str, superseded_by: str | None) -> None:
        self.facts[fact_id].update(valid_until=valid_until, superseded_by=superseded_by)

    @event("TTLSet")
    def set_ttl(self, days: float, expires_at: str) -> None:
        self.expires_at = expires_at

    def forget(self) -> None:
        if self.state != ACTIVE:
            raise InvalidTransition(f"memory {self.id} is {self.state}, not active")
        self._soft_delete()

    @event("MemorySoftDeleted")
    def _soft_delete(self) -> None:
        self.state = FORGOTTEN

    def restore(self) -> None:
        if self.state != FORGOTTEN:
            raise InvalidTransition(f"memory {self.id} is not forgotten; nothing to restore")
        self._restore()

    @event("MemoryRestored")
    def _restore(self) -> None:
        self.state = ACTIVE

    # --- consolidation and lifecycle (seed 001 §2-§5, 003 §7, 004 §20) --------------------

    def promote(self, to_layer: str, via: str, epoch: int) -> None:
        """Move one layer up (seed 001 §1: Working <- consolidation, Core <- the gate)."""
        if LAYER_RANK[to_layer] != LAYER_RANK[self.layer] + 1:
            raise InvalidTransition(f"memory {self.id} cannot go from {self.layer} to {to_layer}")
        self._promote(self.layer, to_layer, via, epoch)

    @event("MemoryPromoted")
    def _promote(self, from_layer: str, to_layer: str, via: str, epoch: int) -> None:
        self.layer = to_layer

    def demote(self, to_layer: str, via: str, epoch: int) -> None:
        """Move one layer down, never two (seed 001 §10.3)."""
        if LAYER_RANK[to_layer] != LAYER_RANK[self.layer] - 1:
            raise InvalidTransition(f"memory {self.id} cannot go from {self.layer} to {to_layer}")
        self._demote(self.layer, to_layer, via, epoch)

    @event("MemoryDemoted")
    def _demote(self, from_layer: str, to_layer: str, via: str, epoch: int) -> None:
        self.layer = to_layer

    @event("GateDecided")
    def gate_decided(
        self,
        decision: str,
        attempt: int,
        category: str | None,
        reason: str,
        retry_epoch: int | None,
        final: bool,
        epoch: int,
    ) -> None:
        """The LLM gate's verdict on Working -> Core (seed 001 §2.5)."""
        if decision == "reject":
            self.gate_rejections += 1

    @event("TriageDecided")
    def triage_decided(self, decision: str, kind: str | None, reason: str, epoch: int) -> None:
        """Buffer triage's verdict (seed 001 §2.3); `keep` is never triaged again; a promoted
        memory may be re-filed as procedural (`kind`)."""
        self.triaged = True
        if kind is not None:
            self.kind = kind

    @event("ReconcileDecided")
    def reconcile_decided(
        self, decision: str, other_id: str, similarity: float, epoch: int
    ) -> None:
        """Reconcile's verdict on this (newer) memory and an older one (seed 001 §3.2)."""

    def evict(self, reason: str, epoch: int) -> None:
        """Drop a Buffer memory (decay or capacity cap); Working/Core are never deleted."""
        if self.layer != BUFFER or self.state != ACTIVE:
            raise InvalidTransition(f"only active Buffer memories are evicted; {self.id} is not")
        self._evict(reason, epoch)

    @event("MemoryEvicted")
    def _evict(self, reason: str, epoch: int) -> None:
        self.state = EVICTED

    @event("MemoryMerged")
    def absorb(
        self,
        absorbed: list[str],
        content: str,
        tags: list[str],
        importance: float,
        access_added: int,
        repetition_added: int,
        evidence: list[str] | None,
        layer: str,
        namespace: str,
        via: str,
        epoch: int,
    ) -> None:
        """This memory absorbed others (merge, reconcile, dedup): their evidence with it."""
        self.content = content
        self.tags = tags
        self.importance = importance
        self.repetition_count += repetition_added
        self.evidence = evidence
        self.layer = layer
        self.namespace = namespace

    @event("ImportanceAdjusted")
    def adjust_importance(self, importance: float, via: str, epoch: int) -> None:
        self.importance = importance

    @event("MemoryTagged")
    def retag(self, tags: list[str], reason: str) -> None:
        self.tags = tags

    @event("MemoryExpired")
    def expire(self, expired_at: str) -> None:
        """Past its TTL (seed 002, 003 §7): out of every reader, kept in the log."""
        self.state = EXPIRED

    def lapse(self, purge_at: str, reason: str) -> None:
        """Seed 003 §7: unused and unimportant -> soft-deleted, purged at `purge_at`."""
        if self.state != ACTIVE:
            raise InvalidTransition(f"memory {self.id} is {self.state}, not active")
        self._lapse(purge_at, reason)

    @event("MemoryLapsed")
    def _lapse(self, purge_at: str, reason: str) -> None:
        self.state = FORGOTTEN
        self.purge_at = purge_at

    @event("MemoryPurged")
    def purge(self, reason: str) -> None:
        """Content removed from every read model; this event and the history remain."""
        self.state = PURGED


def merged_evidence(old: list[str] | None, new: list[str]) -> list[str]:
    """`old` then `new`, without repeats, bounded as validation bounds evidence."""
    return list(dict.fromkeys([*(old or []), *new]))[:MAX_EVIDENCE_ITEMS]
