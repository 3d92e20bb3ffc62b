"""Issue 19's rows of seed 003 (§2 auto-links on every write, §6 query filters) and seed
004 (`list`, the embedding cache's eviction, key/value limits), one test per row."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from commands import MnemoLedger
from commands.categories import CategoryNotAllowed
from ledger import InvalidInput, NewMemory, Provenance, Settings


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
