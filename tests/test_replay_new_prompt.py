"""Replay with a new prompt, for real: traffic recorded with one model is replayed live
with another prompt version against a local OpenAI-compatible server.

The server is the fake of `tests/fake_openai.py` on 127.0.0.1, answering by rules
(`rule_answer`): its `remember` answers obey the `fake-rewrite: OLD => NEW` lines of the
system prompt, so the new prompt file, which asks for memories in the third person and
carries such a line, changes the answers to the contents it applies to and to no other.
The adds are recorded into data directory A; `mnemoledger replay --mode live` runs as its
own process, pointed at the server with `--base-url`, into directory B.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.llm.prompts import REMEMBER
from mnemoledger.ledger import Settings
from tests.fake_openai import FakeOpenAI, fake_openai_server, rule_answer, settings_for

FACTS = (
    "Maya has a dog called Rex",
    "I am vegetarian",
    "Maya works at Acme",
    "I am learning the cello",
)
"""Four adds, one fact each; the new prompt rewrites the two in the first person."""
THIRD_PERSON = {
    "I am vegetarian": "The user is vegetarian",
    "I am learning the cello": "The user is learning the cello",
}
NEW_PROMPT = (
    REMEMBER.system
    + '\n\nWrite every memory in the third person: the speaker is "the user".\n'
    + "fake-rewrite: I am => The user is\n"
)
REPLAY_MODEL = "fake-chat-2"
TIMEOUT_SECONDS = 600


def record(fake: FakeOpenAI, home: Path) -> list[dict[str, Any]]:
    """The four adds through the server (provider `openai`, model `fake-chat`), core.md
    updated every second add; each add's command id and memory id."""
    settings = settings_for(fake, home, llm_core_batch=2)
    with MnemoLedger(settings=settings, actor="tester") as memory:
        added = []
        for fact in FACTS:
            result = memory.add([fact], user="maya")
            [written] = result.memories
            added.append({"fact": fact, "command": result.command_id, "memory": written.id})
    return added


def environment() -> dict[str, str]:
    """The test's environment (its event store, the hashing embedder) without any model
    settings, and a key for the server (a local server takes any)."""
    model = ("MNEMOLEDGER_LLM_", "MNEMOLEDGER_OPENAI_", "OPENAI_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(model)}
    return env | {"MNEMOLEDGER_EMBEDDER": "hashing", "MNEMOLEDGER_OPENAI_API_KEY": "test-key"}


def replay_live(fake: FakeOpenAI, home: Path, into: Path, prompt: Path) -> dict[str, Any]:
    """`mnemoledger replay --mode live` with the new `remember` prompt, as its own process."""
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "mnemoledger",
            "--home",
            str(home),
            "replay",
            "--into",
            str(into),
            "--mode",
            "live",
            "--provider",
            "openai",
            "--model",
            REPLAY_MODEL,
            "--base-url",
            fake.url,
            "--prompt",
            f"remember={prompt}",
            "--json",
        ],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    found: dict[str, Any] = json.loads(ran.stdout)
    return found


