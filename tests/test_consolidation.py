"""One scenario per engram rule (seed 001 §2-§3), driven by an injected clock: the events
each cycle writes and the read models that result."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm import OfflineProvider, ScriptedProvider
from mnemoledger.commands.llm.consolidation_schemas import ReconcileOutput
from mnemoledger.commands.llm.rules.consolidation import union_of_sentences
from mnemoledger.ledger import NewMemory, Settings
from mnemoledger.ledger.policy import (
    BUFFER_CAP,
    GATE_COOLDOWN_EPOCHS,
    IMPORTANCE_DECAY,
    KIND_PROMOTE_EPOCHS,
    MAX_PAIRS_PER_CYCLE,
    SANDBOX_NEW_AGE_HOURS,
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
    reinforce,
    remember,
    remember_many,
    serve,
    skip_epochs,
)

__all__ = ["clock", "engram"]


def test_one_cycle_is_one_command_and_one_epoch_event(engram: MnemoLedger) -> None:
    remember(engram, "Maya is allergic to peanuts")
    before = engram.ledger.last_position()
    result = engram.consolidate(user=USER)
    assert result.epoch == 1
    [command] = result.users
    assert command.command_id is not None
    stream = [r.type for r in engram.ledger.stream(command.command_id)]
    assert stream[0] == "ConsolidationRequested" and stream[-1] == "CommandCompleted"
    [epoch] = events(engram, "ConsolidationEpochCompleted", before)
    assert epoch.data["epoch"] == 1 and epoch.data["command_id"] == command.command_id
    assert epoch.data["now"] == engram.clock().isoformat()
    assert engram.consolidate(user=USER).epoch == 2


def test_dry_run_plans_and_writes_nothing(engram: MnemoLedger, clock: Clock) -> None:
    memory_id = remember(engram, "Maya is allergic to peanuts")
    clock.advance(minutes=11)
    before = engram.ledger.last_position()
    planned = engram.consolidate(user=USER, dry_run=True)
    assert engram.ledger.last_position() == before
    assert planned.dry_run and planned.users[0].command_id is None
    assert [(o["op"], o.get("memory")) for o in planned.operations] == [
        ("triage", memory_id),
        ("promote", memory_id),
    ]
    assert engram.get(memory_id).layer == "buffer"
    done = engram.consolidate(user=USER)
    assert [(o["op"], o.get("memory")) for o in done.operations] == [
        (o["op"], o.get("memory")) for o in planned.operations
    ]
    assert engram.get(memory_id).layer == "working"


def test_decay_is_derived_from_epochs_and_idle_time_decays_nothing(
    engram: MnemoLedger, clock: Clock
) -> None:
    ids = {
        kind: remember(engram, f"a {kind} memory about item {n}", kind=kind, importance=0.5)
        for n, kind in enumerate(("episodic", "semantic", "procedural"))
    }
    versions = {k: len(of_memory(engram, i)) for k, i in ids.items()}
    for _ in range(3):
        engram.consolidate(user=USER)
    rates = {"episodic": 1.0, "semantic": 0.6, "procedural": 0.2}
    for kind, memory_id in ids.items():
        expected = 0.5 - 3 * IMPORTANCE_DECAY * rates[kind]
        assert engram.get(memory_id).importance == pytest.approx(expected)
        assert len(of_memory(engram, memory_id)) == versions[kind]  # nothing written per memory
    clock.advance(days=90)
    assert engram.get(ids["episodic"]).importance == pytest.approx(0.5 - 3 * IMPORTANCE_DECAY)


def test_buffer_promotion_by_reinforcement_score(engram: MnemoLedger) -> None:
    strong = remember(engram, "Maya's cat is called Miso")
    weak = remember(engram, "Maya mentioned the bakery on Rua Augusta")
    reinforce(engram, strong, 1)  # 1 x 2.5 ...
    serve(engram, [strong], times=3)  # ... + 3 accesses = 5.5 >= 5
    reinforce(engram, weak, 1)
    result = engram.consolidate(user=USER)
    [promoted] = ops(result, "promote")
    assert promoted["memory"] == strong and promoted["via"] == "mechanical"
    assert engram.get(strong).layer == "working" and engram.get(weak).layer == "buffer"
    assert "MemoryPromoted" in of_memory(engram, strong)


def test_buffer_promotion_by_kind_after_four_epochs(engram: MnemoLedger) -> None:
    procedure = remember(engram, "Release: tag, push, wait for CI", kind="procedural")
    lesson = remember(engram, "Retries without jitter stampede the API", tags=["lesson"])
    for _ in range(KIND_PROMOTE_EPOCHS):
        engram.consolidate(user=USER)
        assert engram.get(procedure).layer == "buffer"
    result = engram.consolidate(user=USER)
    assert {o["memory"] for o in ops(result, "promote")} == {procedure, lesson}
    assert engram.get(lesson).layer == "working"


def test_triage_promotes_or_keeps_once(engram: MnemoLedger, clock: Clock) -> None:
    durable = remember(engram, "Maya is allergic to peanuts")
    chatter = remember(engram, "ok sounds good", importance=0.3)
    young = remember(engram, "Maya works at Fjord Labs")
    assert not ops(engram.consolidate(user=USER), "triage")  # nothing older than 10 min
    clock.advance(minutes=11)
    young = remember(engram, "Maya still works at Fjord Labs")  # said again: young again
    result = engram.consolidate(user=USER)
    verdicts = {o["memory"]: o["decision"] for o in ops(result, "triage")}
    assert verdicts == {durable: "promote", chatter: "keep"}
    assert engram.get(durable).layer == "working" and engram.get(chatter).layer == "buffer"
    assert "TriageDecided" in of_memory(engram, chatter)
    assert young not in verdicts
    clock.advance(minutes=11)
    again = engram.consolidate(user=USER)
    assert {o["memory"] for o in ops(again, "triage")} == {young}  # `_triaged` never again


def test_buffer_cap_evicts_the_lowest_weight(engram: MnemoLedger) -> None:
    words = [f"w{n:03d}x{n * 7919 % 1000:03d}" for n in range(BUFFER_CAP + 5)]
    ids = remember_many(
        engram,
        [
            NewMemory(content=f"token {w} appears", importance=0.1 if n < 5 else 0.5)
            for n, w in enumerate(words)
        ],
    )
    result = engram.consolidate(user=USER)
    evicted = [o["memory"] for o in ops(result, "evict")]
    assert sorted(evicted) == sorted(ids[:5])
    assert all(o["rule"] == "buffer-cap" for o in ops(result, "evict"))
    assert {engram.get(i).state for i in ids[:5]} == {"evicted"}
    deduplicated = len(ops(result, "merge"))  # near-identical texts absorbed after the cap
    assert len(engram.list(user=USER, layer="buffer", state="active")) == BUFFER_CAP - deduplicated


def test_buffer_cap_is_a_setting_read_from_the_environment_and_recorded(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 001 §2.4: the cap is 200 unless `ENGRAM_BUFFER_CAP` says otherwise (ours:
    `MNEMOLEDGER_BUFFER_CAP` too); the cycle records the cap it used, so a replay caps alike."""
    monkeypatch.setenv("ENGRAM_BUFFER_CAP", "3")
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as small:
        assert small.settings.buffer_cap == 3
        ids = remember_many(
            small,
            [
                NewMemory(content=text, importance=0.1 * (n + 1))
                for n, text in enumerate(
                    ("ok", "wow nice", "thanks a lot", "sure thing", "cool cool", "yep")
                )
            ],
        )
        result = small.consolidate(user=USER)
        evicted = [o["memory"] for o in ops(result, "evict")]
        assert sorted(evicted) == sorted(ids[:3]), "the three lowest-weight go"
        assert {o["rule"] for o in ops(result, "evict")} == {"buffer-cap"}
        [command] = result.users
        assert command.command_id is not None
        [requested] = [
            r for r in small.ledger.stream(command.command_id) if r.type == "ConsolidationRequested"
        ]
        assert requested.data["input"]["buffer_cap"] == 3


