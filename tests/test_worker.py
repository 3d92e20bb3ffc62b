"""The worker: cycles on an interval, an injected clock driving months in seconds, and a
graceful stop on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.commands.lifecycle.consolidate_api import ConsolidateResult
from mnemoledger.commands.lifecycle.worker import SimulatedClock, Worker
from mnemoledger.ledger import Settings
from mnemoledger.ledger.policy import (
    PURGE_AFTER_DAYS,
    SOFT_DELETE_IDLE_EPOCHS,
    SOFT_DELETE_MAX_IMPORTANCE,
)
from tests.test_consolidation_helpers import (
    USER,
    Clock,
    clock,
    engram,
    events,
    remember,
    set_importance,
    skip_epochs,
)

__all__ = ["clock", "engram"]


def test_simulated_months_run_every_cycle(engram: MnemoLedger, clock: Clock) -> None:
    idle = remember(engram, "Right now a podcast about kites is on", importance=0.3)
    kept = remember(engram, "Maya's name is Maya Lindqvist", importance=0.9)
    # the first epochs of the idle count: one cycle, then epochs recorded cheaply (decay
    # only, no rule); held in Buffer, where decay alone would have evicted them, at their
    # importance (the idle one's below T)
    before = SOFT_DELETE_IDLE_EPOCHS - 1
    engram.consolidate(user=USER)
    skip_epochs(engram, before - 1, clock)
    set_importance(engram, idle, SOFT_DELETE_MAX_IMPORTANCE / 2)
    set_importance(engram, kept, 0.9)
    results: list[ConsolidateResult] = []
    every = 10  # days between cycles: each is one epoch however long the pause
    worker = Worker(
        engram,
        interval=every * 86_400,
        clock=clock.now,
        pause=lambda seconds: clock.advance(seconds=seconds),
        on_cycle=results.append,
    )
    # two months: the idle memory lapses in the first cycle past SOFT_DELETE_IDLE_EPOCHS
    # idle epochs (the worker's third), and is purged PURGE_AFTER_DAYS later
    cycles = 3 + PURGE_AFTER_DAYS // every + 1
    assert worker.run(max_cycles=cycles) == cycles
    assert [r.epoch for r in results] == list(range(before + 1, before + cycles + 1))
    assert len(events(engram, "ConsolidationEpochCompleted")) == before + cycles
    lapsed = [r for r in events(engram, "MemoryLapsed") if r.stream_id == idle]
    purged = [r for r in events(engram, "MemoryPurged") if r.stream_id == idle]
    assert len(lapsed) == 1 and len(purged) == 1
    assert [r.epoch for r in results if any(o["op"] == "lapse" for o in r.operations)] == [
        SOFT_DELETE_IDLE_EPOCHS + 2
    ]
    assert (purged[0].at - lapsed[0].at).days == PURGE_AFTER_DAYS
    assert engram.get(idle).state == "purged"
    assert engram.get(kept).layer == "working" and engram.get(kept).state == "active"


def test_stop_ends_the_loop_after_the_running_cycle(engram: MnemoLedger) -> None:
    remember(engram, "Maya's name is Maya Lindqvist")
    simulated = SimulatedClock(engram.clock())
    worker = Worker(engram, interval=60, clock=simulated.now, pause=simulated.advance)
    worker.on_cycle = lambda _result: worker.stop()
    assert worker.run() == 1


def test_sigterm_stops_the_worker_gracefully(home: Path) -> None:
    env = {
        **os.environ,
        "MNEMOLEDGER_HOME": str(home),
        "MNEMOLEDGER_EMBEDDER": "hashing",
        "PYTHONUNBUFFERED": "1",
    }
    with MnemoLedger(settings=Settings(home=home, embedder="hashing")) as memory:
        remember(memory, "Maya is allergic to peanuts")
    process = subprocess.Popen(
        [sys.executable, "-m", "mnemoledger", "worker", "--interval", "0.2", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    lines = []
    while not lines or lines[-1] != "}":  # the first cycle's JSON is complete
        lines.append(process.stdout.readline().rstrip("\n"))
    process.send_signal(signal.SIGTERM)
    rest = process.stdout.read()
    assert process.wait(timeout=30) == 0, process.stderr.read()
    cycles = [json.loads(block) for block in _json_blocks("\n".join(lines) + "\n" + rest)]
    assert cycles[0]["users"][0]["user"] == USER
    epochs = [c["epoch"] for c in cycles]
    assert epochs == list(range(1, len(epochs) + 1))


def _json_blocks(text: str) -> list[str]:
    """Each cycle prints one indented JSON object: split them."""
    blocks, current = [], []
    for line in text.splitlines():
        current.append(line)
        if line == "}":
            blocks.append("\n".join(current))
            current = []
    return blocks


def test_a_failing_cycle_is_recorded_and_the_worker_goes_on(
    engram: MnemoLedger, clock: Clock
) -> None:
    from mnemoledger.commands.llm import LLMError, OfflineProvider, ScriptedProvider

    remember(engram, "Maya is allergic to peanuts")
    clock.advance(minutes=11)
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script("triage", LLMError("the model is down"))
    engram.llm = scripted
    errors: list[Exception] = []
    worker = Worker(
        engram,
        interval=1800,
        clock=clock.now,
        pause=lambda seconds: clock.advance(seconds=seconds),
        on_error=errors.append,
        topics=False,
    )
    assert worker.run(max_cycles=2) == 2
    assert [str(e) for e in errors] == ["the model is down"]
    [failed] = events(engram, "CommandFailed")
    assert "the model is down" in failed.data["error"]
    assert len(events(engram, "ConsolidationEpochCompleted")) == 1  # the second cycle
