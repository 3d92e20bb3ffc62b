"""mem0 compatibility: one scripted session through mem0's call signatures, in Python
(`commands.Memory`) and over HTTP (mem0's server routes under `/mem0`), gives the memories
mem0's documentation promises, and `history` shows the ledger's events.

Expected behaviour is taken from mem0's open-source `Memory` (`mem0/memory/main.py`) and
server (`server/main.py`): `add` returns `{"results": [{"id", "memory", "event"}]}`;
`search` / `get_all` return `{"results": [...]}` items with `id`, `memory`, `hash` (md5 of
the text), `metadata`, `created_at`, `updated_at` and the scope ids, `score` for search;
`get` of a deleted id is None; `history` rows carry `old_memory` / `new_memory` / `event` /
`is_deleted`; `delete_all` without a scope and `add` / `search` / `get_all` without any id
are `ValueError`s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest

from mnemoledger import Memory, MnemoLedger
from mnemoledger.ledger import Settings
from tests.live_server import LiveServer, live_server

Messages = str | dict[str, Any] | list[dict[str, Any]]


class Mem0Driver(Protocol):
    """mem0's calls, made one way or the other."""

    agent: str | None
    """The agent the ledger records on this driver's writes."""

    def add(self, messages: Messages, **kwargs: Any) -> dict[str, Any]: ...
    def get_all(self, **kwargs: Any) -> dict[str, Any]: ...
    def get(self, memory_id: str) -> dict[str, Any] | None: ...
    def search(self, query: str, **kwargs: Any) -> dict[str, Any]: ...
    def update(self, memory_id: str, data: str) -> Any: ...
    def delete(self, memory_id: str) -> Any: ...
    def delete_all(self, **kwargs: Any) -> Any: ...
    def history(self, memory_id: str) -> list[dict[str, Any]]: ...
    def reset(self) -> Any: ...


class PythonDriver:
    agent: str | None = None

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def add(self, messages: Messages, **kwargs: Any) -> dict[str, Any]:
        return self.memory.add(messages, **kwargs)

    def get_all(self, **kwargs: Any) -> dict[str, Any]:
        return self.memory.get_all(**kwargs)

    def get(self, memory_id: str) -> dict[str, Any] | None:
        return self.memory.get(memory_id)

    def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        return self.memory.search(query, **kwargs)

    def update(self, memory_id: str, data: str) -> Any:
        return self.memory.update(memory_id, data)

    def delete(self, memory_id: str) -> Any:
        return self.memory.delete(memory_id)

    def delete_all(self, **kwargs: Any) -> Any:
        return self.memory.delete_all(**kwargs)

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return self.memory.history(memory_id)

    def reset(self) -> Any:
        return self.memory.reset()


class HttpDriver:
    """mem0's REST calls, as its server documents them, against `/mem0`."""

    agent: str | None = "helper"

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def add(self, messages: Messages, **kwargs: Any) -> dict[str, Any]:
        if isinstance(messages, str):  # mem0's server takes a list of messages only
            messages = [{"role": "user", "content": messages}]
        elif isinstance(messages, dict):
            messages = [messages]
        return ok_dict(self.http.post("/mem0/memories", json={"messages": messages, **kwargs}))

    def get_all(self, **kwargs: Any) -> dict[str, Any]:
        if "filters" in kwargs:  # the server's GET takes the ids only; filter client-side
            filters = kwargs.pop("filters")
            found = ok_dict(self.http.get("/mem0/memories", params=kwargs))
            return {
                "results": [
                    m
                    for m in found["results"]
                    if all((m["metadata"] or {}).get(k) == v for k, v in filters.items())
                ]
            }
        return ok_dict(self.http.get("/mem0/memories", params=kwargs))

    def get(self, memory_id: str) -> dict[str, Any] | None:
        response = self.http.get(f"/mem0/memories/{memory_id}")
        if response.status_code == 404:
            return None
        return ok_dict(response)

    def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        return ok_dict(self.http.post("/mem0/search", json={"query": query, **kwargs}))

    def update(self, memory_id: str, data: str) -> Any:
        return ok(self.http.put(f"/mem0/memories/{memory_id}", json={"text": data}))

    def delete(self, memory_id: str) -> Any:
        return ok(self.http.delete(f"/mem0/memories/{memory_id}"))

    def delete_all(self, **kwargs: Any) -> Any:
        return ok(self.http.delete("/mem0/memories", params=kwargs))

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = ok(self.http.get(f"/mem0/memories/{memory_id}/history"))
        return found

    def reset(self) -> Any:
        return ok(self.http.post("/mem0/reset"))


