"""A batched append: positions, nonces, the chain and the collector, as a batch writes them."""

from __future__ import annotations

import base64
import gc
import sqlite3
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from uuid import RFC_4122, uuid4

import orjson
import pytest
from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder, StoredEvent

from mnemoledger.ledger import InvalidInput, Ledger, Memory, NewMemory, Provenance, Settings
from mnemoledger.ledger.encryption import ENVELOPE_FIELD, NONCE_BYTES
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.sqlite_recorder import LOG_CACHE_KIB, LOG_WAL_AUTOCHECKPOINT_PAGES
from mnemoledger.ledger.store import sqlite_file
from mnemoledger.ledger.transcoding import OrjsonTranscoder, PlainJSON
from mnemoledger.ledger.validation import normalize_text


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", db=None)


@pytest.fixture
def ledger(settings: Settings) -> Iterator[Ledger]:
    with Ledger(settings) as app:
        yield app


def who(user: str = "u1") -> Provenance:
    return Provenance(user_id=user, actor="tester")


def rowids(settings: Settings) -> dict[tuple[str, int], int]:
    """(stream hex, version) -> rowid, read from the log file itself."""
    with sqlite3.connect(sqlite_file(settings)) as db:
        rows = db.execute("SELECT rowid, originator_id, originator_version FROM stored_events")
        return {(oid, version): rowid for rowid, oid, version in rows}


def test_a_batch_is_told_the_positions_its_rows_got(ledger: Ledger, settings: Settings) -> None:
    ledger.add(who(), [NewMemory("before")])
    memories = ledger.draft(who(), [NewMemory(f"fact {n}") for n in range(50)])
    recordings = ledger.save(*memories)
    stored = rowids(settings)
    assert [r.notification.id for r in recordings] == [stored[(m.id.hex, 1)] for m in memories], (
        "each recording names its own row"
    )
    assert [r.notification.id for r in recordings] == list(range(2, 52))


def test_positions_are_looked_up_when_sqlite_picks_rowids_at_random(
    ledger: Ledger, settings: Settings
) -> None:
    """Once the table holds the largest rowid, SQLite gives new rows random ones (the
    recorder alone: a log holding that rowid is one the witness would not seal)."""
    with sqlite3.connect(sqlite_file(settings)) as db:
        db.execute(
            "INSERT INTO stored_events (rowid, originator_id, originator_version, topic, state) "
            "VALUES (?, ?, 1, 'x', x'7b7d')",
            (2**63 - 1, "f" * 32),
        )
    streams = [uuid4() for _ in range(20)]
    rows = [StoredEvent(stream, 1, "x", b"{}") for stream in streams]
    positions = list(ledger.recorder.insert_events(rows) or ())
    stored = rowids(settings)
    assert positions == [stored[(stream.hex, 1)] for stream in streams]
    assert positions != list(range(positions[0], positions[0] + 20)), "not consecutive"


def test_every_event_of_a_batch_has_its_own_nonce_and_reads_back(
    ledger: Ledger, settings: Settings
) -> None:
    texts = [f"the user's fact number {n}" for n in range(200)]
    added = ledger.add(who(), [NewMemory(text, tags=["t"]) for text in texts])
    nonces = []
    with sqlite3.connect(sqlite_file(settings)) as db:
        for (state,) in db.execute("SELECT state FROM stored_events ORDER BY rowid"):
            document = orjson.loads(state)
            if ENVELOPE_FIELD in document:
                blob = base64.b64decode(document[ENVELOPE_FIELD]["c"])
                nonces.append(blob[:NONCE_BYTES])
                assert b"the user's fact" not in state
    assert len(nonces) == len(texts) and len(set(nonces)) == len(nonces)
    assert [ledger.memory(m.id).content for m in added] == texts
    read = [r.data["content"] for r in ledger.read(0, 1000) if r.type == "MemoryAdded"]
    assert read == texts


def test_batches_chain_and_seal_as_single_saves_do(ledger: Ledger) -> None:
    """Batches big enough for the automatic seal, then single adds, then a change."""
    for batch in range(3):
        ledger.add(who(f"u{batch}"), [NewMemory(f"{batch}: {n}") for n in range(700)])
    [single] = ledger.add(who(), [NewMemory("one more")])
    ledger.update(who(), single.id.hex, "one more, changed")
    report = ledger.verify()
    assert report.ok, report.problems
    assert report.sealed_through >= 1000


def test_the_collector_is_back_as_it_was_after_an_add(ledger: Ledger) -> None:
    assert gc.isenabled()
    ledger.add(who(), [NewMemory(f"fact {n}") for n in range(10)])
    assert gc.isenabled()
    gc.disable()
    try:
        ledger.add(who(), [NewMemory("another")])
        assert not gc.isenabled(), "a collector someone turned off stays off"
    finally:
        gc.enable()
    with pytest.raises(ValueError):
        ledger.add(who(), [NewMemory("")])
    assert gc.isenabled(), "a refused add turns it back on too"