def test_drop_decayed_buffer_memories_only(engram: MnemoLedger) -> None:
    fading = remember(engram, "a passing remark about clouds", kind="episodic", importance=0.012)
    kept = remember(engram, "a working fact about teapots", kind="episodic", importance=0.012)
    place(engram, kept, "working")
    result = engram.consolidate(user=USER)
    assert [(o["memory"], o["rule"]) for o in ops(result, "evict")] == [(fading, "decay")]
    assert engram.get(fading).state == "evicted"
    assert "MemoryEvicted" in of_memory(engram, fading)
    for _ in range(3):
        engram.consolidate(user=USER)
    assert engram.get(kept).state == "active" and engram.get(kept).importance == 0.0


def test_core_hygiene_demotes_session_notes_and_ephemeral(engram: MnemoLedger) -> None:
    session = remember(engram, "Worked on the billing export today", source="session")
    ephemeral = remember(engram, "Maya's laptop is at the repair shop", tags=["ephemeral"])
    lasting = remember(engram, "Maya's name is Maya Lindqvist")
    for memory_id in (session, ephemeral, lasting):
        place(engram, memory_id, "core")
    result = engram.consolidate(user=USER)
    assert {o["memory"] for o in ops(result, "demote")} == {session, ephemeral}
    assert engram.get(session).layer == "working" and engram.get(lasting).layer == "core"
    assert of_memory(engram, session)[-1] == "MemoryDemoted"


