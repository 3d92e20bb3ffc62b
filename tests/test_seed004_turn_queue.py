"""Seed 004 §3 Trigger 1: turns handed over after each agent loop are extracted once the
thread has been quiet for 5 seconds; a newer hand-over restarts the wait; nothing handed
over is lost to a restart, and two processes never extract the same turns."""

from __future__ import annotations

import json
import shutil
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.lifecycle.background import BackgroundJobs
from mnemoledger.commands.write.turn_queue_api import QueuedExtraction
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import EXTRACTION_IDLE_SECONDS
from tests.live_server import live_server


def loop(user_says: str, reply: str = "Noted.") -> list[dict[str, str]]:
    return [{"role": "user", "content": user_says}, {"role": "assistant", "content": reply}]


def types_of(memory: MnemoLedger) -> list[str]:
    return [record.type for record in memory.parts.ledger.read(limit=10_000)]


def open_ledger(home: Path) -> MnemoLedger:
    return MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")


def test_seed004_s3_trigger1_extracts_a_thread_once_it_is_quiet(memory: MnemoLedger) -> None:
    memory.queue_turns(loop("I am vegetarian."), user="maya", thread="t1")
    second = memory.queue_turns(loop("I live in Porto."), user="maya", thread="t1")
    assert second.pending_turns == 4 and second.extract_after_seconds == EXTRACTION_IDLE_SECONDS
    assert memory.list(user="maya") == []  # handed over, not extracted yet

    (waiting,) = memory.queued_threads(user="maya")
    assert (waiting.thread_id, waiting.hand_overs, waiting.pending_turns) == ("t1", 2, 4)
    last = waiting.last_queued_at
    # the wait runs from the newest hand-over: 4.9 s after it, nothing is due
    assert memory.extract_queued(now=last + timedelta(seconds=4.9)) == []
    (done,) = memory.extract_queued(now=last + timedelta(seconds=EXTRACTION_IDLE_SECONDS))
    assert done.error is None and done.result is not None
    assert len(done.hand_overs) == 2 and done.result.turns == 4
    assert sorted(m.content for m in memory.list(user="maya")) == ["Porto", "vegetarian"]
    assert memory.queued_threads() == []
    assert memory.extract_queued(idle_seconds=0) == []  # nothing is extracted twice
    assert types_of(memory).count("IngestRequested") == 1


def test_seed004_s3_trigger1_threads_wait_separately(memory: MnemoLedger) -> None:
    memory.queue_turns(loop("I work at Stripe."), user="maya", thread="t1")
    memory.queue_turns(loop("I like jazz."), user="ben", thread="t1")
    memory.queue_turns(loop("I speak Portuguese."), user="maya", thread="t2")
    first_t2 = next(t for t in memory.queued_threads() if t.thread_id == "t2")
    memory.queue_turns(loop("I play chess."), user="maya", thread="t2")  # restarts t2's wait
    quiet = first_t2.last_queued_at + timedelta(seconds=EXTRACTION_IDLE_SECONDS)
    done = memory.extract_queued(now=quiet)
    assert {(d.user_id, d.thread_id) for d in done} == {("maya", "t1"), ("ben", "t1")}
    assert [(t.user_id, t.thread_id) for t in memory.queued_threads()] == [("maya", "t2")]
    only_ben = memory.extract_queued(idle_seconds=0, user="ben")
    assert only_ben == []


def test_seed004_s3_trigger1_nothing_handed_over_is_lost_to_a_restart(home: Path) -> None:
    with open_ledger(home) as memory:
        memory.queue_turns(loop("My name is Priya and I am a nurse."), user="maya", thread="t1")
    shutil.rmtree(home / "projections")  # every read model lost too: rebuilt from the log
    with open_ledger(home) as memory:
        (waiting,) = memory.queued_threads()
        assert waiting.pending_turns == 2
        (done,) = memory.extract_queued(idle_seconds=0)
        assert done.result is not None and done.result.memories


def test_seed004_s3_trigger1_two_processes_extract_each_turn_once(home: Path) -> None:
    with open_ledger(home) as memory:
        for n in range(3):
            memory.queue_turns(loop(f"I use tool number {n} daily."), user="maya", thread="t1")
    results: list[list[QueuedExtraction]] = []

    def extract() -> None:
        with open_ledger(home) as memory:
            results.append(memory.extract_queued(idle_seconds=0))

    runners = [threading.Thread(target=extract) for _ in range(2)]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join()
    assert sorted(len(r) for r in results) == [0, 1]  # one extracted, the other found none
    with open_ledger(home) as memory:
        assert types_of(memory).count("IngestRequested") == 1
        assert memory.queued_threads() == []


