"""Files several processes open at the same moment (server workers starting on a fresh home)."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

from mnemoledger.ledger.sqlite_files import connect_shared

OPENERS = 4
FILES = 25


def _open(path: str, barrier: multiprocessing.synchronize.Barrier) -> None:
    barrier.wait()
    db = connect_shared(path)
    db.execute("CREATE TABLE IF NOT EXISTS t (a)")
    db.close()


def test_processes_opening_one_fresh_file_at_once_all_get_it_in_wal(tmp_path: Path) -> None:
    # without the retried journal switch, about one file in seven failed one opener here
    context = multiprocessing.get_context("fork")
    for number in range(FILES):
        path = tmp_path / f"model{number}.sqlite3"
        barrier = context.Barrier(OPENERS)
        openers = [
            context.Process(target=_open, args=(str(path), barrier)) for _ in range(OPENERS)
        ]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join(60)
        assert [opener.exitcode for opener in openers] == [0] * OPENERS, path.name
        mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"


def test_page_size_is_set_on_a_new_file(tmp_path: Path) -> None:
    db = connect_shared(tmp_path / "big.sqlite3", page_size=16384)
    db.execute("CREATE TABLE t (a)")
    assert db.execute("PRAGMA page_size").fetchone()[0] == 16384
