"""The HTTP API on a real uvicorn (127.0.0.1, a free port), driven with httpx."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from mnemoledger.commands.service.http.requests import MAX_ADD_CONTENTS, MAX_BODY_BYTES
from tests.live_server import LiveServer, live_server


@pytest.fixture
def server(home: Path) -> Iterator[LiveServer]:
    with live_server(home) as running:
        yield running


def client(server: LiveServer, key: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=60)


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert error["status"] == status and error["code"] == code
    assert error["message"] and "\n" not in error["message"]
    return error


def ok(response: httpx.Response) -> Any:
    assert response.is_success, response.text
    return response.json()


def key_id(http: httpx.Client) -> str:
    return str(http.get("/whoami").json()["key_id"])


def test_add_query_history_path(server: LiveServer) -> None:
    http = client(server, server.key("researcher", ["maya"]))
    me = http.get("/whoami").json()
    assert me["agent"] == "researcher" and me["users"] == ["maya"]
    assert me["categories"] == ["history", "interests", "knowledge"]

    added = http.post(
        "/memories",
        json={
            "contents": ["Maya moved to Lisbon in May", "Maya is allergic to peanuts"],
            "user_id": "maya",
            "thread_id": "t1",
            "tags": ["home"],
            "layer": "core",  # engram clients send it; every write enters Buffer
            "metadata": {"channel": "chat"},
        },
    )
    assert added.status_code == 201, added.text
    memories = added.json()["memories"]
    assert {m["layer"] for m in memories} == {"buffer"}
    assert [m["metadata"] for m in memories] == [{"channel": "chat"}] * 2
    assert [m["content"] for m in memories] == [
        "Maya moved to Lisbon in May",
        "Maya is allergic to peanuts",
    ]
    lisbon = memories[0]["id"]

    assert http.get(f"/memories/{lisbon}").json()["content"] == "Maya moved to Lisbon in May"
    assert len(http.get("/memories", params={"user_id": "maya"}).json()) == 2

    answer = http.post(
        "/query",
        json={"query": "moved to Lisbon", "filters": {"user_id": "maya"}, "thread": "t1"},
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["results"][0] == {
        "id": lisbon,
        "category": "knowledge",
        "text": "[knowledge] Maya moved to Lisbon in May",
    }
    assert result["header"].startswith("Memory updates since rev 0:")
    assert result["recall_id"]

    hits = http.post("/search", json={"query": "peanuts", "user_id": "maya", "k": 3}).json()
    assert hits[0]["content"] == "Maya is allergic to peanuts"

    updated = http.patch(f"/memories/{lisbon}", json={"content": "Maya moved to Porto in June"})
    assert ok(updated)["content"] == "Maya moved to Porto in June"
    assert ok(http.put(f"/memories/{lisbon}/ttl", json={"days": 30}))["expires_at"]
    assert ok(http.post(f"/memories/{lisbon}/forget"))["state"] == "forgotten"
    assert ok(http.post(f"/memories/{lisbon}/restore"))["state"] == "active"
    edge = http.post(f"/memories/{lisbon}/links", json={"target_id": memories[1]["id"]}).json()
    assert edge["from"] == lisbon and edge["to"] == memories[1]["id"]

    history = http.get(f"/memories/{lisbon}/history").json()
    assert http.get(f"/memory/{lisbon}/history").json() == history, "the seed's path too"
    types = [e["type"] for e in history]
    assert types[0] == "MemoryAdded" and "MemoryUpdated" in types
    assert {"MemorySoftDeleted", "MemoryRestored", "TTLSet", "MemoryLinked"} <= set(types)
    # the key fixes who acted: its actor and its agent on every event of every write
    assert {e["actor"] for e in history} == {f"key:{key_id(http)}"}
    assert {e["agent_id"] for e in history} == {"researcher"}
    assert history[0]["thread_id"] == "t1"

    delta = http.get("/delta", params={"thread": "t1", "user_id": "maya"}).json()
    assert delta["thread"] == "t1" and delta["rev"] >= 1
    resume = http.get("/resume", params={"user_id": "maya"}).json()
    assert "=== Core" in resume["text"]
    assert ok(http.delete(f"/memories/{lisbon}"))["state"] == "forgotten"
    assert ok(http.post(f"/memories/{lisbon}/restore"))["state"] == "active"


def test_missing_invalid_and_revoked_keys_get_401(server: LiveServer) -> None:
    key = server.key("researcher", ["maya"])
    anonymous = client(server)
    assert anonymous.get("/health").json()["status"] == "ready"

    error = assert_error(
        anonymous.get("/memories", params={"user_id": "maya"}), 401, "unauthorized"
    )
    assert "missing API key" in error["message"]
    response = anonymous.post("/memories", json={"contents": ["x"], "user_id": "maya"})
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"

    assert_error(client(server, "mlk_wrong").get("/whoami"), 401, "unauthorized")
    basic = anonymous.get("/whoami", headers={"Authorization": "Basic bWF5YTpwdw=="})
    assert_error(basic, 401, "unauthorized")

    http = client(server, key)
    assert http.get("/whoami").status_code == 200
    revoked = key_id(http)
    server.state.facade.call(lambda m: m.revoke_key(revoked))
    error = assert_error(http.get("/whoami"), 401, "unauthorized")
    assert "revoked" in error["message"]
    assert_error(
        http.post("/memories", json={"contents": ["x"], "user_id": "maya"}), 401, "unauthorized"
    )
    assert server.state.facade.call(lambda m: m.list(user="maya")) == []


def test_no_route_reads_or_writes_across_users(server: LiveServer) -> None:
    maya = client(server, server.key("researcher", ["maya"]))
    bob = client(server, server.key("researcher", ["bob"]))
    bobs = bob.post("/memories", json={"contents": ["Bob likes jazz"], "user_id": "bob"}).json()
    bob_memory = bobs["memories"][0]["id"]
    mine = maya.post("/memories", json={"contents": ["Maya likes tea"], "user_id": "maya"}).json()
    maya_memory = mine["memories"][0]["id"]

    refused = [
        maya.post("/memories", json={"contents": ["Bob hates jazz"], "user_id": "bob"}),
        maya.get("/memories", params={"user_id": "bob"}),
        maya.post("/query", json={"query": "music", "filters": {"user_id": "bob"}}),
        maya.post("/search", json={"query": "jazz", "user_id": "bob"}),
        maya.get("/delta", params={"thread": "t1", "user_id": "bob"}),
        maya.get("/resume", params={"user_id": "bob"}),
        maya.get("/core", params={"user_id": "bob"}),
    ]
    for response in refused:
        error = assert_error(response, 403, "user_not_allowed")
        assert "'bob'" in error["message"]

    # another user's memory id is answered like an unknown one: ids cannot probe users
    for response in [
        maya.get(f"/memories/{bob_memory}"),
        maya.get(f"/memories/{bob_memory}/history"),
        maya.patch(f"/memories/{bob_memory}", json={"content": "Bob hates jazz"}),
        maya.post(f"/memories/{bob_memory}/forget"),
        maya.put(f"/memories/{bob_memory}/ttl", json={"days": 1}),
        maya.post(f"/memories/{maya_memory}/links", json={"target_id": bob_memory}),
    ]:
        assert_error(response, 404, "not_found")

    assert [m["content"] for m in bob.get("/memories", params={"user_id": "bob"}).json()] == [
        "Bob likes jazz"
    ]
    assert bob.get(f"/memories/{bob_memory}").json()["state"] == "active"
    assert [e["type"] for e in bob.get(f"/memories/{bob_memory}/history").json()] == ["MemoryAdded"]


def test_categories_outside_the_key_are_refused(server: LiveServer) -> None:
    researcher = client(server, server.key("researcher", ["maya"]))
    fact = researcher.post("/memories", json={"contents": ["Maya reads Borges"], "user_id": "maya"})
    fact_id = fact.json()["memories"][0]["id"]  # category: knowledge

    stylist = client(server, server.key("stylist", ["maya"]))
    write = stylist.post("/memories", json={"contents": ["Maya likes tea"], "user_id": "maya"})
    error = assert_error(write, 403, "category_not_allowed")
    assert "'knowledge'" in error["message"]
    preference = stylist.post(
        "/memories",
        json={
            "contents": ["Maya prefers short answers"],
            "user_id": "maya",
            "namespace": "tacit/preferences",
        },
    )
    assert preference.status_code == 201, preference.text

    assert_error(stylist.get(f"/memories/{fact_id}"), 403, "category_not_allowed")
    assert_error(stylist.get(f"/memories/{fact_id}/history"), 403, "category_not_allowed")
    assert_error(stylist.post(f"/memories/{fact_id}/forget"), 403, "category_not_allowed")
    listed = stylist.get("/memories", params={"user_id": "maya"}).json()
    assert [m["content"] for m in listed] == ["Maya prefers short answers"]
    hits = stylist.post("/search", json={"query": "Maya reads Borges", "user_id": "maya"}).json()
    assert fact_id not in [h["id"] for h in hits]
    assert_error(stylist.get("/core", params={"user_id": "maya"}), 403, "category_not_allowed")

    disallowed = stylist.post(
        "/query",
        json={"query": "books", "categories": ["knowledge"], "filters": {"user_id": "maya"}},
    )
    error = assert_error(disallowed, 403, "category_not_allowed")
    assert "knowledge" in error["message"]
    assert server.state.facade.call(lambda m: m.log(event_type="RecallServed")) == []

    # a key narrowed to a subset of its agent's allowlist
    narrow = client(server, server.key("researcher", ["maya"], categories=["interests"]))
    assert narrow.get("/whoami").json()["categories"] == ["interests"]
    assert_error(narrow.get(f"/memories/{fact_id}"), 403, "category_not_allowed")
    narrowed = narrow.post(
        "/query",
        json={"query": "books", "categories": ["knowledge"], "filters": {"user_id": "maya"}},
    )
    assert_error(narrowed, 403, "category_not_allowed")
    default = narrow.post("/query", json={"query": "Borges", "filters": {"user_id": "maya"}})
    assert default.status_code == 200 and default.json()["results"] == []

    # the key fixes the agent: naming another one is refused
    mismatch = stylist.post(
        "/memories", json={"contents": ["x"], "user_id": "maya", "agent_id": "supervisor"}
    )
    assert_error(mismatch, 403, "agent_mismatch")
    as_other = stylist.post(
        "/query", json={"agent": "supervisor", "query": "x", "filters": {"user_id": "maya"}}
    )
    assert_error(as_other, 403, "agent_mismatch")

    # admin keys read every category
    admin = client(server, server.key("ops", ["maya"], admin=True))
    assert admin.get(f"/memories/{fact_id}").status_code == 200
    assert admin.get("/whoami").json()["categories"] is None


def test_limits_and_error_bodies(server: LiveServer) -> None:
    http = client(server, server.key("researcher", ["maya"]))
    huge = json.dumps({"contents": ["x" * 1000] * 1100, "user_id": "maya"})
    assert len(huge) > MAX_BODY_BYTES
    response = http.post("/memories", content=huge, headers={"content-type": "application/json"})
    assert_error(response, 413, "payload_too_large")

    too_many = http.post(
        "/memories", json={"contents": ["a"] * (MAX_ADD_CONTENTS + 1), "user_id": "maya"}
    )
    error = assert_error(too_many, 422, "validation_error")
    assert error["details"][0]["loc"] == ["body", "contents"]
    too_long = http.post("/memories", json={"contents": ["x" * 8193], "user_id": "maya"})
    assert_error(too_long, 422, "validation_error")
    unknown_field = http.post(
        "/memories", json={"contents": ["x"], "user_id": "maya", "colour": "blue"}
    )
    assert_error(unknown_field, 422, "validation_error")
    broken = http.post(
        "/memories", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_error(broken, 422, "validation_error")
    empty = http.post("/memories", json={"contents": [""], "user_id": "maya"})
    blank = http.post("/memories", json={"contents": ["   "], "user_id": "maya"})
    # the same status and message, whether empty or only spaces
    assert assert_error(empty, 422, "validation_error") == assert_error(
        blank, 422, "validation_error"
    )
    assert blank.json()["error"]["message"] == (
        "contents.0: must not be empty or only white space or control characters"
    )
    assert server.state.facade.call(lambda m: m.list(user="maya")) == []

    assert_error(http.get("/memories/not-a-memory"), 404, "not_found")
    assert_error(http.get("/nowhere"), 404, "not_found")
    assert_error(http.delete("/memories"), 405, "method_not_allowed")
    added = http.post("/memories", json={"contents": ["Maya likes tea"], "user_id": "maya"})
    memory_id = added.json()["memories"][0]["id"]
    assert_error(http.post(f"/memories/{memory_id}/restore"), 409, "conflict")
    assert_error(http.put(f"/memories/{memory_id}/ttl", json={"days": 0}), 422, "validation_error")


def test_fixed_paths_beside_a_memory_id_are_never_read_as_one(server: LiveServer) -> None:
    """`/memories/by-key`, `/memories/clear` and `/memories/latest` are not memories: a
    method they lack is a 405 naming the ones they have (it was an update, a forget or a
    read of a memory called "by-key")."""
    http = client(server, server.key("researcher", ["maya"]))
    added = ok(http.post("/memories", json={"contents": ["Maya likes tea"], "user_id": "maya"}))
    memory_id = added["memories"][0]["id"]
    refused = {
        ("PATCH", "/memories/by-key"): "DELETE, GET, PUT",
        ("POST", "/memories/by-key"): "DELETE, GET, PUT",
        ("GET", "/memories/clear"): "POST",
        ("DELETE", "/memories/clear"): "POST",
        ("PATCH", "/memories/latest"): "GET",
        ("DELETE", "/memories/latest"): "GET",
        ("PUT", "/memories"): "GET, POST",
        ("PATCH", f"/mem0/memories/{memory_id}"): "DELETE, GET, PUT",
    }
    for (method, path), allowed in refused.items():
        response = http.request(method, path, json={"content": "changed"})
        assert_error(response, 405, "method_not_allowed")
        assert response.headers["allow"] == allowed, (method, path)
    assert_error(http.get("/memories/not-a-memory"), 404, "not_found")
    assert_error(http.get("/mem0/memories/by-key"), 404, "not_found")
    # a memory id with its hyphens (as mem0 clients send it) is still one
    hyphens = str(uuid.UUID(memory_id))
    assert ok(http.get(f"/memories/{hyphens}"))["content"] == "Maya likes tea"
    latest = ok(http.get("/memories/latest", params={"user_id": "maya"}))
    assert [memory["content"] for memory in latest] == ["Maya likes tea"]


def test_openapi_documents_routes_auth_and_errors(server: LiveServer) -> None:
    schema = httpx.get(f"{server.url}/openapi.json", timeout=60).json()
    assert {
        "/memories",
        "/memories/{memory_id}/history",
        "/query",
        "/search",
        "/resume",
        "/delta",
        "/core",
    } <= set(schema["paths"])
    assert schema["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"
    post = schema["paths"]["/memories"]["post"]
    assert set(post["responses"]) >= {"201", "400", "401", "403", "413", "422"}
    body = schema["components"]["schemas"]["AddMemoriesRequest"]
    assert body["required"] == ["contents", "user_id"]
    assert body["properties"]["contents"]["maxItems"] == MAX_ADD_CONTENTS


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


MNEMOLEDGER = [sys.executable, "-m", "mnemoledger"]


def test_serve_command(home: Path) -> None:
    environment = {**os.environ, "MNEMOLEDGER_HOME": str(home), "MNEMOLEDGER_EMBEDDER": "hashing"}
    created = subprocess.run(
        [
            sys.executable,
            "-m",
            "mnemoledger",
            "--json",
            "keys",
            "create",
            "--agent",
            "researcher",
            "--user",
            "maya",
        ],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    key = json.loads(created.stdout)["key"]
    port = free_port()
    process = subprocess.Popen(
        [*MNEMOLEDGER, "serve", "--port", str(port), "--log-level", "warning"],
        env=environment,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300  # a busy machine starts it slowly
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=60).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        headers = {"Authorization": f"Bearer {key}"}
        added = httpx.post(
            f"{url}/memories",
            json={"contents": ["Maya likes tea"], "user_id": "maya"},
            headers=headers,
            timeout=60,
        )
        assert added.status_code == 201, added.text
    finally:
        process.terminate()
        # uvicorn shuts down gracefully, then re-raises the signal it caught
        assert process.wait(60) in (0, -signal.SIGTERM)


def test_topics_consolidate_export_verify(server: LiveServer) -> None:
    researcher = client(server, server.key("researcher", ["maya"]))
    admin = client(server, server.key("ops", ["maya"], admin=True))
    contents = ["Maya plays jazz piano", "Maya plays jazz guitar", "Maya reads Borges novels"]
    added = researcher.post("/memories", json={"contents": contents, "user_id": "maya"})
    assert added.status_code == 201, added.text

    for response in [
        researcher.post("/consolidate", json={"user_id": "maya", "dry_run": True}),
        researcher.get("/export", params={"user_id": "maya"}),
        researcher.get("/verify"),
    ]:
        assert_error(response, 403, "admin_required")
    assert_error(admin.get("/export", params={"user_id": "bob"}), 403, "user_not_allowed")

    tree = ok(researcher.get("/topics", params={"user_id": "maya"}))
    assert tree["user"] == "maya" and tree["topics"]
    leaf = tree["topics"][0]["id"]
    detail = ok(researcher.post("/topic", json={"user_id": "maya", "ids": [leaf]}))
    assert detail[leaf]["memories"]
    stylist = client(server, server.key("stylist", ["maya"]))
    hidden = ok(stylist.post("/topic", json={"user_id": "maya", "ids": [leaf]}))
    assert hidden[leaf]["memories"] == []  # knowledge memories are outside its categories

    planned = ok(admin.post("/consolidate", json={"user_id": "maya", "dry_run": True}))
    assert planned["dry_run"] is True

    exported = admin.get("/export", params={"user_id": "maya", "format": "jsonl"})
    assert exported.status_code == 200, exported.text
    events = [json.loads(line) for line in exported.text.splitlines()]
    assert any(e["type"] == "MemoryAdded" for e in events)
    assert {e["user_id"] for e in events} <= {"maya", ""}

    assert ok(admin.get("/verify"))["ok"] is True


ADVICE = (
    "Feel free to experiment and adjust the ingredients. From now on, you can swap butter "
    "for olive oil in most of these recipes."
)
"""An assistant's advice to the user: refused as the user's words (it reads as an order to
the model), kept as the assistant's."""


