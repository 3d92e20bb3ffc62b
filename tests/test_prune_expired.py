"""Luminary's maintenance loop (seed 002): pruneExpired as a command of its own that answers
with a count, and the weekly batch merge of volatile notes the worker runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.lifecycle.prune import (
    MERGE_BATCH_SIZE,
    merge_volatile,
    prune_expired,
    volatile_batches,
)
from mnemoledger.commands.lifecycle.worker import SimulatedClock, Worker
from mnemoledger.ledger import Settings


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    ledger = MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")
    try:
        yield ledger
    finally:
        ledger.close()


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def run_json(home: Path, *args: str) -> Any:
    result = run(home, "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def later(days: float) -> datetime:
    return datetime.now(UTC) + timedelta(days=days)


def note(memory: MnemoLedger, text: str, user: str = "u", **fields: Any) -> str:
    fields.setdefault("kind", "log")
    return memory.write_note(text, user=user, **fields).note.id


# --- pruneExpired --------------------------------------------------------------------------


def test_prune_expired_purges_expired_notes_and_returns_the_count(memory: MnemoLedger) -> None:
    soon = note(memory, "asked for a refund", stability="volatile", ttl_days=1)
    week = note(memory, "sprint summary", kind="summary", stability="volatile", ttl_days=7)
    kept = note(memory, "prefers short answers", kind="summary")
    other = note(memory, "other user's request", user="v", stability="volatile", ttl_days=1)
    [plain] = memory.add(["Maya's passport expires in May"], user="u").memories
    memory.ttl(plain.id, 1)

    assert prune_expired(memory, now=later(0.5)).count == 0  # nothing is due yet
    result = prune_expired(memory, now=later(2))
    assert result.count == 2
    assert {u.user: u.pruned for u in result.users} == {"u": [soon], "v": [other]}
    for pruned in (soon, other):
        history = [e.type for e in memory.memory_history(pruned)]
        assert history[-2:] == ["MemoryExpired", "MemoryPurged"]
        assert memory.get(pruned).state == "purged" and memory.get(pruned).content == ""
    assert memory.get(week).state == "active" and memory.get(kept).state == "active"
    assert memory.get(plain.id).state == "active"  # not a note: consolidation expires it
    assert [n.id for n in memory.notes("u", now=later(2))] == [kept, week]

    assert prune_expired(memory, now=later(2)).count == 0  # idempotent: nothing left to prune
    assert prune_expired(memory, user="u", now=later(8)).count == 1  # the week's summary


def test_each_user_run_is_a_recorded_command(memory: MnemoLedger, tmp_path: Path) -> None:
    pruned = note(memory, "asked for a refund", stability="volatile", ttl_days=1)
    before = len(memory.log())
    result = prune_expired(memory, now=later(2), agent="janitor")
    [user] = result.users
    log = memory.log()[before:]
    assert [e.type for e in log] == [
        "PruneRequested",  # the request first, then its outcome and changes in one write
        "CommandCompleted",
        "MemoriesChanged",
        "MemoryExpired",
        "MemoryPurged",
    ]
    assert log[1].data["outcome"] == {"pruned": [pruned], "count": 1}
    purged = next(e for e in log if e.type == "MemoryPurged")
    assert purged.stream == pruned and purged.data["reason"] == "prune-expired"
    assert purged.causation_id == user.command_id and purged.agent_id == "janitor"
    assert memory.rebuild().events == len(memory.log())  # the read models replay it
    assert memory.get(pruned).state == "purged"
    replayed = memory.replay(tmp_path / "replay")  # re-applied as recorded
    assert replayed.failed_commands == 0
    assert memory.diff(memory.settings.home, tmp_path / "replay").identical


def test_prune_expired_on_the_command_line(home: Path) -> None:
    written = run_json(
        home, "note", "write", "asked for a refund", "--user", "u", "--kind", "log",
        "--stability", "volatile", "--ttl-days", "1",
    )  # fmt: skip
    run_json(home, "note", "write", "prefers tea", "--user", "u", "--kind", "summary")
    when = later(2).isoformat()
    assert run_json(home, "prune-expired", "--now", later(0.5).isoformat())["count"] == 0
    human = run(home, "prune-expired", "--user", "u", "--now", when)
    assert human.exit_code == 0, human.stderr
    assert "pruned 1 expired note(s)" in human.stdout
    assert written["note"]["id"][:8] in human.stdout
    answer = run_json(home, "prune-expired", "--now", when)
    assert answer["count"] == 0 and answer["users"] == []
    bad = run(home, "prune-expired", "--now", "2031-01-01T00:00:00")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: ")


# --- the weekly batch merge of volatile notes -----------------------------------------------


def volatile(
    memory: MnemoLedger, count: int, topic: str = "invoice", scope: str = "user"
) -> list[str]:
    return [
        note(memory, f"request {n} about the {topic}", scope=scope, stability="volatile",
             ttl_days=30)
        for n in range(count)
    ]  # fmt: skip


def test_week_old_volatile_notes_merge_in_batches_of_five(memory: MnemoLedger) -> None:
    ids = volatile(memory, 7)
    lone = volatile(memory, 1, "deploy", scope="job")
    note(memory, "a stable summary", kind="summary")
    assert volatile_batches(memory.layers, "u", later(6)) == []  # not a week old yet
    batches = merge_volatile(memory, now=later(8))
    assert MERGE_BATCH_SIZE == 5
    assert [(b.user, b.scope, b.merged) for b in batches] == [
        ("u", "user", ids[:5]),
        ("u", "user", ids[5:]),
    ]
    for batch in batches:
        summary = memory.get(batch.summary)
        assert summary.note_kind == "summary" and summary.stability == "volatile"
        assert all(memory.get(i).superseded_by == batch.summary for i in batch.merged)
    assert memory.get(lone[0]).state == "active"  # a batch of one waits
    # the summaries are volatile notes too: they wait a week before they merge again
    assert merge_volatile(memory, now=later(6)) == []


def test_the_worker_merges_week_old_volatile_notes_after_its_cycle(memory: MnemoLedger) -> None:
    ids = volatile(memory, 2)
    clock = SimulatedClock(later(8))
    Worker(memory, interval=1800, clock=clock.now, pause=clock.advance, topics=False).run(1)
    assert all(memory.get(i).superseded_by for i in ids)
    fresh = volatile(memory, 2, "garden party")
    Worker(memory, interval=1800, clock=SimulatedClock(later(1)).now, topics=False).run(1)
    assert all(memory.get(i).superseded_by is None for i in fresh)
    off = Worker(memory, interval=1800, clock=clock.now, topics=False, maintenance=False)
    off.run(1)
    assert all(memory.get(i).superseded_by is None for i in fresh)
