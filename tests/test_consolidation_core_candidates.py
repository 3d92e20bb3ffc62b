"""The consolidation cycle reads the new memories waiting on a user's core document.

With one model call per add, core.md is updated once every `llm_core_batch` adds; a user
who stops adding would leave the last adds' memories out of core.md. The next cycle makes
the batched core-update call over them (recorded on the cycle's command), so the wait ends
there at the latest. Against the fake OpenAI-compatible server of `tests/fake_openai.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.lifecycle.consolidate_api import ConsolidateResult
from mnemoledger.commands.lifecycle.worker import SimulatedClock, Worker
from mnemoledger.ledger import Settings
from mnemoledger.ledger.core import CoreDocument
from tests.fake_openai import FakeOpenAI, fake_openai_server, rule_answer, settings_for, tagged

FACTS = ("Maya works at Acme", "Maya is vegetarian", "Maya has a dog called Rex")
NOW = datetime(2026, 5, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as server:
        server.answering = rule_answer  # core_update writes every candidate into core.md
        yield server


def open_home(fake: FakeOpenAI, home: Path, **values: Any) -> MnemoLedger:
    return MnemoLedger(settings=settings_for(fake, home, llm_core_batch=10, **values), actor="t")


def add_facts(memory: MnemoLedger, user: str = "u") -> list[str]:
    """Three adds, each leaving its memory waiting on the core document."""
    ids = []
    for fact in FACTS:
        result = memory.add([fact], user=user)
        assert memory.ledger.command(result.command_id).outcome["core_update"] == "deferred"  # type: ignore[index]
        ids.append(result.memories[0].id)
    return ids


def calls_of(memory: MnemoLedger, command_id: str) -> list[dict[str, Any]]:
    return [e.data for e in memory.ledger.stream(command_id) if e.type == "LLMCallRecorded"]


def core_events(memory: MnemoLedger) -> list[Any]:
    return list(memory.ledger.stream(CoreDocument.create_id("u").hex))


def stages(fake: FakeOpenAI) -> list[str]:
    return [r["response_format"]["json_schema"]["name"] for r in fake.chat_requests]


def test_a_cycle_reads_the_waiting_candidates_in_one_recorded_call(
    fake: FakeOpenAI, home: Path
) -> None:
    with open_home(fake, home) as memory:
        ids = add_facts(memory)
        assert memory.core(user="u").markdown.strip() == ""
        sent = len(fake.chat_requests)

        result = memory.consolidate(user="u", now=NOW)

        [cycle] = result.users
        assert cycle.llm_calls == 1 and stages(fake)[sent:] == ["core_update"]
        [call] = calls_of(memory, str(cycle.command_id))
        assert call["stage"] == "core_update" and call["request"] == fake.chat_requests[-1]
        candidates = tagged(call["request"], "candidate_new_memories")
        assert [(c["id"], c["content"]) for c in candidates] == list(zip(ids, FACTS, strict=True))
        [operation] = result.operations
        assert operation["op"] == "core" and operation["memories"] == ids
        markdown = memory.core(user="u").markdown
        assert all(f"- {fact}" in markdown.splitlines() for fact in FACTS)
        events = core_events(memory)
        assert [e.type for e in events[-2:]] == ["CoreUpdated", "CoreCandidatesRead"]
        assert all(e.causation_id == cycle.command_id for e in events[-2:])
        assert events[-2].prompt_version == call["prompt_id"] + "@" + call["version"]
        assert events[-2].data["sources"] == {fact: [i] for fact, i in zip(FACTS, ids, strict=True)}
        given = memory.ledger.command(str(cycle.command_id)).input
        assert given["core_candidates"] is True

        # nothing waits any more: the next cycle asks nothing, and the count starts again
        again = memory.consolidate(user="u", now=NOW.replace(hour=10))
        assert again.operations == [] and again.users[0].llm_calls == 0
        later = memory.add(["Maya plays the cello"], user="u")
        assert memory.ledger.command(later.command_id).outcome["core_update"] == "deferred"  # type: ignore[index]


def test_a_dry_run_names_the_waiting_candidates_and_asks_nothing(
    fake: FakeOpenAI, home: Path
) -> None:
    with open_home(fake, home) as memory:
        ids = add_facts(memory)
        sent = len(fake.chat_requests)
        result = memory.consolidate(user="u", now=NOW, dry_run=True)
        assert [(o["op"], o["memories"]) for o in result.operations] == [("core", ids)]
        assert len(fake.chat_requests) == sent
        assert memory.core(user="u").markdown.strip() == ""
        assert core_events(memory)[-1].type == "CoreCandidatesDeferred"


def test_only_the_waiting_memories_still_active_are_read(fake: FakeOpenAI, home: Path) -> None:
    with open_home(fake, home) as memory:
        ids = add_facts(memory)
        memory.forget(ids[1])
        result = memory.consolidate(user="u", now=NOW)
        [call] = calls_of(memory, str(result.users[0].command_id))
        candidates = tagged(call["request"], "candidate_new_memories")
        assert [c["id"] for c in candidates] == [ids[0], ids[2]]
        assert "vegetarian" not in memory.core(user="u").markdown


def test_with_the_llm_level_off_the_candidates_wait_for_the_next_cycle(
    fake: FakeOpenAI, home: Path
) -> None:
    with open_home(fake, home) as memory:
        add_facts(memory)
        sent = len(fake.chat_requests)
        quiet = memory.consolidate(user="u", now=NOW, llm_level="off")
        assert quiet.operations == [] and len(fake.chat_requests) == sent
        assert memory.core(user="u").markdown.strip() == ""
        memory.consolidate(user="u", now=NOW.replace(hour=10))
        assert all(fact in memory.core(user="u").markdown for fact in FACTS)


def test_the_worker_and_the_command_line_read_them_too(
    fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    with open_home(fake, home) as memory:
        memory.add([FACTS[0]], user="u")
        clock = SimulatedClock(NOW)
        worker = Worker(memory, interval=1800, clock=clock.now, pause=clock.advance)
        done: list[ConsolidateResult] = []
        worker.on_cycle = done.append
        assert worker.run(max_cycles=1) == 1
        assert [o["op"] for o in done[0].operations] == ["core"]
        assert f"- {FACTS[0]}" in memory.core(user="u").markdown.splitlines()
        # reading the candidates changed no memory: the topic tree is not built again
        assert "core_update" in stages(fake) and "name_topics" not in stages(fake)

    # another user: in a PostgreSQL run every home of a test shares the test's schema
    other = tmp_path / "other"
    with open_home(fake, other) as memory:
        add_facts(memory, user="v")
    env = {
        "MNEMOLEDGER_LLM_PROVIDER": "openai",
        "MNEMOLEDGER_LLM_MODEL": "fake-chat",
        "MNEMOLEDGER_OPENAI_BASE_URL": fake.url,
        "MNEMOLEDGER_OPENAI_API_KEY": "test-key",
        "MNEMOLEDGER_EMBEDDER": "hashing",
    }
    ran = CliRunner().invoke(
        cli,
        ["--home", str(other), "consolidate", "--user", "v", "--now", NOW.isoformat(), "--json"],
        env=env,
    )
    assert ran.exit_code == 0, ran.output
    assert [o["op"] for o in json.loads(ran.output)["operations"]] == ["core"]
    with open_home(fake, other) as memory:
        assert all(fact in memory.core(user="v").markdown for fact in FACTS)


def test_a_recorded_replay_reproduces_the_cycle(
    fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    with open_home(fake, home) as memory:
        add_facts(memory)
        memory.consolidate(user="u", now=NOW)
        sent = len(fake.chat_requests)
        result = memory.replay(tmp_path / "replay")
        assert result.failed_commands == 0 and result.diverged_calls == 0
        assert result.diverged_commands == 0 and result.divergences == []
        assert len(fake.chat_requests) == sent  # every answer from the record
        assert memory.diff(home, tmp_path / "replay").identical


def test_an_offline_deployment_is_unchanged(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "offline", embedder="hashing")
    with MnemoLedger(settings=settings, actor="t") as memory:
        for fact in FACTS:
            memory.add([fact], user="u")
        before = memory.core(user="u").markdown
        assert not [e for e in core_events(memory) if e.type.startswith("CoreCandidates")]
        result = memory.consolidate(user="u", now=NOW)
        command = str(result.users[0].command_id)
        assert not [o for o in result.operations if o["op"] == "core"]
        assert "core_update" not in [c["stage"] for c in calls_of(memory, command)]
        assert memory.core(user="u").markdown == before
