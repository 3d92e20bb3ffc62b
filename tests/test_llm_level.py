"""engram's LLM level (seed 001 §7): `auto` asks the LLM stages, `off` decides triage and
the gate by their heuristics and skips merge and reconcile, so a cycle makes no LLM call."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm.rules import RULES
from mnemoledger.ledger import InvalidInput, Settings
from tests.test_cli import run_json
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


def three_kinds_of_work(memory: MnemoLedger, clock: Clock) -> dict[str, str]:
    """Buffer memories for triage, Working ones for the gate, a pair for merge."""
    ids = {
        "durable": remember(memory, "Maya is allergic to peanuts"),
        "chatter": remember(memory, "ok sounds good", importance=0.3),
        "identity": remember(memory, "Maya was born in Porto in 1990", importance=0.8),
        "weather": remember(memory, "Maya asked about the weather in Porto", importance=0.8),
        "older": remember(memory, "Maya prefers green tea in the morning", importance=0.7),
        "newer": remember(
            memory, "Maya prefers green tea in the morning and evening", importance=0.4
        ),
    }
    for name in ("identity", "weather"):
        place(memory, ids[name], "working")
        reinforce(memory, ids[name], 2)  # score 5 >= 3: gate candidates
    place(memory, ids["older"], "working")
    place(memory, ids["newer"], "core")
    clock.advance(minutes=11)  # the Buffer ones are old enough for triage
    return ids


def llm_call_events(memory: MnemoLedger, after: int) -> int:
    return len(events(memory, "LLMCallRecorded", after))


def test_off_decides_by_heuristics_and_calls_no_llm(engram: MnemoLedger, clock: Clock) -> None:
    ids = three_kinds_of_work(engram, clock)
    planned = engram.consolidate(user=USER, dry_run=True)  # auto: the setting's default
    assert engram.settings.llm_level == "auto"
    assert planned.users[0].llm_calls >= 3  # triage, gate, merge at least
    assert ops(planned, "merge")

    before = engram.ledger.last_position()
    result = engram.consolidate(user=USER, llm_level="off")
    [cycle] = result.users
    assert cycle.llm_calls == 0
    assert llm_call_events(engram, before) == 0
    # triage and the gate still decide, as the heuristic rules do, with no prompt named
    triaged = {o["memory"]: o["decision"] for o in ops(result, "triage")}
    assert triaged == {ids["durable"]: "promote", ids["chatter"]: "keep"}
    gated = {o["memory"]: o["decision"] for o in ops(result, "gate")}
    assert gated == {ids["identity"]: "approve", ids["weather"]: "reject"}
    assert engram.get(ids["identity"]).layer == "core"
    for op in [*ops(result, "triage"), *ops(result, "gate")]:
        assert op.get("prompt") is None
    decided = [r for r in events(engram, "TriageDecided", before)]
    decided += [r for r in events(engram, "GateDecided", before)]
    assert decided and all(r.prompt_version is None for r in decided)
    # merge and reconcile are skipped: both memories of the pair stay
    assert not ops(result, "merge") and not ops(result, "reconcile")
    assert engram.get(ids["newer"]).state == "active"
    # the level is recorded with the command, so a replay decides the same way
    [requested] = events(engram, "ConsolidationRequested", before)
    assert requested.data["input"]["llm_level"] == "off"

    # auto again: the pair is merged through the (offline) LLM stage, which is recorded
    before = engram.ledger.last_position()
    again = engram.consolidate(user=USER)
    assert again.users[0].llm_calls > 0 and llm_call_events(engram, before) > 0
    assert ops(again, "merge")
    [requested] = events(engram, "ConsolidationRequested", before)
    assert "llm_level" not in requested.data["input"]  # auto inputs stay as they were


def test_heuristics_are_the_offline_rules_of_triage_and_gate() -> None:
    assert {"triage", "gate"} <= set(RULES)


def test_the_level_is_a_setting_from_the_environment(
    home: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOLEDGER_LLM_LEVEL", "off")
    assert Settings().llm_level == "off"
    monkeypatch.delenv("MNEMOLEDGER_LLM_LEVEL")
    monkeypatch.setenv("ENGRAM_LLM_LEVEL", "off")  # engram's own name is read too
    settings = Settings(home=home, embedder="hashing")
    assert settings.llm_level == "off"
    with MnemoLedger(settings=settings, actor="tester") as memory:
        memory.clock = clock.now
        three_kinds_of_work(memory, clock)
        before = memory.ledger.last_position()
        result = memory.consolidate(user=USER)
        assert result.users[0].llm_calls == 0 and llm_call_events(memory, before) == 0
        assert ops(result, "triage") and not ops(result, "merge")
        # the argument wins over the setting
        assert memory.consolidate(user=USER, dry_run=True, llm_level="auto").users[0].llm_calls
        with pytest.raises(InvalidInput):
            memory.consolidate(user=USER, llm_level="sometimes")


def test_cli_llm_level_off(home: Path) -> None:
    run_json(home, "add", "Maya is allergic to peanuts", "--user", "maya")
    later = "2031-01-01T00:00:00+00:00"
    auto = run_json(home, "consolidate", "--user", "maya", "--dry-run", "--now", later)
    assert auto["users"][0]["llm_calls"] == 1  # triage
    off = run_json(home, "consolidate", "--user", "maya", "--now", later, "--llm-level", "off")
    assert off["users"][0]["llm_calls"] == 0
    assert [o["op"] for o in off["operations"]] == ["triage", "promote"]
