"""Seed 004 §13 file-based context: SOUL.md, AGENTS.md, MEMORY.md as the fallback of the
ledger's context, in the seed's order and format, per-file cap, resolution order."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.recall.context import SECTION_SEPARATOR
from mnemoledger.commands.recall.context_files import load_context_files
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import CONTEXT_FILE_MAX_CHARS

ENV = "Operating system: TestOS 1.0 (x86_64); shell: /bin/sh"


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    m = MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")
    try:
        yield m
    finally:
        m.close()


def write(directory: Path, **files: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (directory / f"{name}.md").write_text(content, encoding="utf-8")
    return directory


def test_files_rendered_in_seed_order_and_format(memory: MnemoLedger, tmp_path: Path) -> None:
    files = write(
        tmp_path / "ws",
        MEMORY="Maya is vegetarian.",
        AGENTS="Answer briefly.",
        SOUL="You are calm and curious.",
        HEARTBEAT="Check the inbox.",
    )
    ctx = memory.context("maya", environment=ENV, files_dir=files)
    assert ctx.source == "files"
    assert [f.name for f in ctx.files] == ["SOUL.md", "AGENTS.md", "MEMORY.md"]
    assert ctx.text == SECTION_SEPARATOR.join(
        [
            "# Personality (SOUL.md)\nYou are calm and curious.",
            "# Agent Instructions (AGENTS.md)\nAnswer briefly.",
            "# User Memory (MEMORY.md)\nMaya is vegetarian.",
            "## Environment\n" + ENV,
        ]
    )
    assert "Check the inbox." not in ctx.text  # HEARTBEAT.md: heartbeat daemon only


def test_missing_and_blank_files_are_skipped(memory: MnemoLedger, tmp_path: Path) -> None:
    files = write(tmp_path / "ws", AGENTS="Answer briefly.", MEMORY="  \n")
    ctx = memory.context("maya", environment=ENV, files_dir=files)
    assert [f.name for f in ctx.files] == ["AGENTS.md"]
    assert ctx.text.split(SECTION_SEPARATOR) == [
        "# Agent Instructions (AGENTS.md)\nAnswer briefly.",
        "## Environment\n" + ENV,
    ]
    empty = memory.context("maya", environment=ENV, files_dir=write(tmp_path / "none"))
    assert empty.source == "ledger" and empty.files == []
    assert empty.text == "## Environment\n" + ENV


def test_ledger_context_wins_over_files(memory: MnemoLedger, tmp_path: Path) -> None:
    files = write(tmp_path / "ws", SOUL="File soul.", AGENTS="File rules.")
    memory.write_note("Think step by step.", user="maya", kind="soul")
    ctx = memory.context("maya", environment=ENV, files_dir=files)
    assert ctx.source == "ledger" and ctx.files == []
    assert ctx.soul and ctx.soul.content == "Think step by step."
    assert "File soul." not in ctx.text and "(SOUL.md)" not in ctx.text
    # another user of the same ledger, with no context of their own, gets the files
    other = memory.context("ben", environment=ENV, files_dir=files)
    assert other.source == "files" and "# Personality (SOUL.md)\nFile soul." in other.text


def test_resolution_order_workspace_then_data_directory(home: Path, tmp_path: Path) -> None:
    workspace = write(tmp_path / "ws", SOUL="Workspace soul.")
    data = write(tmp_path / "data", SOUL="Data soul.", MEMORY="Data memory.")
    settings = Settings(home=home, embedder="hashing", context_files_dir=data)
    with MnemoLedger(settings=settings, actor="tester") as m:
        ctx = m.context("maya", environment=ENV, files_dir=workspace)
        by_name = {f.name: f for f in ctx.files}
        assert by_name["SOUL.md"].content == "Workspace soul."  # first match wins
        assert by_name["SOUL.md"].path == str(workspace / "SOUL.md")
        assert by_name["MEMORY.md"].content == "Data memory."  # per file: data dir fills in
        alone = m.context("maya", environment=ENV)  # the setting alone
        assert [f.content for f in alone.files] == ["Data soul.", "Data memory."]
    assert Settings(home=home).context_files_dir is None


def test_setting_from_environment(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write(tmp_path / "data", AGENTS="From the setting.")
    monkeypatch.setenv("MNEMOLEDGER_CONTEXT_FILES_DIR", str(data))
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        assert "# Agent Instructions (AGENTS.md)\nFrom the setting." in m.context("x").text


def test_file_cap(tmp_path: Path) -> None:
    long = "z" * (CONTEXT_FILE_MAX_CHARS + 500)
    files = load_context_files([write(tmp_path / "ws", MEMORY=long, SOUL="short")])
    soul, mem = files
    assert not soul.truncated and soul.content == "short"
    assert mem.truncated
    assert mem.content.startswith("z" * CONTEXT_FILE_MAX_CHARS)
    assert mem.content.count("z") == CONTEXT_FILE_MAX_CHARS
    assert mem.content.endswith(f"[MEMORY.md cut at {CONTEXT_FILE_MAX_CHARS} characters]")
    exact = load_context_files([write(tmp_path / "exact", MEMORY="b" * 10)], max_chars=10)
    assert exact[0].content == "b" * 10 and not exact[0].truncated


def test_unreadable_paths_are_clear_errors(memory: MnemoLedger, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such directory"):
        memory.context("maya", files_dir=tmp_path / "absent")
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    with pytest.raises(InvalidInput, match="not a directory"):
        memory.context("maya", files_dir=plain)
    bad = tmp_path / "bad"
    (bad / "SOUL.md").mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(InvalidInput, match=r"cannot read context file .*SOUL\.md"):
        memory.context("maya", files_dir=bad)
    latin = write(tmp_path / "latin")
    (latin / "AGENTS.md").write_bytes(b"caf\xe9")
    with pytest.raises(InvalidInput, match=r"cannot read context file .*AGENTS\.md"):
        memory.context("maya", files_dir=latin)
    if os.geteuid() != 0:  # root reads anything
        locked = write(tmp_path / "locked", MEMORY="secret")
        (locked / "MEMORY.md").chmod(0)
        with pytest.raises(InvalidInput, match=r"cannot read context file .*MEMORY\.md"):
            memory.context("maya", files_dir=locked)


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def test_cli_files_option_and_nothing_written(home: Path, tmp_path: Path) -> None:
    files = write(tmp_path / "ws", SOUL="You are calm.", MEMORY="Likes tea.")
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        m.add(["Sam likes jazz"], user="sam")  # the log is not empty
    before = json.loads(run(home, "--json", "log").output)
    human = run(home, "context", "--user", "maya", "--files", str(files))
    assert human.exit_code == 0, human.output
    assert human.output.startswith("# Personality (SOUL.md)\nYou are calm.\n\n---\n\n")
    assert "# User Memory (MEMORY.md)\nLikes tea." in human.output
    data = json.loads(
        run(home, "--json", "context", "--user", "maya", "--files", str(files)).output
    )
    assert data["source"] == "files" and [f["name"] for f in data["files"]] == [
        "SOUL.md",
        "MEMORY.md",
    ]
    assert json.loads(run(home, "--json", "log").output) == before  # a read: nothing written
    bad = run(home, "context", "--user", "maya", "--files", str(tmp_path / "absent"))
    assert bad.exit_code == 2 and bad.output.startswith("error:") and "absent" in bad.output
