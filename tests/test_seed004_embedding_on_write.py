"""Seed 004 §5 Embedding on Write: a memory stored under a key is embedded as "key: value"
(semantic context for short values), a memory without one as its content; vectors made the
old way are dropped and made again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from mnemoledger.projections.vectors import TEXT_SCHEME, embedding_text


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
    assert embedding_text(None, "x") == "x" and TEXT_SCHEME == "key: value"


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
