"""Lifecycle rules: TTL expiry and Luminary pruneExpired at the cycle's clock, seed 003 §7
soft delete / restore / purge and Nebo's provisional cleanup counted in epochs (seed 001
§2.4: idle periods cost nothing)."""

from __future__ import annotations

from mnemoledger import MnemoLedger
from mnemoledger.ledger.policy import (
    EPOCHS_PER_DAY,
    PROVISIONAL_MIN_AGE_EPOCHS,
    PURGE_AFTER_DAYS,
    SOFT_DELETE_IDLE_EPOCHS,
    SOFT_DELETE_MAX_IMPORTANCE,
)
from tests.test_consolidation_helpers import (
    USER,
    Clock,
    clock,
    engram,
    events,
    of_memory,
    ops,
    place,
    remember,
    serve,
    set_importance,
    set_ttl,
    skip_epochs,
)

__all__ = ["clock", "engram"]


def test_ttl_expiry(engram: MnemoLedger, clock: Clock) -> None:
    memory_id = remember(engram, "Maya is in Porto this week", importance=0.9)
    place(engram, memory_id, "working")
    set_ttl(engram, memory_id, 3, clock)
    clock.advance(days=2)
    assert not ops(engram.consolidate(user=USER), "expire")
    assert engram.search("Porto week", user=USER, k=3)[0].id == memory_id
    clock.advance(days=2)
    result = engram.consolidate(user=USER)
    [expired] = ops(result, "expire")
    assert expired["memory"] == memory_id and expired["rule"] == "ttl"
    assert engram.get(memory_id).state == "expired"
    assert "MemoryExpired" in of_memory(engram, memory_id)
    assert memory_id not in [h.id for h in engram.search("Porto week", user=USER, k=3)]


def test_prune_expired_notes(engram: MnemoLedger, clock: Clock) -> None:
    note = remember(
        engram, "User asked to remember the dentist call", note_kind="log", stability="volatile"
    )
    set_ttl(engram, note, 30, clock)
    clock.advance(days=31)
    result = engram.consolidate(user=USER)
    assert [o["op"] for o in result.operations if o.get("memory") == note] == ["expire", "purge"]
    row = engram.get(note)
    assert row.state == "purged" and row.content == ""
    assert [r.data["content"] for r in events(engram, "MemoryAdded") if r.stream_id == note] == [
        "User asked to remember the dentist call"
    ]


