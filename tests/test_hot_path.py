"""Issue 17's hot paths: an add catches up only what it decides from, a catch-up with
nothing to do reads one position, and served recalls are group-committed (in the log at
once, synced to disk and witnessed later, never lost on a clean stop)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from mnemoledger.ledger import application as ledger_application
from mnemoledger.ledger.recall import Recall


@pytest.fixture
def memory(tmp_path: Path) -> Any:
    with MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing"), actor="t") as m:
        yield m


def _served(home: Path) -> int:
    database = sqlite3.connect(home / "ledger.sqlite3")
    try:
        row = database.execute(
            "SELECT COUNT(*) FROM stored_events WHERE topic LIKE '%RecallServed%'"
        ).fetchone()
    finally:
        database.close()
    return int(row[0])


def test_an_add_catches_up_only_what_it_decides_from_and_reads_see_everything(
    memory: MnemoLedger,
) -> None:
    memory.add(["I moved to Lisbon in May"], user="maya", thread="t1")
    memory.add(["I work as a nurse"], user="maya", thread="t1")
    positions = {p.name: p.position() for p in memory.runner.projections}
    last = memory.ledger.last_position()
    assert positions["layers"] < last  # the second add's events are not caught up yet
    assert positions["history"] < positions["layers"] or positions["history"] < last
    hits = memory.search("where does she live", user="maya")  # a read catches up first
    assert any("Lisbon" in h.content for h in hits)
    assert {p.position() for p in memory.runner.projections} == {memory.ledger.last_position()}


def test_a_catch_up_with_nothing_to_do_reads_one_position(
    memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.add(["I moved to Lisbon in May"], user="maya")
    memory.refresh()
    read: list[int] = []
    monkeypatch.setattr(memory.ledger, "read", lambda *a, **k: read.append(1) or [])
    for projection in memory.runner.projections:
        monkeypatch.setattr(projection, "position", lambda: pytest.fail("position read"))
    assert memory.refresh() == 0
    assert memory.runner.catch_up(names=["layers"]) == 0
    assert read == []


@pytest.mark.sqlite_only  # group commit is SQLite's (WAL without fsync)
def test_served_recalls_are_in_the_log_at_once_and_witnessed_on_close(tmp_path: Path) -> None:
    memory = MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing"), actor="t")
    memory.add(["I moved to Lisbon in May"], user="maya")
    before = memory.ledger.last_position()
    memory.query("where does she live", agent="a", user="maya")
    assert memory.ledger.last_position() == before + 1  # visible to readers at once
    assert len(memory.ledger._unsynced) == 1  # not yet synced nor witnessed
    memory.close()  # a clean stop syncs and witnesses it
    assert _served(tmp_path) == 1
    with MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing"), actor="t") as again:
        assert again.ledger._unsynced == []
        assert again.ledger.verify().ok


@pytest.mark.sqlite_only  # group commit is SQLite's (WAL without fsync)
def test_the_next_durable_save_carries_the_served_recalls(memory: MnemoLedger) -> None:
    memory.add(["I moved to Lisbon in May"], user="maya")
    for _ in range(3):
        memory.query("where does she live", agent="a", user="maya")
    assert len(memory.ledger._unsynced) == 3
    memory.add(["I work as a nurse"], user="maya")
    assert memory.ledger._unsynced == []
    assert memory.ledger.verify().ok


@pytest.mark.sqlite_only  # group commit is SQLite's (WAL without fsync)
def test_group_commit_syncs_every_so_many_recalls(
    memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger_application, "SERVED_SYNC_EVERY", 2)
    synced: list[str] = []
    monkeypatch.setattr(ledger_application, "_fsync", synced.append)
    memory.add(["I moved to Lisbon in May"], user="maya")
    memory.query("where", agent="a", user="maya")
    assert synced == []
    memory.query("where", agent="a", user="maya")
    assert synced == [f"{memory.ledger.recorder.datastore.pool.db_name}-wal"]
    assert memory.ledger._unsynced == []


@pytest.mark.sqlite_only  # group commit is SQLite's (WAL without fsync)
def test_only_served_recalls_skip_the_fsync(memory: MnemoLedger) -> None:
    memory.add(["I moved to Lisbon in May"], user="maya")
    assert memory.ledger._unsynced == []
    recall = Recall(query="q", categories=[], memory_ids=[], return_mode="full", top_k=1)
    memory.ledger.save(recall)
    assert len(memory.ledger._unsynced) == 1


@pytest.mark.sqlite_only  # group commit is SQLite's (WAL without fsync)
def test_a_process_killed_before_the_sync_leaves_a_log_that_verifies(tmp_path: Path) -> None:
    """The served recall is in the log (a crash of the process loses no commit) and the
    tamper witness, which never named it, finds nothing wrong."""
    script = (
        "import os, sys\n"
        "from mnemoledger import MnemoLedger\n"
        "from mnemoledger.ledger import Settings\n"
        "m = MnemoLedger(settings=Settings(home=sys.argv[1], embedder='hashing'), actor='t')\n"
        "m.add(['I moved to Lisbon in May'], user='maya')\n"
        "m.query('where does she live', agent='a', user='maya')\n"
        "os._exit(9)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=False)
    assert done.returncode == 9
    assert _served(tmp_path) == 1
    with MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing"), actor="t") as again:
        assert again.ledger.verify().ok
        again.add(["I work as a nurse"], user="maya")
        assert again.ledger.verify().ok
