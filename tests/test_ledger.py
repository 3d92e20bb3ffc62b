"""The write model: events, provenance metadata, validation, nothing written on refusal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemoledger.ledger import (
    InvalidInput,
    InvalidTransition,
    Ledger,
    MemoryNotFound,
    NewMemory,
    Provenance,
    Settings,
)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(Settings(home=tmp_path)) as app:
        yield app


def alice(user: str = "u1") -> Provenance:
    return Provenance(user_id=user, actor="alice", agent_id="agent-7", thread_id="t-1")


def test_every_event_carries_provenance_and_utc_time(ledger: Ledger) -> None:
    [memory] = ledger.add(alice(), [NewMemory("Maya lives in Porto", tags=["home"])])
    ledger.update(Provenance(actor="bob"), memory.id.hex, "Maya lives in Lisbon")
    ledger.set_ttl(Provenance(actor="bob"), memory.id.hex, 2)
    ledger.reinforce(Provenance(actor="carol"), memory.id.hex)
    ledger.forget(Provenance(actor="bob"), memory.id.hex)
    ledger.restore(Provenance(actor="bob"), memory.id.hex)
    events = ledger.stream(memory.id)
    assert [e.type for e in events] == [
        "MemoryAdded",
        "MemoryUpdated",
        "TTLSet",
        "MemoryReinforced",
        "MemorySoftDeleted",
        "MemoryRestored",
    ]
    assert [e.actor for e in events] == ["alice", "bob", "bob", "carol", "bob", "bob"]
    assert all(e.user_id == "u1" for e in events), "later events inherit the memory's user"
    assert events[0].agent_id == "agent-7" and events[0].thread_id == "t-1"
    assert all(
        e.at.utcoffset() is not None and e.at.utcoffset().total_seconds() == 0 for e in events
    )
    assert len({e.causation_id for e in events}) == len(events)
    current = ledger.memory(memory.id.hex)
    assert current.content == "Maya lives in Lisbon"
    assert current.repetition_count == 1 and current.state == "active"


def test_one_add_of_many_contents_is_one_transaction(ledger: Ledger) -> None:
    memories = ledger.add(alice(), [NewMemory("a fact"), NewMemory("another fact")])
    records = ledger.read(0, 10)
    assert [r.type for r in records] == ["MemoryAdded", "MemoryAdded"]
    assert len({r.causation_id for r in records}) == 1
    assert [r.stream_id for r in records] == [m.id.hex for m in memories]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (NewMemory(""), "content is empty"),
        (NewMemory("   \n\t "), "content is empty"),
        (NewMemory("x" * 8193), "limit is 8192"),
        (NewMemory("ok", tags=[f"t{i}" for i in range(21)]), "limit is 20"),
        (NewMemory("ok", tags=["x" * 33]), "longer than 32"),
        (NewMemory("ok", source="s" * 65), "longer than 64"),
        (NewMemory("ok", kind="dream"), "kind must be one of"),
        (NewMemory("ok", importance=1.5), "between 0 and 1"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(
    ledger: Ledger, item: NewMemory, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        ledger.add(alice(), [NewMemory("valid"), item])
    assert ledger.last_position() == 0


def test_limits_are_inclusive(ledger: Ledger) -> None:
    tags = [f"t{i:02d}" + "x" * 28 for i in range(20)]
    [memory] = ledger.add(alice(), [NewMemory("x" * 8192, tags=tags, source="s" * 64)])
    assert len(memory.content) == 8192 and len(memory.tags) == 20


def test_unknown_ids_and_invalid_transitions(ledger: Ledger) -> None:
    with pytest.raises(MemoryNotFound):
        ledger.memory("not-a-uuid")
    with pytest.raises(MemoryNotFound):
        ledger.update(alice(), "0" * 32, "text")
    [memory] = ledger.add(alice(), [NewMemory("fact")])
    with pytest.raises(InvalidTransition):
        ledger.restore(alice(), memory.id.hex)
    ledger.forget(alice(), memory.id.hex)
    with pytest.raises(InvalidTransition):
        ledger.forget(alice(), memory.id.hex)
    assert ledger.last_position() == 2


def test_links_stay_within_one_user(ledger: Ledger) -> None:
    [a] = ledger.add(alice("u1"), [NewMemory("one")])
    [b] = ledger.add(alice("u2"), [NewMemory("two")])
    with pytest.raises(InvalidInput, match="different users"):
        ledger.link(alice(), a.id.hex, b.id.hex)
    with pytest.raises(InvalidInput, match="itself"):
        ledger.link(alice(), a.id.hex, a.id.hex)


def test_log_survives_restart(tmp_path: Path) -> None:
    with Ledger(Settings(home=tmp_path)) as first:
        [memory] = first.add(alice(), [NewMemory("durable")])
    with Ledger(Settings(home=tmp_path)) as second:
        assert second.memory(memory.id.hex).content == "durable"
        assert second.last_position() == 1