def ok(response: httpx.Response) -> Any:
    assert response.is_success, response.text
    return response.json()


def ok_dict(response: httpx.Response) -> dict[str, Any]:
    body = ok(response)
    assert isinstance(body, dict)
    return body


@pytest.fixture
def mem0(home: Path) -> Iterator[Memory]:
    with Memory(settings=Settings(home=home, embedder="hashing"), actor="tester") as memory:
        yield memory


@pytest.fixture
def server(home: Path) -> Iterator[LiveServer]:
    with live_server(home) as running:
        yield running


def http_client(server: LiveServer, key: str, header: str = "Authorization") -> httpx.Client:
    value = f"Bearer {key}" if header == "Authorization" else key
    return httpx.Client(base_url=server.url, headers={header: value}, timeout=60)


def texts(result: dict[str, Any]) -> list[str]:
    return [item["memory"] for item in result["results"]]


ITEM_KEYS = {"id", "memory", "hash", "metadata", "created_at", "updated_at"}
SCOPE_KEYS = {"user_id", "agent_id", "run_id"}


def scripted_session(m: Mem0Driver) -> None:
    """The mem0 quick start and its lifecycle calls, with what mem0 documents for each."""
    # add: a text, a conversation (the user's facts are kept), a correction, a raw memory
    veg = m.add("I'm a vegetarian and I'm allergic to nuts.", user_id="alice", run_id="chat-1")
    assert [(r["memory"], r["event"]) for r in veg["results"]] == [
        ("I'm a vegetarian and I'm allergic to nuts.", "ADD")
    ]
    veg_id = veg["results"][0]["id"]
    paris = m.add(
        [
            {"role": "user", "content": "I live in Paris"},
            {"role": "assistant", "content": "Paris is lovely this time of year."},
        ],
        user_id="alice",
    )
    assert [(r["memory"], r["event"]) for r in paris["results"]] == [("I live in Paris", "ADD")]
    paris_id = paris["results"][0]["id"]
    berlin = m.add([{"role": "user", "content": "I moved to Berlin"}], user_id="alice")
    events = {r["event"]: r for r in berlin["results"]}
    assert set(events) == {"ADD", "DELETE"}
    assert events["ADD"]["memory"] == "I moved to Berlin"
    assert events["DELETE"]["id"] == paris_id
    assert events["DELETE"]["superseded_by"] == events["ADD"]["id"]
    gate = m.add(
        [{"role": "user", "content": "My gate code is 4411"}],
        user_id="alice",
        metadata={"category": "home", "priority": 2},
        infer=False,
    )
    assert [(r["memory"], r["event"], r["role"]) for r in gate["results"]] == [
        ("My gate code is 4411", "ADD", "user")
    ]
    gate_id = gate["results"][0]["id"]
    m.add("I play the cello in an orchestra", user_id="bob")

    # get_all: the scope's memories, newest first, mem0's item shape
    everything = m.get_all(user_id="alice")
    assert texts(everything) == [
        "My gate code is 4411",
        "I moved to Berlin",
        "I'm a vegetarian and I'm allergic to nuts.",
    ]
    for item in everything["results"]:
        assert set(item) >= ITEM_KEYS | SCOPE_KEYS
        assert item["hash"] == hashlib.md5(item["memory"].encode()).hexdigest()
        assert item["user_id"] == "alice" and item["agent_id"] == m.agent
        assert "score" not in item
    first = everything["results"][0]
    assert first["metadata"] == {"category": "home", "priority": 2} and first["role"] == "user"
    assert texts(m.get_all(user_id="alice", run_id="chat-1")) == [
        "I'm a vegetarian and I'm allergic to nuts."
    ]
    assert texts(m.get_all(user_id="alice", filters={"category": "home"})) == [
        "My gate code is 4411"
    ]
    assert len(m.get_all(user_id="alice", limit=1)["results"]) == 1
    assert texts(m.get_all(user_id="bob")) == ["I play the cello in an orchestra"]

    # search: best first, scored, one user's memories only
    found = m.search("vegetarian allergic nuts", user_id="alice", limit=3)
    assert found["results"][0]["id"] == veg_id
    assert found["results"][0]["run_id"] == "chat-1"
    assert all(isinstance(r["score"], float) for r in found["results"])
    assert "I play the cello in an orchestra" not in texts(found)
    assert texts(m.search("cello orchestra", user_id="bob", limit=1)) == [
        "I play the cello in an orchestra"
    ]

    # get / update / delete
    got = m.get(gate_id)
    assert got is not None and got["memory"] == "My gate code is 4411"
    m.update(gate_id, "My gate code is 5522")
    updated = m.get(gate_id)
    assert updated is not None and updated["memory"] == "My gate code is 5522"
    assert updated["metadata"] == {"category": "home", "priority": 2}
    m.delete(gate_id)
    assert m.get(gate_id) is None
    assert "My gate code is 5522" not in texts(m.get_all(user_id="alice"))

    # history: the events, oldest first, in mem0's rows
    history = m.history(gate_id)
    assert [(h["event"], h["old_memory"], h["new_memory"], h["is_deleted"]) for h in history] == [
        ("ADD", None, "My gate code is 4411", False),
        ("UPDATE", "My gate code is 4411", "My gate code is 5522", False),
        ("DELETE", "My gate code is 5522", None, True),
    ]
    assert [h["ledger_event"] for h in history] == [
        "MemoryAdded",
        "MemoryUpdated",
        "MemorySoftDeleted",
    ]
    assert {h["memory_id"] for h in history} == {gate_id}
    assert all(h["agent_id"] == m.agent for h in history)
    assert [(h["event"], h["ledger_event"]) for h in m.history(paris_id)][-1] == (
        "DELETE",
        "MemorySuperseded",
    )

    # delete_all of one user, then reset of the rest
    m.delete_all(user_id="alice")
    assert m.get_all(user_id="alice") == {"results": []}
    assert len(m.get_all(user_id="bob")["results"]) == 1
    m.reset()
    assert m.get_all(user_id="bob") == {"results": []}
    assert m.get(veg_id) is None
    assert m.history(veg_id)[-1]["event"] == "DELETE"  # the log keeps what was forgotten