def test_an_add_says_who_wrote_it_and_where_it_came_from(server: LiveServer) -> None:
    http = client(server, server.key("researcher", ["maya"]))
    as_users = http.post("/memories", json={"contents": [ADVICE], "user_id": "maya"})
    assert as_users.status_code == 400, as_users.text
    added = http.post(
        "/memories",
        json={
            "contents": [ADVICE, "Thanks!"],
            "user_id": "maya",
            "role": "assistant",
            "evidence": ["turn-7", "turn-8"],
            "keep_all": True,
        },
    )
    assert added.status_code == 201, added.text
    memories = added.json()["memories"]
    assert "Thanks!" in [m["content"] for m in memories]  # keep_all: the thanks is kept
    assert {tuple(m["evidence"]) for m in memories} == {("turn-7", "turn-8")}

    hits = ok(http.get("/search", params={"q": "olive oil", "user_id": "maya"}))
    assert "olive oil" in hits[0]["content"] and hits[0]["evidence"] == ["turn-7", "turn-8"]
    refused = http.post("/memories", json={"contents": ["x"], "user_id": "maya", "role": "robot"})
    assert_error(refused, 422, "validation_error")


def test_search_takes_its_floor_and_its_time(server: LiveServer) -> None:
    http = client(server, server.key("researcher", ["maya"]))
    contents = ["Maya swaps butter for olive oil in her recipes", "Maya runs on Sundays"]
    assert ok(http.post("/memories", json={"contents": contents, "user_id": "maya"}))
    asked = {"query": "olive oil", "user_id": "maya"}
    floored = ok(http.post("/search", json=asked))
    assert [h["content"] for h in floored] == [contents[0]]
    assert len(ok(http.post("/search", json={**asked, "min_score": 0.0}))) == 2
    later = (datetime.now(UTC) + timedelta(days=365)).isoformat()
    now = ok(http.get("/search", params={"q": "olive oil", "user_id": "maya"}))
    in_a_year = ok(http.get("/search", params={"q": "olive oil", "user_id": "maya", "at": later}))
    assert in_a_year[0]["id"] == now[0]["id"] and in_a_year[0]["score"] < now[0]["score"]
    assert (
        ok(http.post("/search", json={**asked, "at": later}))[0]["score"] == in_a_year[0]["score"]
    )
    params = {"q": "olive oil", "user_id": "maya", "min_score": 0.0}
    assert len(ok(http.get("/search", params=params))) == 2
