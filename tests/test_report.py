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


def test_seed003_s14_report_has_classify_category_and_sim(memory: MnemoLedger) -> None:
    """Seed 003 §14's fields: a `classify` op per memory written (ok: the writer named its
    category; skipped: derived), the category on each row, and `sim`, the best neighbour
    score, where the log holds one (the new memory's strongest link)."""
    memory.add(["Ship the billing export on Friday"], user="maya", category="tasks")
    memory.add(["I live in Porto with my partner Joao"], user="maya")
    linked = memory.add(["My partner Joao is a chef in Porto"], user="maya")
    report = memory.report()
    ops = {(o.node, o.op, o.status): o for o in report.operations}
    assert ops[("hotpath", "classify", "ok")].count == 1
    assert ops[("hotpath", "classify", "skipped")].count == 2
    by_category = {(c.op, c.category): c.count for c in report.categories}
    assert by_category[("classify", "tasks")] == 1 and by_category[("create", "tasks")] == 1
    assert by_category[("create", "knowledge")] == 2
    [link] = [
        e for e in memory.timeline(types=["MemoryLinked"]) if e.causation_id == linked.command_id
    ]
    strength = round(link.data["strength"], 4)
    assert ops[("hotpath", "link", "ok")].max_sim == strength
    # the create row of the linked memory carries its best neighbour; the others have none
    assert ops[("hotpath", "create", "ok")].max_sim == strength
    assert ops[("hotpath", "create", "ok")].avg_sim == strength
    assert ops[("hotpath", "classify", "ok")].max_sim is None