FIELDS = [
    *("user_id", "content", "kind", "tags", "source", "namespace", "importance", "key"),
    *("note_kind", "stability", "sensitivity", "confidence", "evidence", "metadata"),
    "category",
]
PER_MEMORY = {"_id", "_created_on", "_modified_on", "_pending_events"}
PER_EVENT = {"originator_id", "timestamp"}


def test_drafted_memories_are_what_the_aggregate_makes(ledger: Ledger) -> None:
    """The copies a batch makes of its first memory and event hold what the library's
    `Memory(...)` makes of the same fields, with containers of their own."""
    items = [
        NewMemory("first", tags=["a"]),
        NewMemory("second", tags=["b", "c"], metadata={"n": 1}, evidence=["turn-1"]),
        NewMemory("third", kind="episodic", importance=0.9, key="person/sam", confidence=0.7),
        NewMemory("fourth", note_kind="rule", sensitivity="sensitive", category="work"),
    ]
    provenance = who()
    drafted = ledger.draft(provenance, items)
    assert len({m.id for m in drafted}) == len(drafted)
    assert all(m.id.version == 4 and m.id.variant == RFC_4122 for m in drafted)
    for memory in drafted:
        with acting_as(provenance):
            made = Memory(**{name: getattr(memory, name) for name in FIELDS})
        mine = {k: v for k, v in vars(memory).items() if k not in PER_MEMORY}
        theirs = {k: v for k, v in vars(made).items() if k not in PER_MEMORY}
        assert mine == theirs
        [event], [made_event] = memory.pending_events, made.pending_events
        assert type(event) is type(made_event)
        assert {k: v for k, v in vars(event).items() if k not in PER_EVENT} == {
            k: v for k, v in vars(made_event).items() if k not in PER_EVENT
        }
        assert event.originator_id == memory.id and event.timestamp == memory.created_on
        assert memory.modified_on == memory.created_on and memory.version == 1
    assert drafted[1].links is not drafted[2].links and drafted[1].facts is not drafted[2].facts
    drafted[1].links["x"] = {"type": "related", "strength": 1.0}
    assert drafted[2].links == {} and drafted[0].links == {}


def test_items_sharing_their_settings_are_still_checked_one_by_one(ledger: Ledger) -> None:
    """A batch checks each distinct combination of settings once: items that only look
    alike (True == 1 == 1.0) are each checked, and no two memories share a list."""
    first = NewMemory("a", importance=1.0, tags=("x",), evidence=("turn-1",))
    with pytest.raises(InvalidInput, match="importance"):
        ledger.draft(who(), [first, NewMemory("b", importance=True, tags=("x",))])
    with pytest.raises(InvalidInput, match="tag"):
        ledger.draft(who(), [first, NewMemory("c", tags=(["x"],))])  # type: ignore[arg-type]
    drafted = ledger.draft(
        who(),
        [first, NewMemory("d", importance=1, tags=("x",)), first, NewMemory("e", kind="episodic")],
    )
    assert [m.kind for m in drafted] == ["semantic", "semantic", "semantic", "episodic"]
    assert [m.importance for m in drafted][:3] == [1.0, 1.0, 1.0]
    assert all(type(m.importance) is float for m in drafted)
    assert drafted[0].tags == drafted[2].tags == ["x"] and drafted[0].tags is not drafted[2].tags
    assert drafted[0].evidence is not drafted[2].evidence
    drafted[0].tags.append("y")
    assert drafted[2].tags == ["x"]


def test_ascii_text_is_cleaned_as_isprintable_says() -> None:
    """The ASCII shortcut of `normalize_text` keeps and removes what the general rule does:
    every ASCII character alone, inside text, and at its ends."""
    for code in range(128):
        for text in (chr(code), f"a{chr(code)}b", f" {chr(code)}x{chr(code)} "):
            general = text.replace("\n", "").replace("\t", "").isprintable()
            kept = [ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C"]
            expected = (text if general else "".join(kept)).strip()
            assert normalize_text(text) == expected, repr(text)


def test_an_envelope_is_written_as_the_library_writes_a_dict() -> None:
    fast, library = OrjsonTranscoder(), JSONTranscoder()
    for transcoder in (fast, library):
        transcoder.register(DatetimeAsISO())
    envelope = PlainJSON(k="3a5b", c="kHt37TIn+/==", f={"content": "s", "tags": "l"})
    state = {"timestamp": datetime.now(UTC), "user_id": "u", ENVELOPE_FIELD: envelope}
    assert (
        fast.encode(state)
        == library.encode(state)
        == library.encode({**state, ENVELOPE_FIELD: dict(envelope)})
    )
    assert fast.encode({"nested": [envelope]}) == library.encode({"nested": [envelope]})


def test_the_log_is_checkpointed_every_so_many_pages_and_cached(ledger: Ledger) -> None:
    ledger.add(who(), [NewMemory("a fact")])
    datastore = ledger.recorder.datastore  # type: ignore[attr-defined]
    for commit in (True, False):
        with datastore.transaction(commit=commit) as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint")
            assert cursor.fetchone()[0] == LOG_WAL_AUTOCHECKPOINT_PAGES
            cursor.execute("PRAGMA cache_size")
            assert cursor.fetchone()[0] == -LOG_CACHE_KIB
