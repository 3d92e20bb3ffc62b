"""Seed 004 §5 Embedding on Write: a memory stored under a key is embedded as "key: value"
(semantic context for short values), a memory without one as its content; vectors made the
old way are dropped and made again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from mnemoledger.ledger.policy import CHUNK_MAX_CHARS
from mnemoledger.projections.vectors import TEXT_SCHEME, chunk_texts, embedding_text


def stored_vector(memory: MnemoLedger, memory_id: str) -> np.ndarray:
    memory.refresh()
    vector = memory.parts.vectors.vector(memory_id)
    assert vector is not None
    return vector


def embedded(memory: MnemoLedger, text: str) -> np.ndarray:
    return np.asarray(memory.parts.embedder.passages([text])[0], dtype=np.float32)


def test_s5_embedding_on_write_is_key_colon_value(memory: MnemoLedger) -> None:
    stored = memory.store("timezone", "Europe/Lisbon", user="maya", namespace="tacit/user")
    assert stored.memory is not None
    keyed = stored.memory.id
    assert np.allclose(stored_vector(memory, keyed), embedded(memory, "timezone: Europe/Lisbon"))
    assert not np.allclose(stored_vector(memory, keyed), embedded(memory, "Europe/Lisbon"))

    memory.store("timezone", "Asia/Tokyo", user="maya", namespace="tacit/user")  # an update
    assert np.allclose(stored_vector(memory, keyed), embedded(memory, "timezone: Asia/Tokyo"))

    (plain,) = memory.add(["I play the oboe."], user="maya").memories
    assert np.allclose(stored_vector(memory, plain.id), embedded(memory, "I play the oboe."))
    assert embedding_text(None, "x") == "x" and TEXT_SCHEME.startswith("key: value")


def test_s5_vectors_made_before_keys_were_embedded_are_made_again(home: Path) -> None:
    settings = Settings(home=home, embedder="hashing")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        stored = memory.store("timezone", "Europe/Lisbon", user="maya", namespace="tacit/user")
        assert stored.memory is not None
        keyed = stored.memory.id
        model = memory.parts.embedder.model
    database = home / "projections" / "vectors" / "vectors.sqlite3"
    with sqlite3.connect(database) as db:  # as an older version left it
        db.execute("UPDATE vectors SET vector = zeroblob(length(vector))")
        db.execute("UPDATE position SET model = ?", (model,))
    with MnemoLedger(settings=settings, actor="tester") as memory:
        assert np.allclose(
            stored_vector(memory, keyed), embedded(memory, "timezone: Europe/Lisbon")
        )


def long_note(topic_last: str) -> str:
    """A memory of several chunks whose last part alone is about `topic_last`."""
    filler = " ".join(
        f"Entry {n}: the nightly build passed and its pipeline log was archived." for n in range(60)
    )
    return f"{filler} Finally: {topic_last}"


def test_s5_a_long_memory_is_found_by_any_of_its_chunks(memory: MnemoLedger) -> None:
    text = long_note("the harbour ferry to Tavira leaves at 7:40 from pier 3.")
    assert len(text) > 2 * CHUNK_MAX_CHARS and len(chunk_texts(text)) >= 2
    note = memory.write_note(text, user="maya", kind="log").note
    memory.add(["I like ferries."], user="maya")
    memory.refresh()
    vectors = memory.parts.vectors
    query = vectors.embedder.query("ferry to Tavira pier")
    whole = float(np.dot(stored_vector(memory, note.id), query))
    last_chunk = float(np.dot(embedded(memory, chunk_texts(text)[-1]), query))
    assert last_chunk > whole  # the ferry is a small part of the whole text
    hits = dict(vectors.search("maya", query, 5))
    assert hits[note.id] == pytest.approx(last_chunk, abs=1e-5)  # found by its best chunk
    assert len(hits) == 2  # each memory once, however many of its chunks matched

    memory.forget(note.id)  # its chunks leave the search with it
    memory.refresh()
    assert note.id not in dict(vectors.search("maya", query, 5))
    memory.restore(note.id)
    memory.refresh()
    assert note.id in dict(vectors.search("maya", query, 5))
    memory.update(note.id, "Short now.")  # one chunk: the old chunks stop counting
    memory.refresh()
    assert dict(vectors.search("maya", query, 5)).get(note.id, 0.0) < last_chunk


def test_s5_chunks_survive_a_rebuild_and_a_reopened_index(home: Path) -> None:
    settings = Settings(home=home, embedder="hashing")
    text = long_note("the harbour ferry to Tavira leaves at 7:40 from pier 3.")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        note = memory.write_note(text, user="maya", kind="log").note
        query = memory.parts.embedder.query("ferry to Tavira pier")
        before = memory.parts.vectors.search("maya", query, 3)
        memory.rebuild("vectors")
        assert memory.parts.vectors.search("maya", query, 3) == before
    with MnemoLedger(settings=settings, actor="tester") as memory:  # from the saved index
        assert memory.parts.vectors.search("maya", query, 3) == before
        assert before[0][0] == note.id
