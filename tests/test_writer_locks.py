"""The per-user writer lock on the run's store (a lock file beside the SQLite log, or a
PostgreSQL advisory lock with --db): while one process or thread holds a user, another
waits for it and gives up with `WriterBusy` after its timeout; other users and the
holder itself (reentrant) are not held up."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from mnemoledger.ledger import Settings
from mnemoledger.ledger.store import WriterBusy, WriterLocks, writer_locks
from tests.live_server import live_server

SHORT = 0.5
"""Seconds a second writer waits in these tests."""


def _settings(home: Path) -> Settings:
    return Settings(home=home)  # the run's store: $MNEMOLEDGER_DB in PostgreSQL runs


def _try_holds(home: str, asked: Any, answer: Any) -> None:
    """In another process: try to hold each user asked for, answer "held" or why not."""
    locks = WriterLocks(_settings(Path(home)), timeout=SHORT)
    while (user := asked.get(timeout=60)) is not None:
        try:
            with locks.hold(user):
                answer.put("held")
        except WriterBusy as busy:
            answer.put(str(busy))


class OtherProcess:
    """One spawned process (importing the stack once) that tries users' locks on demand."""

    def __init__(self, home: Path) -> None:
        context = multiprocessing.get_context("spawn")
        self.asked, self.answer = context.Queue(), context.Queue()
        self.process = context.Process(target=_try_holds, args=(str(home), self.asked, self.answer))
        self.process.start()

    def hold(self, user: str) -> str:
        self.asked.put(user)
        found: str = self.answer.get(timeout=60)
        return found

    def stop(self) -> None:
        self.asked.put(None)
        self.process.join(timeout=60)


def test_another_process_waits_for_the_user_and_not_for_others(home: Path) -> None:
    locks = writer_locks(_settings(home))
    other = OtherProcess(home)
    try:
        with locks.hold("maya"):
            busy = other.hold("maya")
            assert busy.startswith("another writer of user 'maya' has been deciding for more than")
            assert other.hold("omar") == "held"
            with locks.hold("maya"):  # reentrant in the holding thread
                pass
            assert other.hold("maya") != "held"  # still held after the inner exit
        assert other.hold("maya") == "held"
    finally:
        other.stop()


def test_another_thread_waits_for_the_user(home: Path) -> None:
    locks = WriterLocks(_settings(home), timeout=SHORT)
    outcomes: list[str] = []

    def second_writer() -> None:
        try:
            with locks.hold("maya"):
                outcomes.append("held")
        except WriterBusy:
            outcomes.append("busy")

    with locks.hold("maya"):
        thread = threading.Thread(target=second_writer)
        thread.start()
        thread.join(timeout=30)
    thread = threading.Thread(target=second_writer)
    thread.start()
    thread.join(timeout=30)
    assert outcomes == ["busy", "held"]


@pytest.mark.sqlite_only
def test_the_lock_file_is_private(home: Path) -> None:
    with writer_locks(_settings(home)).hold("maya"):
        pass
    assert (home / "ledger.sqlite3.locks").stat().st_mode & 0o777 == 0o600


def test_a_write_kept_waiting_past_the_timeout_is_a_503_to_retry(home: Path) -> None:
    with live_server(home) as server:
        headers = {"Authorization": f"Bearer {server.key('researcher', ['maya'])}"}
        locks = server.state.facade.call(lambda memory: writer_locks(memory.settings))
        locks.timeout = SHORT  # the server's own locks: the same object in this process
        body = {"contents": ["Maya drinks oolong tea"], "user_id": "maya"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
            with locks.hold("maya"):  # another writer of maya, in this thread
                busy = http.post("/memories", json=body)
            assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
            assert busy.json()["error"]["code"] == "busy"
            assert http.post("/memories", json=body).is_success
