"""A new home is its owner's alone (issue 16, item 2): the directory is created 0700, and the
log, the key files and the writer locks 0600, whatever the umask lets through (the usual
022 made them 0755 / 0644 before). The read models inside (plaintext of the users' memories)
are reachable only through the home. An existing directory's mode is the operator's and is
left as it is."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemoledger.commands.cli import cli
from tests.read_models import open_memory

SECRET_FILES = (
    "ledger.sqlite3",
    "keys.sqlite3",
    "chain.sqlite3",
    "api_keys.sqlite3",
    "ledger.sqlite3.locks",
)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def run(*args: str) -> None:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.stderr


def test_a_new_home_and_its_secret_files_are_private(tmp_path: Path) -> None:
    home = tmp_path / "deployments" / "home"
    run("--home", str(home), "add", "Maya's door code is 4921", "--user", "maya")
    run("--home", str(home), "keys", "create", "--agent", "researcher", "--user", "maya")
    assert mode(home) == 0o700
    assert mode(home.parent) == 0o755, "parents are shared directories: the umask decides"
    present = [home / name for name in SECRET_FILES if (home / name).exists()]
    assert {p.name: mode(p) for p in present} == {p.name: 0o600 for p in present}
    assert home / "keys.sqlite3" in present or os.environ.get("MNEMOLEDGER_DB")


@pytest.mark.sqlite_only
def test_the_sqlite_log_and_its_journal_are_private_while_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with open_memory(home) as memory:
        memory.add(["Maya's door code is 4921"], user="maya")
        journal = [home / f"ledger.sqlite3{tail}" for tail in ("", "-wal", "-shm")]
        assert [mode(p) for p in journal if p.exists()] == [0o600] * 3
        assert mode(home / "keys.sqlite3") == 0o600
        chain = [home / f"chain.sqlite3{tail}" for tail in ("", "-wal", "-shm")]
        assert [mode(p) for p in chain if p.exists()] == [0o600] * 3


def test_an_existing_home_keeps_the_mode_its_operator_gave_it(tmp_path: Path) -> None:
    home = tmp_path / "shared-home"
    home.mkdir(mode=0o750)
    with open_memory(home) as memory:
        memory.add(["Maya likes tea"], user="maya")
    assert mode(home) == 0o750