def log_types(ledger: MnemoLedger, user: str) -> list[str]:
    return [event.type for event in ledger.log(user=user)]


def test_python_session(mem0: Memory) -> None:
    scripted_session(PythonDriver(mem0))
    types = log_types(mem0.ledger, "alice")
    assert types.count("AddRequested") == 3  # the three inferred adds ran the add pipeline
    assert types.count("MemorySoftDeleted") == 3  # delete, then delete_all's two
    assert "MemoryUpdated" in types and "MemorySuperseded" in types


def test_http_session(server: LiveServer) -> None:
    key = server.key("helper", ["alice", "bob"], admin=True)
    with http_client(server, key, header="X-API-Key") as http:  # mem0's own header
        scripted_session(HttpDriver(http))
    actors = server.state.facade.call(lambda m: {e.actor for e in m.log(user="bob")})
    key_id = server.state.facade.call(lambda m: m.keys()[0].id)
    assert f"key:{key_id}" in actors


def test_python_and_http_agree(mem0: Memory, server: LiveServer) -> None:
    """The same calls give the same memories, events and shapes on both surfaces."""
    key = server.key("helper", ["carol"], admin=True)
    with http_client(server, key) as http:
        drivers: list[tuple[str, Mem0Driver]] = [
            ("alice", PythonDriver(mem0)),
            ("carol", HttpDriver(http)),
        ]
        seen = []
        for user, m in drivers:
            added = m.add(
                [
                    {"role": "user", "content": "My sister Ingrid lives in Oslo"},
                    {"role": "user", "content": "I drink my coffee black"},
                ],
                user_id=user,
                run_id="r1",
            )
            ids = [r["id"] for r in added["results"]]
            m.update(ids[0], "My sister Ingrid lives in Bergen")
            listed = m.get_all(user_id=user)
            history = m.history(ids[0])
            seen.append(
                (
                    sorted(texts(listed)),
                    sorted(set().union(*(set(r) for r in listed["results"]))),
                    [(h["event"], h["new_memory"]) for h in history],
                    [r["run_id"] for r in listed["results"]],
                )
            )
        assert seen[0] == seen[1]
        assert seen[0][0] == ["I drink my coffee black", "My sister Ingrid lives in Bergen"]


