"""Supervisor checkpoints (seed 003 §15): an agent's per-(user, thread) state, saved as
events and loaded from the `checkpoints` read model; through the facade, the CLI, the HTTP
API and erasure. Runs on SQLite and, with `MNEMOLEDGER_TEST_DB`, on PostgreSQL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from mnemoledger.ledger.checkpoint import (
    MAX_CHECKPOINT_BYTES,
    MAX_CHECKPOINT_DEPTH,
    checkpoint_id,
)
from mnemoledger.ledger.errors import InvalidInput
from tests.erasure_checks import files_containing, pg_dump_containing
from tests.live_server import live_server
from tests.read_models import open_memory
from tests.test_cli import run, run_json

STATE: dict[str, Any] = {
    "graph": {"node": "planner", "next": ["search", "answer"], "step": 3},
    "memory_context": ["Maya lives in Lisbon"],
    "messages": [{"role": "user", "content": "Plan my trip to Porto"}],
    "agents": {"planner": {"retries": 0, "score": 0.75, "done": False, "note": None}},
}

SECRET = "xylophone-quagmire"
"""A word only the erased user's checkpoints hold."""


def test_save_then_load_gives_the_same_object(memory: MnemoLedger) -> None:
    saved = memory.save_checkpoint("maya", "run-1", STATE)
    assert (saved.user_id, saved.thread_id, saved.revision) == ("maya", "run-1", 1)
    assert saved.data == STATE and saved.created_at == saved.updated_at
    assert saved.size == len(json.dumps(STATE, separators=(",", ":")).encode())
    loaded = memory.load_checkpoint("maya", "run-1")
    assert loaded == saved
    assert memory.load_checkpoint("maya", "run-2") is None
    assert memory.load_checkpoint("bob", "run-1") is None


def test_state_comes_back_exactly_even_what_the_log_transcoder_would_revive(
    memory: MnemoLedger,
) -> None:
    tricky = {
        "typed": {"_type_": "datetime_iso", "_data_": "2025-01-01T00:00:00+00:00"},
        "big": 2**80,
        "unicode": "Olá 🌍",
        "nested": [[[{"a": [1.5, -2, True, None]}]]],
        "empty": {},
    }
    memory.save_checkpoint("maya", "t", tricky)
    loaded = memory.load_checkpoint("maya", "t")
    assert loaded is not None and loaded.data == tricky


def test_a_second_save_keeps_the_first_in_the_history(memory: MnemoLedger) -> None:
    first = memory.save_checkpoint("maya", "run-1", {"step": 1}, agent="planner")
    second = memory.save_checkpoint("maya", "run-1", {"step": 2})
    assert second.revision == 2 and second.created_at == first.created_at
    assert second.updated_at >= first.updated_at
    latest = memory.load_checkpoint("maya", "run-1")
    assert latest is not None and latest.data == {"step": 2} and latest.revision == 2
    earlier = memory.load_checkpoint("maya", "run-1", version=1)
    assert earlier is not None
    assert (earlier.revision, earlier.data, earlier.agent_id) == (1, {"step": 1}, "planner")
    assert earlier.updated_at == first.updated_at
    assert memory.load_checkpoint("maya", "run-1", version=2) == latest
    assert memory.load_checkpoint("maya", "run-1", version=3) is None
    # both saves are events of the thread's stream, in order
    stream = memory.ledger.stream(checkpoint_id("maya", "run-1"))
    assert [e.type for e in stream] == ["CheckpointStarted", "CheckpointSaved", "CheckpointSaved"]
    assert [e.data.get("revision") for e in stream[1:]] == [1, 2]
    assert {e.thread_id for e in stream} == {"run-1"}
    assert memory.verify().ok