def test_a_new_prompt_replayed_live_changes_the_answers_it_applies_to(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    prompt = tmp_path / "remember-third-person.txt"
    prompt.write_text(NEW_PROMPT, encoding="utf-8")
    version = "file-" + hashlib.sha256(NEW_PROMPT.encode()).hexdigest()[:10]
    with fake_openai_server() as fake:  # stopped in its `finally`, whatever happens here
        fake.answering = rule_answer
        added = record(fake, a)
        recorded = len(fake.chat_requests)
        result = replay_live(fake, a, b, prompt)
        asked = fake.chat_requests[recorded:]

    assert result["mode"] == "live" and result["failed_commands"] == 0
    assert result["commands_rerun"] == len(FACTS)
    # the replay asked the server again, with the new prompt, on the model it was given
    remember = [r for r in asked if r["response_format"]["json_schema"]["name"] == "remember"]
    assert len(remember) == len(FACTS)
    assert all(r["messages"][0]["content"] == NEW_PROMPT for r in remember)
    assert {r["model"] for r in asked} == {REPLAY_MODEL}

    replay_settings = Settings(home=b, embedder="hashing", db=None)  # a replay is on SQLite
    with MnemoLedger(settings=replay_settings, actor="tester") as replayed:
        calls = [e for e in replayed.timeline() if e.type == "LLMCallRecorded"]
        by_stage = {
            stage: [e for e in calls if e.data["stage"] == stage]
            for stage in ("remember", "core_update")
        }
        assert len(by_stage["remember"]) == len(FACTS)
        for call in by_stage["remember"]:
            assert (call.data["prompt_id"], call.data["version"]) == (REMEMBER.prompt_id, version)
            assert call.prompt_version == f"{REMEMBER.prompt_id}@{version}"
            assert call.data["model"] == REPLAY_MODEL
        assert len(by_stage["core_update"]) == 2  # the recorded batch: every second add
        assert all(c.data["version"] != version for c in by_stage["core_update"])
        # the memories the new prompt wrote name it as the prompt that decided them
        written = [e for e in replayed.timeline() if e.type == "MemoryAdded"]
        assert {e.prompt_version for e in written} == {f"{REMEMBER.prompt_id}@{version}"}
        texts = {m.id: m.content for m in replayed.list(user="maya")}
        core = replayed.core(user="maya").markdown

    # the memories differ where the new prompt changes the answer, and only there
    for add in added:
        assert texts[add["memory"]] == THIRD_PERSON.get(add["fact"], add["fact"])
    assert all(f"- {THIRD_PERSON.get(f, f)}" in core.splitlines() for f in FACTS)

    # the report names each command that came out differently, and what differed
    commands = {add["command"]: add for add in added}
    changed = {add["command"] for add in added if add["fact"] in THIRD_PERSON}
    assert result["diverged_commands"] == len(changed) == 2
    assert {d["command"] for d in result["divergences"]} == changed
    for found in result["divergences"]:
        add = commands[found["command"]]
        assert found["type"] == "AddRequested" and found["user"] == "maya"
        [memory] = found["memories"]
        assert memory["id"] == add["memory"]
        assert memory["content"] == [add["fact"], THIRD_PERSON[add["fact"]]]
        assert memory["events"][0] == memory["events"][1]
        first, second = found["calls"]  # the add that completes the batch asks core_update
        assert (first["index"], first["stage"]) == (0, ["remember", "remember"])
        assert first["prompt"] == [
            f"{REMEMBER.prompt_id}@{REMEMBER.version}",
            f"{REMEMBER.prompt_id}@{version}",
        ]
        assert THIRD_PERSON[add["fact"]] in first["answer"][1]
        assert add["fact"] not in first["answer"][1]
        assert second["stage"] == ["core_update", "core_update"]
        assert second["prompt"][0] == second["prompt"][1]  # same prompt, other candidates
        was, now = found["core"]
        assert f"- {add['fact']}" in was and f"- {THIRD_PERSON[add['fact']]}" in now
        assert found["outcome"] == {}  # same ids, same decisions

    # `diff` agrees: two memories changed, nothing added or removed
    compared = CliRunner().invoke(
        cli, ["--home", str(a), "diff", str(a), str(b), "--json"], env=environment()
    )
    assert compared.exit_code == 0, compared.output
    report = json.loads(compared.output)
    assert not report["added"] and not report["removed"]
    assert {c["id"] for c in report["changed"]} == {commands[c]["memory"] for c in changed}


def test_the_report_reads_as_text_too(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    prompt = tmp_path / "remember-third-person.txt"
    prompt.write_text(NEW_PROMPT, encoding="utf-8")
    with fake_openai_server() as fake:
        fake.answering = rule_answer
        record(fake, a)
        ran = CliRunner().invoke(
            cli,
            [
                "--home",
                str(a),
                "replay",
                "--into",
                str(b),
                "--mode",
                "live",
                "--provider",
                "openai",
                "--model",
                REPLAY_MODEL,
                "--base-url",
                fake.url,
                "--prompt",
                f"remember={prompt}",
            ],
            env=environment(),
        )
    assert ran.exit_code == 0, ran.output
    assert "2 commands came out differently" in ran.output
    assert "memory " in ran.output and "'I am vegetarian' -> 'The user is vegetarian'" in ran.output
    assert "call 0 remember: haema.remember@" in ran.output


def test_base_url_needs_live_mode(tmp_path: Path) -> None:
    ran = CliRunner().invoke(
        cli,
        [
            "--home",
            str(tmp_path / "a"),
            "replay",
            "--into",
            str(tmp_path / "b"),
            "--base-url",
            "http://127.0.0.1:1/v1",
        ],
        env=environment(),
    )
    assert ran.exit_code == 2 and "--mode live" in ran.output
