"""The memory aggregate: one stream of events per memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventsourcing.domain import Aggregate, event

from ledger.errors import InvalidTransition
from ledger.event import LedgerEvent
from ledger.policy import (
    ACTIVE,
    DEFAULT_IMPORTANCE,
    ENTRY_LAYER,
    FORGOTTEN,
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

    @event("MemoryUpdated")
    def update(self, content: str, tags: list[str] | None = None) -> None:
        self.content = content
        if tags is not None:
            self.tags = tags

    @event("MemoryReinforced")
    def reinforce(self) -> None:
        self.repetition_count += 1

    @event("MemoryLinked")
    def link(self, target_id: str, link_type: str, strength: float) -> None:
        self.links[target_id] = {"type": link_type, "strength": strength}

    @event("TTLSet")
    def set_ttl(self, days: float, expires_at: str) -> None:
        self.expires_at = expires_at

    def forget(self) -> None:
        if self.state == FORGOTTEN:
            raise InvalidTransition(f"memory {self.id} is already forgotten")
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
