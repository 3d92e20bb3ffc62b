"""Limits and errors, written as the attack (issue 16, item 8), on the run's store: numbers
beyond any log position, oversized and deeply nested conversations. Every one is refused
with exit 2 and one `error:` line on the command line, or HTTP 422 with the API's error
body, never a 500 or a traceback, and nothing is written to the log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from mnemoledger.commands.cli import cli
from mnemoledger.commands.recall.context import format_structured_content
from mnemoledger.ledger import validation
from mnemoledger.ledger.checkpoint import parse_checkpoint
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    MAX_CONTENT_CHARS,
    MAX_INGEST_BYTES,
    MAX_INGEST_TURNS,
    MAX_JSON_DEPTH,
    MAX_KEY_CHARS,
    MAX_LIST_LIMIT,
    MAX_POSITION,
    MAX_SIGNALS,
    MAX_TAG_CHARS,
    MAX_TURN_BYTES,
    MAX_TURN_CHARS,
)
from tests.live_server import LiveServer, live_server
from tests.read_models import open_memory

HUGE = str(10**20)  # `delta --since 99999999999999999999` was an OverflowError (exit 1)
JUST_OVER = str(MAX_POSITION + 1)


@pytest.fixture
def seeded(home: Path) -> tuple[Path, str]:
    with open_memory(home) as memory:
        [fact] = memory.add(["Maya drinks oolong tea"], user="maya", thread="t1").memories
    return home, fact.id


def last_position(home: Path) -> int:
    with open_memory(home) as memory:
        return memory.ledger.last_position()


def refused(home: Path, *args: str, stdin: str | None = None) -> str:
    """Run the CLI; assert exit 2, one `error:` line, nothing on stdout, nothing written."""
    before = last_position(home)
    result = CliRunner().invoke(cli, ["--home", str(home), *args], input=stdin)
    assert result.exit_code == 2, (args[:4], result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert last_position(home) == before
    return lines[0]


# --- numbers beyond any position -------------------------------------------------------------


@pytest.mark.parametrize("number", [HUGE, JUST_OVER])
def test_positions_and_revisions_beyond_the_store_are_exit_2(
    seeded: tuple[Path, str], number: str
) -> None:
    home, fact = seeded
    for args in (
        ["delta", "--thread", "t1", "--since", number],
        ["log", "--since", number],
        ["log", "--until", number],
        ["log", "--limit", number],
        ["query", "tea", "--agent", "researcher", "--user", "maya", "--since-rev", number],
        ["get", fact, "--as-of", number],
        ["list", "--user", "maya", "--as-of", number],
        ["core", "--user", "maya", "--as-of", number],
    ):
        error = refused(home, *args)
        assert str(MAX_POSITION) in error or f"1<=x<={MAX_LIST_LIMIT}" in error, error


def test_a_count_too_large_for_the_store_is_not_recorded_to_poison_every_read(
    seeded: tuple[Path, str],
) -> None:
    home, _ = seeded
    # `consent propose --signals 9223372036854775808` was recorded, and every later catch-up
    # of the read models (so every `list`, `search`, ...) then failed with OverflowError
    for number in (str(2**63), HUGE, str(MAX_SIGNALS + 1)):
        args = ["consent", "propose", "--user", "maya", "--field", "city", "--value", "Paris"]
        assert str(MAX_SIGNALS) in refused(home, *args, "--signals", number)
    listed = CliRunner().invoke(cli, ["--home", str(home), "--json", "list", "--user", "maya"])
    assert listed.exit_code == 0, listed.stderr


def test_the_largest_position_is_still_a_question_with_an_answer(
    seeded: tuple[Path, str],
) -> None:
    home, _ = seeded
    result = CliRunner().invoke(
        cli,
        ["--home", str(home), "--json", "delta", "--thread", "t1", "--since", str(MAX_POSITION)],
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["header"] is None


# --- conversations too large or too deep -----------------------------------------------------


def turn(content: str, **extra: Any) -> str:
    return json.dumps({"role": "user", "content": content, **extra})


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_ingest_refuses_a_turn_too_long_and_records_nothing(
    seeded: tuple[Path, str], tmp_path: Path
) -> None:
    home, _ = seeded
    long_turn = tmp_path / "long.jsonl"
    long_turn.write_text(turn("I like tea") + "\n" + turn("x" * (MAX_TURN_CHARS + 1)) + "\n")
    error = refused(home, "ingest", str(long_turn), "--user", "maya")
    assert "line 2" in error and f"at most {MAX_TURN_CHARS}" in error

    padded = tmp_path / "padded.jsonl"  # a short content, a huge field beside it
    padded.write_text(turn("I like tea", padding="p" * MAX_TURN_BYTES) + "\n")
    error = refused(home, "ingest", str(padded), "--user", "maya")
    assert f"one turn may have at most {MAX_TURN_BYTES}" in error


def test_ingest_refuses_a_file_too_large_unread_and_from_stdin(
    seeded: tuple[Path, str], tmp_path: Path
) -> None:
    home, _ = seeded
    line = turn("I like tea " + "t" * 4000) + "\n"
    big = line * (MAX_INGEST_BYTES // len(line) + 1)  # every turn fine, the whole too large
    path = tmp_path / "big.jsonl"
    path.write_text(big)
    error = refused(home, "ingest", str(path), "--user", "maya")
    assert f"{path.stat().st_size} bytes; one ingest may have at most {MAX_INGEST_BYTES}" in error
    error = refused(home, "ingest", "-", "--user", "maya", stdin=big)
    assert f"one ingest may have at most {MAX_INGEST_BYTES}" in error

    many = tmp_path / "many.jsonl"
    many.write_text((turn("hi") + "\n") * (MAX_INGEST_TURNS + 1))
    assert f"more than {MAX_INGEST_TURNS} turns" in refused(
        home, "ingest", str(many), "--user", "maya"
    )


def test_ingest_refuses_deep_nesting_without_a_recursion_error(
    seeded: tuple[Path, str], tmp_path: Path
) -> None:
    home, _ = seeded
    attacks = {
        "a 100k-deep line": nested(100_000),  # refused by its size before it is parsed
        "deeper than the parser recurses": nested(30_000),  # within the size of one turn
        "deeper than the limit": '{"role": "user", "content": "hi", "x": '
        + nested(MAX_JSON_DEPTH + 1)
        + "}",
    }
    for name, line in attacks.items():
        path = tmp_path / f"{len(line)}.jsonl"
        path.write_text(turn("I like tea") + "\n" + line + "\n")
        error = refused(home, "ingest", str(path), "--user", "maya")
        assert "line 2" in error, name
        assert "nested deeper" in error or "one turn may have at most" in error, name


def test_the_python_api_refuses_what_the_file_limits_refuse(seeded: tuple[Path, str]) -> None:
    home, _ = seeded
    deep: list[Any] = []
    for _ in range(100_000):  # built without recursion; json.dumps of it would overflow
        deep = [deep]
    with open_memory(home) as memory:
        before = memory.ledger.last_position()
        attacks: list[list[dict[str, Any]]] = [
            [{"role": "user", "content": "hi", "x": deep}],
            [{"role": "user", "content": "y" * (MAX_TURN_CHARS + 1)}],
            [{"role": "user", "content": "hi"}] * (MAX_INGEST_TURNS + 1),
            [{"role": "user", "content": "z" * MAX_TURN_CHARS}]
            * (MAX_INGEST_BYTES // MAX_TURN_CHARS),
        ]
        for turns in attacks:
            with pytest.raises(InvalidInput):
                memory.ingest(turns, user="maya")
        assert memory.ledger.last_position() == before


# --- the HTTP API ------------------------------------------------------------------------------


@pytest.fixture
def server(home: Path) -> Iterator[LiveServer]:
    with live_server(home) as running:
        yield running


def test_http_numbers_beyond_any_position_are_422(server: LiveServer) -> None:
    headers = {"Authorization": f"Bearer {server.key('researcher', ['maya'])}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
        for number in (10**20, MAX_POSITION + 1):
            delta = http.get("/delta", params={"thread": "t1", "user_id": "maya", "since": number})
            query = http.post(
                "/query",
                json={"query": "tea", "filters": {"user_id": "maya"}, "since_rev": number},
            )
            for response in (delta, query):
                assert response.status_code == 422, response.text
                assert response.json()["error"]["code"] == "validation_error"
        deep = '{"contents": ["hi"], "user_id": "maya", "x": ' + nested(100_000) + "}"
        body = http.post("/memories", content=deep, headers={"content-type": "application/json"})
        assert body.status_code in (400, 422), body.text
        assert body.json()["error"]["status"] == body.status_code


def test_metadata_numbers_past_64_bits_are_refused() -> None:
    # orjson records up to 2**64 - 1; past 2**63 - 1 no SQLite read model can hold one
    for number in (2**63, 2**64 - 1, -(2**63) - 1, 10**30):
        with pytest.raises(InvalidInput, match="must fit in 64 bits"):
            validation.metadata({"n": number})
    assert validation.metadata({"n": MAX_POSITION, "m": -MAX_POSITION - 1, "b": True})


def test_json_text_too_deep_is_refused_before_it_is_parsed() -> None:
    deep = '{"sections": ' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(InvalidInput, match="nested deeper"):
        parse_checkpoint(deep)
    assert format_structured_content(deep) == deep  # shown as it is, never a RecursionError
    brackets_in_strings = '{"a": "' + "[" * 5000 + '"}'
    assert parse_checkpoint(brackets_in_strings) == {"a": "[" * 5000}


def test_a_limit_counts_the_characters_given_not_those_normalized() -> None:
    """The API states its limits on the text sent; NFC lengthens some characters ("\\u0958"
    is two), so a text within the limit as sent must not be refused once normalized (a
    generated text of such characters could be a 400 the schema did not announce)."""
    lengthened = "\u0958" * MAX_CONTENT_CHARS
    assert len(validation.normalize_text(lengthened)) == 2 * MAX_CONTENT_CHARS
    assert validation.content(lengthened) == validation.normalize_text(lengthened)
    assert validation.tags(["\u0958" * MAX_TAG_CHARS]) == [
        validation.normalize_text("\u0958" * MAX_TAG_CHARS)
    ]
    assert validation.memory_key("\u0130" * MAX_KEY_CHARS)  # "İ" lowercases to two
    with pytest.raises(InvalidInput, match="the limit is"):
        validation.content("a" * (MAX_CONTENT_CHARS + 1))
    with pytest.raises(InvalidInput, match="longer than"):
        validation.memory_key("k" * (MAX_KEY_CHARS + 1))
