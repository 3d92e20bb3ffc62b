"""Topiary (seed 001 §6): a named topic tree over a user's memory embeddings.

    1. entries: every active memory (Core, Working, Buffer) with a vector, ordered by id
    2. insert: each joins the closest leaf (cosine > 0.30) or starts a singleton leaf;
       centroids are kept L2-normalised
    3. consolidate: up to 10 split/merge passes (split leaves above 8 members or less
       coherent than 0.35 by seeded spherical 2-means; merge leaves whose centroids are
       >= 0.55 similar while the result stays within 8), absorb small leaves (<= 2 members)
       into a neighbour >= 0.40, then enforce the budget (k-means over leaves when above
       256), then one level of parents over the leaves; single-child parents are pruned
    4. naming: topics in batches of 30 through the `name_topics` stage, existing names given
       as dedup context; a tree is kept only when every topic is named

A build is a command (`TopicsRequested`, the naming calls, `TopicTreeBuilt`), so the tree
and its names are in the log and the `topics` projection rebuilds them exactly.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from mnemoledger.commands.llm.consolidation_prompts import NAME_TOPICS
from mnemoledger.commands.llm.consolidation_schemas import NameTopicsInput, TopicSample
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.write.recorded_llm import RecordedLLM
from mnemoledger.commands.write.replaying import recorded_id
from mnemoledger.ledger import Ledger, Provenance, validation
from mnemoledger.ledger.epoch import TopicsCommand
from mnemoledger.ledger.policy import (
    ACTIVE,
    TOPIC_ABSORB_THRESHOLD,
    TOPIC_ASSIGN_THRESHOLD,
    TOPIC_LEAF_BUDGET,
    TOPIC_MAX_LEAF_SIZE,
    TOPIC_MERGE_THRESHOLD,
    TOPIC_MIN_INTERNAL_SIM,
    TOPIC_NAMING_BATCH,
    TOPIC_SPLIT_MERGE_CYCLES,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.layers import LayersProjection
from mnemoledger.projections.topics import TopicsProjection
from mnemoledger.projections.vectors import VectorsProjection

Matrix = npt.NDArray[np.float32]
SAMPLES_PER_TOPIC = 5
SAMPLE_CHARS = 200
KMEANS_ITERATIONS = 20
SEED = 7


@dataclass
class Leaf:
    members: list[int]
    centroid: Matrix


@dataclass
class Topic:
    id: str
    members: list[str] = field(default_factory=list)
    """Memory ids (leaves)."""
    children: list[str] = field(default_factory=list)
    """Topic ids (parents)."""
    parent: str | None = None
    name: str | None = None
    signature: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "parent": self.parent,
            "members": self.members,
            "children": self.children,
            "signature": self.signature,
        }


def cluster(vectors: Matrix) -> list[Leaf]:
    """Steps 2-3 over row-normalised vectors; leaves ordered by first member."""
    leaves = _insert(vectors)
    for _ in range(TOPIC_SPLIT_MERGE_CYCLES):
        changed = _split(vectors, leaves) | _merge(vectors, leaves)
        if not changed:
            break
    _absorb_small(vectors, leaves)
    if len(leaves) > TOPIC_LEAF_BUDGET:
        leaves[:] = _grouped(vectors, leaves, TOPIC_LEAF_BUDGET)
    leaves.sort(key=lambda leaf: min(leaf.members))
    return leaves


def build_tree(memory_ids: list[str], vectors: Matrix) -> list[Topic]:
    """Leaves `kb1..` (most members first) under parents `kp1..` (single children pruned)."""
    if not memory_ids:
        return []
    leaves = cluster(vectors)
    leaves.sort(key=lambda leaf: (-len(leaf.members), min(leaf.members)))
    topics = [
        Topic(f"kb{n}", members=sorted(memory_ids[i] for i in leaf.members))
        for n, leaf in enumerate(leaves, 1)
    ]
    parents: list[Topic] = []
    if len(leaves) > 2:
        centroids = np.stack([leaf.centroid for leaf in leaves])
        groups = _kmeans(centroids, math.ceil(math.sqrt(len(leaves))))
        for group in sorted({g for g in groups.tolist()}):
            children = [topics[i] for i in np.nonzero(groups == group)[0].tolist()]
            if len(children) < 2:
                continue  # single-child parents are pruned
            parent = Topic(f"kp{len(parents) + 1}", children=[c.id for c in children])
            for child in children:
                child.parent = parent.id
            parents.append(parent)
    for topic in topics:
        topic.signature = _signature(topic.members)
    for parent in parents:
        parent.signature = _signature(parent.children)
    return topics + parents


@dataclass
class TopicsPipeline:
    """Builds, names and records a user's topic tree."""

    ledger: Ledger
    layers: LayersProjection
    vectors: VectorsProjection
    topics: TopicsProjection
    provider: LLMProvider
    refresh: Callable[[], object] = lambda: None

    def run(self, user: str, provenance: Provenance) -> dict[str, Any]:
        user = str(validation.identifier("user", user))
        provenance = replace(provenance, user_id=user)
        self.refresh()
        position = self.ledger.last_position()
        with acting_as(provenance):
            command = recorded_id(TopicsCommand(input={"user": user, "position": position}))
        self.ledger.save(command)
        decided = replace(provenance, causation_id=command.id.hex)
        rows = [r for r in self.layers.list(user_id=user, state=ACTIVE)]
        found = [(r, self.vectors.vector(r.id)) for r in rows]
        entries = [(r, v) for r, v in found if v is not None]
        tree = build_tree(
            [r.id for r, _ in entries],
            np.stack([v for _, v in entries]) if entries else np.zeros((0, 1), np.float32),
        )
        contents = {r.id: r.content for r, _ in entries}
        llm = RecordedLLM(self.provider, command, decided)
        named = self._name(llm, user, tree, contents)
        with acting_as(decided):
            if named:
                command.tree_built(user, position, [t.as_json() for t in tree])
            command.complete(
                {"topics": len(tree), "named": named, "kept": "new" if named else "previous"}
            )
        self.ledger.save(command)
        return {"command_id": command.id.hex, "topics": len(tree), "named": named}

    def _name(
        self, llm: RecordedLLM, user: str, tree: list[Topic], contents: dict[str, str]
    ) -> bool:
        """Names from the previous tree where a topic kept its members; the others through
        the LLM in batches of 30. True when every topic ends up named."""
        previous = self.topics.names_by_signature(user)
        for topic in tree:
            topic.name = previous.get(topic.signature)
        by_id = {t.id: t for t in tree}
        dirty = [t for t in tree if t.name is None]
        for start in range(0, len(dirty), TOPIC_NAMING_BATCH):
            batch = dirty[start : start + TOPIC_NAMING_BATCH]
            existing = sorted({t.name for t in tree if t.name})
            output = llm.run(
                NAME_TOPICS,
                NameTopicsInput(
                    topics=[
                        TopicSample(topic_id=t.id, samples=_samples(t, by_id, contents))
                        for t in batch
                    ],
                    existing_names=existing,
                ),
            )
            for answer in output.names:
                named = by_id.get(answer.topic_id)
                name = validation.normalize_text(answer.name)[:80] if answer.name else ""
                if named is not None and named in batch and name:
                    named.name = name
        return all(t.name for t in tree)


