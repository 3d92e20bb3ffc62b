"""Hybrid search: vector and keyword candidates fused by reciprocal rank (seed 004 §6)."""

from __future__ import annotations

from datetime import UTC, datetime

from commands.models import SearchHit
from ledger.policy import ACTIVE, RRF_K, SEARCH_OVERFETCH
from projections.embeddings.embedder import Embedder
from projections.layers import LayersProjection
from projections.vectors import VectorsProjection


def hybrid_search(
    layers: LayersProjection,
    vectors: VectorsProjection,
    embedder: Embedder,
    query: str,
    user_id: str,
    k: int,
) -> list[SearchHit]:
    """The `k` best active, unexpired memories of `user_id` for `query`, best first."""
    pool = k * SEARCH_OVERFETCH
    keyword = [memory_id for memory_id, _ in layers.keyword_search(user_id, query, pool)]
    vector = [memory_id for memory_id, _ in vectors.search(user_id, embedder.query(query), pool)]
    scores: dict[str, float] = {}
    for ranking in (keyword, vector):
        for rank, memory_id in enumerate(ranking):
            scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (RRF_K + rank + 1)
    rows = layers.get_many(list(scores))
    now = datetime.now(UTC)
    keyword_rank = {memory_id: i + 1 for i, memory_id in enumerate(keyword)}
    vector_rank = {memory_id: i + 1 for i, memory_id in enumerate(vector)}
    hits = [
        SearchHit(
            id=memory_id,
            content=row.content,
            score=round(score, 6),
            layer=row.layer,
            kind=row.kind,
            keyword_rank=keyword_rank.get(memory_id),
            vector_rank=vector_rank.get(memory_id),
        )
        for memory_id, score in scores.items()
        if (row := rows.get(memory_id)) is not None
        and row.state == ACTIVE
        and not row.is_expired(now)
    ]
    hits.sort(key=lambda hit: (-hit.score, hit.id))
    return hits[:k]
