"""The `consolidate` and `topics` commands keep the CLI contract (../shared/CLI.md)."""

from __future__ import annotations

from pathlib import Path

from tests.test_cli import run, run_json


def test_consolidate_dry_run_prints_the_plan_and_writes_nothing(home: Path) -> None:
    run_json(home, "add", "Maya is allergic to peanuts", "--user", "maya")
    later = "2031-01-01T00:00:00+00:00"
    before = run_json(home, "stats")["events"]
    planned = run_json(home, "consolidate", "--user", "maya", "--dry-run", "--now", later)
    assert run_json(home, "stats")["events"] == before
    assert planned["epoch"] == 1 and planned["dry_run"] is True
    assert [o["op"] for o in planned["operations"]] == ["triage", "promote"]
    done = run_json(home, "consolidate", "--now", later)
    assert set(done) >= {"epoch", "operations"} and done["epoch"] == 1
    assert [o["op"] for o in done["operations"]] == ["triage", "promote"]
    assert run_json(home, "stats")["events"] > before
    people = run(home, "consolidate", "--user", "maya", "--now", later)
    assert people.exit_code == 0 and "epoch 2" in people.stdout


def test_consolidate_refuses_a_clock_without_offset(home: Path) -> None:
    result = run(home, "consolidate", "--now", "2031-01-01T00:00:00")
    assert result.exit_code == 2
    assert result.stderr.startswith("error:") and "offset" in result.stderr


def test_topics_and_drill_down(home: Path) -> None:
    run_json(home, "add", "Maya drinks green tea", "Maya drinks jasmine tea", "--user", "maya")
    tree = run_json(home, "topics", "--user", "maya")
    assert tree["user"] == "maya" and tree["topics"]
    first = tree["topics"][0]["id"]
    found = run_json(home, "topics", "--user", "maya", first)
    assert set(found) == {first} and found[first]["memories"]
    missing = run(home, "topics", "--user", "maya", "kb999")
    assert missing.exit_code == 2 and missing.stderr.startswith("error:")
