"""memory.query (seed 003 §6, §11), categories and allowlists (§5), the delta header (§1) and
the RecallServed access counts."""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import mnemoledger.commands.recall.query as query_module
from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.recall.query import (
    BulletResult,
    FullResult,
    QueryResult,
    estimate_tokens,
    rendered,
)
from mnemoledger.commands.write.categories import (
    CategoriesConfigError,
    CategoryNotAllowed,
    CategoryNotWritable,
    UnknownAgent,
    load_categories,
    parse_categories,
)
from mnemoledger.ledger import InvalidInput, NewMemory, Provenance, Settings
from mnemoledger.ledger.policy import DELTA_MAX_BULLETS, PROCEDURAL
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.layers import LayersProjection, effective_category

QueryLedger = MnemoLedger  # the facade carries the query API and the delta read model


@contextmanager
def opened(settings: Settings) -> Iterator[QueryLedger]:
    ledger = QueryLedger(settings=settings, actor="tester")
    try:
        yield ledger
    finally:
        ledger.close()


@pytest.fixture
def memory(home: Path) -> Iterator[QueryLedger]:
    with opened(Settings(home=home, embedder="hashing")) as m:
        yield m


def remember(
    memory: MnemoLedger,
    *items: NewMemory,
    user: str = "maya",
    agent: str | None = "writer",
    thread: str | None = None,
) -> list[str]:
    """Store memories as they are (no LLM stage), in one command; returns their ids."""
    provenance = Provenance(user_id=user, actor="tester", agent_id=agent, thread_id=thread)
    return [m.id.hex for m in memory.ledger.add(provenance, list(items))]


def in_thread(thread: str, agent: str = "writer") -> Provenance:
    return Provenance(user_id="maya", actor="tester", agent_id=agent, thread_id=thread)


def recalls(memory: MnemoLedger) -> list[Any]:
    return [e for e in memory.log() if e.type == "RecallServed"]


def output_tokens(result: QueryResult) -> int:
    header = estimate_tokens(result.header) if result.header else 0
    return header + sum(estimate_tokens(rendered(r)) for r in result.results)


# --- categories and allowlists (seed 003 §5) ----------------------------------------------


def test_shipped_config_is_the_seed_yaml() -> None:
    config = load_categories()
    assert config.spec("profile").context == "all"
    assert (config.spec("event").context, config.spec("event").rag_length) == ("rag", 30)
    assert config.spec("activity").rag_length == 50
    assert config.spec("tasks").context == "rag" and config.spec("tasks").rag_length is None
    assert config.allowlist("planner")[:3] == ["goals", "tasks", "projects"]
    assert config.allowlist("supervisor") == [
        "profile",
        "goals",
        "preferences",
        "event",
        "activity",
        "relationships",
        "tasks",
    ]


