"""Seed 001 §7 Section Details: "Recent: Non-Core memories modified in last N consolidation
epochs". Kept as an option (`epochs`, CLI `--epochs`) beside the default window of 12 hours,
which needs no cycle to have run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.ledger import InvalidInput, NewMemory, Provenance, Settings

USER = "ann"


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        yield m


def write(memory: MnemoLedger, text: str) -> str:
    [added] = memory.ledger.add(Provenance(user_id=USER, actor="tester"), [NewMemory(text)])
    return added.id.hex


def recent(memory: MnemoLedger, **options: int) -> list[str]:
    return [m.content for m in memory.resume(USER, **options).recent.memories]  # type: ignore[arg-type]


def test_s7_section_details_recent_by_consolidation_epochs(memory: MnemoLedger, home: Path) -> None:
    write(memory, "Ann plans the spring release")
    memory.consolidate(user=USER, now=datetime.now(UTC))  # epoch 1
    write(memory, "Ann chose the blue theme")
    memory.consolidate(user=USER, now=datetime.now(UTC))  # epoch 2
    write(memory, "Ann booked the venue")

    assert recent(memory, epochs=1) == ["Ann booked the venue"]
    assert recent(memory, epochs=2) == ["Ann booked the venue", "Ann chose the blue theme"]
    everything = [
        "Ann booked the venue",
        "Ann chose the blue theme",
        "Ann plans the spring release",
    ]
    assert recent(memory, epochs=3) == everything  # fewer epochs ran: every change counts
    assert recent(memory) == everything  # the default: the last 12 hours
    out = memory.resume(USER, epochs=2)
    assert out.recent.epochs == 2 and out.recent.since is not None
    assert "=== Recent (2 epochs) ===" in out.text
    assert "=== Recent (12h) ===" in memory.resume(USER).text
    with pytest.raises(InvalidInput, match="epochs"):
        memory.resume(USER, epochs=0)

    memory.close()
    runner = CliRunner()
    result = runner.invoke(
        cli, ["--home", str(home), "--json", "resume", "--user", USER, "--epochs", "1"]
    )
    assert result.exit_code == 0, result.stderr
    assert [m["content"] for m in json.loads(result.stdout)["recent"]["memories"]] == [
        "Ann booked the venue"
    ]
    refused = runner.invoke(cli, ["--home", str(home), "resume", "--user", USER, "--epochs", "0"])
    assert refused.exit_code == 2


def test_s7_section_details_recent_by_epochs_before_any_cycle(memory: MnemoLedger) -> None:
    write(memory, "Ann plans the spring release")
    assert recent(memory, epochs=1) == ["Ann plans the spring release"]
