"""Stores several processes or servers open at the same moment (server workers starting
on a fresh home or log)."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Barrier

from mnemoledger.commands.service.keys import open_api_key_store
from mnemoledger.ledger import Ledger, Settings
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
        openers = [context.Process(target=_open, args=(str(path), barrier)) for _ in range(OPENERS)]
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


def opened_at_once(open_one: Callable[[], int], openers: int = 6) -> list[int]:
    """`open_one()` from `openers` threads released at the same moment."""
    barrier = Barrier(openers)

    def run(_: int) -> int:
        barrier.wait()
        return open_one()

    with ThreadPoolExecutor(openers) as pool:
        return list(pool.map(run, range(openers)))


def test_api_key_stores_opened_at_once_on_a_fresh_log_all_open(
    tmp_path: Path, postgres_url: str | None
) -> None:
    # PostgreSQL: CREATE TABLE IF NOT EXISTS from two sessions at once raised UniqueViolation
    # on pg_type (a server worker died at start-up, 1 run in 5); SQLite: the WAL switch race
    settings = Settings(home=tmp_path / "home", db=postgres_url, embedder="hashing")

    def open_one() -> int:
        store = open_api_key_store(settings)
        try:
            return len(store.list())
        finally:
            store.close()

    assert opened_at_once(open_one) == [0] * 6


def test_ledgers_opened_at_once_on_a_fresh_log_all_open(
    tmp_path: Path, postgres_url: str | None
) -> None:
    # PostgreSQL: the event store library's own CREATE TABLE IF NOT EXISTS (events,
    # snapshots) and the chain secret's raced the same way when two server workers started
    # on a fresh schema
    settings = Settings(home=tmp_path / "home", db=postgres_url, embedder="hashing")

    def open_one() -> int:
        ledger = Ledger(settings)
        try:
            return ledger.last_position()
        finally:
            ledger.close()

    assert opened_at_once(open_one) == [0] * 6
