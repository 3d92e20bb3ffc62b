"""Seed 001 §3 step 19 (Core summary update) and §7 (`resume_compress`): when the Core
memories of a resume view pass resume's Core budget (~2k tokens), a consolidation cycle
compresses those past it into a summary, recorded like every stage; resume shows it in
their place instead of leaving them out."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm.consolidation_schemas import ResumeCompressInput
from mnemoledger.commands.llm.rules.resume import resume_compress
from mnemoledger.commands.recall.resume import estimate_tokens
from mnemoledger.ledger import NewMemory, Provenance, Settings
from mnemoledger.ledger.policy import (
    CORE,
    RESUME_CORE_BUDGET_TOKENS,
    RESUME_CORE_SUMMARY_BUDGET_TOKENS,
)
from tests.test_consolidation_helpers import place

USER = "ann"
START = datetime(2026, 3, 2, 9, tzinfo=UTC)
WORDS = [f"{a}{b}" for a in ("kal", "mor", "tep", "vun", "zir", "lod") for b in "aeiouy"]


def rule_text(index: int) -> str:
    """A long rule of its own words (no two alike, so no rule merges them)."""
    rng = random.Random(index)
    return f"Rule {index}: " + " ".join(
        f"{rng.choice(WORDS)}{rng.randrange(1000)}" for _ in range(110)
    )


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        yield m


def core_rules(memory: MnemoLedger, count: int, space: str = "default") -> list[str]:
    added = memory.ledger.add(
        Provenance(user_id=USER, actor="tester"),
        [
            NewMemory(rule_text(i), kind="procedural", importance=0.9 - i / 100, namespace=space)
            for i in range(count)
        ],
    )
    for aggregate in added:
        place(memory, aggregate.id.hex, CORE)
    memory.refresh()
    return [a.id.hex for a in added]


def stage_calls(memory: MnemoLedger) -> list[str]:
    return [
        e.data["stage"]
        for e in memory.log(event_type="LLMCallRecorded")
        if e.data["stage"] == "resume_compress"
    ]


def test_s3_step19_core_summary_stands_in_for_core_memories_past_the_budget(
    memory: MnemoLedger, tmp_path: Path
) -> None:
    ids = core_rules(memory, 14)
    before = memory.resume(USER, now=START)
    assert before.core.omitted > 0 and before.core.summary is None  # left out, as before

    memory.consolidate(user=USER, now=START)
    assert stage_calls(memory) == ["resume_compress"]
    [updated] = memory.log(event_type="CoreSummaryUpdated")
    resumed = memory.resume(USER, now=START + timedelta(minutes=1))
    core = resumed.core
    shown = [m.id for m in core.memories]
    assert core.summary and core.omitted == 0
    assert shown + core.summarized == ids  # every Core memory shown or summarized, in order
    assert core.tokens <= RESUME_CORE_BUDGET_TOKENS
    assert estimate_tokens(core.summary) <= RESUME_CORE_SUMMARY_BUDGET_TOKENS
    assert f"Summary of {len(core.summarized)} more: {core.summary}" in resumed.text
    for memory_id in core.summarized:  # each summarized rule keeps its place in it
        index = ids.index(memory_id)
        assert f"Rule {index}:" in core.summary
    assert updated.causation_id is not None
    assert updated.prompt_version is not None and "resume_compress" in updated.prompt_version

    memory.consolidate(user=USER, now=START + timedelta(hours=1))  # nothing changed: no call
    assert stage_calls(memory) == ["resume_compress"]

    result = memory.replay(tmp_path / "replay")
    assert result.diverged_calls == 0 and result.failures == []
    assert memory.diff(memory.settings.home, tmp_path / "replay").identical


def test_s3_step19_core_summary_is_dropped_when_core_fits_again(memory: MnemoLedger) -> None:
    ids = core_rules(memory, 14)
    memory.consolidate(user=USER, now=START)
    assert memory.resume(USER, now=START).core.summary
    for memory_id in ids[:8]:
        memory.forget(memory_id)
    memory.consolidate(user=USER, now=START + timedelta(hours=1))
    after = memory.resume(USER, now=START + timedelta(hours=1))
    assert after.core.summary is None and after.core.omitted == 0
    assert [m.id for m in after.core.memories] == ids[8:]
    assert len(memory.log(event_type="CoreSummaryUpdated")) == 2


def test_s3_step19_core_summary_is_kept_per_resume_view(memory: MnemoLedger) -> None:
    core_rules(memory, 14, space="billing")
    memory.consolidate(user=USER, now=START)
    assert memory.resume(USER, "billing", now=START).core.summary
    assert memory.resume(USER, now=START).core.summary is None  # `default` alone fits


def test_s3_step19_core_summary_llm_level_off_makes_no_call(home: Path) -> None:
    settings = Settings(home=home, embedder="hashing", llm_level="off")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        core_rules(memory, 14)
        memory.consolidate(user=USER, now=START)
        assert stage_calls(memory) == []
        assert memory.resume(USER, now=START).core.summary is None


def test_s7_resume_compress_offline_rule_keeps_every_memory_within_the_bound() -> None:
    texts = [rule_text(i) for i in range(6)]
    output = resume_compress(
        ResumeCompressInput(namespace="default", memories=texts, max_chars=600)
    )
    assert len(output.summary) <= 600
    assert [f"Rule {i}:" in output.summary for i in range(6)] == [True] * 6
    assert output == resume_compress(
        ResumeCompressInput(namespace="default", memories=texts, max_chars=600)
    )
    short = resume_compress(
        ResumeCompressInput(namespace="d", memories=["Be brief."], max_chars=600)
    )
    assert short.summary == "Be brief"
