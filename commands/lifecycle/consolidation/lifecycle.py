"""Lifecycle rules, judged at the cycle's clock value:

- TTL expiry (seed 002, 003 §7): past `expires_at` -> `MemoryExpired` (any layer: the
  writer asked for it);
- Luminary `pruneExpired` (002): expired notes are purged;
- soft delete (003 §7): last access (else creation) > 60 d (epochs) ago, importance < T,
  not pinned -> soft-deleted (`MemoryLapsed`) with purge_at = +30 d; `restore` brings it back;
- purge (003 §7): soft-deleted past purge_at -> `MemoryPurged` (content leaves the read
  models, the events remain);
- tag cleanup (seed 001 §3 step 1): stale `gate-rejected` tags on Working and orphaned
  `promotion` tags on Working/Core are removed;
- Nebo `CleanProvisionalMemories` (004 §20): confidence < 0.65, reinforced <= 1, in
  Buffer for more than 30 d (epochs) -> purged.

Soft delete and the provisional cleanup only touch Buffer memories: Working and Core are
never deleted (seed 001 §10.4); they lose importance by decay instead. Their days are
counted in consolidation epochs (cycles that ran; a day of the seeds' daily worker is one,
see `ledger.policy`), never on the wall clock: Buffer eviction is epoch-based and idle
periods cost nothing (seed 001 §2.4), so a memory survives the agent's downtime. TTL
expiry and the purge of an already lapsed memory keep the clock: the writer, or the restore
window, named a date. The seeds' own form, any layer and wall-clock days, is the option
`forgetting="as_written"` (setting `forgetting`, recorded with the cycle).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from mnemoledger.commands.lifecycle.consolidation.context import Cycle
from mnemoledger.commands.lifecycle.consolidation.state import MemoryState
from mnemoledger.ledger.policy import (
    BUFFER,
    CORE,
    EXPIRED,
    FORGOTTEN,
    GATE_REJECTED_TAGS,
    GATE_TAG_STALE_EPOCHS,
    PINNED_TAG,
    PROMOTION_TAG,
    PROVISIONAL_MAX_CONFIDENCE,
    PROVISIONAL_MAX_REINFORCED,
    PROVISIONAL_MIN_AGE_DAYS,
    PROVISIONAL_MIN_AGE_EPOCHS,
    PURGE_AFTER_DAYS,
    PURGED,
    SOFT_DELETE_IDLE_DAYS,
    SOFT_DELETE_IDLE_EPOCHS,
    SOFT_DELETE_MAX_IMPORTANCE,
    WORKING,
)


def expire(cycle: Cycle) -> None:
    for memory in cycle.state.active():
        if memory.expires_at is not None and datetime.fromisoformat(memory.expires_at) <= cycle.now:
            cycle.plan.add("expire", memory.id, "ttl", expired_at=memory.expires_at)
            memory.state = EXPIRED


def prune_expired(cycle: Cycle) -> None:
    for memory in sorted(cycle.state.memories.values(), key=lambda m: m.id):
        if memory.state == EXPIRED and memory.note_kind is not None:
            purge(cycle, memory, "prune-expired")


def epochs_since(cycle: Cycle, epoch: int) -> int:
    """Consolidation epochs completed since the user's epoch count was `epoch`."""
    return cycle.epoch - 1 - epoch


def forgettable(cycle: Cycle) -> list[MemoryState]:
    """The memories the idle rules may forget: Buffer ones, or any (`as_written`)."""
    return cycle.state.active() if cycle.forgetting == "as_written" else cycle.state.active(BUFFER)


def idle_too_long(cycle: Cycle, memory: MemoryState) -> bool:
    """Soft delete's idle rule: not used for 60 days, counted in epochs or on the clock."""
    if cycle.forgetting == "as_written":
        used = memory.last_accessed or memory.created_at
        return cycle.now - used > timedelta(days=SOFT_DELETE_IDLE_DAYS)
    return epochs_since(cycle, memory.used_epoch) > SOFT_DELETE_IDLE_EPOCHS


def provisional_too_old(cycle: Cycle, memory: MemoryState) -> bool:
    """CleanProvisionalMemories' age rule: older than 30 days, in epochs or on the clock."""
    if cycle.forgetting == "as_written":
        return cycle.now - memory.created_at > timedelta(days=PROVISIONAL_MIN_AGE_DAYS)
    return epochs_since(cycle, memory.entered_epoch) > PROVISIONAL_MIN_AGE_EPOCHS


def soft_delete(cycle: Cycle) -> None:
    for memory in forgettable(cycle):
        if (
            idle_too_long(cycle, memory)
            and memory.importance < SOFT_DELETE_MAX_IMPORTANCE
            and PINNED_TAG not in memory.tags
        ):
            purge_at = (cycle.now + timedelta(days=PURGE_AFTER_DAYS)).isoformat()
            cycle.plan.add("lapse", memory.id, "soft-delete", purge_at=purge_at)
            memory.state = FORGOTTEN
            memory.purge_at = purge_at


def purge_due(cycle: Cycle) -> None:
    for memory in sorted(cycle.state.memories.values(), key=lambda m: m.id):
        if (
            memory.state == FORGOTTEN
            and memory.purge_at is not None
            and datetime.fromisoformat(memory.purge_at) <= cycle.now
        ):
            purge(cycle, memory, "purge")


def clean_provisional(cycle: Cycle) -> None:
    for memory in forgettable(cycle):
        if (
            memory.confidence is not None
            and memory.confidence < PROVISIONAL_MAX_CONFIDENCE
            and memory.repetition_count <= PROVISIONAL_MAX_REINFORCED
            and provisional_too_old(cycle, memory)
        ):
            purge(cycle, memory, "provisional-cleanup")


def purge(cycle: Cycle, memory: MemoryState, rule: str) -> None:
    cycle.plan.add("purge", memory.id, rule, reason=rule)
    memory.state = PURGED


def cleanup_stale_tags(cycle: Cycle) -> None:
    """Seed 001 §3 step 1: a Working memory's `gate-rejected` tag goes once it is stale --
    its cooldown is over and it has not been served for GATE_TAG_STALE_EPOCHS epochs (its
    rejection count, which the gate's cooldowns read, stays in its `GateDecided` events);
    a `promotion` tag left on a Working or Core memory (the promotion happened) goes too.
    Each removal is one `MemoryTagged`."""
    for memory in cycle.state.active():
        if memory.layer not in (WORKING, CORE):
            continue
        drop: list[str] = []
        if PROMOTION_TAG in memory.tags:
            drop.append(PROMOTION_TAG)
        if (
            memory.layer == WORKING
            and GATE_REJECTED_TAGS[0] in memory.tags
            and (memory.gate_retry_epoch is None or cycle.epoch >= memory.gate_retry_epoch)
            and epochs_since(cycle, memory.used_epoch) >= GATE_TAG_STALE_EPOCHS
        ):
            drop.append(GATE_REJECTED_TAGS[0])
        if drop:
            tags = [t for t in memory.tags if t not in drop]
            cycle.plan.add("tag", memory.id, "tag-cleanup", tags=tags, reason=",".join(drop))
            memory.tags = tags


def run_all(cycle: Cycle) -> None:
    expire(cycle)
    prune_expired(cycle)
    purge_due(cycle)
    soft_delete(cycle)
    clean_provisional(cycle)
    cleanup_stale_tags(cycle)
