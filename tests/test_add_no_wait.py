"""`add(..., wait=False)`: the call returns once the request is in the log; the stages run
afterwards, in this process's background thread or, after a crash, in the next worker;
every read of this process waits for the adds it is still processing.

The stages are held back by an LLM provider that waits for the test to open a gate (the
offline rules once it opens), so the order is proven without mocking the pipeline, the
database or the clock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm.offline import OfflineProvider
from mnemoledger.commands.llm.stage import InT, LLMCall, OutT, Stage
from mnemoledger.commands.write.add import AddRequest
from mnemoledger.commands.write.add_later import AddsStillProcessing, in_flight, process_recorded
from mnemoledger.ledger import Settings
from mnemoledger.ledger.errors import InvalidInput
from tests.live_server import live_server
from tests.test_mcp import mcp_client, structured

GATE_SECONDS = 120
"""Only so a broken test fails instead of hanging: nothing is asserted about time."""


class GatedProvider(OfflineProvider):
    """The offline rules, each stage held until `gate` opens; `entered` says a stage began."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate
        self.entered = threading.Event()

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        self.entered.set()
        if not self.gate.wait(GATE_SECONDS):
            raise RuntimeError("the test never opened the gate")
        return super().complete(stage, inputs)


def open_memory(home: Path) -> MnemoLedger:
    return MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")


def contents_of(found: list[Any]) -> list[str]:
    return [hit.content for hit in found]


def test_returns_the_command_id_before_any_stage_ran(home: Path) -> None:
    gate = threading.Event()
    with open_memory(home) as memory:
        memory.add_pipeline.provider = GatedProvider(gate)
        try:
            result = memory.add(["Maya moved to Lisbon in May"], user="maya", wait=False)
            assert result.pending and result.command_id
            assert result.memories == [] and result.llm_calls == 0
            # the gate is shut: no stage has answered, yet the request is in the log
            status = memory.command(result.command_id)
            assert (status.kind, status.status, status.user_id) == ("add", "requested", "maya")
            assert [p.command_id for p in memory.pending_adds(user="maya")] == [result.command_id]
            # a read now would wait for it: with no time to wait, it says so
            with pytest.raises(AddsStillProcessing):
                in_flight(memory.settings).wait(timeout=0)
        finally:
            gate.set()
        # the read rule: a read of this process waits for its adds, so it finds the memory
        assert "Maya moved to Lisbon in May" in contents_of(memory.search("Lisbon", user="maya"))
        done = memory.command(result.command_id)
        assert done.status == "completed" and done.llm_calls > 0
        assert done.outcome is not None and len(done.outcome["added"]) == 1
        assert memory.pending_adds() == []
        listed = memory.list(user="maya")
        assert [m.id for m in listed] == done.outcome["added"]


def test_every_read_sees_the_adds_acknowledged_before_it(home: Path) -> None:
    gate = threading.Event()
    with open_memory(home) as memory:
        memory.add_pipeline.provider = GatedProvider(gate)
        facts = [f"Maya keeps fact number {n} about sailing" for n in range(3)]
        results = [memory.add([fact], user="maya", wait=False) for fact in facts]
        assert all(r.pending for r in results)
        opener = threading.Thread(target=gate.set)
        opener.start()  # the stages may run before, during or after the read below
        try:
            listed = {m.content for m in memory.list(user="maya")}
        finally:
            opener.join()
        assert set(facts) <= listed
        assert memory.core(user="maya").user_id == "maya"


def test_input_refused_before_anything_is_recorded(home: Path) -> None:
    with open_memory(home) as memory:
        with pytest.raises(InvalidInput):
            memory.add([""], user="maya", wait=False)
        with pytest.raises(InvalidInput):
            memory.add(["Maya likes tea"], user="has space", wait=False)
        assert memory.pending_adds() == []
        assert memory.ledger.last_position() == 0


def test_close_finishes_what_the_background_was_given(home: Path) -> None:
    with open_memory(home) as memory:
        result = memory.add(["Maya plays chess on Sundays"], user="maya", wait=False)
    with open_memory(home) as memory:
        assert memory.command(result.command_id).status == "completed"
        assert memory.pending_adds() == []


def test_a_decided_add_is_not_decided_twice(home: Path) -> None:
    with open_memory(home) as memory:
        request = AddRequest(contents=["Maya is allergic to peanuts"])
        command = memory.add_pipeline.record(request, memory._provenance("maya", None, None))
        first = process_recorded(memory.ledger, memory.add_pipeline, command.id.hex)
        again = process_recorded(memory.ledger, memory.add_pipeline, command.id.hex)
        assert [m.id for m in again.added] == [m.id for m in first.added]
        ended = [e.type for e in memory.ledger.stream(command.id.hex)]
        assert ended.count("CommandCompleted") == 1
        assert memory.process_pending_adds(older_than_seconds=0) == []


