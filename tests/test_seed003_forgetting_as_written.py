"""Seed 003 §7 and 004 §20 as they read, the option `forgetting="as_written"`: the idle rules
reach every layer and count days on the clock; the default (`engram`) keeps Working and Core
and counts cycles, so downtime costs nothing (tests/test_lifecycle.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import (
    PROVISIONAL_MIN_AGE_DAYS,
    SOFT_DELETE_IDLE_DAYS,
    SOFT_DELETE_MAX_IMPORTANCE,
)
from tests.test_consolidation_helpers import (
    USER,
    Clock,
    clock,
    ops,
    place,
    remember,
    set_importance,
)

__all__ = ["clock"]


def ledger(home: Path, clock: Clock, forgetting: str) -> MnemoLedger:
    settings = Settings(home=home, embedder="hashing", forgetting=forgetting)  # type: ignore[arg-type]
    memory = MnemoLedger(settings=settings, actor="tester")
    memory.clock = clock.now
    return memory


@pytest.fixture(params=["engram", "as_written"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def memory(home: Path, clock: Clock, mode: str) -> Iterator[MnemoLedger]:
    with ledger(home, clock, mode) as m:
        yield m


def test_s7_soft_delete_as_written_reaches_working_memories_after_60_days_on_the_clock(
    memory: MnemoLedger, clock: Clock, mode: str
) -> None:
    idle = remember(memory, "For now the team uses a shared calendar", importance=0.5)
    place(memory, idle, "working")
    memory.consolidate(user=USER)
    set_importance(memory, idle, SOFT_DELETE_MAX_IMPORTANCE / 2)
    clock.advance(days=SOFT_DELETE_IDLE_DAYS + 1)  # downtime: one cycle later, 61 days on
    lapsed = [o["memory"] for o in ops(memory.consolidate(user=USER), "lapse")]
    if mode == "as_written":
        assert lapsed == [idle] and memory.get(idle).state == "forgotten"
    else:  # Working is never deleted, and one cycle is not 60 days of cycles
        assert lapsed == [] and memory.get(idle).state == "active"
    recorded = [
        r for r in memory.parts.ledger.read(limit=10_000) if r.type == "ConsolidationRequested"
    ]
    assert recorded[-1].data["input"].get("forgetting") == (
        "as_written" if mode == "as_written" else None
    )


def test_s20_clean_provisional_as_written_counts_days_since_creation(
    memory: MnemoLedger, clock: Clock, mode: str
) -> None:
    guess = remember(memory, "Maya might be vegetarian", confidence=0.6, importance=0.5)
    memory.consolidate(user=USER)
    clock.advance(days=PROVISIONAL_MIN_AGE_DAYS + 1)
    set_importance(memory, guess, 0.5)
    purged = [o["memory"] for o in ops(memory.consolidate(user=USER), "purge")]
    assert purged == ([guess] if mode == "as_written" else [])


def test_forgetting_mode_is_checked(home: Path) -> None:
    with pytest.raises(ValueError, match="forgetting"):
        Settings(home=home, forgetting="sometimes")  # type: ignore[arg-type]
    from mnemoledger.commands.lifecycle.consolidation.cycle import forgetting_mode

    with pytest.raises(InvalidInput, match="engram, as_written"):
        forgetting_mode("sometimes")