def test_checkpoints_lists_threads_newest_first(memory: MnemoLedger) -> None:
    for thread in ("a", "b", "c"):
        memory.save_checkpoint("maya", thread, {"thread": thread})
    memory.save_checkpoint("maya", "a", {"thread": "a", "again": True})
    memory.save_checkpoint("bob", "z", {"other": "user"})
    listed = memory.checkpoints("maya")
    assert [c.thread_id for c in listed] == ["a", "c", "b"]
    assert [c.revision for c in listed] == [2, 1, 1]
    assert not hasattr(listed[0], "data")
    assert [c.thread_id for c in memory.checkpoints("maya", limit=1)] == ["a"]
    assert memory.checkpoints("nobody") == []


def test_bad_checkpoints_are_refused_with_clear_errors(memory: MnemoLedger) -> None:
    refused: list[tuple[Any, str]] = [
        ([1, 2], "must be a JSON object, not an array"),
        ("{}", "must be a JSON object, not a string"),
        (None, "must be a JSON object, not null"),
        ({"x": float("nan")}, "is not JSON"),
        ({"when": object()}, "is not JSON"),
        ({1: "a"}, "keys must be text"),
        ({"blob": "x" * MAX_CHECKPOINT_BYTES}, f"the limit is {MAX_CHECKPOINT_BYTES}"),
    ]
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(MAX_CHECKPOINT_DEPTH + 1):
        inner["a"] = {}
        inner = inner["a"]
    refused.append((deep, f"deeper than {MAX_CHECKPOINT_DEPTH} levels"))
    for data, message in refused:
        with pytest.raises(InvalidInput, match=message):
            memory.save_checkpoint("maya", "t", data)
    for user, thread in (("", "t"), ("maya", ""), ("ma ya", "t"), ("maya", "t 1")):
        with pytest.raises(InvalidInput):
            memory.save_checkpoint(user, thread, {})
    with pytest.raises(InvalidInput, match="version"):
        memory.load_checkpoint("maya", "t", version=0)
    with pytest.raises(InvalidInput, match="limit"):
        memory.checkpoints("maya", limit=0)
    assert memory.ledger.last_position() == 0  # nothing refused was written


def test_checkpoints_survive_a_restart_and_a_rebuild(home: Path) -> None:
    with open_memory(home) as memory:
        memory.save_checkpoint("maya", "run-1", {"step": 1})
        memory.save_checkpoint("maya", "run-1", STATE)
        memory.save_checkpoint("maya", "run-2", {"step": 9})
        before = (memory.load_checkpoint("maya", "run-1"), memory.checkpoints("maya"))
    with open_memory(home) as memory:  # a restart: a new process on the same home
        assert (memory.load_checkpoint("maya", "run-1"), memory.checkpoints("maya")) == before
        assert memory.rebuild("checkpoints").projections == ["checkpoints"]
        assert (memory.load_checkpoint("maya", "run-1"), memory.checkpoints("maya")) == before
        again = memory.save_checkpoint("maya", "run-1", {"step": 3})
        assert again.revision == 3 and again.created_at == before[0].created_at  # type: ignore[union-attr]
    shutil.rmtree(home / "projections")  # the read models from the log alone
    with open_memory(home) as memory:
        loaded = memory.load_checkpoint("maya", "run-1")
        assert loaded is not None and loaded.revision == 3 and loaded.data == {"step": 3}
        first = memory.load_checkpoint("maya", "run-1", version=2)
        assert first is not None and first.data == STATE


