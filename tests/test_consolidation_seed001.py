"""Seed 001 (engram) rows of issue 19, one test per seed section: gate rejections tag the
memory (§2.5), the cycle's tag cleanup (§3 step 1) and the Core summary resume reads
(§3 step 19), the audit's input (§5.2), the audit sandbox's guards (§5.3 / §8) and the dedup
hit's `touch()` (§2.1)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.commands.lifecycle.consolidation import sandbox
from mnemoledger.commands.lifecycle.consolidation.state import MemoryState, UserState
from mnemoledger.commands.llm import OfflineProvider, ScriptedProvider
from mnemoledger.commands.llm.consolidation_schemas import AuditOperation, AuditOutput
from mnemoledger.commands.write.touch import DEDUP_TOUCH_MODE
from mnemoledger.ledger import Provenance
from mnemoledger.ledger.policy import (
    GATE_COOLDOWN_EPOCHS,
    GATE_REJECTED_TAGS,
    GATE_TAG_STALE_EPOCHS,
    PROMOTION_TAG,
    SANDBOX_NEW_AGE_HOURS,
    SANDBOX_RECENT_MOD_HOURS,
)
from mnemoledger.ledger.provenance import acting_as
from tests.test_consolidation_helpers import (
    USER,
    Clock,
    clock,
    engram,
    events,
    of_memory,
    ops,
    place,
    reinforce,
    remember,
    serve,
    set_importance,
    skip_epochs,
)

__all__ = ["clock", "engram"]

REJECTED = "Maya asked about the weather in Porto"
"""A Working candidate the offline gate refuses (no whitelisted category)."""


def _rejected_candidate(engram: MnemoLedger, content: str = REJECTED) -> str:
    memory_id = remember(engram, content, kind="procedural", importance=1.0)
    place(engram, memory_id, "working")
    reinforce(engram, memory_id, 2)  # score 5 >= 3: a gate candidate
    return memory_id


def _gate_tags(engram: MnemoLedger, memory_id: str) -> list[str]:
    return [t for t in engram.get(memory_id).tags if t in GATE_REJECTED_TAGS]


def test_seed001_s2_5_gate_rejection_tags_the_memory(engram: MnemoLedger, clock: Clock) -> None:
    memory_id = _rejected_candidate(engram)
    second, third = 1 + GATE_COOLDOWN_EPOCHS[0], 1 + sum(GATE_COOLDOWN_EPOCHS)
    seen: list[list[str]] = []

    result = engram.consolidate(user=USER)  # epoch 1: first rejection
    [verdict] = ops(result, "gate")
    assert verdict["decision"] == "reject" and verdict["tag"] == "gate-rejected"
    [tagged] = [o for o in ops(result, "tag") if o["memory"] == memory_id]
    assert tagged["rule"] == "gate" and tagged["prompt_version"] == "engram.gate@1"
    seen.append(_gate_tags(engram, memory_id))
    skip_epochs(engram, second - 2, clock)
    engram.consolidate(user=USER)  # epoch `second`: second rejection
    seen.append(_gate_tags(engram, memory_id))
    skip_epochs(engram, third - second - 1, clock)
    engram.consolidate(user=USER)  # epoch `third`: final
    seen.append(_gate_tags(engram, memory_id))
    assert seen == [["gate-rejected"], ["gate-rejected-2"], ["gate-rejected-final"]]
    stream = engram.ledger.stream(memory_id)
    assert [r.data["reason"] for r in stream if r.type == "MemoryTagged"][-1] == (
        "gate-rejected-final"
    )
    # the memory's own tags came through events: a rebuilt read model agrees
    engram.rebuild("layers")
    assert _gate_tags(engram, memory_id) == ["gate-rejected-final"]
    assert engram.get(memory_id).layer == "working"


def test_seed001_s3_step1_tag_cleanup_removes_orphaned_promotion_tags(
    engram: MnemoLedger,
) -> None:
    working = remember(engram, "Maya prefers tea to coffee", tags=[PROMOTION_TAG, "drinks"])
    core = remember(engram, "Maya's name is Maya Lindqvist", tags=[PROMOTION_TAG])
    buffered = remember(engram, "Maya mentioned a bakery", tags=[PROMOTION_TAG])
    place(engram, working, "working")
    place(engram, core, "core")
    result = engram.consolidate(user=USER)
    cleaned = {o["memory"]: o for o in ops(result, "tag") if o["rule"] == "tag-cleanup"}
    assert set(cleaned) == {working, core}
    assert engram.get(working).tags == ["drinks"] and engram.get(core).tags == []
    assert engram.get(buffered).tags == [PROMOTION_TAG], "a Buffer memory's tag is no orphan"
    assert "MemoryTagged" in of_memory(engram, working)
    assert not [o for o in ops(engram.consolidate(user=USER), "tag")]  # nothing left to do


def test_seed001_s3_step1_tag_cleanup_removes_stale_gate_rejected_tags(
    engram: MnemoLedger, clock: Clock
) -> None:
    idle = _rejected_candidate(engram)
    used = _rejected_candidate(engram, "Maya asked about the tides in Lisbon")
    engram.consolidate(user=USER)  # epoch 1: both rejected and tagged
    assert _gate_tags(engram, idle) == _gate_tags(engram, used) == ["gate-rejected"]
    for memory_id in (idle, used):
        set_importance(engram, memory_id, 0.5)  # below 0.6: no longer a gate candidate
    skip_epochs(engram, GATE_TAG_STALE_EPOCHS - 1, clock)
    serve(engram, [used])  # served lately: its tag is not stale
    result = engram.consolidate(user=USER)  # epoch GATE_TAG_STALE_EPOCHS + 1
    [cleaned] = [o for o in ops(result, "tag") if o["rule"] == "tag-cleanup"]
    assert cleaned["memory"] == idle and cleaned["reason"] == "gate-rejected"
    assert _gate_tags(engram, idle) == [] and _gate_tags(engram, used) == ["gate-rejected"]
    # the rejection count the cooldowns read stays in the GateDecided events
    decided = [r for r in events(engram, "GateDecided") if r.stream_id == idle]
    assert [r.data["attempt"] for r in decided] == [1]


def test_seed001_s3_step19_resume_core_summary_follows_the_cycle(engram: MnemoLedger) -> None:
    """Step 19 keeps a compressed Core summary for resume; here resume computes its Core
    section from the read models on every call, so what a cycle promoted is in the next
    resume without a stored summary to update."""
    identity = remember(engram, "Maya is allergic to peanuts", importance=0.8)
    place(engram, identity, "working")
    reinforce(engram, identity, 2)
    assert identity not in [i.id for i in engram.resume(USER).core.memories]
    engram.consolidate(user=USER)
    assert engram.get(identity).layer == "core"
    assert identity in [i.id for i in engram.resume(USER).core.memories]


def _state_of(engram: MnemoLedger, memory_id: str) -> MemoryState:
    engram.refresh()
    state = UserState.load(USER, engram.layers, engram.vectors, "1970-01-01T00:00:00+00:00")
    return state.memories[memory_id]


def test_seed001_s5_3_sandbox_protects_new_and_recently_modified_memories(
    engram: MnemoLedger, clock: Clock
) -> None:
    memory_id = remember(engram, "Maya reviews pull requests in the morning", importance=0.5)
    place(engram, memory_id, "working")
    adjust = AuditOperation(op="adjust", ids=[memory_id[:8]], importance=0.8)
    written = clock.now()

    def verdict(hours_after_write: float) -> sandbox.Verdict:
        now = written + timedelta(hours=hours_after_write)
        return sandbox.check(adjust, [_state_of(engram, memory_id)], now)

    assert verdict(SANDBOX_NEW_AGE_HOURS - 1) == sandbox.Verdict(sandbox.BAD, "new-memory")
    assert verdict(SANDBOX_NEW_AGE_HOURS + 1) == sandbox.Verdict(sandbox.GOOD, None)
    # a change (any event on its stream) at +49 h: modified 1 h ago, then 25 h ago
    clock.advance(hours=SANDBOX_NEW_AGE_HOURS + 1)
    aggregate = engram.ledger.memory(memory_id)
    with acting_as(Provenance(user_id=USER)):
        aggregate.update("Maya reviews pull requests first thing in the morning")
    engram.ledger.save(aggregate)
    changed = SANDBOX_NEW_AGE_HOURS + 1
    assert verdict(changed + 1) == sandbox.Verdict(sandbox.BAD, "recently-modified")
    assert verdict(changed + SANDBOX_RECENT_MOD_HOURS + 1) == sandbox.Verdict(sandbox.GOOD, None)
    # serving it is no change: the guard reads the last change, not the last access
    serve(engram, [memory_id])
    assert verdict(changed + SANDBOX_RECENT_MOD_HOURS + 1) == sandbox.Verdict(sandbox.GOOD, None)
    # without the cycle's clock (the option off) the seven rules alone decide
    assert sandbox.check(adjust, [_state_of(engram, memory_id)]).verdict == sandbox.GOOD


def test_seed001_s2_1_dedup_hit_touches_the_existing_memory(engram: MnemoLedger) -> None:
    [first] = engram.add(["Maya is allergic to peanuts"], user=USER).memories
    engram.refresh()
    before = engram.layers.get(first.id)
    assert before is not None and before.access_count == 0 and before.last_accessed is None
    again = engram.add(["Maya is allergic to peanuts"], user=USER, agent="scribe")
    assert again.memories == [] and [m.id for m in again.reinforced] == [first.id]
    engram.refresh()
    after = engram.layers.get(first.id)
    assert after is not None
    assert after.access_count == 1 and after.repetition_count == 1  # touch() + repetition
    assert after.last_accessed is not None
    [served] = [r for r in events(engram, "RecallServed") if r.causation_id == again.command_id]
    assert served.data["memory_ids"] == [first.id]
    assert served.data["return_mode"] == DEDUP_TOUCH_MODE and served.agent_id == "scribe"
    assert again.command_id is not None
    assert served.stream_id == uuid.uuid5(uuid.UUID(again.command_id), DEDUP_TOUCH_MODE).hex
    # a new fact touches nothing
    engram.add(["Maya's sister is called Ines"], user=USER)
    assert len(events(engram, "RecallServed")) == 1


def _audit_prompt(scripted: ScriptedProvider) -> str:
    [call] = [c for c in scripted.calls if c.stage == "audit"]
    return "\n".join(str(m["content"]) for m in call.request["messages"])


def test_seed001_s5_2_audit_input_carries_age_and_mod_days(
    engram: MnemoLedger, clock: Clock
) -> None:
    memory_id = remember(engram, "Maya reviews pull requests in the morning", importance=0.7)
    place(engram, memory_id, "working")
    clock.advance(days=10)
    aggregate = engram.ledger.memory(memory_id)
    with acting_as(Provenance(user_id=USER)):
        aggregate.update("Maya reviews pull requests first thing in the morning")
    engram.ledger.save(aggregate)
    clock.advance(days=3)
    serve(engram, [memory_id])  # an access is no change: mod= still counts from the update
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script("audit", AuditOutput(operations=[]))
    engram.llm = scripted
    engram.consolidate(user=USER, audit=True)
    prompt = _audit_prompt(scripted)
    assert '"age_days": 13.0' in prompt and '"modified_days": 3.0' in prompt


def test_seed001_s5_3_sandbox_guards_are_on_in_a_cycle_and_recorded(
    engram: MnemoLedger, clock: Clock
) -> None:
    """A cycle refuses the audit's operations on a memory written < 48 h ago, runs them once
    it is older, and records the guards with the command; `audit_guards=False` lifts them."""
    memory_id = remember(engram, "Maya reviews pull requests in the morning", importance=0.5)
    place(engram, memory_id, "working")
    adjust = AuditOperation(op="adjust", ids=[memory_id[:8]], importance=0.8)
    scripted = ScriptedProvider(OfflineProvider())
    engram.llm = scripted

    scripted.script("audit", AuditOutput(operations=[adjust]))
    fresh = engram.consolidate(user=USER, audit=True)  # written this hour
    assert ops(fresh, "audit")[0]["executed"] == 0 and not ops(fresh, "adjust")
    assert [r.data["rule"] for r in events(engram, "AuditOpChecked")] == ["new-memory"]
    requested = events(engram, "ConsolidationRequested")
    assert [r.data["input"].get("sandbox_guards") for r in requested] == [True]

    scripted.script("audit", AuditOutput(operations=[adjust]))
    lifted = engram.consolidate(user=USER, audit=True, audit_guards=False)
    assert ops(lifted, "audit")[0]["executed"] == 1
    assert "sandbox_guards" not in events(engram, "ConsolidationRequested")[-1].data["input"]

    clock.advance(hours=SANDBOX_NEW_AGE_HOURS + 1)  # its last change (the adjust) is old too
    scripted.script("audit", AuditOutput(operations=[adjust]))
    later = engram.consolidate(user=USER, audit=True)
    assert ops(later, "audit")[0]["executed"] == 1


def test_seed001_s5_3_a_replay_runs_each_cycle_with_the_guards_it_was_recorded_with(
    engram: MnemoLedger, tmp_path: Path
) -> None:
    memory_id = remember(engram, "Maya reviews pull requests in the morning", importance=0.5)
    place(engram, memory_id, "working")
    adjust = AuditOperation(op="adjust", ids=[memory_id[:8]], importance=0.8)
    scripted = ScriptedProvider(OfflineProvider())
    engram.llm = scripted
    scripted.script("audit", AuditOutput(operations=[adjust]))
    lifted = engram.consolidate(user=USER, audit=True, audit_guards=False)
    assert ops(lifted, "audit")[0]["executed"] == 1

    result = engram.replay(tmp_path / "replay")
    assert result.failed_commands == 0 and result.diverged_calls == 0, result.failures
    report = engram.diff(engram.settings.home, tmp_path / "replay")
    assert report.identical, report.model_dump_json(indent=1)[:1000]