def test_core_overlap_is_flagged_once(engram: MnemoLedger) -> None:
    a = remember(engram, "Maya prefers green tea in the morning")
    b = remember(engram, "Maya prefers green tea in the morning and evening")
    c = remember(engram, "The office is in Lisbon")
    for memory_id in (a, b, c):
        place(engram, memory_id, "core")
    engram.llm = ScriptedProvider(OfflineProvider())
    engram.llm.script("merge", *[])  # the merge stage answers offline
    first = engram.consolidate(user=USER)
    [overlap] = ops(first, "overlap")
    assert sorted(overlap["memories"]) == sorted([a, b]) and overlap["similarity"] > 0.70
    [epoch] = events(engram, "ConsolidationEpochCompleted")
    assert ["overlap", ":".join(sorted([a, b]))] in epoch.data["pairs"]
    assert not ops(engram.consolidate(user=USER), "overlap")


def test_gate_approves_whitelisted_candidates_into_core(engram: MnemoLedger) -> None:
    identity = remember(engram, "Maya is allergic to peanuts", importance=0.8)
    unrelated = remember(engram, "Maya asked about the weather in Porto", importance=0.8)
    low = remember(engram, "Maya's sister is called Ines", importance=0.5)
    for memory_id in (identity, unrelated, low):
        place(engram, memory_id, "working")
        reinforce(engram, memory_id, 2)  # score 5 >= 3
    result = engram.consolidate(user=USER)
    verdicts = {o["memory"]: o for o in ops(result, "gate")}
    assert set(verdicts) == {identity, unrelated}  # importance 0.5 < 0.6: no candidate
    assert verdicts[identity]["decision"] == "approve"
    assert verdicts[identity]["category"] == "IDENTITY"
    assert verdicts[unrelated]["decision"] == "reject"
    assert engram.get(identity).layer == "core" and engram.get(unrelated).layer == "working"
    gate_events = [r for r in events(engram, "GateDecided") if r.stream_id == identity]
    assert gate_events[0].prompt_version == "engram.gate@1"


def test_gate_rejections_escalate_with_epoch_cooldowns(engram: MnemoLedger, clock: Clock) -> None:
    memory_id = remember(
        engram, "Maya asked about the weather in Porto", kind="procedural", importance=1.0
    )
    place(engram, memory_id, "working")
    reinforce(engram, memory_id, 2)
    attempts: list[tuple[int, int, bool]] = []

    def cycle() -> None:
        result = engram.consolidate(user=USER)
        attempts.extend((result.epoch, g["attempt"], g["final"]) for g in ops(result, "gate"))

    second, third = 1 + GATE_COOLDOWN_EPOCHS[0], 1 + sum(GATE_COOLDOWN_EPOCHS)
    cycle()  # epoch 1: first rejection
    skip_epochs(engram, second - 3, clock)  # idle epochs in between (decay only)
    cycle()  # epoch second - 1: still cooling down
    cycle()  # epoch second: second rejection
    skip_epochs(engram, third - second - 2, clock)
    cycle()  # epoch third - 1
    cycle()  # epoch third: the third rejection is final
    skip_epochs(engram, 500, clock)
    cycle()  # never again
    assert attempts == [(1, 1, False), (second, 2, False), (third, 3, True)]
    decided = [r.data for r in events(engram, "GateDecided")]
    assert [d["retry_epoch"] for d in decided] == [second, third, None]
    assert engram.get(memory_id).layer == "working"


