"""HAEMA's `latest` layer (seed 000: `latest.sqlite3`, `get_latest`): a user's most recently
written active memories, newest first, through the Python API, the CLI and HTTP, and the
same after a rebuild from the log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import InvalidInput, NewMemory, Provenance, Settings
from mnemoledger.ledger.policy import LATEST_DEFAULT_LIMIT, LATEST_MAX_LIMIT
from mnemoledger.ledger.provenance import acting_as
from tests.live_server import live_server
from tests.test_cli import run, run_json
from tests.test_consolidation_helpers import place

USER = "maya"


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        yield m


def remember(memory: MnemoLedger, *contents: str, user: str = USER) -> list[str]:
    """Memories written straight to the ledger, one write each (in this order)."""
    return [
        memory.ledger.add(Provenance(user_id=user), [NewMemory(content=c)])[0].id.hex
        for c in contents
    ]


def latest_ids(memory: MnemoLedger, limit: int = LATEST_DEFAULT_LIMIT) -> list[str]:
    return [m.id for m in memory.latest(user=USER, limit=limit)]


def supersede(memory: MnemoLedger, old: str, new: str) -> None:
    aggregate = memory.ledger.memory(old)
    with acting_as(Provenance(user_id=USER)):
        aggregate.supersede(new, "replaced")
    memory.ledger.save(aggregate)


def test_newest_write_first_and_only_active_memories(memory: MnemoLedger) -> None:
    a, b, c = remember(memory, "Maya lives in Lisbon", "Maya runs on Sundays", "Maya likes tea")
    remember(memory, "Someone else's fact", user="dee")
    assert latest_ids(memory) == [c, b, a]
    assert latest_ids(memory, limit=2) == [c, b]
    assert memory.latest(user=USER)[0].content == "Maya likes tea"

    memory.update(a, "Maya lives in Porto")  # written again: to the front
    assert latest_ids(memory) == [a, c, b]
    assert memory.latest(user=USER, limit=1)[0].content == "Maya lives in Porto"

    memory.forget(b)
    assert latest_ids(memory) == [a, c]
    memory.restore(b)  # back at its last write, not as a new one
    assert latest_ids(memory) == [a, c, b]

    [d] = remember(memory, "Maya drinks green tea")
    supersede(memory, c, d)  # the replacement is the newer entry; the replaced one leaves
    assert latest_ids(memory) == [d, a, b]

    place(memory, a, "core")  # a move is no new write: order kept, layer current
    assert latest_ids(memory) == [d, a, b]
    assert memory.latest(user=USER)[1].layer == "core"
    assert [m.content for m in memory.latest(user="dee")] == ["Someone else's fact"]
    assert memory.latest(user="nobody") == []


def test_limits_are_checked(memory: MnemoLedger) -> None:
    for limit in (0, LATEST_MAX_LIMIT + 1):
        with pytest.raises(InvalidInput):
            memory.latest(user=USER, limit=limit)
    with pytest.raises(InvalidInput):
        memory.latest(user="not a valid id!")


def test_a_rebuild_gives_the_same_latest(memory: MnemoLedger) -> None:
    a, b, c = remember(memory, "Maya lives in Lisbon", "Maya runs on Sundays", "Maya likes tea")
    memory.update(a, "Maya lives in Porto")
    memory.forget(b)
    before = memory.latest(user=USER)
    assert [m.id for m in before] == [a, c]
    memory.rebuild("latest")
    assert memory.latest(user=USER) == before
    memory.rebuild()
    assert memory.latest(user=USER) == before


def test_cli_latest(home: Path) -> None:
    for text in ("Maya is allergic to peanuts", "Maya runs on Sundays", "Maya likes jazz"):
        run_json(home, "add", text, "--user", USER)
    found = run_json(home, "latest", "--user", USER, "--limit", "2")
    assert [m["content"] for m in found] == ["Maya likes jazz", "Maya runs on Sundays"]
    assert len(run_json(home, "latest", "--user", USER)) == 3
    table = run(home, "latest", "--user", USER)
    assert table.exit_code == 0 and "Maya likes jazz" in table.stdout
    bad = run(home, "latest", "--user", USER, "--limit", "0")
    assert bad.exit_code == 2 and "--limit" in bad.stderr


def test_http_latest(home: Path) -> None:
    with live_server(home) as server:
        key = server.key("researcher", [USER])
        with httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as http:
            for text in ("Maya moved to Lisbon in May", "Maya is allergic to peanuts"):
                added = http.post("/memories", json={"contents": [text], "user_id": USER})
                assert added.status_code == 201, added.text
            response = http.get("/memories/latest", params={"user_id": USER, "limit": 1})
            assert response.status_code == 200, response.text
            assert [m["content"] for m in response.json()] == ["Maya is allergic to peanuts"]
            every = http.get("/memories/latest", params={"user_id": USER}).json()
            assert [m["content"] for m in every] == [
                "Maya is allergic to peanuts",
                "Maya moved to Lisbon in May",
            ]
            too_many = http.get(
                "/memories/latest", params={"user_id": USER, "limit": LATEST_MAX_LIMIT + 1}
            )
            assert too_many.status_code == 422
            other = http.get("/memories/latest", params={"user_id": "dee"})
            assert other.status_code == 403, other.text