def test_disallowed_category_is_refused_before_any_search(
    memory: QueryLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember(memory, NewMemory("Ship v1 by September", category="tasks"))
    memory.refresh()
    calls: list[str] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append("search")
        raise AssertionError("searched")

    monkeypatch.setattr(query_module, "hybrid_search", spy)
    monkeypatch.setattr(memory.embedder, "query", lambda *a: calls.append("embed"))
    monkeypatch.setattr(memory.embedder, "passages", lambda *a: calls.append("embed"))
    events = memory.ledger.last_position()
    with pytest.raises(CategoryNotAllowed) as refused:
        memory.query(
            "deployment", agent="planner", user="maya", categories=["tasks", "preferences"]
        )
    message = str(refused.value)
    assert (
        "preferences" in message and "'planner'" in message and "tasks" not in message.split(";")[0]
    )
    assert isinstance(refused.value, InvalidInput)
    assert refused.value.disallowed == ["preferences"]
    assert calls == [], "a refused query must not embed or search"
    assert memory.ledger.last_position() == events, "nothing is written, no RecallServed"
    assert recalls(memory) == []


def test_an_agent_no_allowlist_names_gets_the_default_allowlist(memory: QueryLedger) -> None:
    remember(memory, NewMemory("Maya plays chess on Sundays", category="activity"))
    remember(memory, NewMemory("Maya's tone: dry humour", category="tone"))
    answer = memory.query("Maya chess humour", agent="helper", user="maya", top_k=5)
    assert [r.category for r in answer.results] == ["activity"]
    with pytest.raises(CategoryNotWritable, match="agent 'helper'"):
        memory.add(["Maya prefers a dry tone"], user="maya", agent="helper", category="tone")
    memory.add(["Maya starts a chess course"], user="maya", agent="helper", category="activity")


def test_unknown_agent_is_refused_without_a_default_allowlist(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cats.yaml"
    path.write_text("allowlists:\n  scribe: [notes]\n")
    monkeypatch.setattr(query_module, "hybrid_search", lambda *a, **k: pytest.fail("searched"))
    with opened(Settings(home=home, embedder="hashing", categories_file=path)) as memory:
        with pytest.raises(UnknownAgent, match="unknown agent 'intruder'"):
            memory.query("anything", agent="intruder", user="maya")
        with pytest.raises(UnknownAgent):
            memory.delta("t4", agent="intruder")
        assert recalls(memory) == []


def test_no_categories_means_the_whole_allowlist(memory: QueryLedger) -> None:
    remember(
        memory,
        NewMemory("Ship v1 by September", category="tasks"),
        NewMemory("Maya prefers green tea", category="preferences"),
        NewMemory("Maya studies medieval history", category="history"),
    )
    answer = memory.query("Ship v1 September green tea history", agent="planner", user="maya")
    assert {r.category for r in answer.results} == {"tasks"}
    answer = memory.query("green tea", agent="stylist", user="maya", top_k=5)
    assert [r.category for r in answer.results] == ["preferences"]


def test_custom_config_from_setting_and_environment(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cats.yaml"
    path.write_text(
        "categories:\n  custom:\n    - {name: notes, context: rag, rag_length: 1}\n"
        "allowlists:\n  scribe: [notes]\n"
    )
    settings = Settings(home=home, embedder="hashing", categories_file=path)
    with opened(settings) as memory:
        remember(
            memory,
            NewMemory("Maya likes tea in the morning", category="notes"),
            NewMemory("Maya likes tea in the evening", category="notes"),
        )
        answer = memory.query("Maya likes tea", agent="scribe", user="maya", top_k=5)
        assert len(answer.results) == 1, "rag_length caps the category"
        with pytest.raises(UnknownAgent):
            memory.query("tea", agent="planner", user="maya")
    monkeypatch.setenv("MNEMOLEDGER_CATEGORIES", str(path))
    assert load_categories(Settings(home=home)).allowlist("scribe") == ["notes"]
    path.write_text("allowlists: {a: [not valid]}\n")
    with pytest.raises(CategoriesConfigError):
        load_categories(Settings(home=home))
    with pytest.raises(CategoriesConfigError, match="rag_length"):
        parse_categories(
            "categories: {system: [{name: p, context: all, rag_length: 3}]}\nallowlists: {}\n"
        )


def test_context_all_categories_are_always_included(memory: QueryLedger) -> None:
    profile = remember(
        memory,
        NewMemory("Preferred name is Ana", category="profile", importance=0.9),
        NewMemory("Ana is a nurse in Porto", category="profile", importance=0.4),
    )
    remember(memory, NewMemory("Ship the billing export", category="tasks"))
    answer = memory.query(
        "billing export", agent="supervisor", user="maya", threshold=0.99, return_mode="full"
    )
    assert [r.id for r in answer.results][:2] == profile, "all first, most important first"
    assert all(isinstance(r, FullResult) for r in answer.results)
    contexts = [r.context for r in answer.results if isinstance(r, FullResult)]
    assert contexts[:2] == ["all", "all"]


def test_context_all_reads_derived_categories_too(memory: QueryLedger) -> None:
    written = remember(memory, NewMemory("Preferred name is Ana", category="profile"))
    derived = remember(
        memory,
        NewMemory("Ana is a nurse in Porto", namespace="tacit/user"),
        NewMemory("Ana's notes say she is left-handed", note_kind="user"),
        NewMemory("Ana likes jazz", namespace="tacit/preferences"),
        NewMemory("Ship the billing export", category="tasks"),
    )
    memory.runner.catch_up()
    ids = memory.layers.ids_in_categories("maya", ["profile"])
    assert ids == sorted(written + derived[:2])
    assert memory.layers.ids_in_categories("maya", ["goals"]) == []
    assert memory.layers.ids_in_categories("someone-else", ["profile"]) == []


def test_effective_category_mapping() -> None:
    assert effective_category("goals", PROCEDURAL, "entity/x", "user") == "goals"
    assert effective_category(None, PROCEDURAL, "default", None) == "procedural"
    assert effective_category(None, "semantic", "default", "user") == "profile"
    assert effective_category(None, "semantic", "tacit/preferences", None) == "preferences"
    assert effective_category(None, "semantic", "tacit/personality", None) == "style"
    assert effective_category(None, "semantic", "entity/default", None) == "relationships"
    assert effective_category(None, "episodic", "daily/2025-07-01", None) == "event"
    assert effective_category(None, "episodic", "default", None) == "event"
    assert effective_category(None, "semantic", "default", None) == "knowledge"
    assert effective_category(None, "semantic", "entityx", None) == "knowledge"


def test_category_is_validated_and_kept(memory: QueryLedger) -> None:
    with pytest.raises(InvalidInput, match="category"):
        remember(memory, NewMemory("x", category="not an identifier"))
    [memory_id] = remember(memory, NewMemory("Ship v1", category="tasks"))
    assert memory.get(memory_id).category == "tasks"
    assert memory.ledger.memory(memory_id).category == "tasks"


# --- filters, threshold, shapes, budget (seed 003 §6) ------------------------------------


def test_filters_are_applied_server_side(memory: QueryLedger) -> None:
    low, mid = remember(
        memory,
        NewMemory("Maya plans the tea trip", category="tasks", importance=0.1),
        NewMemory("Maya plans the tea party", category="tasks", importance=0.5),
        agent="helper",
    )
    time.sleep(0.01)
    between = datetime.now(UTC)
    [high] = remember(
        memory, NewMemory("Maya plans the tea tasting", category="tasks", importance=0.9)
    )
    [goal] = remember(memory, NewMemory("Maya plans tea goals", category="goals"))
    remember(memory, NewMemory("Maya plans tea", category="tasks"), user="someone-else")

    def ids(**kwargs: Any) -> set[str]:
        filters = kwargs.pop("filters", {})
        answer = memory.query(
            "Maya plans tea", agent="planner", user="maya", top_k=10, filters=filters, **kwargs
        )
        return {r.id for r in answer.results}

    assert ids() == {low, mid, high, goal}
    assert ids(filters={"importance_min": 0.4, "importance_max": 0.6}) == {mid, goal}
    assert ids(filters={"importance_min": 0.5}) == {mid, high, goal}
    assert ids(filters={"updated_after": between.isoformat()}) == {high, goal}
    assert ids(filters={"updated_before": between.isoformat()}) == {low, mid}
    assert ids(filters={"updated_after": (between + timedelta(days=1)).date().isoformat()}) == set()
    assert ids(filters={"agent_id": "helper"}) == {low, mid}
    assert ids(filters={"actor_id": "tester"}) == {low, mid, high, goal}
    assert ids(filters={"actor_id": "nobody"}) == set()
    assert ids(categories=["goals"]) == {goal}
    assert ids(categories=["tasks"], filters={"agent_id": "writer"}) == {high}
    with pytest.raises(InvalidInput, match="importance"):
        ids(filters={"importance_min": 0.8, "importance_max": 0.2})
    with pytest.raises(InvalidInput, match="user"):
        memory.query("tea", agent="planner", user="maya", filters={"user_id": "other"})


def test_role_pinned_and_run_filters(memory: QueryLedger) -> None:
    pinned, said = remember(
        memory,
        NewMemory("Maya tea rule one", category="tasks", tags=["pinned"]),
        NewMemory("Maya tea rule two", category="tasks", metadata={"role": "assistant"}),
        thread="run-7",
    )
    [plain] = remember(memory, NewMemory("Maya tea rule three", category="tasks"))

    def ids(**filters: Any) -> set[str]:
        answer = memory.query("Maya tea rule", agent="planner", user="maya", filters=filters)
        return {r.id for r in answer.results}

    assert ids(pinned=True) == {pinned}
    assert ids(pinned=False) == {said, plain}
    assert ids(role="assistant") == {said}
    assert ids(run_id="run-7") == {pinned, said}


def test_bullets_and_full_shapes(memory: QueryLedger) -> None:
    [task] = remember(memory, NewMemory("Ship v1 by September", category="tasks"))
    bullets = memory.query("Ship v1", agent="planner", user="maya")
    assert [r.model_dump() for r in bullets.results] == [
        {"id": task, "category": "tasks", "text": "[tasks] Ship v1 by September"}
    ]
    assert set(bullets.model_dump()) >= {"header", "results", "rev"}
    full = memory.query("Ship v1", agent="planner", user="maya", return_mode="full")
    [result] = full.results
    assert isinstance(result, FullResult)
    dumped = result.model_dump(by_alias=True)
    assert dumped["id"] == task and dumped["category"] == "tasks"
    assert dumped["content"] == "Ship v1 by September" and dumped["state"] == "active"
    assert isinstance(dumped["score"], float) and {"importance", "layer", "links"} <= set(dumped)


def test_threshold_drops_low_similarity_results(memory: QueryLedger) -> None:
    exact, other = remember(
        memory,
        NewMemory("Maya ships the billing export", category="tasks"),
        NewMemory("Maya ships a garden fence", category="tasks"),
    )
    assert {r.id for r in memory.query("Maya ships", agent="planner", user="maya").results} == {
        exact,
        other,
    }
    answer = memory.query(
        "Maya ships the billing export",
        agent="planner",
        user="maya",
        threshold=0.99,
        return_mode="full",
    )
    assert [r.id for r in answer.results] == [exact]
    assert isinstance(answer.results[0], FullResult)
    assert answer.results[0].relevance is not None and answer.results[0].relevance >= 0.99
    none = memory.query("Maya ships", agent="planner", user="maya", threshold=1.0)
    assert none.results == []


def test_budget_is_respected(memory: QueryLedger) -> None:
    remember(
        memory,
        *[
            NewMemory(f"Maya task number {n} is about tea and deployment", category="tasks")
            for n in range(8)
        ],
        thread="t1",
    )
    unbounded = memory.query("tea deployment", agent="planner", user="maya", top_k=8, thread="t1")
    assert len(unbounded.results) == 8 and unbounded.header is not None
    for budget in (5, 20, 40, 70, 120):
        for mode in ("bullets", "full"):
            answer = memory.query(
                "tea deployment",
                agent="planner",
                user="maya",
                top_k=8,
                budget_tokens=budget,
                return_mode=mode,
                thread="t1",
                since_rev=0,
            )
            assert output_tokens(answer) == answer.tokens <= budget
    answer = memory.query("tea deployment", agent="planner", user="maya", top_k=8, budget_tokens=40)
    costs = [estimate_tokens(rendered(r)) for r in unbounded.results]
    assert 0 < len(answer.results) < 8
    assert answer.tokens + costs[len(answer.results)] > 40, "stops only when the next is too big"


# --- what is never served -----------------------------------------------------------------


def test_forgotten_superseded_expired_and_sensitive_are_never_served(memory: QueryLedger) -> None:
    kept, forgotten, superseded, expired, sensitive, profile_gone = remember(
        memory,
        NewMemory("Maya tea task kept", category="tasks"),
        NewMemory("Maya tea task forgotten", category="tasks"),
        NewMemory("Maya tea task superseded", category="tasks"),
        NewMemory("Maya tea task expired", category="tasks"),
        NewMemory("Maya tea task sensitive", category="tasks", sensitivity="sensitive"),
        NewMemory("Maya tea profile forgotten", category="profile"),
    )
    provenance = Provenance(user_id="maya", actor="tester")
    memory.ledger.forget(provenance, forgotten)
    memory.ledger.forget(provenance, profile_gone)
    [replacement] = memory.ledger.draft(provenance, [NewMemory("Maya tea task new", "semantic")])
    old = memory.ledger.memory(superseded)
    with acting_as(provenance):
        old.supersede(replacement.id.hex, "reconstructed")
    memory.ledger.save(replacement, old)
    memory.ledger.set_ttl(provenance, expired, 1e-9)
    time.sleep(0.01)
    for agent in ("planner", "supervisor"):
        for mode in ("bullets", "full"):
            answer = memory.query(
                "Maya tea task", agent=agent, user="maya", top_k=20, return_mode=mode
            )
            served = {r.id for r in answer.results}
            assert not served & {forgotten, superseded, expired, sensitive, profile_gone}
    planner = memory.query("Maya tea task", agent="planner", user="maya", top_k=20)
    assert {r.id for r in planner.results} == {kept}


def test_procedural_is_excluded_unless_requested(memory: QueryLedger) -> None:
    steps, tasky = remember(
        memory,
        NewMemory("1. Open the deploy dashboard.\n2. Press deploy.", kind=PROCEDURAL),
        NewMemory("1. Deploy the tea service.", kind=PROCEDURAL, category="tasks"),
    )
    [task] = remember(memory, NewMemory("Deploy the tea service on Friday", category="tasks"))
    default = memory.query("deploy dashboard tea service", agent="executor", user="maya", top_k=10)
    assert {r.id for r in default.results} == {task}
    named = memory.query(
        "deploy dashboard tea service",
        agent="executor",
        user="maya",
        top_k=10,
        categories=["procedural", "tasks"],
    )
    assert {r.id for r in named.results} == {steps, task, tasky}
    with pytest.raises(CategoryNotAllowed):
        memory.query("deploy", agent="stylist", user="maya", categories=["procedural"])


# --- RecallServed and access counts --------------------------------------------------------


def test_access_counts_follow_recall_served(memory: QueryLedger) -> None:
    [task] = remember(memory, NewMemory("Ship v1 by September", category="tasks"))
    memory.refresh()
    row = memory.layers.get(task)
    assert row is not None and (row.access_count, row.last_accessed) == (0, None)
    first = memory.query("Ship v1", agent="planner", user="maya", thread="t9")
    [served] = recalls(memory)
    assert served.agent_id == "planner" and served.thread_id == "t9"
    assert served.user_id == "maya" and served.actor == "tester"
    assert served.data["memory_ids"] == [task] and served.data["query"] == "Ship v1"
    assert served.data["categories"] == ["goals", "tasks", "projects"]
    assert served.data["return_mode"] == "bullets" and served.stream == first.recall_id
    memory.refresh()
    row = memory.layers.get(task)
    assert row is not None and row.access_count == 1 and row.last_accessed == served.at
    assert row.version == 1, "serving is not a change of the memory"
    full = memory.query("Ship v1", agent="planner", user="maya", return_mode="full")
    assert isinstance(full.results[0], FullResult) and full.results[0].access_count == 1
    memory.refresh()
    row = memory.layers.get(task)
    assert row is not None and row.access_count == 2
    memory.query("nothing matches zzz", agent="planner", user="maya")
    assert len(recalls(memory)) == 3, "every answered query is recorded, even an empty one"


# --- the delta header (seed 003 §1) --------------------------------------------------------


def test_header_has_at_most_three_bullets_and_only_when_changes_exist(
    memory: QueryLedger,
) -> None:
    empty = memory.query("tea", agent="supervisor", user="maya", thread="t1")
    assert empty.header is None and empty.rev == 0
    ids = [
        remember(
            memory, NewMemory(f"Maya likes tea number {n}", category="preferences"), thread="t1"
        )[0]
        for n in range(5)
    ]
    first = memory.query("tea", agent="supervisor", user="maya", thread="t1")
    assert first.rev == 5
    assert first.header is not None
    lines = first.header.splitlines()
    assert lines[0] == "Memory updates since rev 0:"
    assert len(lines) - 1 == DELTA_MAX_BULLETS
    assert lines[1] == "- +created: [Preferences] Maya likes tea number 4 (imp=3)"
    again = memory.query("tea", agent="supervisor", user="maya", thread="t1")
    assert again.header is None, "absent after being served"
    assert memory.query("tea", agent="stylist", user="maya", thread="t1").header is not None, (
        "another agent was not served yet"
    )
    memory.ledger.update(in_thread("t1"), ids[0], "Maya likes green tea")
    changed = memory.query("tea", agent="supervisor", user="maya", thread="t1")
    assert changed.rev == 6
    assert changed.header == (
        "Memory updates since rev 5:\n- ↑updated: [Preferences] Maya likes green tea"
    )
    explicit = memory.query("tea", agent="supervisor", user="maya", thread="t1", since_rev=4)
    assert explicit.header is not None and explicit.header.count("\n- ") == 2
    assert memory.query("tea", agent="supervisor", user="other", thread="t1").header is None, (
        "another user's changes are not told"
    )


def test_revision_increments_once_per_command(memory: QueryLedger) -> None:
    old, other = remember(
        memory, NewMemory("Maya lives in Paris"), NewMemory("Maya has a cat"), thread="t2"
    )
    assert memory.delta("t2").rev == 1, "two memories, one command, one revision"
    provenance = in_thread("t2")
    [new] = memory.ledger.draft(provenance, [NewMemory("Maya lives in Berlin")])
    replaced = memory.ledger.memory(old)
    with acting_as(provenance):
        replaced.supersede(new.id.hex, "reconstructed")
    memory.ledger.save(new, replaced)
    memory.ledger.forget(in_thread("t2"), other)  # each command has its own causation id
    memory.ledger.set_ttl(in_thread("t2"), new.id.hex, 3)
    memory.ledger.forget(Provenance(user_id="maya"), new.id.hex)  # no thread: not counted
    out = memory.delta("t2", 1)
    assert out.rev == 4
    assert out.header == (
        "Memory updates since rev 1:\n"
        "- ↔merged: [Knowledge] Maya lives in Berlin (replaces 1)\n"
        "- −deleted: [Knowledge] Maya has a cat"
    )
    events = [(c["rev"], c["event"]) for c in memory.delta_changes("t2")]
    assert events == [(4, "ttl"), (3, "deleted"), (2, "merged"), (1, "created"), (1, "created")]
    memory.ledger.restore(in_thread("t2"), other)
    assert memory.delta("t2", 4).header == (
        "Memory updates since rev 4:\n- ↺restored: [Knowledge] Maya has a cat"
    )
    assert memory.delta("t2", 2).header == (
        "Memory updates since rev 2:\n"
        "- ⏳ttl: [Knowledge] Maya lives in Berlin (expires "
        f"{(datetime.now(UTC) + timedelta(days=3)).date().isoformat()})"
    ), "deleted then restored inside the window is no change"


def test_header_respects_the_allowlist_and_the_budget(memory: QueryLedger) -> None:
    remember(memory, NewMemory("Maya prefers oat milk", category="preferences"), thread="t3")
    remember(memory, NewMemory("Ship v1 by September", category="tasks"), thread="t3")
    planner = memory.query("v1", agent="planner", user="maya", thread="t3")
    assert planner.header == (
        "Memory updates since rev 0:\n- +created: [Tasks] Ship v1 by September (imp=3)"
    )
    tiny = memory.query("v1", agent="supervisor", user="maya", thread="t3", budget_tokens=5)
    assert tiny.header is None and tiny.results == []
    roomy = memory.query("v1", agent="supervisor", user="maya", thread="t3", budget_tokens=30)
    assert roomy.header is not None, "a header the budget dropped is told next time"
    assert roomy.header.count("\n- ") == 1 and roomy.tokens <= 30


def test_delta_since_defaults_to_the_agents_served_revision(memory: QueryLedger) -> None:
    remember(memory, NewMemory("Ship v1", category="tasks"), thread="t4")
    memory.query("v1", agent="planner", user="maya", thread="t4")
    assert memory.delta("t4", agent="planner").header is None
    assert memory.delta("t4").header is not None and memory.delta("t4").since == 0


# --- rebuild ------------------------------------------------------------------------------


def delta_tables(memory: QueryLedger) -> dict[str, list[Any]]:
    tables = ("thread_revision", "command_revision", "change_log", "served_revision")
    return {
        t: memory.delta_model.db.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
        for t in tables
    }


def test_rebuild_equals_incremental(memory: QueryLedger) -> None:
    a, b = remember(
        memory, NewMemory("Maya tea task a", category="tasks"), NewMemory("Maya b"), thread="t5"
    )
    memory.query("Maya tea task", agent="planner", user="maya", thread="t5")
    memory.ledger.update(in_thread("t5"), b, "Maya b again")
    memory.ledger.forget(in_thread("t5"), a)
    memory.query("Maya", agent="researcher", user="maya", thread="t5", return_mode="full")
    memory.ledger.restore(in_thread("t6"), a)
    memory.query("Maya tea", agent="planner", user="maya", thread="t6")
    memory.refresh()
    layers_before = memory.layers.list()
    delta_before = delta_tables(memory)
    assert any(row.access_count for row in layers_before)
    memory.rebuild("delta")
    memory.rebuild("layers")
    assert memory.layers.list() == layers_before
    assert delta_tables(memory) == delta_before
    memory.rebuild()
    assert memory.layers.list() == layers_before
    assert delta_tables(memory) == delta_before


def test_layers_written_by_an_older_schema_are_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "layers.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE memories (seq INTEGER PRIMARY KEY, id TEXT)")
        db.execute("CREATE TABLE projection_position (name TEXT PRIMARY KEY, position INTEGER)")
        db.execute("INSERT INTO projection_position VALUES ('layers', 42)")
    layers = LayersProjection(path)
    try:
        assert layers.position() == 0, "an old read model is dropped and replayed from the log"
        assert layers.list() == []
    finally:
        layers.close()


# --- the CLI ------------------------------------------------------------------------------


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The query commands are registered on the root group."""
    assert {"query", "delta"} <= set(cli.list_commands(click.Context(cli)))
    yield


def test_cli_json_output(home: Path, registered: None) -> None:
    with opened(Settings(home=home, embedder="hashing")) as memory:
        [task] = remember(memory, NewMemory("Ship v1 by September", category="tasks"), thread="t8")
    runner = CliRunner()
    result = runner.invoke(
        cli,
        [
            "--home",
            str(home),
            "query",
            "Ship v1",
            "--agent",
            "planner",
            "--user",
            "maya",
            "--thread",
            "t8",
            "--top-k",
            "2",
            "--budget-tokens",
            "100",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["header"].startswith("Memory updates since rev 0:")
    assert data["results"] == [
        {"id": task, "category": "tasks", "text": "[tasks] Ship v1 by September"}
    ]
    result = runner.invoke(
        cli, ["--home", str(home), "delta", "--thread", "t8", "--since", "0", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rev"] == 1 and data["header"].startswith("Memory updates since rev 0:")
    result = runner.invoke(
        cli,
        [
            "--home",
            str(home),
            "query",
            "Ship",
            "--agent",
            "planner",
            "--user",
            "maya",
            "--categories",
            "tasks,tone",
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("error: agent 'planner' may not read category tone")
    with opened(Settings(home=home, embedder="hashing")) as memory:
        assert len(recalls(memory)) == 1, "the refused query wrote nothing"


def test_bullet_result_tokens_are_estimated_from_text() -> None:
    bullet = BulletResult(id="x", category="tasks", text="[tasks] " + "a" * 13)
    assert estimate_tokens(rendered(bullet)) == math.ceil(21 / 4)


def test_memory_query_accepts_the_seed_json(memory: QueryLedger) -> None:
    [task] = remember(memory, NewMemory("Ship v1 by September", category="tasks"))
    answer = memory.memory_query(
        {
            "agent": "planner",
            "query": "Ship v1",
            "categories": ["tasks", "projects"],
            "filters": {
                "user_id": "maya",
                "importance_min": 0.1,
                "importance_max": 1,
                "pinned": False,
                "updated_after": "2000-07-01",
                "updated_before": None,
            },
            "top_k": 3,
            "return": "bullets",
            "budget_tokens": 512,
            "threshold": -1,
        }
    )
    assert [r.id for r in answer.results] == [task]
    with pytest.raises(InvalidInput, match="return"):
        memory.memory_query(
            {"agent": "planner", "query": "x", "filters": {"user_id": "maya"}, "return": "all"}
        )
    with pytest.raises(InvalidInput, match="user_id"):
        memory.memory_query({"agent": "planner", "query": "x", "filters": {}})


# --- relations in retrieval (seed 003 §2) -------------------------------------------------


def test_a_linked_memory_is_boosted_above_an_equally_relevant_one(memory: QueryLedger) -> None:
    first, second, note = remember(
        memory,
        NewMemory("Maya drinks green tea every morning", kind="episodic"),
        NewMemory("Maya drinks green tea every morning", kind="episodic"),
        NewMemory("Maya grows mint on her balcony", kind="episodic"),
    )
    unboosted = memory.query("green tea", agent="supervisor", user="maya", top_k=2)
    leader, runner_up = (r.id for r in unboosted.results)
    assert {leader, runner_up} == {first, second}

    memory.link(runner_up, note, strength=1.0)
    boosted = memory.query("green tea", agent="supervisor", user="maya", top_k=2)
    assert [r.id for r in boosted.results] == [runner_up, leader]


def test_related_bullets_follow_the_links_and_the_allowlist(memory: QueryLedger) -> None:
    tea, mint, secret_plan = remember(
        memory,
        NewMemory("Maya drinks green tea every morning", kind="episodic"),
        NewMemory("Maya grows mint on her balcony", kind="episodic"),
        NewMemory("Maya plans a tea shop", kind="episodic", category="projects"),
    )
    memory.link(tea, mint, strength=0.9)
    memory.link(tea, secret_plan, strength=0.95)
    answer = memory.query("green tea every morning", agent="supervisor", user="maya", top_k=1)
    assert [r.id for r in answer.results] == [tea]
    # `projects` is not in the supervisor's allowlist: its memory is never shown, not even
    # as a related line, although its edge is the stronger one
    assert answer.related == ["↳ related: Maya grows mint on her balcony"]
    planner = memory.query(
        "green tea every morning", agent="planner", user="maya", top_k=1, categories=["projects"]
    )
    assert [r.id for r in planner.results] == [secret_plan]
    assert planner.related == [], "the linked memories are events, outside the planner's list"


def test_forget_restore_and_ttl_of_a_thread_reach_its_delta(memory: QueryLedger) -> None:
    """Seed 003 §1: every change made in a thread is in that thread's delta header, the
    public verbs included (not only the ledger's)."""
    [kept, dropped] = remember(
        memory, NewMemory("Maya lives in Porto"), NewMemory("Maya has a cat"), thread="t9"
    )
    memory.query("Porto", agent="researcher", user="maya", thread="t9")
    memory.forget(dropped, thread="t9")
    memory.ttl(kept, 3, thread="t9")
    header = memory.delta("t9", agent="researcher").header
    assert header is not None
    assert header.splitlines()[1:] == [
        "- ⏳ttl: [Knowledge] Maya lives in Porto (expires "
        f"{(datetime.now(UTC) + timedelta(days=3)).date().isoformat()})",
        "- −deleted: [Knowledge] Maya has a cat",
    ]
    home = memory.settings.home
    restored = CliRunner().invoke(
        cli, ["--home", str(home), "restore", dropped, "--thread", "t9"], prog_name="mnemoledger"
    )
    assert restored.exit_code == 0, restored.stderr
    memory.forget(kept)  # no thread: no thread's change
    assert memory.delta("t9", 3).header == (
        "Memory updates since rev 3:\n- ↺restored: [Knowledge] Maya has a cat"
    )


def test_a_memory_born_forgotten_and_restored_in_the_window_is_told_as_added(
    memory: QueryLedger,
) -> None:
    """Born, then forgotten and restored inside the window: the memory is there and new to
    the reader, so the header tells its birth (deleted-and-restored alone tells nothing)."""
    [kept] = remember(memory, NewMemory("Maya keeps bees"), thread="t7")
    memory.ttl(kept, 3, thread="t7")
    memory.forget(kept, thread="t7")
    memory.restore(kept, thread="t7")
    assert memory.delta("t7", 0).header == (
        "Memory updates since rev 0:\n- +created: [Knowledge] Maya keeps bees (imp=3)"
    )