def test_merge_keeps_the_union_of_evidence_and_goes_up(engram: MnemoLedger) -> None:
    older = remember(
        engram,
        "Maya prefers green tea in the morning",
        importance=0.7,
        evidence=["D1:3"],
        tags=["drinks"],
    )
    newer = remember(
        engram,
        "Maya prefers green tea in the morning and evening",
        importance=0.4,
        evidence=["D2:8"],
        tags=["habits"],
        namespace="kitchen",
    )
    place(engram, older, "working")
    place(engram, newer, "core")
    serve(engram, [newer], times=2)
    result = engram.consolidate(user=USER)
    [merge] = [o for o in ops(result, "merge") if o["rule"] == "merge"]
    assert merge["memory"] == older and merge["absorbed"] == [newer]  # more important wins
    winner = engram.get(older)
    assert winner.evidence == ["D1:3", "D2:8"]
    assert winner.layer == "core"  # cross-layer: the higher layer
    assert winner.namespace == "default"  # cross-namespace: into default
    assert winner.tags == ["drinks", "habits"] and winner.importance == pytest.approx(0.7 - 0.003)
    assert "evening" in winner.content and "morning" in winner.content
    assert engram.get(newer).state == "superseded" and engram.get(newer).superseded_by == older
    assert "MemoryMerged" in of_memory(engram, older)
    # the pair is never examined again, and the loser left the vector index
    assert not ops(engram.consolidate(user=USER), "merge")
    hits = engram.search("green tea evening", user=USER, k=5)
    assert newer not in [h.id for h in hits]


def test_merge_across_two_project_namespaces_is_refused(engram: MnemoLedger) -> None:
    a = remember(engram, "Maya prefers green tea in the morning", namespace="alpha")
    b = remember(engram, "Maya prefers green tea in the morning and evening", namespace="beta")
    for memory_id in (a, b):
        place(engram, memory_id, "working")
    result = engram.consolidate(user=USER)
    assert not ops(result, "merge")
    assert engram.get(a).state == engram.get(b).state == "active"


def test_reconcile_updates_the_older_into_the_newer(engram: MnemoLedger, clock: Clock) -> None:
    older = remember(engram, "Maya lives in Paris", evidence=["D1:1"])
    clock.advance(hours=2)
    newer = remember(engram, "Maya lives in Berlin now", evidence=["D5:2"])
    for memory_id in (older, newer):
        place(engram, memory_id, "working")
    result = engram.consolidate(user=USER)
    [decision] = ops(result, "reconcile")
    assert decision["memory"] == newer and decision["decision"] == "update"
    assert 0.55 < decision["similarity"] < 0.78
    assert engram.get(older).state == "superseded"
    assert engram.get(newer).evidence == ["D5:2", "D1:1"]
    assert "ReconcileDecided" in of_memory(engram, newer)


def test_reconcile_absorb_writes_the_merged_content(engram: MnemoLedger, clock: Clock) -> None:
    older = remember(engram, "Maya lives in Paris with her dog")
    clock.advance(hours=2)
    newer = remember(engram, "Maya lives in Berlin")
    for memory_id in (older, newer):
        place(engram, memory_id, "working")
    scripted = ScriptedProvider(OfflineProvider())
    merged = "Maya lives in Berlin with her dog (she lived in Paris before)"
    scripted.script("reconcile", ReconcileOutput(decision="absorb", merged_content=merged))
    engram.llm = scripted
    engram.consolidate(user=USER)
    assert engram.get(newer).content == merged
    assert engram.get(older).superseded_by == newer


