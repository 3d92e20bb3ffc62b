"""Time travel: list, get, search and core as the ledger stood at a time or position,
rebuilt in a scratch directory; the live read models never change."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound
from tests.test_cli import run, run_json


def test_reads_as_of_a_position_see_the_past(memory: MnemoLedger) -> None:
    memory_id = memory.add(["Maya lives in Paris"], user="maya").memories[0].id
    before_update = memory.ledger.last_position()
    core_then = memory.core(user="maya").markdown
    memory.update(memory_id, "Maya lives in Lisbon")
    memory.add(["Maya works at Acme as an engineer"], user="maya")
    live_list = memory.list(user="maya")
    positions = {p.name: p.position() for p in memory.runner.projections}

    with memory.as_of(before_update, search=True) as past:
        assert [m.content for m in past.list(user="maya")] == ["Maya lives in Paris"]
        assert past.get(memory_id).content == "Maya lives in Paris"
        assert past.core(user="maya").markdown == core_then
        hits = past.search("where does Maya live", user="maya")
        assert [h.id for h in hits] == [memory_id]
    with memory.as_of(0) as empty:
        assert empty.list() == []
        with pytest.raises(MemoryNotFound):
            empty.get(memory_id)

    assert memory.list(user="maya") == live_list
    assert {p.name: p.position() for p in memory.runner.projections} == positions
    assert memory.get(memory_id).content == "Maya lives in Lisbon"


def test_as_of_a_time_is_the_position_reached_then(memory: MnemoLedger) -> None:
    memory.add(["Ole has a dog called Rex"], user="ole")
    first_add = memory.timeline()
    memory.add(["Ole moved to Oslo"], user="ole")
    done = max(e.at for e in first_add)
    assert memory.position_at(done) == first_add[-1].position
    assert memory.position_at("2000-01-01T00:00:00Z") == 0
    assert memory.position_at(10**9) == memory.ledger.last_position()
    with memory.as_of("2000-01-01") as past:
        assert past.list() == []
    with pytest.raises(InvalidInput):
        memory.position_at("last tuesday")


def test_as_of_on_the_command_line(home: Path) -> None:
    added = run_json(home, "add", "Ana speaks Portuguese", "--user", "ana")
    memory_id = added["memories"][0]["id"]
    position = run_json(home, "stats")["events"]
    run_json(home, "forget", memory_id)
    then = run_json(home, "list", "--user", "ana", "--as-of", str(position))
    assert [m["state"] for m in then] == ["active"]
    assert run_json(home, "get", memory_id, "--as-of", str(position))["state"] == "active"
    assert run_json(home, "get", memory_id)["state"] == "forgotten"
    core = run_json(home, "core", "--user", "ana", "--as-of", str(position))
    assert core["path"] is None
    hits = run_json(home, "search", "Portuguese", "--user", "ana", "--as-of", str(position))
    assert [h["id"] for h in hits] == [memory_id]
    assert run(home, "get", memory_id, "--as-of", "0").exit_code == 2
    assert run(home, "list", "--as-of", "not-a-time").exit_code == 2


def test_a_view_of_the_past_writes_nothing_to_the_live_log(memory: MnemoLedger) -> None:
    memory.add(["Maya keeps bees on the roof"], user="maya")
    position = memory.ledger.last_position()
    with memory.as_of(position, search=True) as past:
        assert past.settings.search_expand == "off"  # automatic expansion records a call
        assert [h.content for h in past.search("bees", user="maya")]
        with pytest.raises(InvalidInput, match="read-only"):  # asked for: refused, not written
            past.search("bees on the roof", user="maya", expand=True)
    assert memory.ledger.last_position() == position
