"""Replay: a scripted session of 200+ mixed operations replayed from the log.

Recorded mode must reproduce the original exactly (the diff finds nothing, the logs are
equal event for event); live mode with a stricter core-update prompt must change exactly
the core.md lines that prompt keeps out.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.ledger import Provenance, Settings
from mnemoledger.ledger.errors import InvalidInput, InvalidTransition, LedgerError
from mnemoledger.ledger.provenance import acting_as

USERS = ("maya", "ole", "ana")
CITIES = ("Paris", "Berlin", "Lisbon", "Porto", "Oslo", "Madrid")
COMPANIES = ("Acme", "Globex", "Initech", "Umbrella")
JOBS = ("engineer", "designer", "teacher", "nurse")
TOOLS = ("neovim", "emacs", "vscode", "helix")
FOODS = ("ramen", "pizza", "dumplings", "olives", "figs", "tacos", "curry")
TOPICS = ("the parser", "the login page", "a flaky test", "the billing job")
STRICT_CORE_PROMPT = (
    "You maintain core.md. Stricter rule: only identity facts (USER) and the agent's\n"
    "persona (SOUL) may enter core.md; tools and rules never do.\n"
    "offline: core_update.sections USER, SOUL\n"
)


def _fact(rng: random.Random, name: str) -> str:
    templates = (
        f"{name.title()} lives in {rng.choice(CITIES)}",
        f"{name.title()} moved to {rng.choice(CITIES)}",
        f"{name.title()} works at {rng.choice(COMPANIES)} as a {rng.choice(JOBS)}",
        f"I use {rng.choice(TOOLS)} as my editor",
        f"Always answer in {rng.choice(('English', 'Portuguese', 'German'))}",
        f"{name.title()} likes {rng.choice(FOODS)} and {rng.choice(FOODS)} for dinner",
        f"{name.title()} is debugging {rng.choice(TOPICS)} today",
        f"{name.title()} has a dog called {rng.choice(('Rex', 'Bo', 'Nina'))}",
        f"{name.title()} reads about {rng.choice(TOPICS)} on {rng.choice(('Monday', 'Friday'))}",
    )
    return rng.choice(templates)


def run_session(memory: MnemoLedger, operations: int = 220, seed: int = 5) -> dict[str, int]:
    """A deterministic session of mixed operations; returns how many of each ran."""
    rng = random.Random(seed)
    done: dict[str, int] = {}
    clock = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    consolidate = getattr(memory, "consolidate", None)
    for _ in range(operations):
        user = rng.choice(USERS)
        # in the order they were written: `list` orders by id, and ids are random, so an
        # rng.choice over that order would pick other memories in every run
        listed = sorted(memory.list(user=user), key=lambda m: (m.created_at, m.content, m.id))
        ids = [m.id for m in listed if m.state == "active"]
        forgotten = [m.id for m in listed if m.state == "forgotten"]
        notes = [m.id for m in listed if m.state == "active" and m.note_kind == "log"]
        roll = rng.random()
        kind = "add"
        try:
            if roll < 0.40 or not ids:
                memory.add([_fact(rng, user) for _ in range(rng.choice((1, 1, 2)))], user=user)
            elif roll < 0.50:
                kind = "update"
                memory.update(rng.choice(ids), _fact(rng, user), agent="agent-a")
            elif roll < 0.58 and len(ids) > 1:
                kind = "link"
                source, target = rng.sample(ids, 2)
                memory.link(source, target, link_type=rng.choice(("related", "supports")))
            elif roll < 0.63:
                kind = "ttl"
                memory.ttl(rng.choice(ids), rng.choice((1.5, 30.0, 365.0)))
            elif roll < 0.68:
                kind = "forget"
                memory.forget(rng.choice(ids))
            elif roll < 0.72 and forgotten:
                kind = "restore"
                memory.restore(rng.choice(forgotten))
            elif roll < 0.82:
                kind = "note"
                if rng.random() < 0.5:
                    memory.write_note(
                        f"{user} prefers short answers about {rng.choice(TOPICS)}",
                        user=user,
                        kind="log",
                        stability="volatile",
                        ttl_days=rng.choice((2.0, 7.0)),
                    )
                else:
                    memory.write_note(
                        f"Seen {user} at {rng.choice(CITIES)} working on {rng.choice(TOPICS)}",
                        user=user,
                        kind="log",
                        tags=["seen"],
                    )
            elif roll < 0.86 and len(notes) >= 2:
                kind = "merge"
                memory.merge_notes(notes[:2])
            elif roll < 0.93:
                kind = "ingest"
                clock += timedelta(hours=3)
                memory.ingest(
                    [
                        {"role": "user", "content": f"I am {user.title()}. {_fact(rng, user)}."},
                        {"role": "assistant", "content": "Noted."},
                        {"role": "user", "content": "I prefer concise answers, please."},
                    ],
                    user=user,
                    now=clock,
                )
            elif consolidate is not None:
                kind = "consolidate"
                clock += timedelta(days=1)
                consolidate(user=user, now=clock)
            else:
                memory.add([_fact(rng, user)], user=user)
        except (InvalidInput, InvalidTransition):
            kind = "refused"
        except LedgerError:
            kind = "failed"
        done[kind] = done.get(kind, 0) + 1
    return done


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, int]]]:
    home = tmp_path_factory.mktemp("session") / "home"
    with open_home(home) as memory:
        done = run_session(memory)
    yield home, done


def open_home(home: Path) -> MnemoLedger:
    """The ledger in `home`, on its SQLite file whatever the suite's event store (the
    session is built once for the module, before any test's environment is set)."""
    settings = Settings(home=home, embedder="hashing", db=None)
    return MnemoLedger(settings=settings, actor="tester")


