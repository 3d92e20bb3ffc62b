"""The minimal relations layer (seed 003 §2): automatic edges on write, a boost on read.

Write path: when memories are created or updated (by add, ingest or update),
`auto_links` finds each one's top-K
neighbours with similarity >= link_min (stored memories of the same user and the other
memories of the same batch), and `apply_links` records them as `MemoryLinked` events of
type `auto` with `strength = score` on the new memories' aggregates, so a pipeline saves
them with everything else in its one transaction. Edges are deduplicated per unordered
pair here, and again by the `graph` read model.

Read path: `relation_boost` adds `w_rel * max_related_strength` to a rerank score and
`related_bullets` gives the 1-2 "related" lines a retrieval result includes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.models import EdgeOut
from mnemoledger.commands.write.sanitize import MAX_TOOL_VALUE_CHARS
from mnemoledger.ledger import Ledger, Memory, MemoryNotFound, Provenance, validation
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    ACTIVE,
    AUTO_LINK_TYPE,
    RELATED_BULLET_PREFIX,
    RELATED_BULLETS_MAX,
    RELATION_BOOST_WEIGHT,
    RELATION_LINK_MIN,
    RELATION_TOP_K,
    SENSITIVE,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.graph import GraphProjection
from mnemoledger.projections.layers import LayersProjection, MemoryRow
from mnemoledger.projections.vectors import VectorsProjection

Link = tuple[str, str, float]
"""(from memory id, to memory id, strength): one relation to record."""


def auto_links(
    new: Sequence[tuple[str, npt.ArrayLike]],
    user_id: str,
    vectors: VectorsProjection,
    *,
    top_k: int = RELATION_TOP_K,
    link_min: float = RELATION_LINK_MIN,
    exclude: Set[str] = frozenset(),
) -> list[Link]:
    """The edges seed 003 §2 creates for new or updated memories.

    `new` holds (memory id, L2-normalised vector of its current content). Each memory is
    linked to its `top_k` best candidates with similarity >= `link_min`: active stored
    memories of `user_id` (FAISS) and the other memories of `new`, never itself nor a
    memory in `exclude` (e.g. those the new memories supersede; a memory of `new` in
    `exclude` gets no edge either). Memories of `new` are scored with the vectors given,
    not with the stale ones an index may still hold for updated memories. Each unordered
    pair appears once, in the direction first found, `strength` = the similarity clamped
    to [0, 1]. Ordered as `new`, then best first.
    """
    entries: dict[str, npt.NDArray[np.float32]] = {}
    for memory_id, vector in new:
        if memory_id not in exclude:
            entries.setdefault(memory_id, np.asarray(vector, dtype=np.float32).reshape(-1))
    if top_k <= 0 or not entries:
        return []
    ids = list(entries)
    matrix = np.stack(list(entries.values()))
    peers = vectors.calibration.to_reference_array(matrix @ matrix.T)
    fetch = top_k + len(ids) + len(exclude)
    found: dict[tuple[str, str], Link] = {}
    for i, memory_id in enumerate(ids):
        scores = {
            other: score
            for other, score in vectors.similar(user_id, entries[memory_id], fetch)
            if other not in entries and other not in exclude
        }
        for j, other in enumerate(ids):
            if j != i:
                scores[other] = float(peers[i, j])
        best = sorted(
            ((other, score) for other, score in scores.items() if score >= link_min),
            key=lambda item: (-item[1], item[0]),
        )[:top_k]
        for other, score in best:
            pair = (memory_id, other) if memory_id < other else (other, memory_id)
            strength = min(1.0, max(0.0, score))
            if pair not in found:
                found[pair] = (memory_id, other, strength)
            elif strength > found[pair][2]:
                found[pair] = (*found[pair][:2], strength)
    return list(found.values())


def apply_links(
    memories_by_id: Mapping[str, Memory], links: Iterable[Link], provenance: Provenance
) -> list[Memory]:
    """Record `links` as `auto` edges on their source aggregates (not saved): the memories
    changed, in order, for the caller's single save.

    Every source must be in `memories_by_id` (by hex id: new drafts, or memories the caller
    loaded). A link the source already holds as strongly, or holds with a manual type, is
    skipped: re-linking adds nothing and a manual type is never overwritten.
    """
    changed: dict[str, Memory] = {}
    for source, target, strength in links:
        if source == target:
            continue
        memory = memories_by_id.get(source)
        if memory is None:
            raise MemoryNotFound(source)
        strength = validation.unit_interval("strength", strength)
        held = memory.links.get(target)
        if held is not None and (held["type"] != AUTO_LINK_TYPE or held["strength"] >= strength):
            continue
        with acting_as(replace(provenance, user_id=memory.user_id)):
            memory.link(target, AUTO_LINK_TYPE, strength)
        changed.setdefault(source, memory)
    return list(changed.values())


def link_written(
    memories: Sequence[Memory],
    embedder: Embedder,
    vectors: VectorsProjection,
    provenance: Provenance,
    *,
    exclude: Set[str] = frozenset(),
) -> list[Memory]:
    """Seed 003 §2 for any write: the `auto` edges of the active `memories` (new or with
    new content, all of one user) to their top-K neighbours, recorded on them (not saved;
    their vectors come from the embedding cache). Returns the memories that gained an
    edge."""
    active = [m for m in memories if m.state == ACTIVE]
    if not active:
        return []
    embedded = embedder.passages([m.content for m in active])
    links = auto_links(
        [(m.id.hex, v) for m, v in zip(active, embedded, strict=True)],
        active[0].user_id,
        vectors,
        exclude=exclude,
    )
    return apply_links({m.id.hex: m for m in active}, links, provenance)


def update_linked(
    ledger: Ledger,
    provenance: Provenance,
    memory_id: str,
    content: str,
    tags: Sequence[str] | None,
    embedder: Embedder,
    vectors: VectorsProjection,
) -> Memory:
    """UPDATE with seed 003 §2's edges: the memory takes its new content (and tags), links
    to the neighbours of that content, and core.md follows, in one save. The new content of
    a memory with a key (a key/value memory, seed 004 §15) is held to the value limit."""
    new_content = validation.content(content)
    new_tags = validation.tags(tags) if tags is not None else None

    def change(memory: Memory) -> None:
        if memory.key is not None:
            value_within_limit(new_content)
        memory.update(new_content, new_tags)
        link_written([memory], embedder, vectors, replace(provenance, user_id=memory.user_id))

    return core_sync.change_memory(ledger, provenance, memory_id, change)


def edges_of(graph: GraphProjection, memory_id: str) -> list[EdgeOut]:
    """Every relation of a memory, read from its end (either side may have recorded it),
    strongest first: what `get` and full query results show."""
    return [
        EdgeOut(from_id=e.from_id, to=e.to_id, type=e.type, strength=e.strength)
        for e in graph.neighbours(memory_id)
    ]


def relation_boost(
    score: float, max_related_strength: float, weight: float = RELATION_BOOST_WEIGHT
) -> float:
    """Seed 003 §2's rerank boost: `score + w_rel * max_related_strength`.

    `w_rel` = 0.1 suits a score on a 0..1 scale (cosine, a recall score), not raw
    reciprocal-rank-fusion sums (at most 2/61), which it would swamp."""
    return score + weight * max_related_strength


def related_bullets(
    graph: GraphProjection,
    layers: LayersProjection,
    memory_ids: Sequence[str],
    limit: int = RELATED_BULLETS_MAX,
    admit: Callable[[MemoryRow], bool] | None = None,
) -> list[str]:
    """Up to `limit` "↳ related: <content>" lines for a retrieval result (seed 003 §2).

    The strongest relations of the retrieved `memory_ids` (ties by their rank, then id) to
    memories not already retrieved that are active, unexpired and not sensitive (seed 002:
    sensitive memories stay out of agent context), and that `admit` accepts (e.g. the
    asking agent's allowlist); each related memory once."""
    if limit <= 0 or not memory_ids:
        return []
    shown = set(memory_ids)
    candidates: dict[str, tuple[float, int]] = {}
    for rank, memory_id in enumerate(dict.fromkeys(memory_ids)):
        for edge in graph.neighbours(memory_id, active_only=True):
            if edge.to_id in shown:
                continue
            key = (-edge.strength, rank)
            if edge.to_id not in candidates or key < candidates[edge.to_id]:
                candidates[edge.to_id] = key
    ordered = sorted(candidates, key=lambda other: (*candidates[other], other))
    rows = layers.get_many(ordered)
    bullets: list[str] = []
    for other in ordered:
        row = rows.get(other)
        if row is None or row.state != ACTIVE or row.is_expired() or row.sensitivity == SENSITIVE:
            continue
        if admit is not None and not admit(row):
            continue
        bullets.append(RELATED_BULLET_PREFIX + row.content)
        if len(bullets) >= limit:
            break
    return bullets


def value_within_limit(value: str) -> str:
    """`value` unchanged, or `InvalidInput`: a memory with a key (a key/value memory, seed
    004 §15) holds at most `MAX_TOOL_VALUE_CHARS`."""
    if len(value) > MAX_TOOL_VALUE_CHARS:
        raise InvalidInput(
            f"value has {len(value)} characters; a memory with a key holds at most "
            f"{MAX_TOOL_VALUE_CHARS}"
        )
    return value
