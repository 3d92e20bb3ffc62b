"""Seed 003 §4 (daily consolidation: candidate pool, pre-filters, batched same-fact checks,
14-day pair fingerprints, caps) and §3 (theory-of-mind insights)."""

from __future__ import annotations

import re

from mnemoledger import MnemoLedger
from mnemoledger.commands.lifecycle.worker import Worker
from mnemoledger.commands.llm import OfflineProvider, ScriptedProvider
from mnemoledger.commands.llm.consolidation_schemas import InsightInput, InsightOutput
from mnemoledger.commands.llm.rules.consolidation import insight
from mnemoledger.ledger.policy import DAILY_PAIR_BATCH, INSIGHT_MAX_CHARS, INSIGHT_MAX_COUNT
from tests.test_consolidation_helpers import (
    USER,
    Clock,
    clock,
    engram,
    events,
    ops,
    remember,
)

__all__ = ["clock", "engram"]


def test_the_same_fact_is_folded_into_the_newer(engram: MnemoLedger, clock: Clock) -> None:
    older = remember(engram, "Maya lives in Paris", evidence=["D1:1"])
    clock.advance(hours=2)
    newer = remember(engram, "Maya lives in Berlin now", evidence=["D4:7"])
    assert not ops(engram.consolidate(user=USER), "same-fact")  # not asked: the engram cycle
    result = engram.consolidate(user=USER, daily=True)
    [check] = ops(result, "same-fact")
    assert check["memory"] == newer and check["other"] == older and check["same_fact"]
    assert engram.get(older).superseded_by == newer
    assert engram.get(newer).evidence == ["D4:7", "D1:1"]
    [epoch] = events(engram, "ConsolidationEpochCompleted")[-1:]
    assert ["daily", check["fingerprint"]] in epoch.data["pairs"]
    [daily] = events(engram, "DailyConsolidationCompleted")
    assert daily.data["pairs_checked"] == 1


def test_fingerprints_skip_a_pair_for_fourteen_days(engram: MnemoLedger, clock: Clock) -> None:
    # importance >= 0.6 keeps both in the candidate pool after the 72 h of "recent"
    remember(engram, "The Lisbon office opens at nine", importance=0.8)
    remember(engram, "The Porto office opens at ten", importance=0.8)
    first = engram.consolidate(user=USER, daily=True)
    [check] = ops(first, "same-fact")
    assert not check["same_fact"]
    clock.advance(days=1)
    assert not ops(engram.consolidate(user=USER, daily=True), "same-fact")
    clock.advance(days=14)
    assert len(ops(engram.consolidate(user=USER, daily=True), "same-fact")) == 1


def test_pairs_go_to_the_llm_in_batches_within_the_daily_cap(
    engram: MnemoLedger, clock: Clock
) -> None:
    offices = ["Lisbon", "Porto", "Braga", "Faro", "Coimbra", "Aveiro", "Evora", "Sintra"]
    hours = ["nine", "ten", "eight", "seven", "eleven", "noon", "six", "five"]
    for office, hour in zip(offices, hours, strict=True):
        remember(engram, f"The {office} office opens at {hour}")
    scripted = ScriptedProvider(OfflineProvider())
    engram.llm = scripted
    result = engram.consolidate(user=USER, daily=True)
    calls = [c for c in scripted.calls if c.stage == "same_fact"]
    checked = ops(result, "same-fact")
    assert checked and len(checked) <= 50
    assert all(len(c.output.verdicts) <= DAILY_PAIR_BATCH for c in calls)
    assert sum(len(c.output.verdicts) for c in calls) == len(checked)


