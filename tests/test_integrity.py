"""Integrity: the hash chain, seals and `verify`, against real tampering of the SQLite file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner, Result
from eventsourcing.persistence import IntegrityError

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.ledger import Ledger, NewMemory, Provenance, Settings
from mnemoledger.ledger.integrity import GENESIS, chained, link_of
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.verify import Report

USER = Provenance(user_id="maya", actor="tester")


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def run_json(home: Path, *args: str, status: int = 0) -> Any:
    result = run(home, "--json", *args)
    assert result.exit_code == status, result.stderr
    return json.loads(result.stdout)


def settings(home: Path) -> Settings:
    return Settings(home=home, embedder="hashing")


def build(home: Path, memories: int = 4, updates: int = 2) -> list[str]:
    """`memories` memories of maya; the first one updated `updates` times. Their ids."""
    with Ledger(settings(home)) as ledger:
        added = ledger.add(
            USER, [NewMemory(f"fact number {n} about maya") for n in range(memories)]
        )
        for n in range(updates):
            ledger.update(USER, added[0].id.hex, f"fact number 0, revised {n + 1} times")
        return [m.id.hex for m in added]


def verify(home: Path) -> Report:
    with Ledger(settings(home)) as ledger:
        return ledger.verify()


def rows(home: Path) -> list[tuple[int, str, int, str]]:
    """(position, stream, version, topic) of every stored event, in position order."""
    with sqlite3.connect(home / "ledger.sqlite3") as db:
        return [
            (int(r[0]), str(r[1]), int(r[2]), str(r[3]))
            for r in db.execute(
                "SELECT rowid, originator_id, originator_version, topic FROM stored_events "
                "ORDER BY rowid"
            )
        ]


def position_of(home: Path, stream: str, version: int) -> int:
    return next(p for p, s, v, _ in rows(home) if s == stream and v == version)


def swap_positions(db: sqlite3.Connection, a: int, b: int) -> None:
    """Exchange the rows at positions `a` and `b` (their contents trade places)."""
    spare = db.execute("SELECT MAX(rowid) + 1000 FROM stored_events").fetchone()[0]
    db.execute("UPDATE stored_events SET rowid = ? WHERE rowid = ?", (spare, a))
    db.execute("UPDATE stored_events SET rowid = ? WHERE rowid = ?", (a, b))
    db.execute("UPDATE stored_events SET rowid = ? WHERE rowid = ?", (b, spare))


def named(report: Report) -> set[tuple[str, int | None, str | None, int | None]]:
    return {(p.kind, p.position, p.stream, p.version) for p in report.problems}


# --- the chain format --------------------------------------------------------------------


def test_chained_document_links_and_hashes_itself() -> None:
    stream = UUID(int=7)
    stored, digest = chained(stream, 1, "t:T", b'{"a":1}', GENESIS)
    assert json.loads(stored) == {"a": 1, "_prev_": GENESIS, "_hash_": digest}
    link = link_of(stream, 1, "t:T", stored)
    assert link is not None and link.prev == GENESIS and link.hash == link.computed == digest
    # the hash covers the stream, the version, the topic and every byte of the document
    for other in (
        link_of(UUID(int=8), 1, "t:T", stored),
        link_of(stream, 2, "t:T", stored),
        link_of(stream, 1, "t:U", stored),
        link_of(stream, 1, "t:T", stored.replace(b'"a":1', b'"a":2')),
    ):
        assert other is not None and other.computed != other.hash
    assert link_of(stream, 1, "t:T", b'{"a":1}') is None  # written before the chain existed


# --- an untouched log --------------------------------------------------------------------


def test_untouched_log_verifies_and_a_clean_verify_seals_what_it_checked(
    memory: MnemoLedger,
) -> None:
    before = memory.add(["Maya moved to Lisbon in May"], user="maya").memories[0]
    memory.update(before.id, "Maya moved to Lisbon in June")
    first = memory.verify()
    assert first.ok and first.problems == [] and first.events >= 3 and first.seals == 0
    (seal,) = first.sealed  # a clean check seals what it found unsealed
    assert seal.from_position == 1 and seal.to_position == first.checked_through
    assert seal.events == first.events and len(seal.root) == 64 and seal.gaps == []
    assert memory.verify().sealed == []  # nothing new: no seal of the seal

    after = memory.add(["Maya adopted a cat named Miso"], user="maya").memories[0]
    memory.update(before.id, "Maya moved to Lisbon in July")
    report = memory.verify()
    assert report.ok, report.problems
    assert report.seals == 1 and report.sealed_through == seal.to_position
    assert report.events > first.events + 2
    assert [s.from_position for s in report.sealed] == [seal.to_position + 1]
    assert memory.get(after.id).content == "Maya adopted a cat named Miso"
    assert memory.get(before.id).content == "Maya moved to Lisbon in July"

    memory.add(["Maya likes oolong tea"], user="maya")
    (third,) = memory.seal()  # an explicit seal starts where the last one ended
    assert third.from_position == report.sealed[-1].to_position + 1
    second = memory.verify()
    assert second.ok and second.seals == 3 and second.sealed == []


def test_cli_verify_and_seal(home: Path) -> None:
    run_json(home, "add", "Maya likes oolong tea", "--user", "maya")
    seals = run_json(home, "seal")
    assert seals[0]["from_position"] == 1
    report = run_json(home, "verify")
    assert report["ok"] is True and report["problems"] == [] and report["events"] > 0
    assert seals[0]["to_position"] == report["events"] - 1  # the seal is the last event
    assert report["seals"] == 1 and report["sealed"] == []
    result = run(home, "seal")
    assert result.exit_code == 2 and "nothing to seal" in result.stderr


def test_concurrent_writers_keep_every_chain_intact(home: Path) -> None:
    """A save that loses an optimistic-concurrency race must not leave its hash behind."""
    (first, *_rest) = build(home, memories=2, updates=0)
    with Ledger(settings(home)) as one, Ledger(settings(home)) as two:
        one.update(USER, first, "written by one")  # one remembers the hash of version 2
        stale = one.memory(first)  # version 2, read before the other writer
        two.update(USER, first, "written by two")  # version 3 from the other process
        with acting_as(USER):
            stale.update("stale write", None)
        with pytest.raises(IntegrityError):
            one.save(stale)  # version 3 again: conflicts, and its hash must be forgotten
        one.update(USER, first, "one again")  # version 4 links to two's version 3
        assert one.memory(first).content == "one again"
    assert verify(home).ok


# --- tampering with the SQLite file ------------------------------------------------------


@pytest.mark.sqlite_only
def test_a_flipped_byte_is_named(home: Path) -> None:
    ids = build(home)
    target = position_of(home, ids[1], 1)
    with sqlite3.connect(home / "ledger.sqlite3") as db:
        (state,) = db.execute(
            "SELECT state FROM stored_events WHERE rowid = ?", (target,)
        ).fetchone()
        middle = len(state) // 2
        flipped = state[:middle] + bytes([state[middle] ^ 0x01]) + state[middle + 1 :]
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?", (flipped, target))

    report = verify(home)
    assert not report.ok
    assert ("changed", target, ids[1], 1) in named(report)
    assert len(report.problems) == 1, report.problems

    result = run(home, "--json", "verify")
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["ok"] is False and out["problems"][0]["position"] == target


@pytest.mark.sqlite_only
def test_a_deleted_row_is_named(home: Path) -> None:
    ids = build(home, updates=2)
    target = position_of(home, ids[0], 2)  # the first update of the first memory
    with sqlite3.connect(home / "ledger.sqlite3") as db:
        db.execute("DELETE FROM stored_events WHERE rowid = ?", (target,))

    report = verify(home)
    assert not report.ok
    problems = named(report)
    assert ("missing", None, ids[0], 2) in problems  # the stream lost version 2
    assert ("missing", target, None, None) in problems  # and the log lost a position


@pytest.mark.sqlite_only
def test_a_deleted_row_inside_a_sealed_range_is_named(home: Path) -> None:
    ids = build(home, updates=0)
    with Ledger(settings(home)) as ledger:
        ledger.seal(USER)
        ledger.add(USER, [NewMemory("after the seal")])
    target = position_of(home, ids[1], 1)  # a memory with one event: no chain to break
    with sqlite3.connect(home / "ledger.sqlite3") as db:
        db.execute("DELETE FROM stored_events WHERE rowid = ?", (target,))

    report = verify(home)
    assert not report.ok
    assert ("missing", target, None, None) in named(report)


@pytest.mark.sqlite_only
def test_swapped_rows_of_one_stream_are_named(home: Path) -> None:
    ids = build(home, updates=2)
    first, second = position_of(home, ids[0], 1), position_of(home, ids[0], 2)
    with sqlite3.connect(home / "ledger.sqlite3") as db:
        swap_positions(db, first, second)

    report = verify(home)
    assert not report.ok
    assert ("reordered", second, ids[0], 1) in named(report), report.problems


@pytest.mark.sqlite_only
def test_swapped_rows_of_two_streams_inside_a_sealed_range_are_named(home: Path) -> None:
    ids = build(home, updates=0)
    with Ledger(settings(home)) as ledger:
        ledger.seal(USER)
    a, b = position_of(home, ids[1], 1), position_of(home, ids[2], 1)
    with sqlite3.connect(home / "ledger.sqlite3") as db:
        swap_positions(db, a, b)

    report = verify(home)
    assert not report.ok
    problems = named(report)
    assert ("reordered", a, ids[2], 1) in problems, report.problems
    assert ("reordered", b, ids[1], 1) in problems, report.problems


@pytest.mark.sqlite_only
def test_seal_refuses_to_certify_a_changed_event(home: Path) -> None:
    build(home)
    with sqlite3.connect(home / "ledger.sqlite3") as db:
        db.execute("UPDATE stored_events SET topic = topic || 'x' WHERE rowid = 2")
    result = run(home, "seal")
    assert result.exit_code == 1 and result.stderr.startswith("error:")
    assert "position 2" in result.stderr