def test_erasing_a_user_removes_their_checkpoints(memory: MnemoLedger) -> None:
    memory.save_checkpoint("eve", "run-1", {"secret": SECRET})
    memory.save_checkpoint("eve", "run-1", {"secret": SECRET, "step": 2})
    memory.save_checkpoint("eve", "run-2", {"notes": [SECRET]})
    memory.save_checkpoint("maya", "run-1", {"kept": True})
    assert files_containing(memory.settings.home, (SECRET,))  # the read model holds it

    result = memory.erase(user="eve")
    assert "checkpoints" in result.projections

    assert memory.load_checkpoint("eve", "run-1") is None
    assert memory.load_checkpoint("eve", "run-1", version=1) is None
    assert memory.checkpoints("eve") == []
    kept = memory.load_checkpoint("maya", "run-1")
    assert kept is not None and kept.data == {"kept": True}
    assert files_containing(memory.settings.home, (SECRET,)) == {}
    assert pg_dump_containing(memory.settings, [SECRET]) == []
    # the events stay in the log, unreadable: the history is kept, the content is not
    stream = memory.ledger.stream(checkpoint_id("eve", "run-1"))
    assert [e.type for e in stream][1:] == ["CheckpointSaved", "CheckpointSaved"]
    assert all(SECRET not in json.dumps(e.data) for e in stream)
    # a rebuild from the log leaves them out too
    memory.rebuild()
    assert memory.checkpoints("eve") == []


def test_cli_save_load_list(home: Path, tmp_path: Path) -> None:
    saved = run_json(
        home, "checkpoint", "save", "--user", "maya", "--thread", "t1", "--data", '{"step": 1}'
    )
    assert saved["revision"] == 1 and "data" not in saved
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(STATE, indent=2))
    run_json(
        home, "checkpoint", "save", "--user", "maya", "--thread", "t1", "--file", str(state_file)
    )
    loaded = run_json(home, "checkpoint", "load", "--user", "maya", "--thread", "t1")
    assert loaded["data"] == STATE and loaded["revision"] == 2
    first = run_json(
        home, "checkpoint", "load", "--user", "maya", "--thread", "t1", "--version", "1"
    )
    assert first["data"] == {"step": 1}
    human = run(home, "checkpoint", "load", "--user", "maya", "--thread", "t1")
    assert human.exit_code == 0 and "checkpoint 2 of thread t1" in human.stdout
    assert '"node": "planner"' in human.stdout
    listed = run_json(home, "checkpoint", "list", "--user", "maya")
    assert [c["thread_id"] for c in listed] == ["t1"]
    assert "t1" in run(home, "checkpoint", "list", "--user", "maya").stdout

    missing = run(home, "checkpoint", "load", "--user", "maya", "--thread", "nope")
    assert missing.exit_code == 1
    assert missing.stderr.strip() == "error: no checkpoint of thread 'nope' for user 'maya'"
    for bad, message in (
        ("[1, 2]", "must be a JSON object, not an array"),
        ("{not json", "is not valid JSON"),
    ):
        refused = run(home, "checkpoint", "save", "--user", "maya", "--thread", "t1", "--data", bad)
        assert refused.exit_code == 2 and message in refused.stderr
        assert refused.stderr.startswith("error: ")
    assert run_json(home, "checkpoint", "load", "--user", "maya", "--thread", "t1")["revision"] == 2


def test_cli_reads_the_checkpoint_from_stdin(home: Path) -> None:
    from click.testing import CliRunner

    from mnemoledger.commands.cli import cli

    result = CliRunner().invoke(
        cli,
        ["--home", str(home), "--json", "checkpoint", "save", "--user", "maya", "--thread", "t"],
        input='{"from": "stdin"}',
    )
    assert result.exit_code == 0, result.stderr
    loaded = run_json(home, "checkpoint", "load", "--user", "maya", "--thread", "t")
    assert loaded["data"] == {"from": "stdin"}
    empty = run(home, "checkpoint", "save", "--user", "maya", "--thread", "t", "--file", "-")
    assert empty.exit_code == 2 and "is not valid JSON" in empty.stderr