def test_reconcile_needs_an_hour_between_the_two(engram: MnemoLedger) -> None:
    older = remember(engram, "Maya lives in Paris")
    newer = remember(engram, "Maya lives in Berlin now")
    for memory_id in (older, newer):
        place(engram, memory_id, "working")
    assert not ops(engram.consolidate(user=USER), "reconcile")


def test_offline_merges_keep_every_detail() -> None:
    merged = union_of_sentences(
        ["The deploy needs Node 20. It runs on Fridays.", "The deploy needs Node 20; pnpm 9."]
    )
    assert merged == "The deploy needs Node 20. It runs on Fridays. pnpm 9."


def test_session_distillation(engram: MnemoLedger, clock: Clock) -> None:
    notes = [
        remember(engram, text, source="session", namespace="billing", evidence=[f"S{n}"])
        for n, text in enumerate(
            [
                "Started the invoice export rewrite",
                "Chose CSV over XLSX for the export",
                "Export passes the tests; review pending",
            ]
        )
    ]
    result = engram.consolidate(user=USER)
    [distilled] = ops(result, "distill")
    status = engram.get(distilled["memory"])
    assert status.layer == "working" and status.namespace == "billing"
    assert set(status.tags) == {"project-status", "auto-distilled"}
    assert sorted(status.evidence or []) == ["S0", "S1", "S2"]
    assert len(status.content) <= 250 and "CSV" in status.content
    assert all("distilled" in engram.get(n).tags for n in notes)
    assert not ops(engram.consolidate(user=USER), "distill")


def test_audit_runs_only_good_operations_above_the_safety_score(
    engram: MnemoLedger, clock: Clock
) -> None:
    from mnemoledger.commands.llm.consolidation_schemas import AuditOperation, AuditOutput

    core = remember(engram, "Maya's name is Maya Lindqvist", importance=0.9)
    working = remember(engram, "Maya reviews pull requests in the morning", importance=0.5)
    place(engram, core, "core")
    place(engram, working, "working")
    proposals = [
        AuditOperation(op="adjust", ids=[working[:8]], importance=0.8),
        AuditOperation(op="demote", ids=[core[:8]], target_layer="working"),
        AuditOperation(op="adjust", ids=[core[:8]], importance=0.95),
        AuditOperation(op="delete", ids=[working[:8]]),
    ]
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script("audit", AuditOutput(operations=proposals))
    engram.llm = scripted
    clock.advance(hours=SANDBOX_NEW_AGE_HOURS + 1)  # past the sandbox's new-memory guard
    result = engram.consolidate(user=USER, audit=True)
    [audit] = ops(result, "audit")
    assert audit["score"] == 0.75 and audit["executed"] == 3
    assert engram.get(working).importance == pytest.approx(0.8 - 0.003)
    assert engram.get(core).layer == "working"
    command_id = result.users[0].command_id
    assert command_id is not None
    stream = engram.ledger.stream(command_id)
    [proposed] = [r for r in stream if r.type == "AuditProposed"]
    assert proposed.data["operations"][0]["ids"] == [working]
    verdicts = [(r.data["verdict"], r.data["rule"]) for r in stream if r.type == "AuditOpChecked"]
    assert verdicts == [("good", None)] * 3 + [("bad", "delete-blocked")]


def test_audit_below_the_safety_score_runs_nothing(engram: MnemoLedger, clock: Clock) -> None:
    from mnemoledger.commands.llm.consolidation_schemas import AuditOperation, AuditOutput

    core = remember(engram, "Maya's name is Maya Lindqvist", importance=0.9)
    place(engram, core, "core")
    proposals = [
        AuditOperation(op="adjust", ids=[core[:8]], importance=0.2),
        AuditOperation(op="demote", ids=[core[:8]], target_layer="buffer"),  # two layers
        AuditOperation(op="adjust", ids=["ffffffff"], importance=0.5),  # no such memory
        AuditOperation(op="merge", ids=[core[:8]], content="x"),  # one source
    ]
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script("audit", AuditOutput(operations=proposals))
    engram.llm = scripted
    clock.advance(hours=SANDBOX_NEW_AGE_HOURS + 1)  # past the sandbox's new-memory guard
    result = engram.consolidate(user=USER, audit=True)
    [audit] = ops(result, "audit")
    assert audit["score"] == 0.25 and audit["executed"] == 0
    assert engram.get(core).importance == pytest.approx(0.9 - 0.003)
    assert engram.get(core).layer == "core"


