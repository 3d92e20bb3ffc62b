"""Shared fixtures: every test gets its own data directory and the fast hashing embedder.

The suite runs on SQLite by default. With `--db postgresql://USER@HOST:PORT/DBNAME` (or
`$MNEMOLEDGER_TEST_DB`) every test gets a fresh PostgreSQL schema for its event log,
named in `$MNEMOLEDGER_DB` (so ledgers, CLI runs and child processes all use it) and
dropped afterwards. Tests about the SQLite file itself are marked `sqlite_only` and run
in the SQLite run only.
"""

from __future__ import annotations

import os
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--db",
        default=os.environ.get(TEST_DB) or None,
        help=f"run the suite on this PostgreSQL database (default: ${TEST_DB}, else SQLite)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: about the SQLite file itself; runs in the SQLite run only"
    )
    url = config.getoption("--db")
    if url and not is_postgres(url):
        raise pytest.UsageError(f"--db must be a postgresql:// URL; got {url!r}")


def pytest_report_header(config: pytest.Config) -> str:
    url = config.getoption("--db")
    return f"event store: {'PostgreSQL ' + url if url else 'SQLite'}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--db"):
        return
    kept = [item for item in items if item.get_closest_marker("sqlite_only") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
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
