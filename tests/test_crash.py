"""Crashes: 20 times, a writer process and a follower (`mnemoledger project --follow`) are
killed with SIGKILL at random moments while they work on one ledger. After each crash
nothing acknowledged is lost, and the read models, caught up from where the dead
processes left them, equal read models rebuilt from the log alone.

The 20 crashes take minutes on a 2-core machine: they are the slow tier; the default run
crashes the same way 3 times."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import pytest

from tests.read_models import open_memory, rebuilt_views, views

RUNS = 20
QUICK_RUNS = 2
USERS = ["maya", "theo"]
QUERIES = ["tea Lisbon", "chess jazz"]
TOPICS = ["tea", "Lisbon", "chess", "jazz", "sailing", "Kyoto", "Rust", "opera", "baking"]


def _writer(home: str, seed: int, acks: str) -> None:
    """Adds until killed; each acknowledged add is on disk (fsync) before the next starts."""
    rng = random.Random(seed)
    with open_memory(Path(home)) as memory, open(acks, "a") as out:
        n = 0
        while True:
            n += 1
            topic = rng.choice(TOPICS)
            content = rng.choice(
                [f"Maya likes {topic}", f"Run {seed} note {n} mentions {topic} and {seed * n}"]
            )
            user = rng.choice(USERS)
            if n % 7 == 0:
                result = memory.add([content, f"Also {rng.choice(TOPICS)} daily"], user=user)
            else:
                result = memory.add([content], user=user)
            ids = [m.id for m in result.memories] + [m.id for m in result.reinforced]
            out.write(json.dumps({"command": result.command_id, "memories": ids}) + "\n")
            out.flush()
            os.fsync(out.fileno())


def _wait_for_first_ack(acks: Path, before: int, writer: multiprocessing.Process) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and writer.is_alive():
        if acks.exists() and len(acks.read_text().splitlines()) > before:
            return
        time.sleep(0.02)
    raise AssertionError("the writer never acknowledged an add")


@pytest.mark.parametrize("runs", [QUICK_RUNS, pytest.param(RUNS, marks=pytest.mark.slow)])
def test_sigkilled_writer_and_follower_lose_nothing_acknowledged(
    home: Path, tmp_path: Path, runs: int
) -> None:
    rng = random.Random(20)
    acks = tmp_path / "acks.jsonl"
    context = multiprocessing.get_context("spawn")
    with open_memory(home) as memory:
        memory.stats()
    follower_command = [sys.executable, "-m", "mnemoledger", "--home", str(home), "project"]
    for run in range(runs):
        before = len(acks.read_text().splitlines()) if acks.exists() else 0
        follower = subprocess.Popen(
            [*follower_command, "--follow", "--poll", "0.05"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        writer = context.Process(target=_writer, args=(str(home), run, str(acks)))
        writer.start()
        try:
            _wait_for_first_ack(acks, before, writer)
            victims = [("writer", writer.pid), ("follower", follower.pid)]
            rng.shuffle(victims)
            for _name, pid in victims:
                time.sleep(rng.uniform(0.0, 1.0))
                assert pid is not None
                os.kill(pid, signal.SIGKILL)
        finally:
            writer.join(timeout=30)
            follower.wait(timeout=30)
        assert writer.exitcode == -signal.SIGKILL and follower.returncode == -signal.SIGKILL

        acknowledged = [json.loads(line) for line in acks.read_text().splitlines()]
        with open_memory(home) as memory:
            completed = {UUID(e.stream) for e in memory.log(event_type="CommandCompleted")}
            assert {UUID(a["command"]) for a in acknowledged} <= completed
            for memory_id in {m for a in acknowledged for m in a["memories"]}:
                memory.get(memory_id)  # raises MemoryNotFound if lost
            incremental = views(memory, USERS, QUERIES)
        # rebuild in a copy of the data directory: the next run goes on from the state
        # the crash left (the copy shares the event log, which a rebuild only reads)
        copy = tmp_path / f"rebuilt-{run}"
        shutil.copytree(home, copy)
        assert rebuilt_views(copy, USERS, QUERIES) == incremental, f"run {run}"
        shutil.rmtree(copy)

    # a clean stop: SIGTERM ends a follower with exit status 0 and its read models current
    follower = subprocess.Popen(
        [*follower_command, "--follow"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert follower.stderr is not None
    assert "following the log" in follower.stderr.readline()
    follower.send_signal(signal.SIGTERM)
    out, _ = follower.communicate(timeout=60)
    assert follower.returncode == 0
    with open_memory(home) as memory:
        assert f"read models at position {memory.ledger.last_position()} " in out