def test_http_keys_limits(server: LiveServer) -> None:
    alice_only = server.key("helper", ["alice"])
    admin = server.key("helper", ["bob"], admin=True)
    with http_client(server, admin) as http:
        bob = ok(
            http.post(
                "/mem0/memories",
                json={"messages": [{"role": "user", "content": "I like jazz"}], "user_id": "bob"},
            )
        )
    bob_id = bob["results"][0]["id"]
    with http_client(server, alice_only) as http:
        assert http.get(f"/mem0/memories/{bob_id}").status_code == 404
        assert http.delete(f"/mem0/memories/{bob_id}").status_code == 404
        refused = http.post(
            "/mem0/memories",
            json={"messages": [{"role": "user", "content": "hi"}], "user_id": "bob"},
        )
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "user_not_allowed"
        other_agent = http.post(
            "/mem0/memories",
            json={
                "messages": [{"role": "user", "content": "hi"}],
                "user_id": "alice",
                "agent_id": "x",
            },
        )
        assert other_agent.json()["error"]["code"] == "agent_mismatch"
        assert http.get("/mem0/memories", params={"user_id": "bob"}).status_code == 403
        assert http.post("/mem0/reset").json()["error"]["code"] == "admin_required"
        wipe = http.delete("/mem0/memories", params={"user_id": "alice"})
        assert wipe.json()["error"]["code"] == "admin_required"
        assert (
            http.post("/mem0/search", json={"query": "jazz", "user_id": "bob"}).status_code == 403
        )
        # mem0's body with metadata stores as is; no id at all is a 400, not a 422
        raw = http.post(
            "/mem0/memories",
            json={
                "messages": [{"role": "user", "content": "Parking spot 12"}],
                "user_id": "alice",
                "run_id": "r9",
                "metadata": {"source": "app"},
                "infer": False,
            },
        )
        assert raw.status_code == 200, raw.text
        assert (
            http.post(
                "/mem0/memories", json={"messages": [{"role": "user", "content": "x"}]}
            ).status_code
            == 400
        )
    assert httpx.get(f"{server.url}/mem0/memories", params={"user_id": "bob"}).status_code == 401


def test_mem0_errors_and_variants(mem0: Memory, home: Path) -> None:
    with pytest.raises(ValueError, match="user_id"):
        mem0.add("I like tea")
    with pytest.raises(ValueError, match="user_id"):
        mem0.search("tea")
    with pytest.raises(ValueError, match="user_id"):
        mem0.get_all()
    with pytest.raises(ValueError, match="At least one filter"):
        mem0.delete_all()
    with pytest.raises(ValueError):
        mem0.delete("0" * 32)
    with pytest.raises(ValueError):
        mem0.history("0" * 32)
    with pytest.raises(ValueError, match="memory_type"):
        mem0.add("x", user_id="u", memory_type="episodic")
    kept = mem0.add("I like green tea", user_id="u", metadata={"source": "chat", "a": 1})
    [tea] = [r for r in kept["results"] if r["event"] == "ADD"]
    assert mem0.get(tea["id"])["metadata"] == {"source": "chat", "a": 1}, "infer=True keeps it"
    assert [r["id"] for r in mem0.get_all(user_id="u", filters={"a": 1})["results"]] == [tea["id"]]
    with pytest.raises(ValueError, match="messages"):
        mem0.add(42, user_id="u")  # type: ignore[arg-type]
    assert mem0.get("0" * 32) is None
    assert mem0.get("not-an-id") is None

    # a dict message; system messages are never stored; mem0 2.x names: filters, top_k
    mem0.add({"role": "user", "content": "I drink oolong tea every morning"}, user_id="u")
    raw = mem0.add(
        [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Call me Sam", "name": "sam"},
        ],
        user_id="u",
        infer=False,
    )
    assert [(r["memory"], r["actor_id"]) for r in raw["results"]] == [("Call me Sam", "sam")]
    assert texts(mem0.search("oolong tea", filters={"user_id": "u"}, top_k=1)) == [
        "I drink oolong tea every morning"
    ]
    assert texts(mem0.search("oolong tea", user_id="u", threshold=1.01)) == []
    assert texts(mem0.get_all(filters={"user_id": "u", "actor_id": {"eq": "sam"}})) == [
        "Call me Sam"
    ]
    # an agent's own memory: no user_id, the ledger user is the agent
    own = mem0.add(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "I answer in French"}],
        agent_id="tutor",
    )
    assert texts(own) == ["I answer in French"]
    assert texts(mem0.get_all(agent_id="tutor")) == ["I answer in French"]
    procedure = mem0.add(
        "1. open the valve\n2. wait ten seconds\n3. close it",
        user_id="u",
        agent_id="tutor",
        memory_type="procedural_memory",
    )
    assert mem0.ledger.get(procedure["results"][0]["id"]).kind == "procedural"

    # reset forgets everything, as events; restore brings a memory back
    forgotten = len(mem0.ledger.log(event_type="MemorySoftDeleted"))
    assert mem0.reset() is None  # as mem0's
    assert len(mem0.ledger.log(event_type="MemorySoftDeleted")) == forgotten + 5
    assert mem0.get_all(user_id="u") == {"results": []}
    mem0.ledger.restore(raw["results"][0]["id"])
    assert texts(mem0.get_all(user_id="u")) == ["Call me Sam"]

    with Memory.from_config({"home": str(home), "vector_store": {"provider": "faiss"}}) as again:
        assert texts(again.get_all(user_id="u")) == ["Call me Sam"]
    with pytest.raises(ValueError, match="unknown config keys"):
        Memory.from_config({"home": str(home), "colour": "blue"})


