"""Lifecycle rules: TTL expiry and Luminary pruneExpired at the cycle's clock, seed 003 §7
soft delete / restore / purge and Nebo's provisional cleanup counted in epochs (seed 001
§2.4: idle periods cost nothing)."""

from __future__ import annotations

from commands import MnemoLedger
from ledger.policy import PROVISIONAL_MIN_AGE_EPOCHS, SOFT_DELETE_IDLE_EPOCHS
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
    idle = remember(engram, "A podcast about kites came up once", importance=0.3)
    used = remember(engram, "Sailing lessons start in June", importance=0.3)
    pinned = remember(engram, "Gliders need thermals", importance=0.3, tags=["pinned"])
    important = remember(engram, "Rowing club dues are 40 euros", importance=0.9)
    everyone = (idle, used, pinned, important)
    assert not ops(engram.consolidate(user=USER), "lapse")  # epoch 1
    # downtime: 90 days pass with no cycle; the next cycle is one more epoch, not 90 days
    clock.advance(days=90)
    downtime = engram.consolidate(user=USER)  # epoch 2
    assert not ops(downtime, "lapse") and not ops(downtime, "evict")
    assert {engram.get(i).state for i in everyone} == {"active"}
    assert {engram.get(i).layer for i in (idle, used, pinned)} == {"buffer"}  # triage kept
    skip_epochs(engram, 20, clock)  # 22 epochs done
    serve(engram, [used])  # used at epoch 22: idle again from there
    skip_epochs(engram, SOFT_DELETE_IDLE_EPOCHS - 22, clock)  # 60 epochs done
    assert not ops(engram.consolidate(user=USER), "lapse")  # epoch 61: idle for 60 epochs
    result = engram.consolidate(user=USER)  # epoch 62: idle for 61 epochs, > 60
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
    clock.advance(days=29)
    assert not ops(engram.consolidate(user=USER), "purge")
    clock.advance(days=2)
    purged = engram.consolidate(user=USER)
    assert [(o["memory"], o["rule"]) for o in ops(purged, "purge")] == [(idle, "purge")]
    row = engram.get(idle)
    assert row.state == "purged" and row.content == "" and row.evidence is None
    assert "MemoryPurged" in of_memory(engram, idle)  # the event remains in the log


def test_a_rebuilt_layers_model_keeps_the_idle_clock(engram: MnemoLedger, clock: Clock) -> None:
    idle = remember(engram, "A podcast about kites came up once", importance=0.3)
    used = remember(engram, "Sailing lessons start in June", importance=0.3)
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
    assert not ops(engram.consolidate(user=USER), "purge")  # epoch 1
    skip_epochs(engram, PROVISIONAL_MIN_AGE_EPOCHS - 1, clock)  # 30 epochs done
    assert not ops(engram.consolidate(user=USER), "purge")  # in Buffer for 30 epochs
    result = engram.consolidate(user=USER)  # 31 epochs: more than 30
    assert [(o["memory"], o["rule"]) for o in ops(result, "purge")] == [
        (guess, "provisional-cleanup")
    ]
    assert engram.get(sure).state == "active"
