"""The fact graph (seed 001 §9): subject-predicate-object facts stated by memories, with
validity in time, supersession, multi-hop entity queries; through the facade, the CLI, the
HTTP API, a rebuild and an erasure. Runs on SQLite and, with `MNEMOLEDGER_TEST_DB`, on
PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.recall.facts_api import FactNotFound
from mnemoledger.ledger import InvalidInput
from tests.erasure_checks import files_containing
from tests.live_server import live_server
from tests.read_models import open_memory
from tests.test_cli import run, run_json

JAN = "2026-01-01T00:00:00+00:00"
MAR = "2026-03-01T00:00:00+00:00"
JUN = "2026-06-01T00:00:00+00:00"


def remember(memory: MnemoLedger, text: str, user: str = "maya") -> str:
    return memory.add([text], user=user).memories[0].id


def test_seed001_s9_fact_graph_a_new_value_replaces_the_old_from_its_start(
    memory: MnemoLedger,
) -> None:
    lisbon = remember(memory, "Maya's first flat was in Lisbon")
    porto = remember(memory, "The cat sleeps on the red sofa")
    old = memory.state_fact("Maya", "Lives in", "Lisbon", memory=lisbon, valid_from=JAN)
    assert old.predicate == "lives_in" and old.valid_until is None
    new = memory.state_fact("maya", "lives_in", "Porto", memory=porto, valid_from=JUN)

    assert [(f.subject, f.object) for f in memory.facts(user="maya")] == [("maya", "Porto")]
    then = memory.facts(user="maya", at=MAR)
    assert [f.object for f in then] == ["Lisbon"]
    ended = memory.fact(old.id)
    assert (ended.valid_until, ended.superseded_by) == (JUN, new.id)
    assert {f.object for f in memory.facts(user="maya", history=True)} == {"Lisbon", "Porto"}
    # both changes are events of the memories that state them, in one save
    types = [e.type for e in memory.log()]
    assert types[-2:] == ["FactStated", "FactEnded"]


def test_keep_others_and_the_same_fact_again(memory: MnemoLedger) -> None:
    said = remember(memory, "Maya likes tea and coffee")
    tea = memory.state_fact("Maya", "likes", "tea", memory=said)
    coffee = memory.state_fact("Maya", "likes", "coffee", memory=said, keep_others=True)
    assert {f.object for f in memory.facts(user="maya")} == {"tea", "coffee"}
    again = memory.state_fact("MAYA", "likes", "Coffee", memory=said)
    assert again.id == coffee.id
    assert memory.fact(tea.id).valid_until is None
    assert len([e for e in memory.log() if e.type == "FactStated"]) == 2


def test_seed001_s9_fact_graph_entity_query_follows_two_hops(memory: MnemoLedger) -> None:
    said = remember(memory, "Maya works at Acme, which is based in Berlin")
    memory.state_fact("Maya", "works_at", "Acme GmbH", memory=said)
    memory.state_fact("Acme GmbH", "based_in", "Berlin", memory=said)
    memory.state_fact("Berlin", "capital_of", "Germany", memory=said)
    memory.state_fact("Tom", "likes", "jazz", memory=said)

    one = memory.facts(user="maya", entity="maya")
    assert [(f.object, f.hop) for f in one] == [("Acme GmbH", 1)]
    two = memory.facts(user="maya", entity="Maya", hops=2)
    assert sorted((f.subject, f.object, f.hop) for f in two) == [
        ("Acme GmbH", "Berlin", 2),
        ("Maya", "Acme GmbH", 1),
    ]
    # a word of a many-word entity finds it, accents and case aside
    assert [f.subject for f in memory.facts(user="maya", entity="acme")][:1] == ["Acme GmbH"]
    assert memory.facts(user="bob", entity="Maya") == []


def test_facts_leave_with_their_memory_and_come_back_with_it(memory: MnemoLedger) -> None:
    said = remember(memory, "Maya plays the cello")
    memory.state_fact("Maya", "plays", "cello", memory=said)
    memory.forget(said)
    assert memory.facts(user="maya") == []
    with pytest.raises(InvalidInput, match="not active"):
        memory.state_fact("Maya", "plays", "piano", memory=said)
    memory.restore(said)
    assert [f.object for f in memory.facts(user="maya")] == ["cello"]


def test_bad_facts_are_refused_with_clear_errors(memory: MnemoLedger) -> None:
    said = remember(memory, "Maya plays the cello")
    for call, message in (
        (lambda: memory.state_fact(" ", "plays", "x", memory=said), "subject"),
        (lambda: memory.state_fact("a", "plays", "x" * 201, memory=said), "longer than"),
        (lambda: memory.state_fact("a", "b", "c", memory=said, valid_from="May"), "ISO 8601"),
        (lambda: memory.state_fact("a", "b", "c", memory=said, valid_from=JAN[:19]), "zone"),
        (lambda: memory.facts(user="maya", hops=3), "hops"),
        (lambda: memory.facts(user="maya", at=JAN, history=True), "either"),
    ):
        with pytest.raises(InvalidInput, match=message):
            call()
    with pytest.raises(FactNotFound):
        memory.end_fact("0" * 32)
    fact = memory.state_fact("Maya", "plays", "cello", memory=said, valid_from=MAR)
    with pytest.raises(InvalidInput, match="before"):
        memory.end_fact(fact.id, valid_until=JAN)
    memory.end_fact(fact.id, valid_until=JUN)
    with pytest.raises(InvalidInput, match="already ended"):
        memory.end_fact(fact.id)


def test_facts_survive_a_rebuild_and_leave_with_an_erased_user(home: Path) -> None:
    with open_memory(home) as memory:
        said = remember(memory, "Eve hides the Zorblatt key", user="eve")
        memory.state_fact("Eve", "hides", "Zorblatt key", memory=said, valid_from=JAN)
        memory.state_fact("Eve", "hides", "Quuxbar box", memory=said, valid_from=MAR)
        before = memory.facts(user="eve", history=True)
    shutil.rmtree(home / "projections")
    with open_memory(home) as memory:
        assert memory.facts(user="eve", history=True) == before
        assert "facts" in memory.erase(user="eve").projections
        assert memory.facts(user="eve", history=True) == []
    assert files_containing(home, ("Zorblatt", "Quuxbar")) == {}


def test_cli_add_list_end(home: Path) -> None:
    added = run_json(home, "add", "Maya works at Acme", "--user", "maya")
    memory_id = added["memories"][0]["id"]
    fact = run_json(home, "facts", "add", "Maya", "works at", "Acme", "--memory", memory_id)
    assert (fact["predicate"], fact["memory_id"]) == ("works_at", memory_id)
    run_json(home, "facts", "add", "Acme", "based_in", "Berlin", "--memory", memory_id[:8])
    listed = run_json(home, "facts", "list", "--user", "maya", "--entity", "Maya", "--hops", "2")
    assert [(f["object"], f["hop"]) for f in listed] == [("Acme", 1), ("Berlin", 2)]
    table = run(home, "facts", "list", "--user", "maya")
    assert table.exit_code == 0 and "works_at" in table.stdout
    ended = run_json(home, "facts", "end", fact["id"])
    assert ended["valid_until"] is not None
    assert [f["object"] for f in run_json(home, "facts", "list", "--user", "maya")] == ["Berlin"]
    refused = run(home, "facts", "add", "a", "b", "c", "--memory", memory_id, "--valid-from", "x")
    assert refused.exit_code == 2 and refused.stderr.startswith("error: valid_from")
    missing = run(home, "facts", "end", "0" * 32)
    assert missing.exit_code == 2 and missing.stderr.startswith("error: no fact")


def test_http_facts_are_seen_through_their_memories(home: Path) -> None:
    with open_memory(home) as memory:
        mayas = remember(memory, "Maya works at Acme")
        bobs = remember(memory, "Bob works at Initech", user="bob")
    with live_server(home) as server:
        headers = {"Authorization": f"Bearer {server.key('researcher', ['maya'])}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
            body = {"subject": "Maya", "predicate": "works_at", "object": "Acme"}
            made = http.post("/facts", json={**body, "memory_id": mayas})
            assert made.status_code == 201, made.text
            assert made.json()["memory_id"] == mayas
            listed = http.get("/facts", params={"entity": "Maya"})
            assert [f["object"] for f in listed.json()] == ["Acme"]
            foreign = http.post("/facts", json={**body, "memory_id": bobs})
            assert foreign.status_code == 404
            other = http.get("/facts", params={"user_id": "bob"})
            assert other.status_code == 403
            assert http.post("/facts", json={**body, "memory": mayas}).status_code == 422
            ended = http.post(f"/facts/{made.json()['id']}/end", json={})
            assert ended.status_code == 200 and ended.json()["valid_until"] is not None
            assert http.get("/facts").json() == []


def test_a_fact_needs_a_memory_that_exists(memory: MnemoLedger) -> None:
    from mnemoledger.ledger import MemoryNotFound

    with pytest.raises(MemoryNotFound):
        memory.state_fact("a", "b", "c", memory="0" * 32)


def test_a_nul_character_in_an_entity_is_refused_not_a_500(home: Path) -> None:
    """The facade refuses it (InvalidInput); the API before anything runs, as its schema
    says (a 422)."""
    with open_memory(home) as memory:
        mayas = remember(memory, "Maya works at Acme")
        memory.state_fact("Maya", "works_at", "Acme", memory=mayas)
        with pytest.raises(InvalidInput, match=r"^entity must not contain a NUL character$"):
            memory.facts(user="maya", entity="Ma\x00ya")
    with live_server(home) as server:
        headers = {"Authorization": f"Bearer {server.key('researcher', ['maya'])}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
            for params in ({"entity": "Ma\x00ya"}, {"entity": "Maya", "predicate": "works\x00at"}):
                refused = http.get("/facts", params=params)
                assert refused.status_code == 422, refused.text
                assert refused.json()["error"]["message"].endswith(
                    "must not be empty, only white space, or hold a NUL character"
                )
            assert [f["object"] for f in http.get("/facts", params={"entity": "Maya"}).json()] == [
                "Acme"
            ]
