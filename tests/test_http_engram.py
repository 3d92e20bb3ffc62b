"""engram's HTTP surfaces (seed 001) on a real uvicorn: `GET /stats`, `GET /trash` (with
`POST /memories/{id}/restore`), `POST /recall` and `GET /search`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live_server import LiveServer, live_server
from tests.test_http import assert_error, client, ok

FACTS = ["Maya moved to Lisbon in May", "Maya is allergic to peanuts", "Maya plays the cello"]


@pytest.fixture
def server(home: Path) -> Iterator[LiveServer]:
    with live_server(home) as running:
        yield running


def access_count(server: LiveServer, memory_id: str) -> int:
    def read(memory: object) -> int:
        from mnemoledger import MnemoLedger

        assert isinstance(memory, MnemoLedger)
        memory.refresh()
        row = memory.layers.get(memory_id)
        assert row is not None
        return row.access_count

    return server.state.facade.call(read)


def test_stats_trash_and_restore(server: LiveServer) -> None:
    http = client(server, server.key("researcher", ["maya"]))
    added = ok(http.post("/memories", json={"contents": FACTS, "user_id": "maya"}))
    lisbon, peanuts, cello = [m["id"] for m in added["memories"]]
    assert ok(http.get("/stats", params={"user_id": "maya"})) == {
        "user_id": "maya",
        "memories": 3,
        "by_layer": {"buffer": 3},
        "by_state": {"active": 3},
        "by_kind": {"semantic": 3},
    }
    assert ok(http.get("/trash", params={"user_id": "maya"})) == []

    ok(http.post(f"/memories/{lisbon}/forget"))
    ok(http.delete(f"/memories/{cello}"))
    trash = ok(http.get("/trash", params={"user_id": "maya"}))
    assert [m["id"] for m in trash] == [cello, lisbon]  # the most recently forgotten first
    assert {m["state"] for m in trash} == {"forgotten"}
    assert [m["id"] for m in ok(http.get("/trash", params={"user_id": "maya", "limit": 1}))] == [
        cello
    ]
    stats = ok(http.get("/stats", params={"user_id": "maya"}))
    assert stats["memories"] == 3 and stats["by_state"] == {"active": 1, "forgotten": 2}

    restored = ok(http.post(f"/memories/{lisbon}/restore"))
    assert restored["state"] == "active"
    assert [m["id"] for m in ok(http.get("/trash", params={"user_id": "maya"}))] == [cello]
    assert ok(http.get("/stats", params={"user_id": "maya"}))["by_state"] == {
        "active": 2,
        "forgotten": 1,
    }
    assert peanuts not in [m["id"] for m in trash]

    # the key's users only, and limits are part of the schema
    assert_error(http.get("/stats", params={"user_id": "ines"}), 403, "user_not_allowed")
    assert_error(http.get("/trash", params={"user_id": "ines"}), 403, "user_not_allowed")
    assert_error(
        http.get("/trash", params={"user_id": "maya", "limit": 0}), 422, "validation_error"
    )
    assert (
        http.get("/stats", params={"user_id": "maya"}, headers={"Authorization": ""}).status_code
        == 401
    )


def test_stats_and_trash_count_only_the_keys_categories(server: LiveServer) -> None:
    admin = client(server, server.key("ops", ["maya"], admin=True))
    ok(admin.post("/memories", json={"contents": ["Maya plays the cello"], "user_id": "maya"}))
    ok(
        admin.post(
            "/memories",
            json={"contents": ["Maya likes jazz"], "user_id": "maya", "category": "interests"},
        )
    )
    narrow = client(server, server.key("researcher", ["maya"], categories=["interests"]))
    assert ok(narrow.get("/stats", params={"user_id": "maya"}))["memories"] == 1
    assert ok(admin.get("/stats", params={"user_id": "maya"}))["memories"] == 2


def test_recall_and_search_by_get(server: LiveServer) -> None:
    http = client(server, server.key("researcher", ["maya"]))
    added = ok(http.post("/memories", json={"contents": FACTS, "user_id": "maya"}))
    peanuts = added["memories"][1]["id"]

    got = ok(http.get("/search", params={"q": "peanuts allergy", "user_id": "maya", "k": 2}))
    posted = ok(http.post("/search", json={"query": "peanuts allergy", "user_id": "maya", "k": 2}))
    assert got == posted and got[0]["id"] == peanuts and len(got) <= 2
    assert access_count(server, peanuts) == 0  # a search records nothing

    dry = ok(
        http.post("/recall", json={"query": "peanuts allergy", "user_id": "maya", "dry": True})
    )
    assert dry["dry"] is True and dry["recall_id"] is None
    assert dry["memories"][0]["id"] == peanuts and dry["memories"][0]["score"] > 0
    assert dry["memories"][0]["content"] == "Maya is allergic to peanuts"
    assert access_count(server, peanuts) == 0  # dry: no touch

    served = ok(http.post("/recall", json={"query": "peanuts allergy", "user_id": "maya"}))
    assert served["dry"] is False and served["recall_id"]
    assert served["memories"][0]["id"] == peanuts
    assert access_count(server, peanuts) == 1  # engram's touch: one access recorded
    again = ok(
        http.post(
            "/recall", json={"query": "peanuts allergy", "user_id": "maya", "dry": True, "limit": 1}
        )
    )
    assert [m["id"] for m in again["memories"]] == [peanuts]
    assert again["memories"][0]["access_count"] == 1

    # a similarity floor above every match leaves nothing no keyword of the query matches
    floor = {"query": "stringed instrument", "user_id": "maya", "dry": True}
    assert ok(http.post("/recall", json=floor))["memories"]  # the default floor: 0.30
    assert ok(http.post("/recall", json={**floor, "min_score": 1.0}))["memories"] == []

    # engram's expand and rerank (seed 001 §4.4-4.5): the LLM asked, its calls recorded
    expanded = {"query": "peanuts", "user_id": "maya", "expand": True, "rerank": True, "dry": True}
    assert [m["id"] for m in ok(http.post("/recall", json=expanded))["memories"]][:1] == [peanuts]
    assert_error(
        http.post("/recall", json={"query": "peanuts", "user_id": "ines"}), 403, "user_not_allowed"
    )
    assert_error(http.get("/search", params={"q": "x", "user_id": "ines"}), 403, "user_not_allowed")
    assert_error(http.get("/search", params={"user_id": "maya"}), 422, "validation_error")


def test_search_by_namespace_reads_it_and_the_shared_one(server: LiveServer) -> None:
    http = client(server, server.key("researcher", ["maya"]))
    for content, namespace in (
        ("The projA deploy runs on Fridays", "projA"),
        ("The projB deploy runs on Mondays", "projB"),
        ("Every deploy needs a changelog entry", "default"),
    ):
        body = {"contents": [content], "user_id": "maya", "namespace": namespace}
        ok(http.post("/memories", json=body))
    by_get = ok(
        http.get("/search", params={"q": "deploy", "user_id": "maya", "namespace": "projA"})
    )
    by_post = ok(
        http.post("/search", json={"query": "deploy", "user_id": "maya", "namespace": "projA"})
    )
    assert by_get == by_post
    assert {hit["namespace"] for hit in by_get} == {"projA", "default"}
    everything = ok(http.get("/search", params={"q": "deploy", "user_id": "maya"}))
    assert {hit["namespace"] for hit in everything} == {"projA", "projB", "default"}


def test_openapi_documents_the_engram_routes(server: LiveServer) -> None:
    schema = client(server).get("/openapi.json").json()
    paths = schema["paths"]
    assert {"get", "post"} <= set(paths["/search"])
    assert "post" in paths["/recall"] and "get" in paths["/stats"] and "get" in paths["/trash"]
    assert "best matches in full" in paths["/recall"]["post"]["description"]
    assert "restore" in paths["/trash"]["get"]["description"]


def test_s4_search_and_query_switches_over_http(server: LiveServer) -> None:
    http = client(server, server.key("researcher", ["maya"]))
    ok(http.post("/memories", json={"contents": ["Maya drinks espresso daily"], "user_id": "maya"}))
    body = {"query": "espresso", "user_id": "maya", "fusion": "engram"}
    by_post = ok(http.post("/search", json={**body, "expand": True, "rerank": True}))
    by_get = ok(
        http.get("/search", params={"q": "espresso", "user_id": "maya", "fusion": "engram"})
    )
    assert by_post[0]["content"] == by_get[0]["content"] == "Maya drinks espresso daily"
    assert by_get[0]["source"] in ("fts", "fts+vector")
    assert_error(http.post("/search", json={**body, "fusion": "borda"}), 422, "validation_error")
    query = {"query": "espresso", "filters": {"user_id": "maya"}, "dry": True, "rerank": True}
    assert ok(http.post("/query", json=query))["results"]
    assert access_count(server, by_get[0]["id"]) == 0  # dry: no access counted
    ok(http.post("/query", json={**query, "dry": False}))
    assert access_count(server, by_get[0]["id"]) == 1  # its relevance is above 0.5
