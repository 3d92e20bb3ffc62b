"""Shared fixtures: every test gets its own data directory and the fast hashing embedder.

The suite runs on SQLite by default. With `--db postgresql://USER@HOST:PORT/DBNAME` (or
`$MNEMOLEDGER_TEST_DB`) every test gets a fresh PostgreSQL schema for its event log,
named in `$MNEMOLEDGER_DB` (so ledgers, CLI runs and child processes all use it) and
dropped afterwards. Tests about the SQLite file itself are marked `sqlite_only` and run
in the SQLite run only.

Tests marked `slow` are left out of the default run, so that the README's `pytest` stays
within 5 minutes on a 2-core machine. Each is the full-size variant of a test the default
run keeps at a smaller size (fewer crashes, writers' adds, labelled pairs or cases, days),
so every behaviour is still tested there. `pytest --run-slow` runs everything; `pytest -m
slow` runs only them. CI (`.ci/run`) runs both tiers.

Temporary directories (every `tmp_path`, and `tempfile` in the tests and in the processes
they start) go to `/dev/shm` when it is a memory-backed file system with room and `TMPDIR`
is not set: the suite creates some twenty thousand SQLite files, and on a disk the fsyncs
of their creation and WAL switch are most of its time. Nothing the tests assert depends on
the medium (a process killed mid-write leaves the same files on either); durability across
a power loss is not something a test run can show. A passed test's directory is removed
when it ends (`tmp_path_retention_policy = "failed"`), so the run needs little room.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from mnemoledger.ledger.pg_connection import connect
from mnemoledger.ledger.store import is_postgres

TEST_DB = "MNEMOLEDGER_TEST_DB"
MEMORY_TEMP = Path("/dev/shm")
MEMORY_TEMP_ROOM_BYTES = 2 * 1024**3
"""Free room `/dev/shm` must have to take the suite's temporary files (a container's
default 64 MB is too small; then the disk's temp dir is used)."""


def _is_tmpfs(path: Path) -> bool:
    """Whether `path` is the mount point of a tmpfs (Linux's /proc/mounts says so)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(
        fields[1] == str(path) and fields[2] == "tmpfs"
        for fields in (line.split() for line in mounts)
        if len(fields) > 2
    )


def _use_memory_backed_temp() -> None:
    """Point `tempfile` (and, through `TMPDIR`, child processes) at `/dev/shm` when it is a
    writable memory file system with room, unless the user chose a temp dir."""
    if os.environ.get("TMPDIR") or not _is_tmpfs(MEMORY_TEMP):
        return
    if not os.access(MEMORY_TEMP, os.W_OK):
        return
    try:
        if shutil.disk_usage(MEMORY_TEMP).free < MEMORY_TEMP_ROOM_BYTES:
            return
    except OSError:
        return
    os.environ["TMPDIR"] = str(MEMORY_TEMP)
    tempfile.tempdir = str(MEMORY_TEMP)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--db",
        default=os.environ.get(TEST_DB) or None,
        help=f"run the suite on this PostgreSQL database (default: ${TEST_DB}, else SQLite)",
    )
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (left out by default; -m slow runs only them)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _use_memory_backed_temp()
    config.addinivalue_line(
        "markers", "sqlite_only: about the SQLite file itself; runs in the SQLite run only"
    )
    config.addinivalue_line(
        "markers", "slow: left out of the default run; --run-slow or -m slow runs it (CI does)"
    )
    url = config.getoption("--db")
    if url and not is_postgres(url):
        raise pytest.UsageError(f"--db must be a postgresql:// URL; got {url!r}")


def pytest_report_header(config: pytest.Config) -> list[str]:
    url = config.getoption("--db")
    slow = "run" if _runs_slow(config) else "left out (--run-slow runs them)"
    return [f"event store: {'PostgreSQL ' + url if url else 'SQLite'}", f"slow tests: {slow}"]


def _runs_slow(config: pytest.Config) -> bool:
    """--run-slow, or a -m expression that names the marker (`-m slow`)."""
    return bool(config.getoption("--run-slow")) or "slow" in (config.getoption("markexpr") or "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def left_out(item: pytest.Item) -> bool:
        if config.getoption("--db") and item.get_closest_marker("sqlite_only") is not None:
            return True
        return not _runs_slow(config) and item.get_closest_marker("slow") is not None

    kept = [item for item in items if not left_out(item)]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if left_out(i)])
        items[:] = kept


def admin_connection(url: str) -> psycopg.Connection[Any]:
    return connect(url)


@pytest.fixture
def postgres_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A fresh schema's URL in PostgreSQL runs (dropped after the test), else None."""
    url: str | None = request.config.getoption("--db")
    if not url:
        yield None
        return
    schema = f"test_{uuid.uuid4().hex[:16]}"
    with admin_connection(url) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    base = url.split("?", 1)[0]
    try:
        yield f"{base}?schema={schema}"
    finally:
        with admin_connection(url) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, postgres_url: str | None
) -> None:
    monkeypatch.setenv("MNEMOLEDGER_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "hashing")
    monkeypatch.setenv("MNEMOLEDGER_ACTOR", "tester")
    if postgres_url:
        monkeypatch.setenv("MNEMOLEDGER_DB", postgres_url)
    else:
        monkeypatch.delenv("MNEMOLEDGER_DB", raising=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        yield m