def test_soft_delete_counts_epochs_not_days_then_restore_and_purge(
    engram: MnemoLedger, clock: Clock
) -> None:
    idle = remember(engram, "Right now a podcast about kites is on", importance=0.3)
    used = remember(engram, "For now sailing lessons are on hold", importance=0.3)
    pinned = remember(
        engram, "Gliders need thermals at the moment", importance=0.3, tags=["pinned"]
    )
    important = remember(engram, "Rowing club dues are 40 euros", importance=0.9)
    everyone = (idle, used, pinned, important)
    assert not ops(engram.consolidate(user=USER), "lapse")  # epoch 1
    # downtime: 90 days pass with no cycle; the next cycle is one more epoch, not 90 days
    clock.advance(days=90)
    downtime = engram.consolidate(user=USER)  # epoch 2
    assert not ops(downtime, "lapse") and not ops(downtime, "evict")
    assert {engram.get(i).state for i in everyone} == {"active"}
    assert {engram.get(i).layer for i in (idle, used, pinned)} == {"buffer"}  # triage kept

    def judged_below_threshold() -> None:
        """Decay alone takes every Buffer memory out long before SOFT_DELETE_IDLE_EPOCHS;
        held in Buffer, each is judged below T but the important one."""
        for memory_id in (idle, used, pinned):
            set_importance(engram, memory_id, SOFT_DELETE_MAX_IMPORTANCE / 2)
        set_importance(engram, important, 0.9)

    served_at = EPOCHS_PER_DAY  # a day of cycles done
    skip_epochs(engram, served_at - 2, clock)
    serve(engram, [used])  # used at epoch `served_at`: idle again from there
    skip_epochs(engram, SOFT_DELETE_IDLE_EPOCHS - served_at, clock)
    judged_below_threshold()
    not_yet = engram.consolidate(user=USER)  # idle for SOFT_DELETE_IDLE_EPOCHS epochs
    assert not_yet.epoch == SOFT_DELETE_IDLE_EPOCHS + 1 and not ops(not_yet, "lapse")
    result = engram.consolidate(user=USER)  # idle for one epoch more
    [lapse] = ops(result, "lapse")
    assert lapse["memory"] == idle and lapse["rule"] == "soft-delete"
    assert engram.get(idle).state == "forgotten"
    assert {engram.get(i).state for i in (used, pinned, important)} == {"active"}
    assert idle not in [h.id for h in engram.search("podcast kites", user=USER, k=5)]
    engram.restore(idle)
    assert engram.get(idle).state == "active"
    # restored: judged again from scratch; lapses again, then is purged 30 days later
    again = engram.consolidate(user=USER)
    assert [o["memory"] for o in ops(again, "lapse")] == [idle]
    clock.advance(days=PURGE_AFTER_DAYS - 1)
    assert not ops(engram.consolidate(user=USER), "purge")
    clock.advance(days=2)
    purged = engram.consolidate(user=USER)
    assert [(o["memory"], o["rule"]) for o in ops(purged, "purge")] == [(idle, "purge")]
    row = engram.get(idle)
    assert row.state == "purged" and row.content == "" and row.evidence is None
    assert "MemoryPurged" in of_memory(engram, idle)  # the event remains in the log
    # the served memory lapses just past SOFT_DELETE_IDLE_EPOCHS from its serving
    assert purged.epoch is not None
    skip_epochs(engram, served_at + SOFT_DELETE_IDLE_EPOCHS - purged.epoch, clock)
    judged_below_threshold()
    assert not ops(engram.consolidate(user=USER), "lapse")
    assert [o["memory"] for o in ops(engram.consolidate(user=USER), "lapse")] == [used]
    assert {engram.get(i).state for i in (pinned, important)} == {"active"}


def test_a_rebuilt_layers_model_keeps_the_idle_clock(engram: MnemoLedger, clock: Clock) -> None:
    idle = remember(engram, "Right now a podcast about kites is on", importance=0.3)
    used = remember(engram, "For now sailing lessons are on hold", importance=0.3)
    engram.consolidate(user=USER)
    skip_epochs(engram, 29, clock)
    serve(engram, [used])
    skip_epochs(engram, SOFT_DELETE_IDLE_EPOCHS - 29, clock)
    engram.rebuild("layers")
    result = engram.consolidate(user=USER)
    assert [o["memory"] for o in ops(result, "lapse")] == [idle]


def test_provisional_memories_are_cleaned_after_thirty_epochs(
    engram: MnemoLedger, clock: Clock
) -> None:
    guess = remember(engram, "Maya might be vegetarian", confidence=0.6, importance=0.5)
    sure = remember(engram, "Maya is a vegetarian", confidence=0.9, importance=0.5)
    clock.advance(days=45)  # downtime: no epoch ran, nothing is older
    first = engram.consolidate(user=USER)  # epoch 1
    assert not ops(first, "purge") and not ops(first, "evict")
    assert engram.get(guess).layer == "buffer"  # provisional memories are not triaged
    skip_epochs(engram, PROVISIONAL_MIN_AGE_EPOCHS - 1, clock)  # the minimum age done
    # decay alone evicts a Buffer memory long before: held there, at its importance
    for memory_id in (guess, sure):
        set_importance(engram, memory_id, 0.5)
    assert not ops(engram.consolidate(user=USER), "purge")  # in Buffer for the minimum age
    result = engram.consolidate(user=USER)  # one epoch more
    assert [(o["memory"], o["rule"]) for o in ops(result, "purge")] == [
        (guess, "provisional-cleanup")
    ]
    assert engram.get(sure).state == "active"
