"""Four writer processes x 100 adds of overlapping contents for one user, on the run's
store (SQLite, or PostgreSQL with --db): no add fails, every acknowledged write is in the
log, no fact is stored twice, and the read models the writers kept up to date equal a
rebuild.

Each add is one call of `MnemoLedger.add` with one content (the offline LLM provider and
the hashing embedder), so the writers race on the user's stream 400 times. Before the
writers of one user took turns (`ledger.store.WriterLocks`), 4-10 of these adds failed
with the store's uniqueness error after every retry: the long decisions (a new memory)
lost every overlap to the short ones (a restatement).

The 400 adds take minutes on a 2-core machine: they are the slow tier; the default run
races the same four writers with 25 adds each.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from tests.read_models import open_memory, rebuilt_views, views

PROCESSES = 4
ADDS_PER_PROCESS = 100
QUICK_ADDS_PER_PROCESS = 25
USER = "maya"

TOPICS = [
    "tea", "Lisbon", "running", "Neovim", "peanuts", "Rex", "billing", "jazz", "chess",
    "sailing", "pottery", "Kyoto", "cycling", "Rust", "almonds", "Luna", "invoices", "opera",
    "poker", "surfing", "gardening", "Oslo", "rowing", "Emacs", "shellfish", "Milo", "taxes",
    "blues", "bridge", "kayaking", "baking", "Prague", "climbing", "Haskell", "gluten",
    "Pepper", "payroll", "salsa", "origami", "skiing",
]  # fmt: skip
FACTS = [f"Maya keeps fact number {n} about {topic}" for n, topic in enumerate(TOPICS)]
"""Distinct facts; every writer adds them in its own random order, so each one is added
about 10 times by all four writers together."""

QUERIES = ["tea Lisbon", "chess jazz", "Haskell payroll"]


def uuid(text: str) -> UUID:
    return UUID(text)


def facts_of(seed: int, adds: int) -> list[str]:
    """The facts writer `seed` adds, in order (each writer's own random choice)."""
    rng = random.Random(seed)
    return [rng.choice(FACTS) for _ in range(adds)]


def _writer(home: str, seed: int, ready: Any, acks: str, adds: int) -> None:
    """Adds `adds` facts, writing each acknowledged result, or the error of an add that
    failed, to `acks`."""
    with open_memory(Path(home)) as memory, open(acks, "w") as out:
        ready.wait()
        for fact in facts_of(seed, adds):
            try:
                result = memory.add([fact], user=USER)
            except Exception as error:
                out.write(json.dumps({"failed": fact, "error": repr(error)}) + "\n")
                continue
            acknowledged = {
                "command": result.command_id,
                "added": [m.id for m in result.memories],
                "reinforced": [m.id for m in result.reinforced],
            }
            out.write(json.dumps(acknowledged) + "\n")


@pytest.mark.parametrize(
    "adds", [QUICK_ADDS_PER_PROCESS, pytest.param(ADDS_PER_PROCESS, marks=pytest.mark.slow)]
)
def test_four_writers_fail_nothing_lose_nothing_duplicate_nothing_and_match_a_rebuild(
    home: Path, tmp_path: Path, adds: int
) -> None:
    with open_memory(home) as memory:
        memory.stats()  # creates the stores before the writers race
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    acks = [tmp_path / f"acks-{n}.jsonl" for n in range(PROCESSES)]
    writers = [
        context.Process(target=_writer, args=(str(home), n, ready, str(acks[n]), adds))
        for n in range(PROCESSES)
    ]
    for writer in writers:
        writer.start()
    started = time.perf_counter()
    ready.set()
    for writer in writers:
        writer.join(timeout=1200)
        assert writer.exitcode == 0
    seconds = time.perf_counter() - started
    lines = [json.loads(line) for path in acks for line in path.read_text().splitlines()]
    failures = [line for line in lines if "failed" in line]
    assert failures == []
    results = [line for line in lines if "command" in line]
    assert len(results) == PROCESSES * adds
    facts = sorted({fact for n in range(PROCESSES) for fact in facts_of(n, adds)})
    if adds == ADDS_PER_PROCESS:
        assert facts == sorted(FACTS)  # 400 adds state every fact

    with open_memory(home) as memory:
        # every acknowledged write is in the log
        completed = {uuid(e.stream) for e in memory.log(event_type="CommandCompleted")}
        added = {uuid(e.stream) for e in memory.log(event_type="MemoryAdded")}
        assert {uuid(r["command"]) for r in results} <= completed
        assert {uuid(m) for r in results for m in r["added"]} <= added
        assert {uuid(m) for r in results for m in r["reinforced"]} <= added
        # no fact stored twice: one active memory per fact, restated the other times
        active = memory.list(user=USER, state="active")
        assert sorted(m.content for m in active) == facts
        assert len(active) + sum(m.repetition_count for m in active) == len(results)
        assert len(added) == len(facts)
        assert memory.log(event_type="CommandFailed") == []
        incremental = views(memory, [USER], QUERIES)
    assert rebuilt_views(home, [USER], QUERIES) == incremental
    print(f"{PROCESSES} x {adds} adds in {seconds:.1f} s, none failed")
