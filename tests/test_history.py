"""History (seed 003 §8): every event of a memory with who did it and the LLM call that
decided it; the log filtered by user, type, time, position and actor."""

from __future__ import annotations

import shutil
from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from tests.test_cli import run, run_json


def test_history_names_actor_agent_causation_and_the_deciding_llm_call(
    memory: MnemoLedger,
) -> None:
    added = memory.add(["Maya lives in Paris"], user="maya", agent="planner")
    memory_id = added.memories[0].id
    memory.update(memory_id, "Maya lives in Lisbon", agent="editor")
    memory.ttl(memory_id, 30)
    memory.forget(memory_id)
    memory.restore(memory_id)
    entries = memory.memory_history(memory_id)
    assert [e.event for e in entries] == ["ADD", "UPDATE", "TTL", "DELETE", "RESTORE"]
    add, update, ttl = entries[0], entries[1], entries[2]
    assert add.actor == "tester" and add.agent_id == "planner"
    assert add.causation_id == added.command_id
    assert add.new_ref == "Maya lives in Paris" and add.old_ref is None
    assert add.llm is not None
    assert add.llm.stage == "reconstruct" and add.llm.command_id == added.command_id
    assert add.prompt_version == add.llm.prompt
    assert add.llm.model == "rules-v1" and add.llm.prompt_tokens > 0
    assert (update.old_ref, update.new_ref) == ("Maya lives in Paris", "Maya lives in Lisbon")
    assert update.agent_id == "editor" and update.llm is None
    assert ttl.new_ref == ttl.data["expires_at"]
    assert [e.position for e in entries] == sorted(e.position for e in entries)


def test_history_table_survives_a_rebuild(memory: MnemoLedger) -> None:
    ids = [m.id for m in memory.add(["Ole works at Acme", "Ole has a cat"], user="ole").memories]
    memory.link(ids[0], ids[1])
    memory.update(ids[1], "Ole has two cats")
    before = [memory.memory_history(i) for i in ids]
    memory.rebuild("history")
    assert [memory.memory_history(i) for i in ids] == before


def test_log_filters_by_user_type_actor_time_and_position(memory: MnemoLedger) -> None:
    memory.add(["Maya likes figs"], user="maya")
    other = MnemoLedger(settings=memory.settings, actor="someone-else")
    try:
        other.add(["Ana likes olives"], user="ana")
    finally:
        other.close()
    everything = memory.timeline()
    assert {e.user_id for e in memory.timeline(user="ana")} == {"ana"}
    assert {e.type for e in memory.timeline(types=["MemoryAdded", "AddRequested"])} == {
        "MemoryAdded",
        "AddRequested",
    }
    assert {e.actor for e in memory.timeline(actor="someone-else")} == {"someone-else"}
    middle = everything[len(everything) // 2]
    assert [e.position for e in memory.timeline(since=middle.position)] == [
        e.position for e in everything if e.position > middle.position
    ]
    assert [e.position for e in memory.timeline(until=middle.position)] == [
        e.position for e in everything if e.position <= middle.position
    ]
    cut = sorted(e.at for e in everything)[len(everything) // 2]
    assert memory.timeline(since=cut) == [e for e in everything if e.at >= cut]
    assert memory.timeline(until=cut) == [e for e in everything if e.at <= cut]
    assert memory.timeline(since="9999-01-01") == []
    assert memory.timeline(limit=3) == everything[:3]


def test_history_and_log_on_the_command_line(home: Path) -> None:
    added = run_json(home, "add", "Maya moved to Berlin", "--user", "maya", "--agent", "a1")
    memory_id = added["memories"][0]["id"]
    run_json(home, "update", memory_id, "Maya moved to Porto")
    history = run_json(home, "history", memory_id)
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert {"type", "at", "actor", "data"} <= history[0].keys()
    assert history[0]["llm"]["stage"] == "reconstruct" and history[0]["agent_id"] == "a1"
    text = run(home, "history", memory_id)
    assert text.exit_code == 0 and "reconstruct" in text.stdout
    updates = run_json(home, "log", "--user", "maya", "--type", "MemoryUpdated")
    assert [e["data"]["content"] for e in updates] == ["Maya moved to Porto"]
    assert run_json(home, "log", "--by-actor", "nobody") == []
    everything = run_json(home, "log")
    assert run_json(home, "log", "--by-actor", "tester") == everything
    # --actor names who acts, as for every command: it filters nothing
    assert run_json(home, "log", "--actor", "nobody") == everything
    assert run_json(home, "--actor", "nobody", "log") == everything
    first = run_json(home, "log")[0]
    assert run_json(home, "log", "--until", str(first["position"])) == [first]
    assert run(home, "log", "--since", "yesterday").exit_code == 2
    assert run(home, "history", "0" * 32).exit_code == 2


def test_history_projection_is_rebuilt_from_the_log_alone(tmp_path: Path) -> None:
    home = tmp_path / "h"
    settings = Settings(home=home, embedder="hashing")
    with MnemoLedger(settings=settings) as memory:
        memory_id = memory.add(["Ana speaks Portuguese"], user="ana").memories[0].id
        memory.forget(memory_id)
        before = memory.memory_history(memory_id)
    shutil.rmtree(home / "projections")
    with MnemoLedger(settings=settings) as memory:
        after = memory.memory_history(memory_id)
    assert after == before
