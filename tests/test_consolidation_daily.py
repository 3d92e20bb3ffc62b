"""Seed 003 §4 (daily consolidation: candidate pool, pre-filters, batched same-fact checks,
14-day pair fingerprints, caps) and §3 (theory-of-mind insights)."""

from __future__ import annotations

from mnemoledger import MnemoLedger
from mnemoledger.commands.lifecycle.worker import Worker
from mnemoledger.commands.llm import OfflineProvider, ScriptedProvider
from mnemoledger.ledger.policy import DAILY_PAIR_BATCH, INSIGHT_MAX_CHARS
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
