"""Topiary (seed 001 §6): the topic tree, its naming in batches, the drill-down."""

from __future__ import annotations

import numpy as np

from mnemoledger import MnemoLedger
from mnemoledger.commands.lifecycle.topics import build_tree
from mnemoledger.commands.llm import OfflineProvider, ScriptedProvider
from mnemoledger.commands.llm.consolidation_schemas import NameTopicsOutput, TopicName
from mnemoledger.ledger import NewMemory
from mnemoledger.ledger.policy import TOPIC_MAX_LEAF_SIZE, TOPIC_NAMING_BATCH
from tests.test_consolidation_helpers import USER, clock, engram, events, remember_many

__all__ = ["clock", "engram"]

GROUPS = {
    "tea": ["green tea", "jasmine tea", "oolong tea", "black tea"],
    "billing": ["billing invoice export", "billing invoice retry", "billing invoice PDF"],
    "running": ["marathon training plan", "marathon pace chart", "marathon shoes"],
}


def _remember_groups(memory: MnemoLedger) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    for group, texts in GROUPS.items():
        ids[group] = remember_many(memory, [NewMemory(content=t) for t in texts])
    return ids


def test_similar_memories_share_a_named_leaf(engram: MnemoLedger) -> None:
    ids = _remember_groups(engram)
    result = engram.topics(user=USER)
    leaves = [t for t in result.topics if not t.children]
    assert all(t.name for t in result.topics)
    members = {
        t.id: {m.id for m in engram.topic_memories(user=USER, ids=[t.id])[t.id].memories}
        for t in leaves
    }
    for group in ids.values():
        assert any(set(group) <= found for found in members.values())
    [built] = events(engram, "TopicTreeBuilt")
    assert built.data["user"] == USER and built.data["position"] > 0
    assert result.position == built.data["position"]


def test_drill_down_and_parents(engram: MnemoLedger) -> None:
    _remember_groups(engram)
    result = engram.topics(user=USER)
    parents = [t for t in result.topics if t.children]
    for parent in parents:
        detail = engram.topic_memories(user=USER, ids=[parent.id])[parent.id]
        assert len(detail.memories) == parent.members > 0
        assert all(len(c) > 0 for c in parent.children)


def test_naming_runs_in_batches_of_thirty_and_reuses_names(engram: MnemoLedger) -> None:
    words = [f"zq{n:02d}{chr(97 + n % 26)}{chr(97 + (7 * n) % 26)}" for n in range(70)]
    remember_many(engram, [NewMemory(content=f"{w} {w}x {w}y") for w in words])
    scripted = ScriptedProvider(OfflineProvider())
    engram.llm = scripted
    result = engram.topics(user=USER)
    calls = [c for c in scripted.calls if c.stage == "name_topics"]
    assert len(calls) == -(-len(result.topics) // TOPIC_NAMING_BATCH)
    assert all(len(c.output.names) <= TOPIC_NAMING_BATCH for c in calls)
    scripted.calls.clear()
    engram.topics(user=USER, rebuild=True)  # nothing changed: every name is reused
    assert not [c for c in scripted.calls if c.stage == "name_topics"]


def test_a_tree_not_fully_named_keeps_the_previous_one(engram: MnemoLedger) -> None:
    _remember_groups(engram)
    first = engram.topics(user=USER)
    remember_many(engram, [NewMemory(content="sourdough starter feeding schedule")])
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script("name_topics", NameTopicsOutput(names=[TopicName(topic_id="nope", name="x")]))
    engram.llm = scripted
    second = engram.topics(user=USER, rebuild=True)
    assert second == first
    assert len(events(engram, "TopicTreeBuilt")) == 1


def test_leaves_stay_within_the_leaf_size() -> None:
    rng = np.random.default_rng(1)
    centre = rng.normal(size=64)
    vectors = np.stack([centre + rng.normal(scale=0.3, size=64) for _ in range(40)])
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    tree = build_tree([f"{n:032x}" for n in range(40)], vectors)
    leaves = [t for t in tree if not t.children]
    assert sum(len(t.members) for t in leaves) == 40
    assert max(len(t.members) for t in leaves) <= TOPIC_MAX_LEAF_SIZE