def test_seed004_s3_trigger1_refuses_bad_turns_before_recording(memory: MnemoLedger) -> None:
    bad: list[Any] = [
        ([], "nothing to queue"),
        ([{"role": "robot", "content": "hi"}], "role must be one of"),
        ([{"role": "user"}], "missing 'content'"),
    ]
    for turns, words in bad:
        with pytest.raises(InvalidInput, match=words):
            memory.queue_turns(turns, user="maya", thread="t1")
    with pytest.raises(InvalidInput, match="thread"):
        memory.queue_turns(loop("hi"), user="maya", thread="not a thread id")
    with pytest.raises(InvalidInput, match="idle_seconds"):
        memory.extract_queued(idle_seconds=-1)
    assert types_of(memory) == []


def test_seed004_s3_trigger1_erasure_drops_waiting_turns(memory: MnemoLedger) -> None:
    memory.queue_turns(loop("I am allergic to shellfish."), user="maya", thread="t1")
    memory.queue_turns(loop("I like tea."), user="ben", thread="t1")
    memory.erase(user="maya")
    assert [t.user_id for t in memory.queued_threads()] == ["ben"]


def test_seed004_s3_trigger1_replay_extracts_the_same_turns(
    memory: MnemoLedger, tmp_path: Path
) -> None:
    memory.queue_turns(loop("I am vegetarian."), user="maya", thread="t1")
    memory.extract_queued(idle_seconds=0)
    replayed = memory.replay(tmp_path / "replayed")
    assert replayed.failed_commands == 0 and replayed.commands_rerun == 1, replayed
    with open_ledger(tmp_path / "replayed") as copy:
        assert [m.content for m in copy.list(user="maya")] == ["vegetarian"]
        assert copy.queued_threads() == []


def test_seed004_s3_trigger1_the_server_extracts_quiet_threads(home: Path) -> None:
    with live_server(home) as server:
        key = server.key("helper", ["maya"], admin=True)
        http = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        )
        body = {"user_id": "maya", "turns": loop("I moved to Lisbon and I work at Stripe.")}
        accepted = http.post("/threads/chat-1/turns", json=body)
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["pending_turns"] == 2
        waiting = http.get("/threads/waiting", params={"user_id": "maya"}).json()
        assert [w["thread_id"] for w in waiting] == ["chat-1"]
        deadline = time.monotonic() + 60
        while http.get("/threads/waiting", params={"user_id": "maya"}).json():
            assert time.monotonic() < deadline, "the server never extracted the thread"
            time.sleep(0.5)
        contents = {m["content"] for m in http.get("/memories", params={"user_id": "maya"}).json()}
        assert {"Lisbon", "Stripe"} <= contents

        narrow = server.key("researcher", ["maya"])
        refused = httpx.post(
            f"{server.url}/threads/chat-1/turns",
            json=body,
            headers={"Authorization": f"Bearer {narrow}"},
        )
        assert refused.status_code == 403, refused.text
        assert "as extraction does" in refused.json()["error"]["message"]
        bad = http.post("/threads/chat-1/turns", json={"user_id": "maya", "turns": []})
        assert bad.status_code == 422


def test_seed004_s3_trigger1_the_worker_extracts_quiet_threads(home: Path) -> None:
    with open_ledger(home) as memory:
        memory.queue_turns(loop("I am a pilot."), user="maya", thread="t1")
    extracted: list[QueuedExtraction] = []

    def extract_now(side: MnemoLedger) -> None:
        extracted.extend(side.extract_queued(idle_seconds=0))

    with BackgroundJobs(lambda: open_ledger(home), [extract_now], poll=0.05).running():
        deadline = time.monotonic() + 60
        while not extracted:
            assert time.monotonic() < deadline, "the worker never extracted the thread"
            time.sleep(0.05)
    assert [e.thread_id for e in extracted] == ["t1"]
    with open_ledger(home) as memory:
        assert [m.content for m in memory.list(user="maya")] == ["pilot"]


def test_seed004_s3_trigger1_on_the_command_line(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "loop.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in loop("I live in Oslo.")) + "\n")

    def run(*args: str) -> Any:
        result = CliRunner().invoke(cli, ["--home", str(home), "--json", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    queued = run("turns", "queue", str(path), "--user", "maya", "--thread", "t1")
    assert queued["pending_turns"] == 2
    assert [t["thread_id"] for t in run("turns", "waiting")] == ["t1"]
    (done,) = run("turns", "extract", "--idle", "0")
    assert done["result"]["memories"][0]["content"] == "Oslo"
    assert run("turns", "waiting", "--user", "maya") == []
    bad = CliRunner().invoke(cli, ["--home", str(home), "turns", "queue", str(path), "--user", "m"])
    assert bad.exit_code == 2  # --thread is required