def test_http_put_get_list(home: Path) -> None:
    with live_server(home) as server:
        key = server.key("planner", ["maya"])
        two = server.key("planner", ["maya", "bob"])
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
            put = http.put("/checkpoints/run-1", json={"data": {"step": 1}})
            assert put.status_code == 200, put.text
            saved = put.json()
            assert saved["revision"] == 1 and saved["agent_id"] == "planner"
            assert saved["actor"].startswith("key:") and saved["data"] == {"step": 1}
            http.put("/checkpoints/run-1", json={"data": STATE, "user_id": "maya"})
            http.put("/checkpoints/run-2", json={"data": {"other": 1}})

            got = http.get("/checkpoints/run-1")
            assert got.status_code == 200 and got.json()["data"] == STATE
            first = http.get("/checkpoints/run-1", params={"version": 1})
            assert first.json()["data"] == {"step": 1}
            listed = http.get("/checkpoints").json()
            assert [c["thread_id"] for c in listed] == ["run-2", "run-1"]

            missing = http.get("/checkpoints/nope")
            assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
            assert "no checkpoint of thread 'nope'" in missing.json()["error"]["message"]
            assert http.put("/checkpoints/run-1", json={"data": [1]}).status_code == 422
            assert http.put("/checkpoints/run-1", json={"state": {}}).status_code == 422
            big = {"data": {"blob": "x" * (MAX_CHECKPOINT_BYTES + 1)}}
            too_big = http.put("/checkpoints/run-1", json=big)
            assert too_big.status_code == 400 and "the limit is" in too_big.text
            other = http.get("/checkpoints/run-1", params={"user_id": "bob"})
            assert other.status_code == 403
            assert other.json()["error"]["code"] == "user_not_allowed"
            assert http.get("/checkpoints").status_code == 200
        with httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {two}"}, timeout=60
        ) as http:
            unnamed = http.get("/checkpoints")
            assert unnamed.status_code == 400 and "user_id is required" in unnamed.text
            assert http.get("/checkpoints", params={"user_id": "bob"}).json() == []
        with httpx.Client(base_url=server.url, timeout=60) as anonymous:
            assert anonymous.get("/checkpoints/run-1").status_code == 401
    with open_memory(home) as memory:
        loaded = memory.load_checkpoint("maya", "run-1")
        assert loaded is not None and loaded.data == STATE and loaded.revision == 2


def test_two_processes_saving_one_thread_lose_no_checkpoint(home: Path) -> None:
    import threading

    saves = 8
    with open_memory(home) as first, open_memory(home) as second:
        first.save_checkpoint("maya", "shared", {"by": "setup"})

        def saving(memory: MnemoLedger, who: str) -> None:
            for n in range(saves):
                memory.save_checkpoint("maya", "shared", {"by": who, "n": n})

        workers = [
            threading.Thread(target=saving, args=(first, "first")),
            threading.Thread(target=saving, args=(second, "second")),
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        latest = first.load_checkpoint("maya", "shared")
        assert latest is not None and latest.revision == 2 * saves + 1
        stream = first.ledger.stream(checkpoint_id("maya", "shared"))
        assert [e.data["revision"] for e in stream[1:]] == list(range(1, 2 * saves + 2))
        assert first.verify().ok


def test_export_import_and_replay_carry_the_checkpoints(home: Path, tmp_path: Path) -> None:
    def on_sqlite(where: Path) -> MnemoLedger:  # two homes, two logs (as tests/test_export.py)
        return MnemoLedger(settings=Settings(home=where, embedder="hashing", db=None))

    with on_sqlite(home) as memory:
        memory.save_checkpoint("maya", "run-1", {"step": 1})
        memory.save_checkpoint("maya", "run-1", STATE)
        memory.export(user="maya", format="jsonl", path=tmp_path / "maya.jsonl")
        assert memory.replay(tmp_path / "replayed").failed_commands == 0
    for other in (tmp_path / "imported", tmp_path / "replayed"):
        with on_sqlite(other) as copy:
            if other.name == "imported":
                copy.import_events(tmp_path / "maya.jsonl")
            latest = copy.load_checkpoint("maya", "run-1")
            assert latest is not None and latest.revision == 2 and latest.data == STATE
            first = copy.load_checkpoint("maya", "run-1", version=1)
            assert first is not None and first.data == {"step": 1}