def _samples(topic: Topic, by_id: dict[str, Topic], contents: dict[str, str]) -> list[str]:
    members = topic.members or [m for child in topic.children for m in by_id[child].members]
    return [contents[m][:SAMPLE_CHARS] for m in members[:SAMPLES_PER_TOPIC]]


def _signature(items: list[str]) -> str:
    return hashlib.sha1("\n".join(sorted(items)).encode()).hexdigest()


def _normalised(vector: Matrix) -> Matrix:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _insert(vectors: Matrix) -> list[Leaf]:
    leaves: list[Leaf] = []
    sums = np.zeros((max(len(vectors), 1), vectors.shape[1]), np.float32)
    centroids = np.zeros_like(sums)
    for index, vector in enumerate(vectors):
        if leaves:
            scores = centroids[: len(leaves)] @ vector
            best = int(np.argmax(scores))
            if scores[best] > TOPIC_ASSIGN_THRESHOLD:
                leaves[best].members.append(index)
                sums[best] += vector
                centroids[best] = _normalised(sums[best])
                leaves[best].centroid = centroids[best]
                continue
        sums[len(leaves)] = vector
        centroids[len(leaves)] = _normalised(vector)
        leaves.append(Leaf([index], centroids[len(leaves)].copy()))
    for leaf in leaves:
        leaf.centroid = _normalised(vectors[leaf.members].sum(axis=0))
    return leaves


