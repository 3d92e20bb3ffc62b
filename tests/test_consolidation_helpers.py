"""Shared set-up of the consolidation tests: an injected clock (event timestamps and the
cycle's `now`), direct memory writes, and readers of the log."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import NewMemory, Settings
from mnemoledger.ledger.epoch import EngramClock
from mnemoledger.ledger.event import LedgerEvent
from mnemoledger.ledger.policy import IMPORTANCE_DECAY
from mnemoledger.ledger.provenance import Provenance, acting_as
from mnemoledger.ledger.recall import Recall
from mnemoledger.ledger.records import EventRecord

START = datetime(2031, 1, 6, 9, 0, tzinfo=UTC)
USER = "maya"


@dataclass
class Clock:
    """What time it is for the ledger (event timestamps) and for the cycles."""

    current: datetime

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> None:
        self.current += timedelta(**delta)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock(START)
    monkeypatch.setattr(LedgerEvent, "create_timestamp", staticmethod(clock.now))
    return clock


@pytest.fixture
def engram(home: Any, clock: Clock) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        m.clock = clock.now
        yield m


def remember(memory: MnemoLedger, content: str, user: str = USER, **fields: Any) -> str:
    """One memory written straight to the ledger (no add pipeline): its id."""
    [added] = memory.ledger.add(Provenance(user_id=user), [NewMemory(content=content, **fields)])
    return added.id.hex


def remember_many(memory: MnemoLedger, items: Sequence[NewMemory], user: str = USER) -> list[str]:
    return [m.id.hex for m in memory.ledger.add(Provenance(user_id=user), list(items))]


def place(memory: MnemoLedger, memory_id: str, layer: str) -> None:
    """Move a memory up to `layer` one step at a time, as the cycle would."""
    aggregate = memory.ledger.memory(memory_id)
    with acting_as(Provenance(user_id=aggregate.user_id)):
        while aggregate.layer != layer:
            target = {"buffer": "working", "working": "core"}[aggregate.layer]
            aggregate.promote(target, "gate" if target == "core" else "triage", 0)
    memory.ledger.save(aggregate)


def set_ttl(memory: MnemoLedger, memory_id: str, days: float, clock: Clock) -> None:
    """A TTL of `days` from the injected clock's now (the ledger's verb reads the OS clock)."""
    aggregate = memory.ledger.memory(memory_id)
    with acting_as(Provenance(user_id=aggregate.user_id)):
        aggregate.set_ttl(days, (clock.now() + timedelta(days=days)).isoformat())
    memory.ledger.save(aggregate)


def skip_epochs(memory: MnemoLedger, count: int, clock: Clock, user: str = USER) -> None:
    """`count` epochs in which nothing but decay happened (recorded as the cycle would),
    to reach far epochs without running every cycle's rules."""
    aggregate = memory.ledger.repository.get(EngramClock.create_id(user))
    with acting_as(Provenance(user_id=user)):
        for _ in range(count):
            aggregate.complete_epoch(
                epoch=aggregate.epoch + 1,
                command_id="skipped",
                now=clock.now().isoformat(),
                decay=IMPORTANCE_DECAY,
                operations=0,
                pairs=[],
            )
    memory.ledger.save(aggregate)


def set_importance(memory: MnemoLedger, memory_id: str, importance: float) -> None:
    """Set a memory's importance as the audit's `adjust` does (`ImportanceAdjusted`: its
    decay starts again from there). Skipped epochs run no rule, so a Buffer memory their
    decay took to 0 is still active: this sets the importance the next cycle judges it at
    (a real run of cycles evicts any Buffer memory by decay within a few hundred epochs)."""
    aggregate = memory.ledger.memory(memory_id)
    epoch: int = memory.ledger.repository.get(EngramClock.create_id(aggregate.user_id)).epoch
    with acting_as(Provenance(user_id=aggregate.user_id)):
        aggregate.adjust_importance(importance, "audit", epoch)
    memory.ledger.save(aggregate)


def reinforce(memory: MnemoLedger, memory_id: str, times: int) -> None:
    for _ in range(times):
        memory.ledger.reinforce(Provenance(user_id=USER), memory_id)


def serve(memory: MnemoLedger, memory_ids: list[str], times: int = 1, user: str = USER) -> None:
    """Record `times` answered queries that returned `memory_ids` (access counts)."""
    with acting_as(Provenance(user_id=user)):
        recalls = [
            Recall(query="q", categories=[], memory_ids=memory_ids, return_mode="bullets", top_k=3)
            for _ in range(times)
        ]
    memory.ledger.save(*recalls)


def events(memory: MnemoLedger, event_type: str, after: int = 0) -> list[EventRecord]:
    return [r for r in memory.ledger.read(after, 1_000_000) if r.type == event_type]


def of_memory(memory: MnemoLedger, memory_id: str) -> list[str]:
    """The event types of one memory's stream."""
    return [r.type for r in memory.ledger.stream(memory_id)]


def ops(result: Any, op: str) -> list[dict[str, Any]]:
    return [o for o in result.operations if o["op"] == op]
