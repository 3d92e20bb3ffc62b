"""Seed 004 §12 memoryNudge: fires after 10 assistant turns without a memory store while the
user shares storable information; not before, not without storable content, not after a
store; wired into `context` (Python `turns=`, CLI `--turns`)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.recall.nudge import (
    MEMORY_NUDGE,
    NudgeTurn,
    memory_nudge,
    nudge_turn,
    storable,
)
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import (
    MEMORY_NUDGE_MIN_ASSISTANT_TURNS,
    MEMORY_NUDGE_USER_MESSAGES,
    MEMORY_NUDGE_WINDOW_TURNS,
)

CHATTER = "Can you help me format this table?"


def thread(user_messages: Sequence[str], *, stored_at: Sequence[int] = ()) -> list[NudgeTurn]:
    """One user message then one assistant reply per turn; the assistant reply of each
    turn index in `stored_at` used the memory tool."""
    turns: list[NudgeTurn] = []
    for i, text in enumerate(user_messages):
        turns.append(NudgeTurn("user", text))
        turns.append(NudgeTurn("assistant", f"reply {i}", memory_stored=i in stored_at))
    return turns


def test_thresholds_are_the_seeds() -> None:
    assert MEMORY_NUDGE_MIN_ASSISTANT_TURNS == 10
    assert MEMORY_NUDGE_WINDOW_TURNS == 10
    assert MEMORY_NUDGE_USER_MESSAGES == 10
    assert MEMORY_NUDGE.startswith('<steering name="memoryNudge">\n')
    assert "agent(resource: memory, action: store)" in MEMORY_NUDGE
    assert MEMORY_NUDGE.endswith("</steering>")


def test_fires_after_ten_turns_with_storable_content() -> None:
    messages = [CHATTER] * 9 + ["By the way, I live in Oslo now."]
    assert memory_nudge(thread(messages)) == MEMORY_NUDGE
    behavioural = [CHATTER] * 9 + ["From now on answer in French."]
    assert memory_nudge(thread(behavioural)) == MEMORY_NUDGE


def test_not_before_ten_assistant_turns() -> None:
    messages = [CHATTER] * 8 + ["I live in Oslo."]
    assert memory_nudge(thread(messages)) is None  # 9 assistant turns
    pending = thread([CHATTER] * 9 + ["I live in Oslo."])[:-1]  # the 10th reply not yet given
    assert memory_nudge(pending) is None


def test_not_when_nothing_storable() -> None:
    assert memory_nudge(thread([CHATTER] * 12)) is None
    # a self-disclosure pattern alone is not enough: the extraction finds no fact in it
    assert memory_nudge(thread([CHATTER] * 9 + ["I am tired today."])) is None
    assert not storable("I am tired today.")
    assert not storable("Miami is warm")  # "i am" only as whole words
    assert storable("My name is Maya.") and storable("I’m vegetarian, keep in mind")


def test_storable_content_only_in_the_last_ten_user_messages() -> None:
    old = ["I live in Oslo."] + [CHATTER] * 10  # 11 turns: the disclosure fell out
    assert memory_nudge(thread(old)) is None
    assert memory_nudge(thread(old[:1] + [CHATTER] * 9)) == MEMORY_NUDGE  # 10 turns: in


def test_not_after_a_store_in_the_last_ten_turns() -> None:
    messages = [CHATTER] * 5 + ["I live in Oslo."] + [CHATTER] * 6  # 12 turns
    assert memory_nudge(thread(messages)) == MEMORY_NUDGE
    assert memory_nudge(thread(messages, stored_at=[5])) is None  # stored what was said
    assert memory_nudge(thread(messages, stored_at=[11])) is None  # the latest turn
    assert memory_nudge(thread(messages, stored_at=[2])) is None  # 10th turn from the end
    # a store 11 turns back is outside the window: the nudge may fire again
    assert memory_nudge(thread(messages, stored_at=[1])) == MEMORY_NUDGE
    tool = thread(messages)
    tool.insert(-1, NudgeTurn("tool", "stored", memory_stored=True))
    assert memory_nudge(tool) is None


def test_nudge_turn_reads_mappings_and_checks_them() -> None:
    turn = nudge_turn({"role": "assistant", "content": "ok", "memory_stored": True})
    assert turn == NudgeTurn("assistant", "ok", True)
    assert nudge_turn({"role": "user", "content": "hi"}).memory_stored is False
    with pytest.raises(InvalidInput, match="memory_stored"):
        nudge_turn({"role": "user", "content": "hi", "memory_stored": "yes"})
    with pytest.raises(InvalidInput, match="role and a content"):
        nudge_turn({"role": "user"})


def as_dicts(turns: Sequence[NudgeTurn]) -> list[dict[str, object]]:
    return [
        {
            "role": t.role,
            "content": t.content,
            **({"memory_stored": True} if t.memory_stored else {}),
        }
        for t in turns
    ]


def test_context_carries_the_nudge_as_steering(home: Path) -> None:
    messages = [CHATTER] * 9 + ["I work at Google as a nurse."]
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        ctx = m.context("maya", "what next?", turns=as_dicts(thread(messages)))
        assert ctx.steering == [MEMORY_NUDGE]
        assert "memoryNudge" not in ctx.text  # steering is not the system prompt
        stored = m.context("maya", turns=as_dicts(thread(messages, stored_at=[9])))
        assert stored.steering == []
        assert m.context("maya").steering == []  # no turns: no nudge


def test_cli_turns_option(home: Path, tmp_path: Path) -> None:
    messages = [CHATTER] * 9 + ["Please remember my locker is 4411."]
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in as_dicts(thread(messages))))

    def run(*args: str, stdin: str | None = None) -> Result:
        return CliRunner().invoke(
            cli, ["--home", str(home), *args], prog_name="mnemoledger", input=stdin
        )

    human = run("context", "--user", "maya", "--turns", str(path))
    assert human.exit_code == 0, human.output
    assert human.output.rstrip().endswith(MEMORY_NUDGE)
    data = json.loads(
        run("--json", "context", "--user", "maya", "--turns", "-", stdin=path.read_text()).output
    )
    assert data["steering"] == [MEMORY_NUDGE]
    assert json.loads(run("--json", "log").output) == []  # a read: nothing written
    bad = run("context", "--user", "maya", "--turns", str(tmp_path / "absent.jsonl"))
    assert bad.exit_code == 2 and bad.output.startswith("error:")


def test_seed004_s12_self_disclosure_patterns_alone_as_an_option(home: Path) -> None:
    tired = [CHATTER] * 9 + ["I am tired today."]
    assert memory_nudge(thread(tired)) is None
    assert memory_nudge(thread(tired), "patterns") == MEMORY_NUDGE  # the seed's rule
    assert storable("I am tired today.", "patterns") and not storable(CHATTER, "patterns")
    settings = Settings(home=home, embedder="hashing", nudge_disclosure="patterns")
    with MnemoLedger(settings=settings, actor="tester") as m:
        assert m.context("maya", turns=as_dicts(thread(tired))).steering == [MEMORY_NUDGE]


def test_seed004_s12_fact_check_trades_recall_for_precision_on_the_labelled_set() -> None:
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("eval_nudge", root / "scripts" / "eval_nudge.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    score = module.score
    path = root / "tests" / "data" / "nudge_messages.jsonl"
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    facts, patterns = score(cases, "facts"), score(cases, "patterns")
    assert patterns["recall"] == 1.0  # every labelled disclosure uses one of the seed's phrases
    assert facts["precision"] > patterns["precision"] + 0.15
    assert facts["recall"] >= 0.8
