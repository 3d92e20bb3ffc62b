"""Stores several processes or servers open at the same moment (server workers starting
on a fresh home or log)."""

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


def test_api_key_stores_opened_at_once_on_a_fresh_log_all_open(
    tmp_path: Path, postgres_url: str | None
) -> None:
    # PostgreSQL: CREATE TABLE IF NOT EXISTS from two sessions at once raised UniqueViolation
    # on pg_type (a server worker died at start-up, 1 run in 5); SQLite: the WAL switch race
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from mnemoledger.commands.service.keys import open_api_key_store
    from mnemoledger.ledger import Settings

    settings = Settings(home=tmp_path / "home", db=postgres_url, embedder="hashing")
    openers = 6
    barrier = Barrier(openers)

    def open_one(_: int) -> int:
        barrier.wait()
        store = open_api_key_store(settings)
        try:
            return len(store.list())
        finally:
            store.close()

    with ThreadPoolExecutor(openers) as pool:
        assert list(pool.map(open_one, range(openers))) == [0] * openers


def test_ledgers_opened_at_once_on_a_fresh_log_all_open(
    tmp_path: Path, postgres_url: str | None
) -> None:
    # PostgreSQL: the event store library's own CREATE TABLE IF NOT EXISTS (events,
    # snapshots) raced the same way when two server workers started on a fresh schema
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from mnemoledger.ledger import Ledger, Settings

    settings = Settings(home=tmp_path / "home", db=postgres_url, embedder="hashing")
    openers = 6
    barrier = Barrier(openers)

    def open_one(_: int) -> int:
        barrier.wait()
        ledger = Ledger(settings)
        try:
            return ledger.last_position()
        finally:
            ledger.close()

    with ThreadPoolExecutor(openers) as pool:
        assert list(pool.map(open_one, range(openers))) == [0] * openers
