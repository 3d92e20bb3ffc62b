"""Seed 001 §2.1 step 2-3 and §8: engram's API-level semantic dedup (`quick_semantic_dup`,
INSERT_DEDUP_SIM 0.65, PROXY_DEDUP_SIM 0.60 on the reference scale). A hit returns the
stored memory, touched and its repetition counted; the default `words` mode also asks the
words to say the same thing, the seed's similarity-only form is `MNEMOLEDGER_QUICK_DEDUP=
similarity`. Pairs chosen on the hashing embedder's calibrated scale (the suite's embedder):
each sits between the quick threshold and the DB-level 0.85, so only this check can see it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.audit.replay.handlers import add as replay_add
from mnemoledger.commands.audit.replay.source import RecordedCommand, read_log
from mnemoledger.commands.write.add import AddOutcome, quick_dedup_mode
from mnemoledger.commands.write.similarity import quick_dedup_threshold
from mnemoledger.commands.write.touch import DEDUP_TOUCH_MODE
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import INSERT_DEDUP_SIM, PROXY_DEDUP_SIM, QuickDedupMode

USER = "u"


def open_memory(home: Path, mode: QuickDedupMode | None = None) -> MnemoLedger:
    settings = Settings(home=home, embedder="hashing")
    if mode is not None:
        settings = Settings(home=home, embedder="hashing", quick_dedup=mode)
    return MnemoLedger(settings=settings, actor="tester")


def similarity(memory: MnemoLedger, stored_id: str, text: str) -> float:
    memory.refresh()
    vector = memory.parts.embedder.passages([text])[0]
    return dict(memory.parts.vectors.similar(USER, vector, 5))[stored_id]


def test_s2_1_quick_semantic_dup_returns_the_stored_memory_touched(home: Path) -> None:
    with open_memory(home) as memory:
        [tea] = memory.add(["I drink green tea every morning"], user=USER).memories
        restated = "Every morning I drink a cup of green tea"
        assert INSERT_DEDUP_SIM <= similarity(memory, tea.id, restated) < 0.85
        again = memory.add([restated], user=USER, evidence=["turn-7"])
        assert again.memories == [] and [m.id for m in again.reinforced] == [tea.id]
        assert again.reinforced[0].content == "I drink green tea every morning"  # as stored
        memory.refresh()
        row = memory.layers.get(tea.id)
        assert row is not None and row.access_count == 1 and row.repetition_count == 1
        assert row.last_accessed is not None
        assert memory.get(tea.id).evidence == ["turn-7"]
        [touch] = [e for e in memory.log() if e.type == "RecallServed"]
        assert touch.data["return_mode"] == DEDUP_TOUCH_MODE
        assert touch.causation_id == again.command_id
        command = memory.ledger.command(again.command_id)
        assert command.input["quick_dedup"] == "words"  # type: ignore[index]


@pytest.mark.parametrize(
    ("stored", "look_alike"),
    [
        ("I have a bike for commuting", "I have a mountain bike for weekends"),
    ],
)
def test_s2_1_quick_semantic_dup_keeps_look_alike_facts_apart_by_default(
    home: Path, stored: str, look_alike: str
) -> None:
    """Two true facts above 0.65 stay two memories in `words` mode; the seed's
    similarity-only mode would return the first for the second (the fact is lost)."""
    with open_memory(home) as memory:
        [first] = memory.add([stored], user=USER).memories
        assert similarity(memory, first.id, look_alike) >= INSERT_DEDUP_SIM
        result = memory.add([look_alike], user=USER)
        assert [m.content for m in result.memories] == [look_alike] and result.reinforced == []
        assert sorted(m.content for m in memory.list(user=USER)) == sorted([stored, look_alike])
    # another user: on PostgreSQL a second home shares the log, and the first user's facts
    with open_memory(home.with_name("seed"), "similarity") as seed:
        [first] = seed.add([stored], user="seed-user").memories
        result = seed.add([look_alike], user="seed-user")
        assert result.memories == [] and [m.id for m in result.reinforced] == [first.id]


def test_s8_proxy_dedup_sim_applies_to_an_extraction(home: Path) -> None:
    assert quick_dedup_threshold("api") == INSERT_DEDUP_SIM == 0.65
    assert quick_dedup_threshold("proxy") == quick_dedup_threshold("extraction") == 0.60
    assert PROXY_DEDUP_SIM == 0.60
    stored, restated = "I'm afraid of spiders", "Spiders scare me"
    with open_memory(home, "similarity") as memory:
        [first] = memory.add([stored], user=USER).memories
        assert PROXY_DEDUP_SIM <= similarity(memory, first.id, restated) < INSERT_DEDUP_SIM
        by_api = memory.add([restated], user=USER)
        assert [m.content for m in by_api.memories] == [restated]
        by_proxy = memory.add([restated + " a lot"], user=USER, source="extraction")
        assert by_proxy.memories == [] and len(by_proxy.reinforced) == 1


def test_s2_1_quick_semantic_dup_off_adds_the_restatement(home: Path) -> None:
    with open_memory(home, "off") as memory:
        memory.add(["I drink green tea every morning"], user=USER)
        again = memory.add(["Every morning I drink a cup of green tea"], user=USER)
        assert [m.content for m in again.memories] == ["Every morning I drink a cup of green tea"]


def test_s2_1_quick_semantic_dup_a_recording_without_the_mode_replays_without_it(
    home: Path,
) -> None:
    """An add recorded before the check existed ran without it: its replay does too."""
    assert quick_dedup_mode("similarity") == "similarity"
    with pytest.raises(InvalidInput, match="quick_dedup"):
        quick_dedup_mode("sometimes")
    with open_memory(home) as memory:
        memory.add(["I drink green tea every morning"], user=USER)
        again = memory.add(["Every morning I drink a cup of green tea"], user=USER)
        assert again.memories == []
        request = read_log(memory.ledger).commands[again.command_id].requested
        given = {k: v for k, v in request.data["input"].items() if k != "quick_dedup"}
        older = RecordedCommand(dataclasses.replace(request, data={**request.data, "input": given}))
    with open_memory(home.with_name("target")) as target:
        target.add(["I drink green tea every morning"], user=USER)
        replayed = replay_add(target, older)
        assert isinstance(replayed, AddOutcome)
        assert [m.content for m in replayed.added] == ["Every morning I drink a cup of green tea"]
