"""Seed 001 §7 "Fact extract" (`fact_extract` component, `extract` model tier) and §9 (the
fact graph): `extract_facts(memory)` reads (subject, predicate, object) triples from one
memory through the recorded stage and states them; the seed keeps it out of consolidation."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import LLM_STAGE_COMPONENT
from tests.fake_openai import fake_openai_server
from tests.live_server import live_server


def memory_saying(memory: MnemoLedger, text: str) -> str:
    (added,) = memory.add([text], user="maya").memories
    return added.id


def test_s7_fact_extract_states_what_a_memory_says(memory: MnemoLedger) -> None:
    first = memory_saying(memory, "I live in Lisbon and I speak Portuguese.")
    found = memory.extract_facts(first)
    assert {(f.subject, f.predicate, f.object) for f in found.facts} == {
        ("maya", "lives_in", "Lisbon"),
        ("maya", "speaks", "Portuguese"),
    }
    second = memory_saying(memory, "I speak French too, and I moved to Porto.")
    memory.extract_facts(second)
    holding = {(f.predicate, f.object) for f in memory.facts(user="maya")}
    # lives_in holds one city at a time; languages add up
    assert holding == {("lives_in", "Porto"), ("speaks", "Portuguese"), ("speaks", "French")}
    (lisbon,) = [f for f in memory.facts(user="maya", history=True) if f.object == "Lisbon"]
    assert lisbon.valid_until is not None and lisbon.superseded_by is not None

    records = memory.parts.ledger.read(limit=10_000)
    requested = [r for r in records if r.type == "FactExtractRequested"]
    assert [r.data["input"] for r in requested] == [{"memory_id": first}, {"memory_id": second}]
    calls = [
        r for r in records if r.type == "LLMCallRecorded" and r.stream_id == requested[0].stream_id
    ]
    assert [c.data["stage"] for c in calls] == ["fact_extract"]
    assert LLM_STAGE_COMPONENT["fact_extract"] == "extract"
    holding_ids = {f.id for f in memory.facts(user="maya")}
    again = memory.extract_facts(second)  # facts that hold already are returned as they are
    assert {f.id for f in again.facts} <= holding_ids
    assert {f.id for f in memory.facts(user="maya")} == holding_ids


def test_s7_fact_extract_refuses_a_forgotten_memory(memory: MnemoLedger) -> None:
    gone = memory_saying(memory, "I live in Oslo.")
    memory.forget(gone)
    with pytest.raises(InvalidInput, match="forgotten"):
        memory.extract_facts(gone)


def test_s7_fact_extract_through_an_openai_compatible_server(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        memory_id = memory_saying(m, "My manager is Dana and I work at Acme.")
    with fake_openai_server() as fake:
        settings = Settings(
            home=home,
            llm_provider="openai",
            llm_model="fake-chat",
            extract_model="fake-extract",
            openai_base_url=fake.url,
            openai_api_key="test-key",
            embedder="hashing",
        )
        fake.answer(
            "fact_extract",
            {
                "facts": [
                    {"subject": "maya", "predicate": "works at", "object": "Acme"},
                    {"subject": "Dana", "predicate": "manages", "object": "maya"},
                ]
            },
        )
        with MnemoLedger(settings=settings, actor="tester") as m:
            found = m.extract_facts(memory_id)
        (request,) = fake.chat_requests
        assert request["model"] == "fake-extract"  # the seed's `extract` model tier
        assert "<memory>" in json.dumps(request["messages"])
    assert [(f.subject, f.predicate, f.object) for f in found.facts] == [
        ("maya", "works_at", "Acme"),
        ("Dana", "manages", "maya"),
    ]


def test_s7_fact_extract_over_http_and_the_command_line(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        memory_id = memory_saying(m, "I use Neovim every day.")
    ran = CliRunner().invoke(cli, ["--home", str(home), "--json", "facts", "extract", memory_id])
    assert ran.exit_code == 0, ran.output
    assert [f["object"] for f in json.loads(ran.output)["facts"]] == ["Neovim"]
    with live_server(home) as server:
        key = server.key("researcher", ["maya"])
        http = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"})
        answer = http.post("/facts/extract", json={"memory_id": memory_id})
        assert answer.status_code == 200, answer.text
        assert [f["predicate"] for f in answer.json()["facts"]] == ["uses"]
        unknown = http.post("/facts/extract", json={"memory_id": "0" * 32})
        assert unknown.status_code == 404
