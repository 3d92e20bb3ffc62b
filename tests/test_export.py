"""Export and import: the JSONL event stream round-trips to identical read models; the
timeline table is written as Parquet and CSV that DuckDB reads back."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.test_cli import run, run_json


def _session(home: Path) -> None:
    added = run_json(home, "add", "Maya lives in Paris", "I use neovim", "--user", "maya")
    first, second = (m["id"] for m in added["memories"])
    run_json(home, "add", "Maya moved to Berlin", "--user", "maya")
    run_json(home, "update", first, "Maya works at Acme as a designer")
    run_json(home, "link", first, second)
    run_json(home, "ttl", second, "--days", "30")
    run_json(home, "forget", second)
    run_json(home, "restore", second)
    run_json(
        home,
        "note",
        "write",
        "Always answer in English",
        "--user",
        "maya",
        "--kind",
        "rule",
        "--evidence",
        "turn-1",
        "--confidence",
        "0.9",
    )
    run_json(home, "add", "Ole has a cat", "--user", "ole")


def test_jsonl_export_imports_into_an_empty_home_with_identical_read_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MNEMOLEDGER_DB", raising=False)  # two homes, two logs
    home, copy = tmp_path / "home", tmp_path / "copy"
    _session(home)
    path = tmp_path / "maya.jsonl"
    exported = run_json(home, "export", "--user", "maya", "--format", "jsonl", "-o", str(path))
    lines = path.read_text().splitlines()
    assert exported["events"] == len(lines) > 20
    assert {json.loads(line)["user_id"] for line in lines} == {"maya"}
    imported = run_json(copy, "import", str(path))
    assert imported == {"path": str(path), "events": len(lines), "users": ["maya"]}
    assert run_json(copy, "list") == run_json(home, "list", "--user", "maya")
    assert (
        run_json(copy, "core", "--user", "maya")["markdown"]
        == run_json(home, "core", "--user", "maya")["markdown"]
    )
    maya_log = [e for e in run_json(home, "log") if e["user_id"] == "maya"]
    strip = [{k: v for k, v in e.items() if k != "position"} for e in maya_log]
    assert [{k: v for k, v in e.items() if k != "position"} for e in run_json(copy, "log")] == strip
    again = run(copy, "import", str(path))
    assert again.exit_code == 2 and "already" in again.stderr


def test_parquet_and_csv_timelines_are_read_by_duckdb(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _session(home)
    events = len([e for e in run_json(home, "log") if e["user_id"] == "maya"])
    for fmt in ("parquet", "csv"):
        path = tmp_path / f"maya.{fmt}"
        run_json(home, "export", "--user", "maya", "--format", fmt, "-o", str(path))
        reader = "read_parquet" if fmt == "parquet" else "read_csv_auto"
        with duckdb.connect() as db:
            rows = db.execute(
                f"SELECT event, count(*) FROM {reader}('{path}') GROUP BY event ORDER BY event"
            ).fetchall()
            assert sum(c for _, c in rows) == events
            counts = dict(rows)
            assert counts["ADD"] >= 3 and counts["UPDATE"] == 1 and counts["DELETE"] == 1
            columns = [
                c[0] for c in db.execute(f"DESCRIBE SELECT * FROM {reader}('{path}')").fetchall()
            ]
            assert columns[:3] == ["position", "at", "event"] and "content" in columns


def test_import_refuses_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "MemoryAdded"}\n')
    result = run(tmp_path / "home", "import", str(path))
    assert result.exit_code == 2 and "line 1" in result.stderr
    assert (
        run(tmp_path / "home", "export", "--user", "x", "--format", "xml", "-o", "o").exit_code == 2
    )


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export_of_a_user_with_no_events_is_refused_like_erase(tmp_path: Path, fmt: str) -> None:
    home = tmp_path / "home"
    run_json(home, "add", "Ole has a cat", "--user", "ole")
    path = tmp_path / f"nobody.{fmt}"
    exported = run(home, "export", "--user", "nobody", "--format", fmt, "-o", str(path))
    erased = run(home, "erase", "--user", "nobody", "--yes")
    said = "error: unknown user 'nobody': the ledger holds no data of theirs\n"
    assert (exported.exit_code, exported.stderr) == (erased.exit_code, erased.stderr) == (2, said)
    assert not path.exists()


def test_import_names_the_byte_that_is_not_utf8(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _session(home)
    exported = tmp_path / "maya.jsonl"
    run_json(home, "export", "--user", "maya", "-o", str(exported))
    lines = exported.read_bytes().splitlines(keepends=True)
    third = lines[2].replace(b'"type"', b'"ty\xffpe"', 1)
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b"".join([*lines[:2], third, *lines[3:]]))
    column = third.index(b"\xff")
    offset = len(lines[0]) + len(lines[1]) + column

    result = run(tmp_path / "copy", "import", str(path))
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {path}, line 3: not UTF-8: byte 0xff at offset {offset} of the file "
        f"(column {column + 1} of the line)\n"
    )


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        ('{"type": "MemoryAdded"}', "line 1: not an exported event: missing fields "),
        ("\n[1, 2]", "line 2: not an exported event: a JSON array where an object was expected"),
        ('{"stream": "x",', "line 1: not JSON (unexpected end of data at the end of the line)"),
        (
            '{"stream": "0123456789abcdef0123456789abcdef", "version": 1, "type": "MemoryAdded",'
            ' "at": "2026-01-01T00:00:00+00:00", "data": {"content": "Maya keeps bees"}}',
            "line 1 (MemoryAdded on 0123456789abcdef0123456789abcdef) cannot apply: a MemoryAdded"
            " event needs the data fields 'category', ",
        ),
    ],
)
def test_import_of_a_wrong_shaped_file_names_the_line_and_the_field(
    tmp_path: Path, lines: str, said: str
) -> None:
    path = tmp_path / "wrong.jsonl"
    path.write_text(lines + "\n")
    result = run(tmp_path / "home", "import", str(path))
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"error: {path}, {said}"), result.stderr
    assert "KeyError" not in result.stderr and "TypeError" not in result.stderr
    assert run_json(tmp_path / "home", "log") == []


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("tags", 5, "data field 'tags' should be a valid list, not 5"),
        ("tags", ["home", 7], "data field 'tags'[1] should be a valid string, not 7"),
        ("importance", "high", "data field 'importance' should be a valid number, not 'high'"),
        ("metadata", [1], "data field 'metadata' should be a valid dictionary, not [1]"),
    ],
)
def test_import_of_a_wrongly_typed_data_field_names_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, value: object, said: str
) -> None:
    """A value of the wrong kind (edited by hand) is refused when imported, not stored to
    break every later listing of the memory with a raw ValidationError."""
    monkeypatch.delenv("MNEMOLEDGER_DB", raising=False)  # two homes, two logs
    home, copy = tmp_path / "home", tmp_path / "copy"
    _session(home)
    exported = tmp_path / "maya.jsonl"
    run_json(home, "export", "--user", "maya", "-o", str(exported))
    events = [json.loads(line) for line in exported.read_text().splitlines()]
    number, added = next((n, e) for n, e in enumerate(events, 1) if e["type"] == "MemoryAdded")
    added["data"][field] = value
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))

    result = run(copy, "import", str(path))
    assert result.exit_code == 2, result.stderr
    assert result.stderr == (
        f"error: {path}, line {number} (MemoryAdded on {added['stream']}) cannot apply: "
        f"a MemoryAdded event's {said}\n"
    )
    assert run_json(copy, "log") == [] and run_json(copy, "list", "--all") == []
    # an integer where a number belongs is a number: the file imports
    added["data"]["importance"], added["data"][field] = 1, events[number - 1]["data"][field]
    fine = _reexported(tmp_path, home)
    assert run_json(tmp_path / "fine", "import", str(fine))["events"] == len(events)


def _reexported(tmp_path: Path, home: Path) -> Path:
    path = tmp_path / "again.jsonl"
    run_json(home, "export", "--user", "maya", "-o", str(path))
    events = [json.loads(line) for line in path.read_text().splitlines()]
    for event in events:
        if event["type"] == "MemoryAdded":
            event["data"]["importance"] = 1
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path
