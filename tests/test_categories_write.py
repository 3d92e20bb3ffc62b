"""Categories on write (issue 15, item 5; seed 003 §5-6): `add`, notes, the CLI, HTTP and
MCP name a category, checked against the writer's allowlist; every category the system
writes is readable by some agent of the shipped config; a query whose matches the
allowlist hid says so, without their content."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner, Result
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.recall.query import BulletResult
from mnemoledger.commands.write.categories import (
    SYSTEM_CATEGORIES,
    CategoryNotWritable,
    load_categories,
    unreadable,
)
from mnemoledger.ledger import Settings
from mnemoledger.ledger.policy import DEFAULT_CATEGORY, INSIGHT_CATEGORY, PROCEDURAL_CATEGORY
from tests.live_server import LiveServer, live_server
from tests.test_mcp import mcp_parameters

PLANNER_CATEGORIES = "goals, tasks, projects, procedural"
"""The planner's allowlist in the shipped config, in its order."""


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


@pytest.fixture
def server(home: Path) -> Iterator[LiveServer]:
    with live_server(home) as running:
        yield running


def client(server: LiveServer, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


# --- the shipped config ---------------------------------------------------------------------


def test_every_category_the_system_writes_is_readable_by_some_agent() -> None:
    config = load_categories()
    assert unreadable(config) == []
    for written in (DEFAULT_CATEGORY, INSIGHT_CATEGORY, PROCEDURAL_CATEGORY):
        assert written in SYSTEM_CATEGORIES
        assert any(written in allowed for allowed in config.allowlists.values()), written
    # the check is real: a config where no agent reads insights fails it
    narrowed = config.model_copy(
        update={
            "allowlists": {
                agent: [c for c in allowed if c != INSIGHT_CATEGORY]
                for agent, allowed in config.allowlists.items()
            }
        }
    )
    assert unreadable(narrowed) == [INSIGHT_CATEGORY]


# --- Python ---------------------------------------------------------------------------------


def test_add_with_a_category_files_the_memory_there(memory: MnemoLedger) -> None:
    added = memory.add(["Ship the billing export on Friday"], user="maya", category="tasks")
    [stored] = added.memories
    assert stored.category == "tasks"
    assert memory.get(stored.id).category == "tasks"

    answer = memory.query("billing export", agent="planner", user="maya")
    assert [(r.id, r.category) for r in answer.results] == [(stored.id, "tasks")]
    first = answer.results[0]
    assert isinstance(first, BulletResult) and first.text.startswith("[tasks] ")
    assert answer.hidden == 0 and answer.message is None


def test_an_agent_may_write_only_its_allowlist(memory: MnemoLedger) -> None:
    tasks = memory.add(["Draft the Q3 roadmap"], user="maya", agent="planner", category="tasks")
    assert tasks.memories[0].category == "tasks"

    events = len(memory.log())
    with pytest.raises(CategoryNotWritable) as refused:
        memory.add(["Maya reads Borges"], user="maya", agent="planner", category="knowledge")
    message = str(refused.value)
    assert "'knowledge'" in message and PLANNER_CATEGORIES in message
    assert len(memory.log()) == events, "a refused write records nothing"

    # a writer no allowlist names (the owner, a local script) files anywhere
    owner = memory.add(["Maya reads Borges"], user="maya", agent="script", category="knowledge")
    assert owner.memories[0].category == "knowledge"


def test_notes_take_a_category_too(memory: MnemoLedger) -> None:
    note = memory.write_note(
        "Standup moves to 9:30 from Monday", user="maya", kind="log", category="tasks"
    )
    assert note.note.category == "tasks"
    answer = memory.query("standup", agent="executor", user="maya")
    assert [r.id for r in answer.results] == [note.note.id]
    with pytest.raises(CategoryNotWritable, match="tone, style"):
        memory.write_note(
            "Release checklist lives in the wiki",
            user="maya",
            kind="log",
            agent="stylist",
            category="tasks",
        )


# --- CLI ------------------------------------------------------------------------------------


def test_cli_add_category(home: Path) -> None:
    written = run(
        home,
        "--json",
        "add",
        "Book the venue for the offsite",
        "--user",
        "maya",
        "--agent",
        "planner",
        "--category",
        "tasks",
    )
    assert written.exit_code == 0, written.stderr
    assert json.loads(written.stdout)["memories"][0]["category"] == "tasks"

    refused = run(
        home, "add", "Maya reads Borges", "--user", "maya", "--agent", "planner",
        "--category", "knowledge",
    )  # fmt: skip
    assert refused.exit_code == 2
    assert PLANNER_CATEGORIES in refused.stderr and "'knowledge'" in refused.stderr


# --- HTTP -----------------------------------------------------------------------------------


def test_planner_key_writes_tasks_and_is_refused_knowledge(server: LiveServer) -> None:
    planner = client(server, server.key("planner", ["maya"]))
    written = planner.post(
        "/memories",
        json={"contents": ["Ship the billing export on Friday"], "user_id": "maya",
              "category": "tasks"},
    )  # fmt: skip
    assert written.status_code == 201, written.text
    [stored] = written.json()["memories"]
    assert stored["category"] == "tasks"

    for body in (
        {"contents": ["Maya reads Borges"], "user_id": "maya", "category": "knowledge"},
        {"contents": ["Maya reads Borges"], "user_id": "maya"},  # plain facts: knowledge
    ):
        refused = planner.post("/memories", json=body)
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["code"] == "category_not_allowed"
        assert "'knowledge'" in error["message"]
        assert "goals, procedural, projects, tasks" in error["message"]

    answer = planner.post(
        "/query", json={"query": "billing export", "filters": {"user_id": "maya"}}
    )
    assert answer.status_code == 200, answer.text
    assert [r["id"] for r in answer.json()["results"]] == [stored["id"]]


# --- the hidden-results hint ----------------------------------------------------------------


def test_a_query_whose_matches_the_allowlist_hid_says_so(memory: MnemoLedger, home: Path) -> None:
    secret = "Maya reads Borges on the night train"
    memory.add([secret], user="maya")  # knowledge: the researcher's, not the planner's
    memory.add(["Maya grows mint on her balcony"], user="maya", category="tasks")

    answer = memory.query("Borges night train", agent="planner", user="maya")
    assert answer.results == []
    assert answer.hidden >= 1
    assert answer.message is not None and "planner" in answer.message
    assert "Borges" not in answer.message and "knowledge" not in answer.message
    dumped = answer.model_dump_json()
    assert "Borges" not in dumped, "nothing of a hidden memory is served"

    researcher = memory.query("Borges night train", agent="researcher", user="maya")
    assert [r.category for r in researcher.results] == ["knowledge"]
    assert researcher.message is None

    # filters still apply: a match another user's filter excludes is not counted
    other = memory.query("Borges night train", agent="planner", user="bob")
    assert other.hidden == 0 and other.message is None

    as_json = run(home, "--json", "query", "Borges night train", "--agent", "planner",
                  "--user", "maya")  # fmt: skip
    assert as_json.exit_code == 0, as_json.stderr
    body = json.loads(as_json.stdout)
    assert body["results"] == [] and body["hidden"] >= 1 and "Borges" not in body["message"]
    shown = run(home, "query", "Borges night train", "--agent", "planner", "--user", "maya")
    assert shown.exit_code == 0, shown.stderr
    assert "no results:" in shown.stdout and "not shown" in shown.stdout
    assert "Borges" not in shown.stdout


# --- MCP ------------------------------------------------------------------------------------


def test_mcp_store_takes_a_category(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as memory:
        key = memory.create_key(agent="planner", users=["maya"]).key
    parameters = mcp_parameters(home, key)
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with (
            stdio_client(parameters) as (read, write),
            ClientSession(read, write) as mcp,
        ):
            await mcp.initialize()
            seen["stored"] = await mcp.call_tool(
                "store", {"contents": ["Book the venue for the offsite"], "category": "tasks"}
            )
            seen["refused"] = await mcp.call_tool(
                "store", {"contents": ["Maya reads Borges"], "category": "knowledge"}
            )

    anyio.run(session)
    stored = seen["stored"]
    assert not stored.is_error, stored.content
    assert json.loads(stored.content[0].text)["memories"][0]["category"] == "tasks"
    refused = seen["refused"]
    assert refused.is_error
    text = refused.content[0].text
    assert "category_not_allowed" in text and "goals, procedural, projects, tasks" in text
