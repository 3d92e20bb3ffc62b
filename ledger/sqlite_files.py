"""Opening a SQLite file that other processes may be opening at the same moment.

Two server workers starting on a fresh home both switch each new file to WAL. The switch
takes an exclusive lock, and SQLite answers "database is locked" at once, without waiting
for its busy timeout, to the one of two processes that would otherwise deadlock. The
switch is therefore retried until the file is in the wanted mode or the timeout passes.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Protocol

BUSY_TIMEOUT_SECONDS = 30.0
"""How long any statement waits for another process's lock before failing."""


class _Executes(Protocol):
    def execute(self, sql: str, /) -> Any: ...


def switch_journal_mode(db: _Executes, mode: str = "WAL") -> None:
    """Put the connection's file in `mode`, waiting out other processes doing the same."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    pause = 0.005
    while True:
        try:
            db.execute(f"PRAGMA journal_mode={mode}")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def connect_shared(
    path: Path | str, *, journal_mode: str = "WAL", page_size: int | None = None
) -> sqlite3.Connection:
    """An autocommit connection, usable from any thread, to a file several processes share.

    `page_size` applies only to a file created here (it must precede the journal switch)."""
    db = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
    )
    if page_size is not None:
        db.execute(f"PRAGMA page_size = {int(page_size)}")
    switch_journal_mode(db, journal_mode)
    return db
