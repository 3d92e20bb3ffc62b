"""The vectors read model, fed by the real runner from a real ledger."""

from __future__ import annotations

import json
import logging
import shutil
import uuid
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mnemoledger.ledger import EventRecord, Ledger, NewMemory, Provenance, Settings
from mnemoledger.projections.embeddings import HashingEmbedder
from mnemoledger.projections.embeddings.embedder import Embedder, Vectors
from mnemoledger.projections.runner import Runner
from mnemoledger.projections.vectors import (
    VectorsProjection,
    chunk_texts,
    faiss_id,
    index_file_name,
)

U1 = Provenance(user_id="u1", actor="test")
U2 = Provenance(user_id="u2", actor="test")

FACTS = [
    "Maya moved to Lisbon in May",
    "Maya is allergic to peanuts",
    "Maya runs a marathon every autumn",
    "Maya's dog is called Rex",
    "Maya prefers green tea to coffee",
]


class CountingEmbedder:
    """The hashing embedder, recording each batch it is asked for."""

    def __init__(self, dimensions: int = 128) -> None:
        self.inner = HashingEmbedder(dimensions)
        self.model = self.inner.model
        self.dimensions = dimensions
        self.batches: list[list[str]] = []

    def passages(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(list(texts))
        return self.inner.passages(texts)

    def query(self, text: str) -> Vectors:
        return self.inner.query(text)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    app = Ledger(Settings(home=tmp_path / "home"))
    yield app
    app.close()


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


class Setup:
    """A ledger, a vectors projection on `directory`, and a runner feeding it."""

    def __init__(self, ledger: Ledger, directory: Path, embedder: Embedder) -> None:
        self.ledger = ledger
        self.directory = directory
        self.embedder = embedder
        self.projections: list[VectorsProjection] = []
        self.vectors = self.open()

    def open(self, **options: Any) -> VectorsProjection:
        projection = VectorsProjection(self.directory, self.embedder, **options)
        self.projections.append(projection)
        return projection

    def catch_up(self, projection: VectorsProjection | None = None) -> int:
        runner = Runner(
            self.ledger, [projection or self.vectors], lock_path=self.directory / "lock"
        )
        return runner.catch_up()

    def search(self, query: str, user: str = "u1", k: int = 3) -> list[tuple[str, float]]:
        return self.vectors.search(user, self.embedder.query(query), k)

    def top(self, query: str, user: str = "u1") -> str | None:
        hits = self.search(query, user, 1)
        return hits[0][0] if hits else None

    def close(self) -> None:
        for projection in self.projections:
            projection.close()


@pytest.fixture
def setup(ledger: Ledger, tmp_path: Path, embedder: CountingEmbedder) -> Iterator[Setup]:
    s = Setup(ledger, tmp_path / "vectors", embedder)
    yield s
    s.close()


def add(ledger: Ledger, facts: Sequence[str], who: Provenance = U1) -> list[str]:
    return [m.id.hex for m in ledger.add(who, [NewMemory(fact) for fact in facts])]


def all_searches(s: Setup) -> list[list[tuple[str, float]]]:
    queries = ["Lisbon", "peanuts allergy", "marathon", "dog Rex", "tea", "Porto coffee"]
    return [s.search(q, user, k=4) for q in queries for user in ("u1", "u2")]


# --- search follows the log ------------------------------------------------------------


def test_search_finds_the_memory_that_matches(setup: Setup) -> None:
    ids = add(setup.ledger, FACTS)
    assert setup.catch_up() == len(FACTS)
    assert setup.vectors.position() == setup.ledger.last_position()
    assert setup.top("moved to Lisbon") == ids[0]
    assert setup.top("peanuts") == ids[1]
    assert setup.top("the dog Rex") == ids[3]
    hits = setup.search("green tea", k=5)
    assert hits[0][0] == ids[4]
    assert [score for _, score in hits] == sorted((score for _, score in hits), reverse=True)
    assert len(hits) == 5


def test_users_only_see_their_own_memories(setup: Setup) -> None:
    [mine] = add(setup.ledger, ["I drink green tea"], U1)
    [theirs] = add(setup.ledger, ["I drink green tea too"], U2)
    setup.catch_up()
    assert [i for i, _ in setup.search("green tea", "u1", 10)] == [mine]
    assert [i for i, _ in setup.search("green tea", "u2", 10)] == [theirs]
    assert setup.search("green tea", "nobody", 10) == []


def test_forget_hides_a_memory_and_restore_brings_it_back(setup: Setup) -> None:
    ids = add(setup.ledger, FACTS)
    setup.catch_up()
    setup.ledger.forget(U1, ids[1])
    setup.catch_up()
    assert ids[1] not in [i for i, _ in setup.search("peanuts", k=10)]
    assert setup.vectors.vector(ids[1]) is not None  # kept, only hidden
    assert setup.vectors.count("u1") == 4 and setup.vectors.count("u1", active=False) == 1
    setup.ledger.restore(U1, ids[1])
    setup.catch_up()
    assert setup.top("peanuts") == ids[1]


def test_update_replaces_the_vector(setup: Setup, embedder: CountingEmbedder) -> None:
    ids = add(setup.ledger, FACTS)
    setup.catch_up()
    before = setup.vectors.vector(ids[0])
    setup.ledger.update(U1, ids[0], "Maya moved back to Porto")
    setup.catch_up()
    after = setup.vectors.vector(ids[0])
    assert before is not None and after is not None and not np.array_equal(before, after)
    np.testing.assert_array_equal(after, embedder.inner.passages(["Maya moved back to Porto"])[0])
    assert setup.top("Porto") == ids[0]
    assert ids[0] not in [i for i, _ in setup.search("Lisbon", k=1)]


def test_one_batch_per_page_and_only_the_texts_that_are_needed(
    setup: Setup, embedder: CountingEmbedder
) -> None:
    [first, second] = add(setup.ledger, ["tea in Lisbon", "coffee in Porto"])
    setup.ledger.update(U1, first, "tea in Madrid")
    setup.ledger.forget(U1, second)
    add(setup.ledger, ["coffee in Porto"])  # same text as `second`: embedded once
    setup.catch_up()
    assert embedder.batches == [["tea in Madrid", "coffee in Porto"]]
    np.testing.assert_array_equal(
        setup.vectors.vector(first), embedder.inner.passages(["tea in Madrid"])[0]
    )
    assert second not in [i for i, _ in setup.search("coffee Porto", k=5)]


def test_events_it_does_not_handle_still_advance_the_position(setup: Setup) -> None:
    [memory] = add(setup.ledger, ["tea"])
    setup.catch_up()
    setup.ledger.reinforce(U1, memory)
    setup.ledger.set_ttl(U1, memory, 3)
    setup.catch_up()
    assert setup.vectors.position() == setup.ledger.last_position() == 3


def test_records_already_applied_are_skipped(setup: Setup, embedder: CountingEmbedder) -> None:
    add(setup.ledger, FACTS)
    setup.catch_up()
    setup.vectors.apply(setup.ledger.read(0))
    assert len(embedder.batches) == 1
    assert setup.vectors.count("u1") == len(FACTS)


# --- rebuilds, restarts and crashes ------------------------------------------------------


def scenario(s: Setup) -> None:
    """Adds, updates, forgets and restores over two users and several catch-ups."""
    ids = add(s.ledger, FACTS)
    add(s.ledger, ["Rex is Maya's dog", "tea and peanuts"], U2)
    s.catch_up()
    s.ledger.update(U1, ids[0], "Maya moved to Porto for the coffee")
    s.ledger.forget(U1, ids[1])
    s.ledger.forget(U1, ids[2])
    s.catch_up()
    s.ledger.restore(U1, ids[2])
    add(s.ledger, ["Maya's second dog is called Tea"])
    s.catch_up()


def test_reset_and_catch_up_give_identical_results(
    setup: Setup, embedder: CountingEmbedder
) -> None:
    scenario(setup)
    incremental = all_searches(setup)
    assert any(incremental)
    setup.vectors.reset()
    assert setup.vectors.position() == 0
    assert setup.vectors.count() == 0 and all_searches(setup) == [[] for _ in incremental]
    setup.catch_up()
    assert all_searches(setup) == incremental


def test_a_restart_gives_the_same_results_without_embedding_again(
    setup: Setup, embedder: CountingEmbedder
) -> None:
    scenario(setup)
    expected = all_searches(setup)
    setup.vectors.close()
    files = sorted(p.name for p in (setup.directory / "faiss").iterdir())
    assert files == sorted([index_file_name("u1"), index_file_name("u2")])
    batches = len(embedder.batches)
    setup.vectors = setup.open()
    assert setup.vectors.position() == setup.ledger.last_position()
    assert all_searches(setup) == expected
    assert len(embedder.batches) == batches


def saved_position(directory: Path, user: str) -> int:
    with (directory / "faiss" / index_file_name(user)).open("rb") as file:
        file.readline()
        header: dict[str, Any] = json.loads(file.readline())
    return int(header["position"])


def test_an_index_file_left_behind_by_a_crash_is_repaired_from_the_table(
    setup: Setup,
) -> None:
    ids = add(setup.ledger, FACTS)
    setup.catch_up()
    setup.vectors.flush()
    stale = setup.directory / "stale.faiss"
    shutil.copy(setup.directory / "faiss" / index_file_name("u1"), stale)
    setup.ledger.forget(U1, ids[1])
    setup.ledger.update(U1, ids[0], "Maya moved to Porto")
    [new] = add(setup.ledger, ["Maya bought a red bicycle"])
    setup.catch_up()
    expected = all_searches(setup)
    setup.vectors.close()
    # The crash: the SQLite transaction committed, the index file is an older one.
    shutil.copy(stale, setup.directory / "faiss" / index_file_name("u1"))
    assert saved_position(setup.directory, "u1") < setup.ledger.last_position()

    setup.vectors = setup.open()
    assert all_searches(setup) == expected
    assert setup.top("red bicycle") == new
    assert ids[1] not in [i for i, _ in setup.search("peanuts", k=10)]
    setup.vectors.close()
    assert saved_position(setup.directory, "u1") == setup.ledger.last_position()


def test_missing_or_damaged_index_files_are_rebuilt_from_the_table(
    setup: Setup, embedder: CountingEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    scenario(setup)
    expected = all_searches(setup)
    setup.vectors.close()
    (setup.directory / "faiss" / index_file_name("u1")).unlink()
    damaged = setup.directory / "faiss" / index_file_name("u2")
    damaged.write_bytes(damaged.read_bytes()[:-100])  # header intact, index cut short
    batches = len(embedder.batches)
    setup.vectors = setup.open()
    with caplog.at_level(logging.WARNING):
        assert all_searches(setup) == expected
    assert "unreadable vector index" in caplog.text
    assert len(embedder.batches) == batches


def test_indices_never_saved_before_a_crash_are_rebuilt(setup: Setup) -> None:
    crashed = setup.open(persist_interval=3600.0)
    add(setup.ledger, FACTS)
    setup.catch_up(crashed)
    # `crashed` is never closed or flushed: its indices exist only in its memory.
    assert not (setup.directory / "faiss").exists()
    expected = [crashed.search("u1", setup.embedder.query(q), 3) for q in ("tea", "dog")]
    survivor = setup.open()
    assert [survivor.search("u1", setup.embedder.query(q), 3) for q in ("tea", "dog")] == expected


def test_a_second_instance_sees_what_another_one_applied(setup: Setup) -> None:
    ids = add(setup.ledger, FACTS)
    setup.catch_up()
    reader = setup.open()
    assert reader.search("u1", setup.embedder.query("Lisbon"), 1)[0][0] == ids[0]
    writer = setup.open()
    setup.ledger.update(U1, ids[0], "Maya moved to Porto")
    setup.ledger.forget(U1, ids[3])
    [new] = add(setup.ledger, ["Maya adopted a cat"], U1)
    setup.catch_up(writer)
    query = setup.embedder.query
    assert reader.search("u1", query("Porto"), 1)[0][0] == ids[0]
    assert reader.search("u1", query("cat adopted"), 1)[0][0] == new
    assert ids[3] not in [i for i, _ in reader.search("u1", query("dog Rex"), 10)]
    writer.reset()  # another process drops the read model: the reader follows
    assert reader.search("u1", query("Porto"), 1) == []
    setup.catch_up(writer)
    assert reader.search("u1", query("Porto"), 1)[0][0] == ids[0]


def test_a_new_embedding_model_drops_the_old_vectors(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    add(setup.ledger, FACTS)
    setup.catch_up()
    setup.vectors.close()
    with caplog.at_level(logging.WARNING):
        other = VectorsProjection(setup.directory, HashingEmbedder(64))
    try:
        assert "dropping them" in caplog.text
        assert other.position() == 0 and other.count() == 0
        Runner(setup.ledger, [other], lock_path=setup.directory / "lock").catch_up()
        assert other.search("u1", HashingEmbedder(64).query("peanuts"), 1)
    finally:
        other.close()


# --- ties, ids and arguments -------------------------------------------------------------


def test_ties_are_ordered_by_memory_id_however_the_index_was_built(setup: Setup) -> None:
    ids = add(setup.ledger, ["green tea"] * 6 + ["black coffee"])
    setup.catch_up()
    setup.ledger.forget(U1, ids[0])
    setup.ledger.restore(U1, ids[0])  # re-added last to the index
    setup.catch_up()
    hits = setup.search("green tea", k=3)
    assert [i for i, _ in hits] == sorted(ids[:6])[:3]
    setup.vectors.reset()
    setup.catch_up()
    assert setup.search("green tea", k=3) == hits


def test_search_arguments(setup: Setup) -> None:
    add(setup.ledger, FACTS)
    setup.catch_up()
    assert setup.search("tea", k=0) == []
    assert len(setup.search("tea", k=50)) == len(FACTS)
    with pytest.raises(ValueError, match="dimensions"):
        setup.vectors.search("u1", np.ones(7, dtype=np.float32), 3)
    assert setup.vectors.vector(uuid.uuid4().hex) is None


def test_faiss_ids_are_stable_non_negative_63_bit_integers() -> None:
    memory_id = "ffffffffffffffffffffffffffffffff"
    assert faiss_id(memory_id) == 2**63 - 1
    assert faiss_id("00000000000000000000000000000000") == 0
    sample = uuid.uuid4().hex
    assert faiss_id(sample) == faiss_id(sample) == int(sample, 16) >> 65


def test_pages_of_records_straight_into_apply(tmp_path: Path) -> None:
    """Thousands of records straight into apply(), pages of 1000 like the runner."""
    embedder = HashingEmbedder(384)
    projection = VectorsProjection(tmp_path / "v", embedder)
    now = datetime.now(UTC)
    records = [
        EventRecord(
            i + 1,
            uuid.uuid4().hex,
            1,
            "MemoryAdded",
            now,
            f"user-{i % 7}",
            "t",
            None,
            None,
            "c",
            None,
            {"content": f"fact {i} about tea and dogs"},
        )
        for i in range(5000)
    ]
    try:
        for start in range(0, len(records), 1000):
            projection.apply(records[start : start + 1000])
        assert projection.position() == 5000
        assert projection.count() == 5000
        [(memory_id, score)] = projection.search("user-3", embedder.query("fact 10 about tea"), 1)
        assert memory_id == records[10].stream_id and score > 0.7
    finally:
        projection.close()


# --- the approximate index of large users ------------------------------------------------

TOPICS = ["tea", "dogs", "Lisbon", "chess", "jazz", "sailing", "billing", "running"]


def record(
    position: int, memory_id: str, kind: str, user: str, data: dict[str, Any]
) -> EventRecord:
    now = datetime.now(UTC)
    return EventRecord(position, memory_id, 1, kind, now, user, "t", None, None, "c", None, data)


def added(start: int, count: int, user: str = "big") -> list[EventRecord]:
    return [
        record(
            start + i,
            uuid.UUID(int=random_bits(start + i)).hex,
            "MemoryAdded",
            user,
            {"content": note_text(i)},
        )
        for i in range(count)
    ]


def note_text(i: int) -> str:
    return f"note {i}: {TOPICS[i % 8]} with {TOPICS[(i * 7) % 8]} on day {i % 97}"


def random_bits(seed: int) -> int:
    return int.from_bytes(np.random.default_rng(seed).bytes(16), "big")


def exact_top(projection: VectorsProjection, user: str, query: Any, k: int) -> list[str]:
    rows = projection._db.execute(
        "SELECT memory_id, vector FROM vectors WHERE user_id = ? AND active = 1", (user,)
    ).fetchall()
    matrix = np.stack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows])
    order = np.argsort(-(matrix @ query), kind="stable")[:k]
    return [rows[i][0] for i in order]


def test_a_large_user_gets_an_ivf_index_that_agrees_with_exact_search(tmp_path: Path) -> None:
    embedder = HashingEmbedder(64)
    projection = VectorsProjection(tmp_path / "v", embedder, exact_max_vectors=1000)
    records = added(1, 3000) + [
        record(3001 + i, uuid.uuid4().hex, "MemoryAdded", "small", {"content": f"tea {i}"})
        for i in range(20)
    ]
    try:
        for start in range(0, len(records), 500):
            projection.apply(records[start : start + 500])
        assert projection.index_kind("big") == "ivf"
        assert projection.index_kind("small") == "exact"
        assert projection.index_kind("nobody") is None
        queries = [note_text(i) for i in range(5000, 5060)]  # like the stored texts, not stored
        found = 0
        for text in queries:
            query = embedder.query(text)
            hits = [i for i, _ in projection.search("big", query, 10)]
            found += len(set(hits) & set(exact_top(projection, "big", query, 10)))
        assert found / (10 * len(queries)) >= 0.95

        # forgetting and superseding remove vectors from the IVF index in place
        gone = [records[5].stream_id, records[6].stream_id]
        projection.apply(
            [
                record(4000, gone[0], "MemorySoftDeleted", "big", {}),
                record(4001, gone[1], "MemorySuperseded", "big", {"superseded_by": "x"}),
            ]
        )
        for memory_id in gone:
            vector = projection.vector(memory_id)
            assert vector is not None
            assert memory_id not in [i for i, _ in projection.search("big", vector, 5)]
        assert projection.count("big") == 2998

        # saved and loaded as it is
        expected = [projection.search("big", embedder.query(q), 10) for q in queries]
        projection.close()
        projection = VectorsProjection(tmp_path / "v", embedder, exact_max_vectors=1000)
        assert projection.index_kind("big") == "ivf"
        assert [projection.search("big", embedder.query(q), 10) for q in queries] == expected
    finally:
        projection.close()


def test_an_ivf_index_is_retrained_as_it_grows_and_goes_exact_when_it_shrinks(
    tmp_path: Path,
) -> None:
    projection = VectorsProjection(tmp_path / "v", HashingEmbedder(32), exact_max_vectors=200)
    records = added(1, 1200)
    try:
        projection.apply(records[:250])
        assert projection.index_kind("big") == "ivf"
        first = lists(projection)
        projection.apply(records[250:])  # four times the training size: trained again
        assert lists(projection) >= 2 * first
        forgets = [
            record(2000 + i, r.stream_id, "MemorySoftDeleted", "big", {})
            for i, r in enumerate(records[:1101])
        ]
        projection.apply(forgets)  # 99 left, below half the threshold
        assert projection.index_kind("big") == "exact"
        assert projection.count("big") == 99
        survivor = records[1150]
        vector = projection.vector(survivor.stream_id)
        assert vector is not None
        assert projection.search("big", vector, 1)[0][0] == survivor.stream_id
    finally:
        projection.close()


def lists(projection: VectorsProjection) -> int:
    index = projection._indices["big"]
    assert index is not None
    return int(index.nlist)


# --- the bulk path of a rebuild ----------------------------------------------------------

CHANGES = ("MemoryUpdated", "MemorySoftDeleted", "MemoryRestored", "MemoryMerged")


def varied_log(count: int) -> list[EventRecord]:
    """Adds for three users; after every third add a change of an earlier memory (update,
    forget, restore, merge, supersession, expiry) or an event the model ignores."""
    records: list[EventRecord] = []
    memories: list[tuple[str, str]] = []
    for i in range(count):
        user = f"user-{i % 3}"
        memory_id = uuid.UUID(int=random_bits(i)).hex
        memories.append((memory_id, user))
        records.append(
            record(len(records) + 1, memory_id, "MemoryAdded", user, {"content": note_text(i)})
        )
        if i % 3 == 2:
            target, owner = memories[(i * 7) % len(memories)]
            kind = (*CHANGES, "MemorySuperseded", "MemoryExpired", "LinkAdded")[i % 7]
            data = {"content": note_text(i + 1000)} if kind in CHANGES[::3] else {}
            records.append(record(len(records) + 1, target, kind, owner, data))
    return records


def tables(projection: VectorsProjection) -> tuple[list[Any], int]:
    rows = projection._db.execute("SELECT * FROM vectors ORDER BY memory_id").fetchall()
    return rows, projection.position()


def searches(projection: VectorsProjection, embedder: Embedder) -> list[Any]:
    return [
        projection.search(f"user-{u}", embedder.query(topic), 5)
        for u in range(3)
        for topic in TOPICS
    ]


@pytest.mark.parametrize("held", [200_000, 40])
def test_a_bulk_load_writes_what_page_by_page_writes(tmp_path: Path, held: int) -> None:
    """Pages through `bulk()` (all rows held to the end, or written every 40 rows) give
    the table, position and searches that the same pages applied one by one give."""
    embedder = CountingEmbedder(64)
    log = varied_log(300)
    pages = [log[start : start + 25] for start in range(0, len(log), 25)]
    one_by_one = VectorsProjection(tmp_path / "a", embedder)
    bulk = VectorsProjection(tmp_path / "b", embedder, bulk_held_rows=held)
    try:
        for page in pages:
            one_by_one.apply(page)
        embedder.batches.clear()
        with bulk.bulk():
            for page in pages:
                bulk.apply(page)
            assert (bulk.position() == 0) == (held > len(log))  # held rows wait for the end
        if held > len(log):
            assert len(embedder.batches) == 1  # one pass over every text
        assert tables(bulk) == tables(one_by_one)
        assert any(searches(bulk, embedder))
        assert searches(bulk, embedder) == searches(one_by_one, embedder)
        bulk.close()
        reopened = VectorsProjection(tmp_path / "b", embedder)  # from its saved indices
        assert searches(reopened, embedder) == searches(one_by_one, embedder)
        reopened.close()
    finally:
        one_by_one.close()
        bulk.close()


def test_an_interrupted_bulk_load_leaves_the_table_where_the_next_catch_up_goes_on(
    tmp_path: Path,
) -> None:
    embedder = CountingEmbedder(64)
    log = varied_log(300)
    complete = VectorsProjection(tmp_path / "a", embedder)
    interrupted = VectorsProjection(tmp_path / "b", embedder, bulk_held_rows=60)
    try:
        complete.apply(log)
        with pytest.raises(KeyboardInterrupt), interrupted.bulk():
            for start in range(0, 250, 25):
                interrupted.apply(log[start : start + 25])
            raise KeyboardInterrupt
        reached = interrupted.position()
        assert 0 < reached < log[249].position  # type: ignore[operator]
        interrupted.finish_bulk()
        assert any(searches(interrupted, embedder))  # indices built from the table
        interrupted.apply([r for r in log if r.position > reached])  # type: ignore[operator]
        assert tables(interrupted) == tables(complete)
        assert searches(interrupted, embedder) == searches(complete, embedder)
    finally:
        complete.close()
        interrupted.close()


def test_a_bulk_load_of_a_read_model_that_is_not_empty_goes_page_by_page(tmp_path: Path) -> None:
    embedder = CountingEmbedder(64)
    log = varied_log(60)
    projection = VectorsProjection(tmp_path / "v", embedder)
    reference = VectorsProjection(tmp_path / "r", embedder)
    try:
        reference.apply(log)
        projection.apply(log[:30])
        with projection.bulk():
            projection.apply(log[30:])
            assert projection.position() == log[-1].position
        assert tables(projection) == tables(reference)
    finally:
        projection.close()
        reference.close()


class FailsOnce(VectorsProjection):
    """A vectors read model whose first bulk load fails as it ends (a full disk, say)."""

    failed = False

    def _end_bulk(self, load: Any) -> None:
        if not self.failed:
            self.failed = True
            raise OSError("disk full")
        super()._end_bulk(load)


def test_a_rebuild_ends_every_bulk_load_even_when_one_fails(
    ledger: Ledger, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    add(ledger, FACTS)
    add(ledger, ["Ana plays chess", "Ana lives in Porto"], U2)
    healthy = VectorsProjection(tmp_path / "healthy", embedder)
    failing = FailsOnce(tmp_path / "failing", embedder)
    failing.name = "failing"
    runner = Runner(ledger, [failing, healthy], lock_path=tmp_path / "lock")
    try:
        with pytest.raises(OSError, match="disk full"):
            runner.rebuild()
        assert healthy.position() == ledger.last_position()  # ended all the same
        assert failing.position() == 0  # nothing written: the next catch-up replays it
        assert runner.catch_up() == ledger.last_position()
        assert tables(failing)[0] == tables(healthy)[0]
        query = embedder.query("Porto")
        assert failing.search("u2", query, 2) == healthy.search("u2", query, 2) != []
    finally:
        runner.close()


def keyed_and_long_log(count: int) -> list[EventRecord]:
    """`varied_log` where every fourth add has a key and every fifth a text of several
    chunks (its chunk vectors go to the `chunks` table); a long text is also updated."""
    records = varied_log(count)
    for n, r in enumerate(records):
        if r.type == "MemoryAdded" and n % 4 == 0:
            r.data["key"] = f"topic {n % 7}"
        if r.type in ("MemoryAdded", "MemoryUpdated") and n % 5 == 0:
            r.data["content"] = " ".join(note_text(n + k) for k in range(60))
    return records


def index_schema(projection: VectorsProjection) -> list[Any]:
    return projection._db.execute(
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name"
    ).fetchall()


@pytest.mark.parametrize("held", [200_000, 40])
def test_a_bulk_load_writes_keys_chunks_and_indexes_as_page_by_page_does(
    tmp_path: Path, held: int
) -> None:
    """Keys (NULL for most rows, written into the statement) and chunk vectors come out of a
    bulk load as page by page; its first write builds the secondary indexes after the
    rows, and they are the ones a fresh file has."""
    embedder = CountingEmbedder(64)
    log = keyed_and_long_log(200)
    pages = [log[start : start + 25] for start in range(0, len(log), 25)]
    one_by_one = VectorsProjection(tmp_path / "a", embedder)
    bulk = VectorsProjection(tmp_path / "b", embedder, bulk_held_rows=held)
    try:
        for page in pages:
            one_by_one.apply(page)
        with bulk.bulk():
            for page in pages:
                bulk.apply(page)
        assert tables(bulk) == tables(one_by_one)
        # live chunks: page by page keeps a replaced long text's chunks as not live, a bulk
        # load never writes them (as before the bulk path's first write built its indexes)
        chunks = "SELECT * FROM chunks WHERE live = 1 ORDER BY memory_id, chunk"
        assert bulk._db.execute(chunks).fetchall() == one_by_one._db.execute(chunks).fetchall()
        assert one_by_one._db.execute(chunks).fetchall()  # long texts were chunked
        keys = bulk._db.execute("SELECT count(key), count(*) FROM vectors").fetchone()
        assert 0 < keys[0] < keys[1]
        assert index_schema(bulk) == index_schema(one_by_one)
        assert {name for name, _, _ in index_schema(bulk)} >= {
            "vectors_by_user",
            "vectors_names",
            "vectors_by_change",
            "chunks_names",
        }
        assert searches(bulk, embedder) == searches(one_by_one, embedder)
    finally:
        one_by_one.close()
        bulk.close()


@pytest.mark.parametrize("held", [None, 200_000, 1])
def test_a_long_text_replaced_after_it_was_stored_leaves_only_its_new_chunks_live(
    tmp_path: Path, held: int | None
) -> None:
    """A long memory written in one page and replaced in a later one (by a shorter long
    text, then by a short one): the chunks of the old texts stop being live, page by page
    (None) and in a bulk load that holds every row or writes after each page (1)."""
    embedder = CountingEmbedder(64)
    memory_id = uuid.UUID(int=random_bits(7)).hex
    long_text = " ".join(note_text(k) for k in range(100))
    shorter = " ".join(note_text(k) for k in range(60))
    pages = [
        [record(1, memory_id, "MemoryAdded", "u", {"content": long_text})],
        [record(2, memory_id, "MemoryUpdated", "u", {"content": shorter})],
        [record(3, memory_id, "MemoryUpdated", "u", {"content": "short now"})],
    ]
    projection = VectorsProjection(tmp_path / "v", embedder, bulk_held_rows=held or 200_000)
    live = "SELECT chunk FROM chunks WHERE live = 1 ORDER BY chunk"
    try:
        with projection.bulk() if held else nullcontext():
            projection.apply(pages[0])
            projection.apply(pages[1])
        assert len(chunk_texts(long_text)) > len(chunk_texts(shorter)) > 1
        assert projection._db.execute(live).fetchall() == [
            (n,) for n in range(len(chunk_texts(shorter)))
        ]
        projection.apply(pages[2])
        assert projection._db.execute(live).fetchall() == []
        assert projection.search("u", embedder.query("short now"), 2)[0][0] == memory_id
    finally:
        projection.close()


def test_a_failed_first_write_of_a_bulk_load_keeps_the_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first write drops the secondary indexes inside its transaction: when it fails,
    the rollback brings them back with the empty table."""
    embedder = CountingEmbedder(64)
    projection = VectorsProjection(tmp_path / "v", embedder)
    before = index_schema(projection)

    def fail(_rows: Any) -> None:
        raise OSError("disk full")

    try:
        monkeypatch.setattr(projection, "_write_chunks", fail)
        with pytest.raises(OSError, match="disk full"), projection.bulk():
            projection.apply(varied_log(30))
        assert index_schema(projection) == before
        assert projection._db.execute("SELECT count(*) FROM vectors").fetchone() == (0,)
        assert projection.position() == 0
    finally:
        projection.close()


def test_chunk_texts_of_short_texts_skips_splitting_and_agrees_with_it() -> None:
    from mnemoledger.projections.transcripts import split_text
    from mnemoledger.projections.vectors import ONE_CHUNK_BELOW, chunk_texts

    sentence = "Maya moved to Lisbon in May. "
    for size in (0, 1, ONE_CHUNK_BELOW - 1, ONE_CHUNK_BELOW, ONE_CHUNK_BELOW + 1, 4000):
        for text in ((sentence * 200)[:size], " " * 3 + (sentence * 200)[:size]):
            chunks = split_text(text)
            assert chunk_texts(text) == ([c.text for c in chunks] if len(chunks) > 1 else [])
