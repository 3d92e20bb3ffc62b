"""UPDATE replaces a memory's content and nothing else: a Core memory that is updated stays
in Core (a Working one in Working), through the Python API and HTTP PATCH, and after the
next cycle and a rebuild."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import NewMemory, Provenance, Settings
from tests.live_server import live_server
from tests.test_consolidation_helpers import place

USER = "maya"


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        yield m


def remember(memory: MnemoLedger, content: str, layer: str) -> str:
    [added] = memory.ledger.add(Provenance(user_id=USER), [NewMemory(content=content)])
    place(memory, added.id.hex, layer)
    return added.id.hex


def test_an_updated_memory_keeps_its_layer(memory: MnemoLedger) -> None:
    core = remember(memory, "Maya is vegetarian", "core")
    working = remember(memory, "Maya runs on Sundays", "working")
    updated = memory.update(core, "Maya is vegan", tags=["diet"])
    assert (updated.id, updated.layer, updated.content) == (core, "core", "Maya is vegan")
    assert memory.update(working, "Maya runs on Saturdays").layer == "working"
    assert memory.get(core).layer == "core" and memory.get(core).state == "active"
    assert [m.id for m in memory.list(user=USER, layer="core")] == [core]
    memory.consolidate(user=USER)
    memory.rebuild()
    assert memory.get(core).layer == "core" and memory.get(core).content == "Maya is vegan"
    assert memory.get(working).layer == "working"


def test_http_patch_keeps_the_layer(home: Path) -> None:
    with live_server(home) as server:
        key = server.key("researcher", [USER])
        with httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as http:
            added = http.post(
                "/memories", json={"contents": ["Maya is vegetarian"], "user_id": USER}
            )
            assert added.status_code == 201, added.text
            memory_id = added.json()["memories"][0]["id"]
            server.state.facade.call(lambda m: place(m, memory_id, "core"))
            patched = http.patch(f"/memories/{memory_id}", json={"content": "Maya is vegan"})
            assert patched.status_code == 200, patched.text
            body = patched.json()
            assert (body["id"], body["layer"], body["content"]) == (
                memory_id,
                "core",
                "Maya is vegan",
            )
            again = http.get(f"/memories/{memory_id}").json()
            assert again["layer"] == "core" and again["content"] == "Maya is vegan"
