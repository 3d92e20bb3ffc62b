"""The write model: events, provenance metadata, validation, nothing written on refusal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
from eventsourcing.utils import get_topic

from mnemoledger.ledger import (
    InvalidInput,
    InvalidTransition,
    Ledger,
    Memory,
    MemoryNotFound,
    NewMemory,
    Provenance,
    Settings,
)
from mnemoledger.ledger.provenance import acting_as


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


def test_reading_the_log_gives_what_the_library_decodes(ledger: Ledger) -> None:
    """`read` decodes stored rows itself (the rebuild's path); every record holds what the
    library's mapper makes of the same row, whichever form the stream id is stored in."""
    [first, second] = ledger.add(
        alice(),
        [
            NewMemory("Maya lives in Porto", tags=["home", "city"], metadata={"a": 1, "b": "x"}),
            NewMemory("Maya has a dog", evidence=["she said so"], confidence=0.5),
        ],
    )
    ledger.update(Provenance(actor="bob"), first.id.hex, "Maya lives in Lisbon", tags=["home"])
    ledger.forget(Provenance(actor="bob"), second.id.hex)
    document = ledger.core_document(alice(), "u1")
    document.update("## USER\n- dog", {"USER": ["dog"]}, [second.id.hex], {"dog": [second.id.hex]})
    ledger.save(document)
    records = ledger.read(0, 100)
    stored = ledger.recorder.select_notifications(0, 100)
    assert len(records) == len(stored) == 6
    forms = [
        [(n.id, form(n.originator_id), n.originator_version, n.topic, n.state) for n in stored]
        for form in (str, lambda oid: UUID(str(oid)), lambda oid: str(UUID(str(oid))))
    ]
    for rows in forms:
        assert ledger._decoder.decode_rows(rows) == records
    for record, notification in zip(records, stored, strict=True):
        event = vars(ledger.mapper.to_domain_event(notification)).copy()
        assert record.stream_id == event.pop("originator_id").hex
        assert record.version == event.pop("originator_version")
        assert record.at == event.pop("timestamp")
        assert record.type == type(ledger.mapper.to_domain_event(notification)).__name__
        for name in ("user_id", "actor", "agent_id", "thread_id", "causation_id"):
            assert getattr(record, name) == (event.pop(name) or getattr(record, name))
        event.pop("prompt_version")
        event.pop("originator_topic", None)
        assert record.data == event
    assert records[0].data["metadata"] == {"a": 1, "b": "x"}
    assert records[0].data["tags"] == ["home", "city"]


def test_a_batch_drafts_the_events_and_memories_the_library_would_construct(
    ledger: Ledger,
) -> None:
    items = [
        NewMemory("one", tags=["a"]),
        NewMemory("two", kind="episodic", metadata={"k": 1}),
        NewMemory("three", evidence=["e"], confidence=0.9, category="work", key="p/q"),
        NewMemory("four", said_at="2024-05-01T11:00:00+02:00"),  # an import: said then
    ]
    provenance = alice()
    memories = ledger.draft(provenance, items)
    events = [m.pending_events[0] for m in memories]
    added = Memory.MemoryAdded  # type: ignore[attr-defined]
    for memory, event, item in zip(memories, events, items, strict=True):
        with acting_as(provenance):
            constructed = added(
                originator_topic=get_topic(Memory),
                originator_id=event.originator_id,
                originator_version=1,
                timestamp=event.timestamp,
                user_id="u1",
                content=item.content,
                kind=item.kind,
                tags=list(item.tags),
                source=item.source,
                namespace=item.namespace,
                importance=item.importance,
                key=item.key,
                note_kind=None,
                stability=item.stability,
                sensitivity=item.sensitivity,
                confidence=item.confidence,
                evidence=None if item.evidence is None else list(item.evidence),
                metadata=None if item.metadata is None else dict(item.metadata),
                category=item.category,
                said_at=None if item.said_at is None else "2024-05-01T09:00:00+00:00",
            )
        assert type(event) is added and list(vars(event).items()) == list(vars(constructed).items())
        folded = constructed.mutate(None)
        assert {k: v for k, v in vars(memory).items() if k != "_pending_events"} == {
            k: v for k, v in vars(folded).items() if k != "_pending_events"
        }
        assert memory.pending_events == [event]
    assert len({id(m.links) for m in memories}) == len({id(m.facts) for m in memories}) == 4
    assert len({e.originator_id for e in events}) == 4
    ledger.save(*memories)
    assert [ledger.memory(m.id).content for m in memories] == ["one", "two", "three", "four"]
    assert [ledger.memory(m.id).said_at for m in memories] == [None] * 3 + [
        "2024-05-01T09:00:00+00:00"
    ]