def test_forgotten_memories_do_not_decay_until_restored(engram: MnemoLedger) -> None:
    memory_id = remember(engram, "a fact about lighthouses", importance=0.5)
    engram.consolidate(user=USER)
    engram.forget(memory_id)
    for _ in range(3):
        engram.consolidate(user=USER)
    engram.restore(memory_id)
    assert engram.get(memory_id).importance == pytest.approx(0.5 - IMPORTANCE_DECAY * 0.6)
    engram.consolidate(user=USER)
    assert engram.get(memory_id).importance == pytest.approx(0.5 - 2 * IMPORTANCE_DECAY * 0.6)


def test_rebuilt_layers_equal_the_incremental_ones_after_many_epochs(
    engram: MnemoLedger, clock: Clock
) -> None:
    for n in range(12):
        remember(engram, f"fact number {n} about {'tea' if n % 2 else 'trains'}", importance=0.3)
        clock.advance(minutes=20)
        engram.consolidate(user=USER)
    incremental = [m.model_dump() for m in engram.list(user=USER)]
    engram.rebuild("layers")
    assert [m.model_dump() for m in engram.list(user=USER)] == incremental


def test_audit_operations_on_a_memory_an_earlier_one_merged_are_skipped(
    engram: MnemoLedger, clock: Clock
) -> None:
    from mnemoledger.commands.llm.consolidation_schemas import AuditOperation, AuditOutput

    a = remember(engram, "Maya's name is Maya Lindqvist", importance=0.9)
    b = remember(engram, "Maya goes by Maya L. at work", importance=0.5)
    place(engram, a, "core")
    place(engram, b, "working")
    merged = "Maya's name is Maya Lindqvist; at work she goes by Maya L."
    proposals = [
        AuditOperation(op="merge", ids=[a[:8], b[:8]], content=merged, target_layer="core"),
        AuditOperation(op="adjust", ids=[b[:8]], importance=0.7),  # b is gone by now
    ]
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script("audit", AuditOutput(operations=proposals))
    engram.llm = scripted
    clock.advance(hours=SANDBOX_NEW_AGE_HOURS + 1)  # past the sandbox's new-memory guard
    result = engram.consolidate(user=USER, audit=True)
    [merge] = [o for o in ops(result, "merge") if o["rule"] == "audit"]
    assert merge["memory"] == a and merge["absorbed"] == [b]
    assert not ops(result, "adjust")
    assert ops(result, "audit")[0]["executed"] == 1
    assert engram.get(a).content == merged and engram.get(b).state == "superseded"
    checked = [r.data["executed"] for r in events(engram, "AuditOpChecked")]
    assert checked == [True, False]


def test_pairs_beyond_the_cycle_budget_are_examined_next_cycle(engram: MnemoLedger) -> None:
    rng = random.Random(3)
    letters = "abcdefghijklmnopqrstuvwxyz"

    def word() -> str:
        return "".join(rng.choice(letters) for _ in range(7))

    items = []
    for _ in range(MAX_PAIRS_PER_CYCLE + 10):
        text = " ".join(word() for _ in range(5))
        # the same words said twice: a restatement whatever a model makes of made-up words
        items += [NewMemory(content=text), NewMemory(content=f"{text.capitalize()}.")]
    for memory_id in remember_many(engram, items):
        place(engram, memory_id, "working")
    first = engram.consolidate(user=USER)
    assert len([o for o in ops(first, "merge") if o["rule"] == "merge"]) == MAX_PAIRS_PER_CYCLE
    second = engram.consolidate(user=USER)
    assert len([o for o in ops(second, "merge") if o["rule"] == "merge"]) == 10
    assert not ops(engram.consolidate(user=USER), "merge")
