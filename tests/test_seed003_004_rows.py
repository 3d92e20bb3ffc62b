"""Issue 19's rows of seed 003 (§2 auto-links on every write, §6 query filters) and seed
004 (`list`, the embedding cache's eviction, key/value limits), one test per row."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.service.http import create_app
from mnemoledger.commands.write.categories import CategoryNotAllowed
from mnemoledger.ledger import InvalidInput, NewMemory, Provenance, Settings
from mnemoledger.ledger.policy import AGENT_LIST_LIMIT
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.recall import Recall
from mnemoledger.projections.embeddings.cache import EmbeddingCache, text_key


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    ledger = MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")
    try:
        yield ledger
    finally:
        ledger.close()


def remember(memory: MnemoLedger, *items: NewMemory, user: str = "maya") -> list[str]:
    """Store memories as they are (no LLM stage), in one command; returns their ids."""
    provenance = Provenance(user_id=user, actor="tester", agent_id="writer")
    return [m.id.hex for m in memory.ledger.add(provenance, list(items))]


def found(memory: MnemoLedger, query: str, **kwargs: Any) -> set[str]:
    kwargs.setdefault("agent", "supervisor")
    kwargs.setdefault("top_k", 10)
    return {r.id for r in memory.query(query, user="maya", **kwargs).results}


# --- seed 003 §6: memory.query filters ------------------------------------------------------


def test_seed003_s6_importance_on_the_seed_scale(memory: MnemoLedger) -> None:
    low, mid, high = remember(
        memory,
        NewMemory("Maya tea task low", category="tasks", importance=0.0),  # imp=1
        NewMemory("Maya tea task mid", category="tasks", importance=0.5),  # imp=3
        NewMemory("Maya tea task high", category="tasks", importance=1.0),  # imp=5
    )
    everything = {low, mid, high}
    # the seed's own example: 1..5 admits every memory
    assert found(memory, "Maya tea task", filters={"importance_min": 1, "importance_max": 5}) == (
        everything
    )
    assert found(memory, "Maya tea task", filters={"importance_min": 3}) == {mid, high}
    assert found(memory, "Maya tea task", filters={"importance_max": 3}) == {low, mid}
    # bounds at or below 1 stay on the ledger's 0-1 scale, unless the scale is named
    assert found(memory, "Maya tea task", filters={"importance_min": 0.6}) == {high}
    assert found(
        memory, "Maya tea task", filters={"importance_min": 1, "importance_scale": "1-5"}
    ) == (everything)
    assert found(memory, "Maya tea task", filters={"importance_min": 1}) == {high}
    with pytest.raises(InvalidInput, match="outside the 1-5"):
        found(memory, "Maya tea task", filters={"importance_min": 0.5, "importance_max": 4})
    with pytest.raises(InvalidInput, match="outside the 1-5"):
        found(memory, "Maya tea task", filters={"importance_max": 6})


def test_seed003_s6_category_filter_key(memory: MnemoLedger) -> None:
    task, goal = remember(
        memory,
        NewMemory("Maya ships the tea app", category="tasks"),
        NewMemory("Maya wants the tea app live", category="goals"),
    )
    assert found(memory, "Maya tea app") == {task, goal}
    assert found(memory, "Maya tea app", filters={"category": "tasks"}) == {task}
    assert found(memory, "Maya tea app", filters={"category": ["tasks", "goals"]}) == {task, goal}
    # with `categories`, the filter narrows them
    assert found(
        memory, "Maya tea app", categories=["tasks", "goals"], filters={"category": ["goals"]}
    ) == {goal}
    # the allowlist holds for the filter as for `categories`
    with pytest.raises(CategoryNotAllowed):
        found(memory, "Maya tea app", agent="planner", filters={"category": "preferences"})
    with pytest.raises(CategoryNotAllowed):
        found(
            memory,
            "Maya tea app",
            agent="planner",
            categories=["tasks"],
            filters={"category": "tone"},
        )


def test_seed003_s6_pinned_filter_reads_the_lifecycle_tag(memory: MnemoLedger) -> None:
    tagged, metadata_only, plain = remember(
        memory,
        NewMemory("Maya tea rule one", category="tasks", tags=["pinned"]),
        NewMemory("Maya tea rule two", category="tasks", metadata={"pinned": True}),
        NewMemory("Maya tea rule three", category="tasks"),
    )
    assert found(memory, "Maya tea rule", filters={"pinned": True}) == {tagged}
    assert found(memory, "Maya tea rule", filters={"pinned": False}) == {metadata_only, plain}


def test_seed003_s6_context_all_counts_toward_top_k(memory: MnemoLedger) -> None:
    profile = remember(
        memory,
        NewMemory("Preferred name is Ana", category="profile", importance=0.9),
        NewMemory("Ana is a nurse in Porto", category="profile", importance=0.6),
        NewMemory("Ana was born in Braga", category="profile", importance=0.3),
    )
    remember(memory, NewMemory("Ship the billing export", category="tasks"))
    answer = memory.query("billing export", agent="supervisor", user="maya", top_k=2)
    assert [r.id for r in answer.results] == profile[:2], "top_k bounds all, most important first"
    answer = memory.query("billing export", agent="supervisor", user="maya", top_k=4)
    assert [r.id for r in answer.results][:3] == profile
    assert len(answer.results) == 4, "searched memories fill what is left"


# --- seed 003 §2: auto-links on every write ---------------------------------------------------


def test_seed003_s2_update_links_the_new_content(memory: MnemoLedger) -> None:
    tea, job = remember(
        memory,
        NewMemory("Maya drinks green tea every morning"),
        NewMemory("Maya works as a nurse in Porto"),
    )
    assert memory.get(job).links == []
    updated = memory.update(job, "Maya drinks green tea every evening")
    [edge] = updated.links
    assert (edge.from_id, edge.to, edge.type) == (job, tea, "auto")
    assert 0.5 <= edge.strength <= 1.0
    events = [e.type for e in memory.history(job)]
    assert events[-2:] == ["MemoryUpdated", "MemoryLinked"], "one save: update, then its edge"


def test_seed003_s2_ingest_links_what_it_adds(memory: MnemoLedger) -> None:
    [tea] = remember(memory, NewMemory("Maya drinks green tea every morning"))
    result = memory.ingest(
        [
            {"role": "user", "content": "I prefer green tea every morning."},
            {"role": "assistant", "content": "Noted."},
        ],
        user="maya",
    )
    [added] = [m for m in result.memories if "green tea" in m.content]
    edges = {(e.from_id, e.to, e.type) for e in memory.get(added.id).links}
    assert (added.id, tea, "auto") in edges
    linked = [e for e in memory.log(event_type="MemoryLinked") if e.causation_id]
    assert linked and {e.causation_id for e in linked} == {result.command_id}


# --- seed 004 §7: the embedding cache evicts what is unused for 30 days ----------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now

    def days(self, days: float) -> None:
        self.now += days * 86_400


def test_seed004_s7_embedding_cache_evicts_entries_unused_for_30_days(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite3"
    clock = Clock()
    vector = np.ones(4, dtype=np.float32).tobytes()
    cache = EmbeddingCache(path, clock=clock)
    cache.put_many("m", [(text_key("kept"), vector), (text_key("unused"), vector)])
    cache.close()
    clock.days(20)
    cache = EmbeddingCache(path, clock=clock)
    assert cache.evicted == 0
    assert set(cache.get_many("m", [text_key("kept")])) == {text_key("kept")}  # used: day 20
    cache.close()
    clock.days(11)  # day 31: "unused" was last used 31 days ago, "kept" 11
    cache = EmbeddingCache(path, clock=clock)
    assert cache.evicted == 1
    assert set(cache.get_many("m", [text_key("kept"), text_key("unused")])) == {text_key("kept")}
    cache.close()
    clock.days(29)  # read again on day 31: still there on day 60
    with_none = EmbeddingCache(path, clock=clock, max_unused_days=None)
    assert with_none.evicted == 0 and with_none.count() == 1
    assert with_none.evict_unused(28) == 1 and with_none.count() == 0
    with_none.close()


def test_seed004_s7_a_cache_without_last_use_counts_every_vector_as_used(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite3"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE embeddings (model TEXT NOT NULL, text_sha256 BLOB NOT NULL, "
        "vector BLOB NOT NULL, PRIMARY KEY (model, text_sha256))"
    )
    db.execute("INSERT INTO embeddings VALUES ('m', ?, ?)", (text_key("old"), b"\0" * 16))
    db.commit()
    db.close()
    clock = Clock()
    cache = EmbeddingCache(path, clock=clock)
    assert cache.evicted == 0 and cache.count() == 1
    cache.close()
    clock.days(31)
    cache = EmbeddingCache(path, clock=clock)
    assert cache.evicted == 1 and cache.count() == 0
    cache.close()


# --- seed 004 §15: key/value limits wherever keys and values are written ---------------------


def test_seed004_s15_key_and_value_limits_on_every_write(memory: MnemoLedger) -> None:
    with pytest.raises(InvalidInput, match="key is longer than 128"):
        remember(memory, NewMemory("Maya drinks green tea", key="k" * 129))
    [keyed] = remember(memory, NewMemory("Maya drinks green tea", key="k" * 128))
    [plain] = remember(memory, NewMemory("Maya works as a nurse"))
    events = memory.ledger.last_position()
    with pytest.raises(InvalidInput, match="at most 2048"):
        memory.update(keyed, "tea " * 513)  # 2051 characters once trimmed
    assert memory.ledger.last_position() == events, "a refused update writes nothing"
    assert memory.update(keyed, "t" * 2048).content == "t" * 2048
    # a memory without a key keeps the content limit
    assert len(memory.update(plain, "n" * 4000).content) == 4000


# --- seed 004 §5: list by namespace prefix, most accessed first, at most 50 -----------------


def listed_seed(memory: MnemoLedger) -> tuple[str, str, str, str]:
    """Four memories: three under `tacit/...`, served 2, 1 and 0 times, one elsewhere."""
    twice, once, never, elsewhere = remember(
        memory,
        NewMemory("Maya prefers tabs", namespace="tacit/preferences"),
        NewMemory("Maya writes tersely", namespace="tacit/personality"),
        NewMemory("Maya likes dark mode", namespace="tacit/preferences"),
        NewMemory("Maya met Anna", namespace="entity/people"),
    )
    provenance = Provenance(user_id="maya", actor="tester", agent_id="writer")
    for served in ([twice, once], [twice]):
        with acting_as(provenance):
            recall = Recall(
                query="q", categories=[], memory_ids=served, return_mode="bullets", top_k=3
            )
        memory.ledger.save(recall)
    return twice, once, never, elsewhere


def test_seed004_s5_list_by_namespace_prefix_most_accessed_first(memory: MnemoLedger) -> None:
    twice, once, never, elsewhere = listed_seed(memory)
    by_id = [m.id for m in memory.list(user="maya")]
    assert by_id == sorted([twice, once, never, elsewhere]), "the default listing is by id"
    listed = memory.list(user="maya", namespace="tacit", order="access")
    assert [m.id for m in listed] == [twice, once, never]
    assert [m.id for m in memory.list(user="maya", order="access", limit=2)] == [twice, once]
    with pytest.raises(InvalidInput, match="order"):
        memory.list(user="maya", order="popular")  # type: ignore[arg-type]
    for _ in range(AGENT_LIST_LIMIT):
        remember(memory, NewMemory("Maya filler fact", namespace="tacit/filler"))
    result = CliRunner().invoke(
        cli, ["--home", str(memory.settings.home), "list", "--user", "maya", "--top", "--json"]
    )
    assert result.exit_code == 0, result.output
    shown = [m["id"] for m in json.loads(result.output)]
    assert len(shown) == AGENT_LIST_LIMIT and shown[:2] == [twice, once]


def test_seed004_s5_http_list_takes_namespace_order_and_limit(home: Path) -> None:
    settings = Settings(home=home, embedder="hashing")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        twice, once, never, elsewhere = listed_seed(memory)
        key = memory.create_key(agent="supervisor", users=["maya"], admin=True).key
    app = create_app(lambda: MnemoLedger(settings=settings, actor="tester"))
    with TestClient(app, headers={"Authorization": f"Bearer {key}"}) as http:
        everything = http.get("/memories", params={"user_id": "maya"})
        assert [m["id"] for m in everything.json()] == sorted([twice, once, never, elsewhere])
        params = {"user_id": "maya", "namespace": "tacit/", "order": "access", "limit": 2}
        assert [m["id"] for m in http.get("/memories", params=params).json()] == [twice, once]
        assert http.get("/memories", params={"user_id": "maya", "order": "x"}).status_code == 422
    with MnemoLedger(settings=settings, actor="tester") as memory:
        stylist = memory.create_key(agent="stylist", users=["maya"]).key
    with TestClient(app, headers={"Authorization": f"Bearer {stylist}"}) as http:
        readable = {m["id"] for m in http.get("/memories", params={"user_id": "maya"}).json()}
        assert readable < {twice, once, never, elsewhere}, "the stylist reads fewer categories"
        params = {"user_id": "maya", "order": "access"}
        assert {m["id"] for m in http.get("/memories", params=params).json()} == readable