CRASHING_WRITER = textwrap.dedent(
    """
    import sys, threading
    from mnemoledger import MnemoLedger
    from mnemoledger.commands.llm.offline import OfflineProvider
    from mnemoledger.ledger import Settings

    class Never(OfflineProvider):
        def complete(self, stage, inputs):
            threading.Event().wait()  # the process is killed first

    memory = MnemoLedger(settings=Settings(home=sys.argv[1], embedder="hashing"))
    memory.add_pipeline.provider = Never()
    result = memory.add(["Maya keeps bees in Porto"], user="maya", wait=False)
    print(result.command_id, flush=True)
    threading.Event().wait()
    """
)


def test_an_add_whose_process_was_killed_is_processed_by_the_next_worker(home: Path) -> None:
    env = {**os.environ, "MNEMOLEDGER_EMBEDDER": "hashing", "PYTHONPATH": os.pathsep.join(sys.path)}
    writer = subprocess.Popen(
        [sys.executable, "-c", CRASHING_WRITER, str(home)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    worker: subprocess.Popen[str] | None = None
    try:
        assert writer.stdout is not None
        command_id = writer.stdout.readline().strip()
        assert command_id, "the writer printed no command id"
        writer.send_signal(signal.SIGKILL)  # after AddRequested was saved, before any stage
        writer.wait()
        with open_memory(home) as memory:
            assert memory.command(command_id).status == "requested"
            assert [p.command_id for p in memory.pending_adds()] == [command_id]
        worker = subprocess.Popen(
            [sys.executable, "-m", "mnemoledger", "--home", str(home), "worker", "--cycles", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        _, errors = worker.communicate(timeout=GATE_SECONDS)
        assert worker.returncode == 0, errors
    finally:
        for child in (writer, worker):
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()
    with open_memory(home) as memory:
        done = memory.command(command_id)
        assert done.status == "completed", done
        assert memory.pending_adds() == []
        assert "Maya keeps bees in Porto" in contents_of(memory.search("bees", user="maya"))


def test_http_answers_202_with_the_command_id_then_its_status(home: Path) -> None:
    with live_server(home) as server:
        key = server.key("researcher", ["maya"])
        other = server.key("researcher", ["bob"])
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
            body = {"contents": ["Maya moved to Lisbon in May"], "user_id": "maya", "wait": False}
            answer = http.post("/memories", json=body)
            assert answer.status_code == 202, answer.text
            added = answer.json()
            assert added["pending"] is True and added["memories"] == []
            by_query = http.post(
                "/memories",
                params={"wait": "false"},
                json={"contents": ["Maya cycles to work"], "user_id": "maya"},
            )
            assert by_query.status_code == 202 and by_query.json()["pending"] is True
            # the server's reads wait for its adds: the search finds both
            found = http.post("/search", json={"query": "Lisbon work", "user_id": "maya"})
            assert found.is_success, found.text
            status = http.get(f"/commands/{added['command_id']}").json()
            assert status["status"] == "completed" and status["kind"] == "add"
            assert len(status["outcome"]["added"]) == 1
            waited = http.post(
                "/memories", json={"contents": ["Maya likes tea"], "user_id": "maya"}
            )
            assert waited.status_code == 201 and waited.json()["pending"] is False
            stranger = http.get(
                f"/commands/{added['command_id']}", headers={"Authorization": f"Bearer {other}"}
            )
            assert stranger.status_code == 404
            assert http.get(f"/commands/{'0' * 32}").status_code == 404
            schema = http.get("/openapi.json").json()
            answers = schema["paths"]["/memories"]["post"]["responses"]
            assert {"201", "202"} <= set(answers)
            assert "/commands/{command_id}" in schema["paths"]


def test_mcp_add_takes_a_wait_argument(home: Path) -> None:
    with open_memory(home) as memory:
        key = memory.create_key(agent="researcher", users=["maya"]).key
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with mcp_client(home, key) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            seen["schema"] = tools["add"].input_schema
            added = await client.call_tool(
                "add", {"contents": ["Maya moved to Lisbon in May"], "wait": False}
            )
            seen["added"] = structured(added)
            found = await client.call_tool("search", {"query": "Lisbon"})
            seen["found"] = structured(found)

    anyio.run(session)
    assert "wait" in seen["schema"]["properties"]
    assert seen["added"]["pending"] is True and seen["added"]["memories"] == []
    assert "Maya moved to Lisbon in May" in [hit["content"] for hit in seen["found"]]
    with open_memory(home) as memory:
        assert memory.command(seen["added"]["command_id"]).status == "completed"
