"""Lifecycle rules judged at the cycle's clock: TTL expiry, Luminary pruneExpired, seed 003
§7 soft delete / restore / purge, Nebo's provisional cleanup."""

from __future__ import annotations

from commands import MnemoLedger
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


def test_soft_delete_restore_and_purge(engram: MnemoLedger, clock: Clock) -> None:
    idle = remember(engram, "A podcast about kites came up once", importance=0.1)
    used = remember(engram, "Sailing lessons start in June", importance=0.1)
    pinned = remember(engram, "Gliders need thermals", importance=0.1, tags=["pinned"])
    important = remember(engram, "Rowing club dues are 40 euros", importance=0.5)
    clock.advance(days=45)
    serve(engram, [used])
    clock.advance(days=20)
    result = engram.consolidate(user=USER)
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


def test_provisional_memories_are_cleaned_after_thirty_days(
    engram: MnemoLedger, clock: Clock
) -> None:
    guess = remember(engram, "Maya might be vegetarian", confidence=0.6, importance=0.5)
    sure = remember(engram, "Maya is a vegetarian", confidence=0.9, importance=0.5)
    clock.advance(days=29)
    assert not ops(engram.consolidate(user=USER), "purge")
    clock.advance(days=2)
    result = engram.consolidate(user=USER)
    assert [(o["memory"], o["rule"]) for o in ops(result, "purge")] == [
        (guess, "provisional-cleanup")
    ]
    assert engram.get(sure).state == "active"