def log_of(memory: MnemoLedger) -> list[dict[str, Any]]:
    """The domain events in order, without their positions: each home seals its own log
    (a `Sealed` every SEAL_EVERY_EVENTS events, keyed with its own chain secret), so the
    seals and the positions after them are the home's, not the replayed history's."""
    return [
        {k: v for k, v in e.model_dump().items() if k != "position"}
        for e in memory.timeline()
        if e.type != "Sealed"
    ]


def test_the_session_mixes_200_operations(session: tuple[Path, dict[str, int]]) -> None:
    _, done = session
    assert sum(done.values()) >= 200
    for kind in ("add", "update", "link", "ttl", "forget", "restore", "note", "ingest"):
        assert done.get(kind, 0) > 0, (kind, done)


def test_recorded_replay_reproduces_the_ledger_exactly(
    session: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    home, _ = session
    with open_home(home) as memory:
        result = memory.replay(tmp_path / "replay")
        report = memory.diff(home, tmp_path / "replay")
        original_log = log_of(memory)
        original_core = {u: memory.core(user=u).markdown for u in USERS}
        first = memory.list(user="maya")[0].id
        original_history = memory.memory_history(first)
    assert result.failed_commands == sum(1 for e in original_log if e["type"] == "CommandFailed"), (
        result.failures
    )
    assert result.diverged_calls == 0
    assert result.diverged_commands == 0, result.divergences[:3]
    assert result.commands_rerun > 100
    assert report.identical, report.model_dump_json(indent=1)[:2000]
    with open_home(tmp_path / "replay") as replayed:
        assert log_of(replayed) == original_log
        assert {u: replayed.core(user=u).markdown for u in USERS} == original_core
        assert replayed.memory_history(first) == original_history


def test_live_replay_with_a_stricter_core_prompt_changes_exactly_those_core_lines(
    session: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    home, _ = session
    prompt = tmp_path / "strict-core.txt"
    prompt.write_text(STRICT_CORE_PROMPT)
    with open_home(home) as memory:
        result = memory.replay(tmp_path / "live", mode="live", prompts={"core_update": prompt})
        report = memory.diff(home, tmp_path / "live")
        kept_out = {
            f"- {bullet}"
            for user in USERS
            for section, bullets in _sections(memory.core(user=user).markdown).items()
            if section in ("TOOLS", "RULE")
            for bullet in bullets
        }
    assert not report.added and not report.removed and not report.changed
    assert not report.decisions_flipped
    assert report.core, "the stricter prompt changed no core.md"
    # each command the prompt changed is named, with its core_update answers, no memory
    assert result.divergences and len(result.divergences) == result.diverged_commands
    assert all(not d.memories for d in result.divergences)
    assert {c.stage[1] for d in result.divergences for c in d.calls} == {"core_update"}
    assert any(d.core is not None for d in result.divergences)
    changed = {
        line
        for text in report.core.values()
        for line in text.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    }
    assert {line for line in changed if line.startswith("+")} == set()
    assert {line[1:] for line in changed} == kept_out
    assert (
        report.llm["b"].by_stage["core_update"]["prompt_tokens"]
        < (report.llm["a"].by_stage["core_update"]["prompt_tokens"])
    )


def _sections(markdown: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        elif line.startswith("- ") and current:
            sections[current].append(line[2:])
    return sections


def test_replay_limited_to_a_user_and_a_point_matches_time_travel(
    session: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    home, _ = session
    with open_home(home) as memory:
        middle = memory.ledger.last_position() // 2
        memory.replay(tmp_path / "maya", user="maya", until=middle)
        with memory.as_of(middle) as past:
            expected = [m.model_dump(exclude={"expired"}) for m in past.list(user="maya")]
            expected_core = past.core(user="maya").markdown
    with open_home(tmp_path / "maya") as replayed:
        assert [m.model_dump(exclude={"expired"}) for m in replayed.list()] == expected
        assert replayed.core(user="maya").markdown == expected_core


def test_replay_since_a_point_reapplies_the_earlier_log(
    session: tuple[Path, dict[str, int]], tmp_path: Path
) -> None:
    home, _ = session
    with open_home(home) as memory:
        result = memory.replay(tmp_path / "late", since=memory.ledger.last_position() - 200)
        report = memory.diff(home, tmp_path / "late")
    assert result.events_reapplied > 0 and result.commands_rerun > 0
    assert report.identical


def test_replay_and_diff_on_the_command_line(
    session: tuple[Path, dict[str, int]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, _ = session
    monkeypatch.delenv("MNEMOLEDGER_DB", raising=False)
    runner = CliRunner()
    into = tmp_path / "cli-replay"
    replayed = runner.invoke(cli, ["--home", str(home), "replay", "--into", str(into), "--json"])
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.output)["commands_rerun"] > 100
    compared = runner.invoke(cli, ["--home", str(home), "diff", str(home), str(into), "--json"])
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.output)["identical"] is True
    again = runner.invoke(cli, ["--home", str(home), "replay", "--into", str(into)])
    assert again.exit_code == 2 and "not empty" in again.output
    bad = runner.invoke(
        cli, ["--home", str(home), "replay", "--into", str(tmp_path / "x"), "--model", "m"]
    )
    assert bad.exit_code == 2 and "--mode live" in bad.output


def test_diff_names_decisions_that_flipped(tmp_path: Path) -> None:
    verdicts = {"a": "approve", "b": "reject"}
    memory_id = ""
    for name, decision in verdicts.items():
        with open_home(tmp_path / name) as memory:
            if name == "a":
                memory_id = memory.add(["Maya lives in Paris"], user="maya").memories[0].id
                memory.export(user="maya", format="jsonl", path=tmp_path / "maya.jsonl")
            else:
                memory.import_events(tmp_path / "maya.jsonl")
            stored = memory.ledger.memory(memory_id)
            with acting_as(Provenance(user_id="maya", actor="worker")):
                stored.gate_decided(decision, 1, None, "test", None, False, 1)
            memory.ledger.save(stored)
    with open_home(tmp_path / "a") as memory:
        report = memory.diff(tmp_path / "a", tmp_path / "b")
    assert not report.identical
    assert [f.model_dump() for f in report.decisions_flipped] == [
        {
            "type": "GateDecided",
            "memory_id": memory_id,
            "occurrence": 1,
            "a": "approve",
            "b": "reject",
        }
    ]
    assert not report.added and not report.removed and not report.core


def test_a_replayed_or_imported_log_verifies_without_the_sources_seals(tmp_path: Path) -> None:
    with open_home(tmp_path / "a") as source:
        source.add(["Maya drinks green tea"], user="maya")
        source.seal()
        source.add(["Maya moved to Lisbon"], user="maya")
        source.export(user="maya", format="jsonl", path=tmp_path / "maya.jsonl")
        source.replay(tmp_path / "b")
    with open_home(tmp_path / "b") as replayed:
        report = replayed.verify()
        assert report.ok and report.seals == 0, report.problems
    with open_home(tmp_path / "c") as imported:
        imported.import_events(tmp_path / "maya.jsonl")
        assert imported.verify().ok


def test_a_call_recorded_without_answer_bounds_replays_as_asked() -> None:
    """A log recorded before every stage sent `max_tokens` replays its calls without counting
    them as diverged; a call whose prompt changed still counts."""
    from mnemoledger.commands.audit.replay.providers import RecordedAnswers
    from mnemoledger.commands.llm.prompts import SPLIT
    from mnemoledger.commands.llm.schemas import SplitInput
    from mnemoledger.ledger import EventRecord

    inputs = SplitInput(raw_input="I live in Leeds")
    asked = SPLIT.chat_request(inputs, "m")
    assert "max_tokens" in asked
    older = {key: value for key, value in asked.items() if key != "max_tokens"}
    other = {**older, "messages": [*older["messages"][:-1], {"role": "user", "content": "?"}]}
    response = SPLIT.output_model.model_validate({"contents": ["I live in Leeds"]})

    def recorded(request: dict[str, Any]) -> EventRecord:
        return EventRecord(
            position=None,
            stream_id="c",
            version=1,
            type="LLMCallRecorded",
            at=datetime(2026, 1, 1, tzinfo=UTC),
            user_id="u",
            actor="a",
            agent_id=None,
            thread_id=None,
            causation_id="c",
            prompt_version=None,
            data={
                "stage": "split",
                "model": "m",
                "request": request,
                "response": response.model_dump_json(),
            },
        )

    answers = RecordedAnswers()
    answers.start([recorded(older), recorded(other)])
    answers.complete(SPLIT, inputs)
    assert answers.diverged == 0
    answers.complete(SPLIT, inputs)
    assert answers.diverged == 1