def _coherence(vectors: Matrix, leaf: Leaf) -> float:
    return float(np.mean(vectors[leaf.members] @ leaf.centroid))


def _split(vectors: Matrix, leaves: list[Leaf]) -> bool:
    changed = False
    for leaf in list(leaves):
        if len(leaf.members) < 2:
            continue
        if (
            len(leaf.members) <= TOPIC_MAX_LEAF_SIZE
            and _coherence(vectors, leaf) >= TOPIC_MIN_INTERNAL_SIM
        ):
            continue
        labels = _kmeans(vectors[leaf.members], 2)
        parts = [
            [m for m, lab in zip(leaf.members, labels.tolist(), strict=True) if lab == k]
            for k in (0, 1)
        ]
        if not all(parts):
            continue
        leaves.remove(leaf)
        for part in parts:
            leaves.append(Leaf(part, _normalised(vectors[part].sum(axis=0))))
        changed = True
    return changed


def _merge(vectors: Matrix, leaves: list[Leaf]) -> bool:
    """Leaves whose centroids are >= 0.55 similar join, most similar first, while the
    result stays within the leaf size."""
    if len(leaves) < 2:
        return False
    centroids = np.stack([leaf.centroid for leaf in leaves])
    scores = centroids @ centroids.T
    rows, columns = np.nonzero(np.triu(scores >= TOPIC_MERGE_THRESHOLD, k=1))
    pairs = sorted(
        zip(rows.tolist(), columns.tolist(), strict=True),
        key=lambda p: (-float(scores[p[0], p[1]]), p[0], p[1]),
    )
    gone: set[int] = set()
    for a, b in pairs:
        if a in gone or b in gone:
            continue
        if len(leaves[a].members) + len(leaves[b].members) > TOPIC_MAX_LEAF_SIZE:
            continue
        leaves[a].members.extend(leaves[b].members)
        leaves[a].centroid = _normalised(vectors[leaves[a].members].sum(axis=0))
        gone.add(b)
    leaves[:] = [leaf for n, leaf in enumerate(leaves) if n not in gone]
    return bool(gone)


def _absorb_small(vectors: Matrix, leaves: list[Leaf]) -> None:
    if len(leaves) < 2:
        return
    for leaf in sorted(leaves, key=lambda leaf: (len(leaf.members), min(leaf.members))):
        if len(leaf.members) > 2 or len(leaves) < 2:
            continue
        others = [o for o in leaves if o is not leaf]
        scores = np.stack([o.centroid for o in others]) @ leaf.centroid
        best = int(np.argmax(scores))
        if scores[best] >= TOPIC_ABSORB_THRESHOLD:
            target = others[best]
            target.members.extend(leaf.members)
            target.centroid = _normalised(vectors[target.members].sum(axis=0))
            leaves.remove(leaf)


def _grouped(vectors: Matrix, leaves: list[Leaf], budget: int) -> list[Leaf]:
    """The budget: leaves grouped by spherical k-means over their centroids."""
    labels = _kmeans(np.stack([leaf.centroid for leaf in leaves]), budget)
    grouped: dict[int, list[int]] = {}
    for leaf, label in zip(leaves, labels.tolist(), strict=True):
        grouped.setdefault(label, []).extend(leaf.members)
    return [Leaf(sorted(m), _normalised(vectors[m].sum(axis=0))) for m in grouped.values()]


def _kmeans(points: Matrix, k: int) -> npt.NDArray[np.int64]:
    """Seeded spherical k-means: labels of `points` (rows unit-length) in k clusters."""
    k = max(1, min(k, len(points)))
    rng = np.random.default_rng(SEED)
    centroids = points[rng.choice(len(points), size=k, replace=False)].copy()
    labels = np.zeros(len(points), dtype=np.int64)
    for _ in range(KMEANS_ITERATIONS):
        new_labels = np.argmax(points @ centroids.T, axis=1)
        if np.array_equal(new_labels, labels) and _ > 0:
            break
        labels = new_labels
        for c in range(k):
            members = points[labels == c]
            if len(members):
                centroids[c] = _normalised(members.sum(axis=0))
    return labels
