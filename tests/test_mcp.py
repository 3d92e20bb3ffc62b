"""`mnemoledger mcp` driven by the official SDK's client over stdio, as an agent host would."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.ledger import Settings


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(result.content[0].text)


def mcp_parameters(home: Path, key: str) -> StdioServerParameters:
    """`mnemoledger mcp` over stdio for `key`, on the hashing embedder."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mnemoledger", "--home", str(home), "mcp"],
        env={
            "MNEMOLEDGER_API_KEY": key,
            "MNEMOLEDGER_EMBEDDER": "hashing",
            "PYTHONPATH": os.pathsep.join(sys.path),
            # the suite's store: on PostgreSQL the key lives in the log's database
            **{k: v for k, v in os.environ.items() if k == "MNEMOLEDGER_DB"},
        },
    )


@asynccontextmanager
async def mcp_client(home: Path, key: str) -> AsyncIterator[ClientSession]:
    """An initialised MCP client session with `mnemoledger mcp` over stdio, acting as `key`
    (the server process ends with the block)."""
    async with (
        stdio_client(mcp_parameters(home, key)) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


def test_mcp_session_lists_tools_then_stores_and_queries(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as memory:
        key = memory.create_key(agent="researcher", users=["maya"]).key
        other = memory.create_key(agent="researcher", users=["bob"]).key
        memory.add(["Bob likes jazz"], user="bob", agent="researcher")
        # a category the researcher's allowlist leaves out: its key neither lists nor clears it
        tea = memory.add(["Maya prefers green tea"], user="maya", namespace="tacit/preferences")
        tea_id = tea.memories[0].id

    parameters = mcp_parameters(home, key)
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with (
            stdio_client(parameters) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            seen["tools"] = tools

            stored = await client.call_tool(
                "store",
                {
                    "contents": ["Maya moved to Lisbon in May"],
                    "layer": "tacit",
                    "namespace": "knowledge",
                    "thread_id": "t1",
                },
            )
            seen["stored"] = structured(stored)
            answer = await client.call_tool("query", {"query": "moved to Lisbon", "thread": "t1"})
            seen["answer"] = structured(answer)
            memory_id = seen["stored"]["memories"][0]["id"]
            seen["history"] = structured(
                await client.call_tool("history", {"memory_id": memory_id})
            )
            seen["recall"] = structured(await client.call_tool("recall", {"query": "Lisbon"}))
            seen["delta"] = structured(
                await client.call_tool("delta", {"thread": "t1", "since": 0})
            )
            seen["cross_user"] = await client.call_tool(
                "query", {"query": "jazz", "user_id": "bob"}
            )
            seen["bad_category"] = await client.call_tool(
                "query", {"query": "jazz", "categories": ["tasks"]}
            )
            seen["list"] = structured(await client.call_tool("list", {"layer": "tacit"}))
            seen["clear"] = structured(await client.call_tool("clear", {"namespace": "tacit"}))
            seen["get_tea"] = await client.call_tool("get", {"memory_id": tea_id})

    anyio.run(session)

    tools = seen["tools"]
    assert {"query", "store", "recall", "history", "delta"} <= set(tools)
    assert "memory.query" not in tools
    query_schema = tools["query"].input_schema
    assert query_schema["required"] == ["query"]
    assert {"categories", "filters", "top_k", "budget_tokens", "thread"} <= set(
        query_schema["properties"]
    )
    store_schema = tools["store"].input_schema["properties"]
    assert {t["type"] for t in store_schema["contents"]["anyOf"]} == {"array", "null"}
    assert {"key", "value", "layer", "namespace"} <= set(store_schema)  # seed 004 §5

    stored = seen["stored"]["memories"][0]
    assert stored["content"] == "Maya moved to Lisbon in May"
    assert stored["namespace"] == "tacit/knowledge" and stored["user_id"] == "maya"
    answer = seen["answer"]
    assert answer["results"][0]["id"] == stored["id"]
    assert answer["header"].startswith("Memory updates since rev 0:")
    history = seen["history"]
    assert history[0]["type"] == "MemoryAdded" and history[0]["agent_id"] == "researcher"
    assert history[0]["actor"].startswith("key:")
    assert seen["recall"]["matched_by"] == "search"
    assert seen["recall"]["memories"][0]["id"] == stored["id"]
    assert seen["delta"]["thread"] == "t1" and seen["delta"]["rev"] >= 1

    assert seen["cross_user"].is_error
    assert "user_not_allowed: " in seen["cross_user"].content[0].text
    assert seen["bad_category"].is_error
    assert "category_not_allowed" in seen["bad_category"].content[0].text
    # list and clear see only the key's categories: the preferences memory is left alone
    assert [m["id"] for m in seen["list"]["memories"]] == [stored["id"]]
    assert seen["list"]["namespace"] == "tacit" and seen["list"]["memories"][0]["access_count"] >= 1
    assert seen["clear"] == {"count": 1, "forgotten": [stored["id"]]}
    assert "category_not_allowed" in seen["get_tea"].content[0].text
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as memory:
        assert memory.get(tea_id).state == "active"
        assert memory.get(stored["id"]).state == "forgotten"
    assert other  # bob's key exists, but this session acts with maya's only


def test_mcp_with_a_key_refuses_a_user_the_key_does_not_act_for(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as memory:
        key = memory.create_key(agent="researcher", users=["maya"]).key
    result = CliRunner().invoke(cli, ["mcp", "--home", str(home), "--key", key, "--user", "bob"])
    assert result.exit_code != 0
    assert "may not act for user 'bob'" in result.output


def test_mcp_add_names_its_evidence_its_writer_and_its_metadata(home: Path) -> None:
    """An agent adds its own advice (role assistant) with the turns it came from; search
    reports them back, and query takes the fusion."""
    advice = (
        "Feel free to experiment and adjust the ingredients. From now on, you can swap "
        "butter for olive oil in most of these recipes."
    )
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as memory:
        key = memory.create_key(agent="researcher", users=["maya"]).key
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with mcp_client(home, key) as client:
            seen["as_users"] = await client.call_tool("add", {"contents": [advice]})
            arguments = {
                "contents": ["Maya swaps butter for olive oil in her recipes"],
                "role": "assistant",
                "evidence": ["turn-7"],
                "metadata": {"channel": "chat"},
                "keep_all": True,
            }
            seen["added"] = structured(await client.call_tool("add", arguments))
            seen["hits"] = structured(await client.call_tool("search", {"query": "olive oil"}))
            seen["answer"] = structured(
                await client.call_tool("query", {"query": "olive oil", "fusion": "engram"})
            )
            seen["bad_fusion"] = await client.call_tool(
                "query", {"query": "olive oil", "fusion": "sideways"}
            )
            advice_arguments = {"contents": [advice], "role": "assistant", "keep_all": True}
            seen["advice"] = structured(await client.call_tool("add", advice_arguments))

    anyio.run(session)

    assert seen["as_users"].is_error  # the advice reads as an order when the user's
    assert "prompt injection screen" in seen["as_users"].content[0].text
    (added,) = seen["added"]["memories"]
    assert added["evidence"] == ["turn-7"] and added["metadata"] == {"channel": "chat"}
    assert seen["advice"]["memories"]  # the same advice, kept as the assistant's
    hits = {hit["id"]: hit for hit in seen["hits"]}
    assert hits[added["id"]]["evidence"] == ["turn-7"]
    assert added["id"] in {result["id"] for result in seen["answer"]["results"]}
    assert seen["bad_fusion"].is_error and "fusion" in seen["bad_fusion"].content[0].text
