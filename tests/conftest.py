"""Shared fixtures: every test gets its own data directory and the fast hashing embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from commands import MnemoLedger
from ledger import Settings


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MNEMOLEDGER_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "hashing")
    monkeypatch.setenv("MNEMOLEDGER_ACTOR", "tester")
    monkeypatch.delenv("MNEMOLEDGER_DB", raising=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        yield m
