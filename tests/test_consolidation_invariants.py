"""Seed 001 §10's invariants, checked on real cycles."""

from __future__ import annotations

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm import OfflineProvider, ScriptedProvider
from mnemoledger.commands.llm.consolidation_schemas import AuditOperation, AuditOutput
from mnemoledger.ledger.errors import InvalidTransition
from mnemoledger.ledger.policy import SANDBOX_NEW_AGE_HOURS
from mnemoledger.ledger.provenance import Provenance, acting_as
from tests.test_consolidation_helpers import (
    USER,
    Clock,
    clock,
    engram,
    events,
    ops,
    place,
    reinforce,
    remember,
)

__all__ = ["clock", "engram"]


def test_working_and_core_are_never_deleted(engram: MnemoLedger, clock: Clock) -> None:
    working = remember(engram, "a fading working fact", kind="episodic", importance=0.02)
    core = remember(engram, "a fading core fact", kind="episodic", importance=0.02)
    place(engram, working, "working")
    place(engram, core, "core")
    for _ in range(10):
        clock.advance(days=30)  # months idle between cycles: lifecycle rules judge too
        engram.consolidate(user=USER)
    for memory_id in (working, core):
        row = engram.get(memory_id)
        assert row.state == "active" and row.importance == 0.0
    evicted = {r.stream_id for r in events(engram, "MemoryEvicted")}
    purged = {r.stream_id for r in events(engram, "MemoryPurged")}
    assert not ({working, core} & (evicted | purged))
    aggregate = engram.ledger.memory(working)
    with pytest.raises(InvalidTransition), acting_as(Provenance(user_id=USER)):
        aggregate.evict("test", 1)


def test_demotions_are_one_layer_at_a_time(engram: MnemoLedger, clock: Clock) -> None:
    core = remember(engram, "Maya's name is Maya Lindqvist")
    place(engram, core, "core")
    aggregate = engram.ledger.memory(core)
    with pytest.raises(InvalidTransition), acting_as(Provenance(user_id=USER)):
        aggregate.demote("buffer", "audit", 1)
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script(
        "audit",
        AuditOutput(
            operations=[AuditOperation(op="demote", ids=[core[:8]], target_layer="buffer")]
        ),
    )
    engram.llm = scripted
    clock.advance(hours=SANDBOX_NEW_AGE_HOURS + 1)  # past the sandbox's new-memory guard
    result = engram.consolidate(user=USER, audit=True)
    assert not ops(result, "demote") and engram.get(core).layer == "core"
    assert [r.data["rule"] for r in events(engram, "AuditOpChecked")] == ["no-same-layer-demote"]


def test_session_notes_never_reach_core(engram: MnemoLedger) -> None:
    note = remember(engram, "Maya always wants answers in French", source="session", importance=0.9)
    tagged = remember(engram, "Maya always wants short answers", tags=["session"], importance=0.9)
    for memory_id in (note, tagged):
        place(engram, memory_id, "working")
        reinforce(engram, memory_id, 4)
    for _ in range(3):
        result = engram.consolidate(user=USER)
        assert not ops(result, "gate")
    assert {engram.get(note).layer, engram.get(tagged).layer} == {"working"}


def test_merge_direction_is_always_upward(engram: MnemoLedger) -> None:
    low = remember(engram, "Maya prefers green tea in the morning", importance=0.9)
    high = remember(engram, "Maya prefers green tea in the morning and evening", importance=0.2)
    place(engram, low, "working")
    place(engram, high, "core")
    result = engram.consolidate(user=USER)
    [merge] = ops(result, "merge")
    assert merge["memory"] == low and merge["layer"] == "core"
    assert engram.get(low).layer == "core"


def test_resume_touches_nothing(engram: MnemoLedger) -> None:
    memory_id = remember(engram, "Maya's name is Maya Lindqvist")
    place(engram, memory_id, "core")
    engram.consolidate(user=USER)
    before, row = engram.ledger.last_position(), engram.get(memory_id).model_dump()
    engram.resume(USER)
    assert engram.ledger.last_position() == before
    assert engram.get(memory_id).model_dump() == row
    result = engram.consolidate(user=USER)
    assert not ops(result, "promote")  # access counts did not grow by reading


def test_memories_move_up_only_through_review_or_reinforcement(engram: MnemoLedger) -> None:
    memory_id = remember(engram, "Maya's name is Maya Lindqvist", importance=0.95)
    for _ in range(5):
        engram.consolidate(user=USER)
    promotions = [r.data for r in events(engram, "MemoryPromoted")]
    assert all(
        p["via"] in ("mechanical", "triage", "gate", "audit", "distillation") for p in promotions
    )
    assert engram.get(memory_id).layer == "buffer"  # too young to triage, never reinforced
