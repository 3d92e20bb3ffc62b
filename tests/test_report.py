"""`report`: operations by node/op/status over time and LLM usage, by DuckDB over the log."""

from __future__ import annotations

from pathlib import Path

from mnemoledger import MnemoLedger
from tests.test_cli import run, run_json


def test_report_counts_operations_and_llm_calls_from_the_log(memory: MnemoLedger) -> None:
    added = memory.add(["Maya lives in Paris", "Maya likes figs"], user="maya")
    memory.update(added.memories[0].id, "Maya lives in Porto")
    memory.forget(added.memories[1].id)
    memory.write_note("Seen Maya at the market", user="maya", kind="log")
    report = memory.report()
    ops = {(o.node, o.op, o.status): o.count for o in report.operations}
    assert ops[("hotpath", "create", "ok")] == 2
    assert ops[("api", "update", "ok")] == 1
    assert ops[("api", "delete", "ok")] == 1
    assert ops[("notes", "create", "ok")] == 1
    assert ops[("hotpath", "command", "ok")] == 1
    calls = [e for e in memory.timeline(types=["LLMCallRecorded"])]
    assert sum(u.calls for u in report.llm) == len(calls)
    by_stage = {u.stage: u for u in report.llm}
    assert by_stage["reconstruct"].model == "rules-v1"
    assert by_stage["split"].prompt_tokens == sum(
        e.data["prompt_tokens"] for e in calls if e.data["stage"] == "split"
    )
    assert all(u.p95_latency_ms >= 0 for u in report.llm)
    assert memory.report(user="nobody").operations == []


def test_report_on_the_command_line(home: Path) -> None:
    run_json(home, "add", "Ana speaks Portuguese", "--user", "ana")
    report = run_json(home, "report", "--bucket", "hour")
    assert report["bucket"] == "hour" and report["events"] > 0
    assert report["operations"][0]["bucket"].endswith(":00:00Z")
    assert run(home, "report").exit_code == 0
    assert run(home, "report", "--bucket", "year").exit_code == 2