def test_insights_are_written_at_most_once_a_day(engram: MnemoLedger, clock: Clock) -> None:
    for text in (
        "Maya trained for the marathon on Sunday",
        "Maya skipped marathon training because of rain",
        "Maya bought new marathon shoes",
    ):
        remember(engram, text, kind="episodic")
    result = engram.consolidate(user=USER, daily=True)
    [insight] = ops(result, "insight")
    memory = engram.get(insight["memory"])
    assert "marathon" in memory.content and len(memory.content) <= INSIGHT_MAX_CHARS
    assert memory.category == "relationship_dynamic" and "insight" in memory.tags
    assert memory.importance == 0.4 - 0.003  # importance 2 of 5, then this epoch's decay
    assert memory.source == "insight" and memory.layer == "buffer"
    [written] = events(engram, "InsightsWritten")
    assert written.data["memory_ids"] == [memory.id]
    clock.advance(hours=23)
    assert not ops(engram.consolidate(user=USER, daily=True), "insight")
    clock.advance(hours=2)
    assert ops(engram.consolidate(user=USER, daily=True), "insight")


def test_the_worker_runs_the_daily_pass_once_a_day(engram: MnemoLedger, clock: Clock) -> None:
    remember(engram, "Maya lives in Paris")
    worker = Worker(
        engram,
        interval=1800,
        clock=clock.now,
        pause=lambda seconds: clock.advance(seconds=seconds),
        topics=False,
    )
    worker.run(max_cycles=49)  # 24 h of 30-minute cycles, and one more
    runs = [r.data["at"] for r in events(engram, "DailyConsolidationCompleted")]
    assert len(runs) == 2 and len(events(engram, "ConsolidationEpochCompleted")) == 49


def test_seed003_s3_offline_insights_find_the_dynamics_the_items_state() -> None:
    """Feelings, trust in the assistant and a changed preference each give one insight,
    third person, <= 280 characters, naming the assistant instead of "you"; 1-3 in all."""
    output = insight(
        InsightInput(
            activity=[
                "Maya was frustrated that the deploy failed again",
                "Maya thanked the assistant for catching the race condition",
                "Maya said she used to prefer tea but drinks coffee now",
                "Maya keeps a paper notebook for meetings",
            ],
            new_facts=["Maya lives in Berlin"],
            snippet="Maya was frustrated that the deploy failed again / Maya lives in Berlin",
        )
    )
    summaries = [i.summary for i in output.insights]
    assert 1 <= len(summaries) <= INSIGHT_MAX_COUNT
    assert summaries[0].startswith("User expresses frustration")
    assert summaries[1].startswith("User shows trust in the assistant")
    assert summaries[2].startswith("User's preferences are changing") and "tea" in summaries[2]
    assert all(len(s) <= INSIGHT_MAX_CHARS and s.startswith("User") for s in summaries)
    doubt = insight(InsightInput(activity=[], new_facts=["I double-checked every answer you gave"]))
    [checks] = [i.summary for i in doubt.insights]
    assert checks.startswith("User checks the assistant's answers")
    assert not re.search(r"\byou(r)?\b", checks, re.IGNORECASE)


def test_seed003_s3_offline_insights_invent_none() -> None:
    """Plain facts and events, a denied feeling, the name every item begins with: nothing."""
    for activity, facts in (
        (
            ["Maya went to the dentist on Tuesday", "Maya booked a flight to Lisbon"],
            ["Maya lives in Berlin", "Maya works at Globex", "Maya has a dog named Rufus"],
        ),
        (["Maya is not worried about the exam", "Maya got used to the new office"], []),
    ):
        snippet = " / ".join([*activity, *facts])
        assert insight(InsightInput(activity=activity, new_facts=facts, snippet=snippet)) == (
            InsightOutput(insights=[])
        )


def test_seed003_s3_a_cycle_writes_the_insights_of_a_conversation_with_dynamics(
    engram: MnemoLedger,
) -> None:
    remember(engram, "Maya moved her standup to ten", kind="episodic")
    remember(engram, "Maya lives in Berlin")
    assert not ops(engram.consolidate(user=USER, daily=True), "insight")
    remember(engram, "Maya felt overwhelmed by the release checklist", kind="episodic")
    remember(engram, "Maya no longer drinks coffee in the evening")
    written = ops(engram.consolidate(user=USER, daily=True), "insight")
    contents = sorted(engram.get(w["memory"]).content for w in written)
    assert [c.split(":")[0] for c in contents] == [
        "User expresses feeling overwhelmed",
        "User's preferences are changing",
    ]
