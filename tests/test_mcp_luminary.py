"""Luminary's agent tools over MCP with API keys (seed 002): `remember` and `update_soul`
write as the key's agent, within its categories (a log note is `activity`, the soul
`constraints`, seed 003 §5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from tests.test_mcp import mcp_client, structured
from tests.test_mcp_stdio import error_text


def session(home: Path, key: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each call's raw result, in one stdio session as `key`."""
    results: list[Any] = []

    async def run() -> None:
        async with mcp_client(home, key) as client:
            for name, arguments in calls:
                results.append(await client.call_tool(name, arguments))

    anyio.run(run)
    return results


def test_remember_and_update_soul_as_the_keys_agent(home: Path) -> None:
    settings = Settings(home=home, embedder="hashing")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        helper = memory.create_key(agent="luminary", users=["maya"]).key  # default allowlist
        executor = memory.create_key(agent="executor", users=["maya"]).key

    remembered, soul_refused = session(
        home,
        helper,
        [
            ("remember", {"content": "Maya asked for a weekly summary"}),
            ("update_soul", {"content": "Plan, act, check."}),
        ],
    )
    note = structured(remembered)["note"]
    assert note["note_kind"] == "log" and note["stability"] == "stable"
    assert note["expires_at"] is None and note["user_id"] == "maya"
    assert "category_not_allowed: " in error_text(soul_refused)  # constraints: not its own

    soul, log_refused, other_user = session(
        home,
        executor,
        [
            ("update_soul", {"content": "Plan, act, check."}),
            ("remember", {"content": "Ran the backup"}),
            ("update_soul", {"content": "Plan.", "user_id": "bob"}),
        ],
    )
    written = structured(soul)["note"]
    assert written["note_kind"] == "soul" and written["stability"] == "permanent"
    assert "category_not_allowed: " in error_text(log_refused)  # activity: not the executor's
    assert "user_not_allowed: " in error_text(other_user)

    with MnemoLedger(settings=settings, actor="tester") as memory:
        [current] = memory.notes("maya", "soul")
        assert current.id == written["id"] and current.content == "Plan, act, check."
        [added] = [e for e in memory.history(written["id"]) if e.type == "MemoryAdded"]
        assert added.agent_id == "executor" and added.actor.startswith("key:")
        [log] = memory.notes("maya", "log")
        assert log.id == note["id"]
        assert memory.history(log.id)[0].agent_id == "luminary"
