"""The minimal relations layer (seed 003 §2): the `graph` read model, automatic links on
write, the retrieval boost and the related bullets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from mnemoledger import MnemoLedger
from mnemoledger.commands.options import CliState
from mnemoledger.commands.recall.graph_cli import graph
from mnemoledger.commands.recall.relations import (
    apply_links,
    auto_links,
    related_bullets,
    relation_boost,
)
from mnemoledger.ledger import InvalidInput, MemoryNotFound, NewMemory, Provenance, Settings
from mnemoledger.ledger.policy import (
    AUTO_LINK_TYPE,
    RELATED_BULLET_PREFIX,
    RELATED_BULLETS_MAX,
    RELATION_BOOST_WEIGHT,
    SENSITIVE,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.graph import GraphProjection

USER = "maya"
PROVENANCE = Provenance(user_id=USER, actor="tester")


GraphLedger = MnemoLedger  # the facade carries the graph API and read model


@pytest.fixture
def memory(home: Path) -> Iterator[GraphLedger]:
    m = GraphLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")
    try:
        yield m
    finally:
        m.close()


def remember(m: MnemoLedger, *texts: str, user: str = USER, **fields: Any) -> list[str]:
    provenance = Provenance(user_id=user, actor="tester")
    saved = m.ledger.add(provenance, [NewMemory(text, **fields) for text in texts])
    return [s.id.hex for s in saved]


def link(m: MnemoLedger, source: str, target: str, strength: float, kind: str = "related") -> None:
    m.ledger.link(PROVENANCE, source, target, kind, strength)


def supersede(m: MnemoLedger, old: str, new: str) -> None:
    aggregate = m.ledger.memory(old)
    with acting_as(PROVENANCE):
        aggregate.supersede(new, "test")
    m.ledger.save(aggregate)


def pairs(edges: list[Any]) -> list[tuple[str, str, str, float]]:
    return [(e.from_id, e.to_id, e.type, round(e.strength, 4)) for e in edges]


def dump(model: GraphProjection) -> dict[str, list[tuple[Any, ...]]]:
    return {
        table: model.db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
        for table in ("edges", "nodes")
    }


# --- the read model ----------------------------------------------------------------------


def test_subclass_registers_the_projection_once(memory: GraphLedger) -> None:
    names = [p.name for p in memory.runner.projections]
    assert names.count("graph") == 1
    assert memory.rebuild("graph").projections == ["graph"]


def test_links_in_both_directions_are_one_edge_with_the_strongest_strength(
    memory: GraphLedger,
) -> None:
    a, b = remember(memory, "Maya has a dog called Rex", "Rex is a golden retriever")
    link(memory, a, b, 0.4)
    link(memory, b, a, 0.7)
    link(memory, a, b, 0.5)  # weaker again: the relation keeps 0.7
    memory.refresh()
    model = memory.graph_model
    assert pairs(model.edges(USER)) == [(a, b, "related", 0.7)]  # first recorded direction
    assert pairs(model.neighbours(b)) == [(b, a, "related", 0.7)]  # oriented from b
    assert pairs(model.neighbours(a)) == [(a, b, "related", 0.7)]
    assert model.counts() == {"edges": 1, "nodes": 2}
    assert [(e.from_id, e.to) for e in memory.get(b).links] == [(b, a)]  # get reads the graph
    assert memory.stats().links == 1


def test_a_manual_type_is_never_overwritten_by_auto(memory: GraphLedger) -> None:
    a, b, c, d = remember(memory, "one", "two", "three", "four")
    link(memory, a, b, 0.5, "friend")
    target = memory.ledger.memory(b)
    changed = apply_links({b: target}, [(b, a, 0.9)], PROVENANCE)
    memory.ledger.save(*changed)
    auto = memory.ledger.memory(c)
    memory.ledger.save(*apply_links({c: auto}, [(c, d, 0.6)], PROVENANCE))
    link(memory, d, c, 0.3, "cause")  # a manual type replaces auto; strength stays max
    memory.refresh()
    edges = {(e.from_id, e.to_id): (e.type, e.strength) for e in memory.graph_model.edges(USER)}
    assert edges == {(a, b): ("friend", 0.9), (c, d): ("cause", 0.6)}


def test_neighbours_related_and_max_related_strength(memory: GraphLedger) -> None:
    a, b, c, d = remember(memory, "alpha", "beta", "gamma", "delta")
    link(memory, a, b, 0.9)
    link(memory, c, a, 0.6)
    memory.refresh()
    model = memory.graph_model
    assert [e.to_id for e in model.neighbours(a)] == [b, c]
    assert [e.to_id for e in model.neighbours(a, 0.7)] == [b]
    assert [e.to_id for e in model.related(a, limit=1)] == [b]
    assert model.related(a, limit=0) == []
    assert model.max_related_strength([a, b, c, d]) == {a: 0.9, b: 0.9, c: 0.6, d: 0.0}
    assert model.max_related_strength([]) == {}
    assert [(n.memory_id, n.state, n.layer) for n in model.nodes(USER)] == sorted(
        (x, "active", "buffer") for x in (a, b, c, d)
    )


def test_active_only_hides_edges_to_superseded_and_forgotten_memories(
    memory: GraphLedger,
) -> None:
    a, b, c, replacement = remember(memory, "alpha", "beta", "gamma", "beta prime")
    link(memory, a, b, 0.9)
    link(memory, a, c, 0.8)
    supersede(memory, b, replacement)
    memory.forget(c)
    model = memory.graph_model
    memory.refresh()
    assert [e.to_id for e in model.neighbours(a)] == [b, c]  # nothing is removed
    assert model.neighbours(a, active_only=True) == []
    assert model.edges(USER, active_only=True) == []
    assert model.max_related_strength([a]) == {a: 0.0}
    assert model.related(a) == []
    assert memory.graph_edges(user=USER) == []
    assert len(memory.graph_edges(user=USER, active_only=False)) == 2
    node = model.node(b)
    assert node is not None and node.state == "superseded"

    memory.restore(c)
    assert [e.to for e in memory.graph_edges(user=USER, memory=a)] == [c]
    assert model.max_related_strength([a, c]) == {a: 0.8, c: 0.8}


def test_rebuild_equals_incremental(memory: GraphLedger) -> None:
    ids = remember(memory, "alpha", "beta", "gamma", "delta", "epsilon")
    other = remember(memory, "someone else's", "memories", user="sam")
    link(memory, ids[0], ids[1], 0.4)
    link(memory, ids[1], ids[0], 0.8, "friend")
    memory.ledger.save(
        *apply_links({ids[2]: memory.ledger.memory(ids[2])}, [(ids[2], ids[3], 0.7)], PROVENANCE)
    )
    link(memory, ids[3], ids[4], 0.2)
    memory.ledger.link(Provenance(user_id="sam", actor="tester"), other[0], other[1], "x", 0.5)
    supersede(memory, ids[1], ids[4])
    memory.forget(ids[3])
    memory.restore(ids[3])
    memory.forget(ids[2])
    memory.refresh()
    incremental = dump(memory.graph_model)
    assert len(incremental["edges"]) == 4 and len(incremental["nodes"]) == 7
    memory.rebuild("graph")
    assert dump(memory.graph_model) == incremental
    assert memory.graph_model.position() == memory.ledger.last_position()


# --- automatic links (write path) -------------------------------------------------------

STORED = [
    "Maya has a dog called Rex",
    "Maya walks her dog Rex every morning",
    "Rex the dog likes the park",
    "Maya's dog Rex is a golden retriever",
    "Maya is allergic to peanuts",
    "Maya runs a marathon every autumn",
    "The dog park is near Maya's flat",
]


def similarities(m: MnemoLedger, vector: np.ndarray[Any, Any], ids: list[str]) -> dict[str, float]:
    scores = {}
    for memory_id in ids:
        stored = m.vectors.vector(memory_id)
        assert stored is not None
        scores[memory_id] = m.vectors.calibration.to_reference(float(stored @ vector))
    return scores


def test_auto_links_are_the_top_k_neighbours_above_link_min(memory: GraphLedger) -> None:
    ids = remember(memory, *STORED)
    remember(memory, "Sam has a dog called Rex", user="sam")  # never another user's
    memory.refresh()
    [vector] = memory.embedder.passages(["Maya's dog Rex loves long walks"])
    scores = similarities(memory, vector, ids)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    # five candidates pass: top_k must cut them to two (the bar halfway to the sixth, so
    # float rounding in the index's own inner products cannot move one across it)
    link_min = (ranked[4][1] + ranked[5][1]) / 2
    links = auto_links([("new", vector)], USER, memory.vectors, top_k=2, link_min=link_min)
    assert [(s, t) for s, t, _ in links] == [("new", ranked[0][0]), ("new", ranked[1][0])]
    assert [w for *_, w in links] == pytest.approx([ranked[0][1], ranked[1][1]], abs=1e-5)

    wide = auto_links([("new", vector)], USER, memory.vectors, top_k=10, link_min=link_min)
    assert {t for _, t, _ in wide} == {memory_id for memory_id, s in ranked if s >= link_min}
    assert all(w >= link_min for *_, w in wide) and len(wide) == 5

    excluded = {ranked[0][0]}
    links = auto_links(
        [("new", vector)], USER, memory.vectors, top_k=2, link_min=link_min, exclude=excluded
    )
    assert [t for _, t, _ in links] == [ranked[1][0], ranked[2][0]]
    assert auto_links([("new", vector)], USER, memory.vectors, top_k=0) == []
    assert auto_links([("new", vector)], USER, memory.vectors, link_min=1.01) == []


def test_an_updated_memory_is_never_linked_to_itself(memory: GraphLedger) -> None:
    ids = remember(memory, *STORED)
    memory.refresh()
    vectors = memory.embedder.passages(STORED)
    for memory_id, vector in zip(ids, vectors, strict=True):
        links = auto_links([(memory_id, vector)], USER, memory.vectors, top_k=3, link_min=-1.0)
        assert len(links) == 3
        assert all(s == memory_id and t != memory_id for s, t, _ in links)
        assert all(0.0 <= w <= 1.0 for *_, w in links)


def test_a_batch_links_its_new_memories_once_per_pair(memory: GraphLedger) -> None:
    texts = ["Maya adopted a cat named Luna", "Luna the cat sleeps on Maya's bed"]
    vectors = memory.embedder.passages(texts)
    peer = memory.vectors.calibration.to_reference(float(vectors[0] @ vectors[1]))
    new = [("n1", vectors[0]), ("n2", vectors[1]), ("n1", vectors[0])]  # a repeated id too
    links = auto_links(new, USER, memory.vectors, top_k=3, link_min=peer - 0.01)
    assert [(s, t) for s, t, _ in links] == [("n1", "n2")]
    assert links[0][2] == pytest.approx(peer, abs=1e-6)
    assert auto_links(new, USER, memory.vectors, link_min=peer + 0.01) == []
    assert auto_links(new, USER, memory.vectors, link_min=0.0, exclude={"n2"}) == []


def test_auto_links_saved_with_the_drafts_appear_in_the_graph(memory: GraphLedger) -> None:
    ids = remember(memory, *STORED)
    memory.refresh()
    provenance = Provenance(user_id=USER, actor="pipeline", causation_id="c" * 32)
    texts = ["Maya's dog Rex loves long walks", "Rex sleeps in Maya's dog basket"]
    drafts = memory.ledger.draft(provenance, [NewMemory(t) for t in texts])
    vectors = memory.embedder.passages(texts)
    new = [(d.id.hex, v) for d, v in zip(drafts, vectors, strict=True)]
    links = auto_links(new, USER, memory.vectors, top_k=2, link_min=0.3, exclude={ids[0]})
    assert links and all(t != ids[0] for _, t, _ in links)
    changed = apply_links({d.id.hex: d for d in drafts}, links, provenance)
    assert {m.id.hex for m in changed} <= {d.id.hex for d in drafts}
    assert apply_links({d.id.hex: d for d in drafts}, links, provenance) == []  # held already
    memory.ledger.save(*drafts)
    memory.refresh()
    got = {
        frozenset((e.from_id, e.to_id)): (e.type, e.strength)
        for e in memory.graph_model.edges(USER)
    }
    want = {frozenset((s, t)): (AUTO_LINK_TYPE, round(w, 6)) for s, t, w in links}
    assert {pair: (kind, round(w, 6)) for pair, (kind, w) in got.items()} == want
    linked = memory.log(event_type="MemoryLinked")
    assert {(e.actor, e.causation_id) for e in linked} == {("pipeline", "c" * 32)}

    with pytest.raises(MemoryNotFound):
        apply_links({}, [("f" * 32, ids[1], 0.9)], provenance)
    with pytest.raises(InvalidInput):
        apply_links({d.id.hex: d for d in drafts}, [(drafts[0].id.hex, ids[1], 1.5)], provenance)


# --- retrieval helpers -----------------------------------------------------------------


def test_relation_boost_arithmetic() -> None:
    assert relation_boost(0.5, 0.8) == pytest.approx(0.5 + RELATION_BOOST_WEIGHT * 0.8)
    assert relation_boost(0.5, 0.0) == 0.5
    assert relation_boost(0.2, 1.0, weight=0.25) == pytest.approx(0.45)


def test_related_bullets_are_the_strongest_active_relations_up_to_the_limit(
    memory: GraphLedger,
) -> None:
    a, b, c, d, e, f = remember(memory, "hit", "beta", "gamma", "delta", "gone", "hit two")
    [secret] = remember(memory, "secret", sensitivity=SENSITIVE)
    link(memory, a, b, 0.9)
    link(memory, c, a, 0.8)
    link(memory, a, d, 0.7)
    link(memory, a, e, 0.95)
    link(memory, a, secret, 0.99)
    link(memory, f, d, 0.85)
    memory.forget(e)
    memory.refresh()
    bullets = related_bullets(memory.graph_model, memory.layers, [a])
    assert len(bullets) == RELATED_BULLETS_MAX
    assert bullets == [RELATED_BULLET_PREFIX + "beta", RELATED_BULLET_PREFIX + "gamma"]
    assert bullets[0] == "↳ related: beta"
    assert related_bullets(memory.graph_model, memory.layers, [a], limit=1) == [bullets[0]]
    # retrieved memories are not repeated; a relation of a later hit can be the strongest
    assert related_bullets(memory.graph_model, memory.layers, [a, b]) == [
        "↳ related: gamma",
        "↳ related: delta",
    ]
    assert related_bullets(memory.graph_model, memory.layers, [a, b, f]) == [
        "↳ related: delta",  # f's 0.85 edge beats a's 0.8 one to gamma
        "↳ related: gamma",
    ]
    assert related_bullets(memory.graph_model, memory.layers, [a, b, c, d, f]) == []
    assert related_bullets(memory.graph_model, memory.layers, []) == []
    assert related_bullets(memory.graph_model, memory.layers, [a], limit=0) == []


# --- CLI ------------------------------------------------------------------------------


def run(m: GraphLedger, *args: str) -> Any:
    return CliRunner().invoke(graph, list(args), obj=CliState(_ledger=m))


def test_graph_command_prints_edges(memory: GraphLedger) -> None:
    a, b, c = remember(memory, "alpha", "beta", "gamma")
    link(memory, a, b, 0.9, "friend")
    link(memory, c, a, 0.4)
    result = run(memory, "--user", USER, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [
        {"from": a, "to": b, "type": "friend", "strength": 0.9},
        {"from": c, "to": a, "type": "related", "strength": 0.4},
    ]
    result = run(memory, "--user", USER, "--memory", c, "--json")
    assert json.loads(result.output) == [{"from": c, "to": a, "type": "related", "strength": 0.4}]
    result = run(memory, "--user", USER, "--min-strength", "0.5", "--json")
    assert [e["to"] for e in json.loads(result.output)] == [b]
    memory.forget(b)
    assert [e["to"] for e in json.loads(run(memory, "--user", USER, "--json").output)] == [a]
    everything = json.loads(run(memory, "--user", USER, "--all", "--json").output)
    assert len(everything) == 2

    table = run(memory, "--user", USER, "--all")
    assert table.exit_code == 0 and "friend" in table.output and "0.900" in table.output
    assert "no edges" in run(memory, "--user", "nobody").output


def test_graph_command_refuses_unknown_or_foreign_memories(memory: GraphLedger) -> None:
    [a] = remember(memory, "alpha")
    [theirs] = remember(memory, "beta", user="sam")
    assert isinstance(run(memory, "--user", USER, "--memory", "f" * 32).exception, MemoryNotFound)
    assert isinstance(run(memory, "--user", USER, "--memory", theirs).exception, InvalidInput)
    assert run(memory, "--user", USER, "--memory", a).exit_code == 0
    assert run(memory, "--user", USER, "--min-strength", "2").exit_code == 2


def test_consolidation_moves_and_ends_show_in_the_graph(memory: GraphLedger) -> None:
    a, b, c = remember(memory, "Maya has a dog called Rex", "Rex is a retriever", "Rex barks")
    link(memory, a, b, 0.9)
    link(memory, a, c, 0.8)
    actor = Provenance(user_id=USER, actor="tester")
    promoted, evicted = memory.ledger.memory(b), memory.ledger.memory(c)
    with acting_as(actor):
        promoted.promote("working", via="score", epoch=1)
        evicted.evict("capacity", epoch=1)
    memory.ledger.save(promoted, evicted)
    memory.refresh()
    model = memory.graph_model
    assert (model.node(b).layer, model.node(b).state) == ("working", "active")  # type: ignore[union-attr]
    assert model.node(c).state == "evicted"  # type: ignore[union-attr]
    assert pairs(model.neighbours(a, active_only=True)) == [(a, b, "related", 0.9)]
    assert model.max_related_strength([c]) == {c: 0.0}, "an evicted memory boosts nothing"
