"""Four writer processes x 500 adds of overlapping contents for one user, on the run's
store (SQLite, or PostgreSQL with --db): every acknowledged write is in the log, no fact
is stored twice, and the read models the writers kept up to date equal a rebuild.

Each add is one call of `MnemoLedger.add` with one content (the offline LLM provider and
the hashing embedder), so the writers race on the user's stream 2000 times.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from tests.read_models import open_memory, rebuilt_views, views

PROCESSES = 4
ADDS_PER_PROCESS = 500
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
about 50 times by all four writers together."""

QUERIES = ["tea Lisbon", "chess jazz", "Haskell payroll"]


def uuid(text: str) -> UUID:
    return UUID(text)


def _writer(home: str, seed: int, ready: Any, acks: str) -> None:
    """Adds ADDS_PER_PROCESS facts, writing each acknowledged result to `acks`. An add that
    still conflicts after the pipeline's retries raises; like any client, the writer then
    asks again (the failed command is in the log as CommandFailed)."""
    rng = random.Random(seed)
    with open_memory(Path(home)) as memory, open(acks, "w") as out:
        ready.wait()
        for _ in range(ADDS_PER_PROCESS):
            fact = rng.choice(FACTS)
            while True:
                try:
                    result = memory.add([fact], user=USER)
                    break
                except IntegrityError:
                    out.write(json.dumps({"gave_up": fact}) + "\n")
            acknowledged = {
                "command": result.command_id,
                "added": [m.id for m in result.memories],
                "reinforced": [m.id for m in result.reinforced],
            }
            out.write(json.dumps(acknowledged) + "\n")


def test_four_writers_lose_nothing_duplicate_nothing_and_match_a_rebuild(
    home: Path, tmp_path: Path
) -> None:
    with open_memory(home) as memory:
        memory.stats()  # creates the stores before the writers race
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    acks = [tmp_path / f"acks-{n}.jsonl" for n in range(PROCESSES)]
    writers = [
        context.Process(target=_writer, args=(str(home), n, ready, str(acks[n])))
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
    results = [line for line in lines if "command" in line]
    gave_up = len(lines) - len(results)
    assert len(results) == PROCESSES * ADDS_PER_PROCESS

    with open_memory(home) as memory:
        # every acknowledged write is in the log
        completed = {uuid(e.stream) for e in memory.log(event_type="CommandCompleted")}
        added = {uuid(e.stream) for e in memory.log(event_type="MemoryAdded")}
        assert {uuid(r["command"]) for r in results} <= completed
        assert {uuid(m) for r in results for m in r["added"]} <= added
        assert {uuid(m) for r in results for m in r["reinforced"]} <= added
        # no fact stored twice: one active memory per fact, restated the other times
        active = memory.list(user=USER, state="active")
        assert sorted(m.content for m in active) == sorted(FACTS)
        assert len(active) + sum(m.repetition_count for m in active) == len(results)
        assert len(added) == len(FACTS)
        failed = {uuid(e.stream) for e in memory.log(event_type="CommandFailed")}
        assert len(failed) == gave_up
        assert not failed & {uuid(e.causation_id) for e in memory.log(event_type="MemoryAdded")}
        incremental = views(memory, [USER], QUERIES)
    assert rebuilt_views(home, [USER], QUERIES) == incremental
    print(f"{PROCESSES} x {ADDS_PER_PROCESS} adds in {seconds:.1f} s ({gave_up} gave up)")
