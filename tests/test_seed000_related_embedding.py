"""Seed 000 step 2: the related lookup of `add` embeds the new contents with `embed_query`
when `related_embedding` is `query`; by default it reuses the passage vectors of the add."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from mnemoledger.ledger.policy import RelatedEmbedding
from mnemoledger.projections.embeddings.embedder import Embedder, Vectors


class QueryLog:
    """The real embedder, noting which texts were embedded as queries."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.model = embedder.model
        self.dimensions = embedder.dimensions
        self.queries: list[str] = []

    def passages(self, texts: Sequence[str]) -> Vectors:
        return self.embedder.passages(texts)

    def query(self, text: str) -> Vectors:
        self.queries.append(text)
        return self.embedder.query(text)


@pytest.mark.parametrize("mode", ["passage", "query"])
def test_seed000_step2_related_lookup_embeds_as_the_setting_says(
    home: Path, mode: RelatedEmbedding
) -> None:
    settings = Settings(home=home, embedder="hashing", related_embedding=mode)
    with MnemoLedger(settings=settings, actor="tester") as memory:
        cached = memory.parts.embedder
        spy = QueryLog(cached.embedder)
        cached.embedder = spy
        memory.add(["I live in Lisbon."], user="maya")
        result = memory.add(["I moved to Porto last month."], user="maya")
        expected = ["I live in Lisbon.", "I moved to Porto last month."]
        assert spy.queries == ([] if mode == "passage" else expected)
        # either way the stored memory was shown to the reconstruction, which replaced it
        (old,) = result.superseded
        assert memory.get(old).content == "I live in Lisbon."