def test_a_message_with_an_unknown_role_is_refused_naming_it(
    mem0: Memory, server: LiveServer
) -> None:
    robot = [
        {"role": "user", "content": "I live in Lisbon"},
        {"role": "robot", "content": "I moved to Porto"},
    ]
    with pytest.raises(ValueError, match=r"^message 2 has role 'robot': a message is from user"):
        mem0.add(robot, user_id="alice")
    assert mem0.get_all(user_id="alice") == {"results": []}

    with http_client(server, server.key("helper", ["alice"])) as http:
        refused = http.post("/mem0/memories", json={"messages": robot, "user_id": "alice"})
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["message"] == (
            "messages.1.role: 'robot' is none of 'user', 'assistant' or 'system'"
        )
        assert ok(http.get("/mem0/memories", params={"user_id": "alice"})) == {"results": []}


def test_search_filters_take_mem0_operators_and_refuse_others_naming_them(
    server: LiveServer,
) -> None:
    with http_client(server, server.key("helper", ["alice"])) as http:
        for text, priority in (("Gate code is 4411", 1), ("Bin day is Tuesday", 3)):
            stored = http.post(
                "/mem0/memories",
                json={
                    "messages": [{"role": "user", "content": text}],
                    "user_id": "alice",
                    "metadata": {"priority": priority},
                    "infer": False,
                },
            )
            assert stored.status_code == 200, stored.text

        def found(filters: dict[str, Any]) -> list[str]:
            body = {"query": "code day", "filters": {"user_id": "alice", **filters}}
            return sorted(texts(ok_dict(http.post("/mem0/search", json=body))))

        assert found({"priority": {"gte": 2}}) == ["Bin day is Tuesday"]
        assert found({"OR": [{"priority": 1}, {"priority": {"gt": 2}}]}) == [
            "Bin day is Tuesday",
            "Gate code is 4411",
        ]
        assert found({"NOT": [{"priority": {"in": [1]}}]}) == ["Bin day is Tuesday"]
        # an operator mem0 does not have is refused by the schema, which says so
        refused = http.post(
            "/mem0/search",
            json={"query": "code", "filters": {"user_id": "alice", "priority": {"atleast": 2}}},
        )
        assert refused.status_code == 422, refused.text
        assert "atleast" in refused.json()["error"]["message"]


def test_history_has_mem0_rows_only(mem0: Memory, server: LiveServer) -> None:
    """A repeated fact, a link and a TTL are events of the ledger, not rows of mem0's
    history: `history` shows ADD, UPDATE and DELETE only, in Python and over HTTP."""
    lisbon = mem0.add("I live in Lisbon", user_id="alice")["results"][0]["id"]
    assert mem0.add("I live in Lisbon", user_id="alice")["results"][0]["event"] == "NONE"
    porto = mem0.add("I work in Porto", user_id="alice")["results"][0]["id"]
    mem0.ledger.link(lisbon, porto)
    mem0.ledger.ttl(lisbon, 5)
    mem0.update(lisbon, "I live in Lisbon, near the river")
    mem0.delete(lisbon)
    expected = [
        ("ADD", None, "I live in Lisbon"),
        ("UPDATE", "I live in Lisbon", "I live in Lisbon, near the river"),
        ("DELETE", "I live in Lisbon, near the river", None),
    ]
    rows = mem0.history(lisbon)
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in rows] == expected
    assert "MemoryReinforced" in [e.type for e in mem0.ledger.history(lisbon)]

    with http_client(server, server.key("helper", ["carol"], admin=True)) as http:
        driver = HttpDriver(http)
        added = driver.add("I live in Lisbon", user_id="carol")["results"][0]["id"]
        driver.add("I live in Lisbon", user_id="carol")
        assert [h["event"] for h in driver.history(added)] == ["ADD"]
