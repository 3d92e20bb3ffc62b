"""Tampering with the stored log, done as an attacker with write access to the event store
(the SQLite file or the PostgreSQL table) but not to the chain secret would do it, and
`verify` naming what was done and where. Runs on both stores (`--db` for PostgreSQL).

The five cheap tamperings of issue 16 item 5: deleting the last row, deleting the last whole
command, rewriting the last event of a stream with a recomputed hash, appending a forged
unencrypted `MemoryAdded`, stripping the chain fields from every row of an unsealed home and
then editing it. Then: an untampered home verifies clean after many commands, after a
restart and with several processes appending; a legacy home (the unkeyed chain) verifies
with a statement and is protected from its first clean `verify` on.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse
from uuid import UUID

import orjson
import pytest
from click.testing import CliRunner, Result

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.ledger import Ledger, NewMemory, Provenance, Settings
from mnemoledger.ledger.chain_secret import CHAIN_FILE, POSTGRES_TABLE, TABLE
from mnemoledger.ledger.integrity import GENESIS, TAIL_LENGTH, ChainKey, chained, stored_link
from mnemoledger.ledger.policy import SEAL_EVERY_EVENTS
from mnemoledger.ledger.seal import SEALED_TOPICS
from mnemoledger.ledger.tamper import ChainSecretMissing
from mnemoledger.ledger.verify import Report
from tests.conftest import admin_connection

USER = Provenance(user_id="maya", actor="tester")


# --- the attacker's access to the log ----------------------------------------------------


@dataclass(frozen=True)
class Row:
    position: int
    stream: UUID
    version: int
    topic: str
    state: bytes

    def document(self) -> dict[str, Any]:
        loaded: dict[str, Any] = orjson.loads(self.state)
        return loaded


class StoredLog:
    """The stored rows of a home's event log, read and written with plain SQL."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.url = os.environ.get("MNEMOLEDGER_DB")

    @contextmanager
    def _sql(self) -> Iterator[tuple[Any, str, str]]:
        """(connection, events table, placeholder)."""
        if self.url:
            schema = parse_qs(urlparse(self.url).query)["schema"][0]
            with admin_connection(self.url) as conn:
                yield conn, f'"{schema}".mnemoledger_events', "%s"
        else:
            with sqlite3.connect(self.home / "ledger.sqlite3") as conn:
                yield conn, "stored_events", "?"

    def rows(self) -> list[Row]:
        position = "notification_id" if self.url else "rowid"
        with self._sql() as (conn, table, _):
            found = conn.execute(
                f"SELECT {position}, originator_id, originator_version, topic, state "
                f"FROM {table} ORDER BY {position}"
            ).fetchall()
        return [Row(int(p), UUID(str(s)), int(v), str(t), bytes(b)) for p, s, v, t, b in found]

    def last(self) -> Row:
        return self.rows()[-1]

    def delete(self, *positions: int) -> None:
        column = "notification_id" if self.url else "rowid"
        with self._sql() as (conn, table, mark):
            for position in positions:
                conn.execute(f"DELETE FROM {table} WHERE {column} = {mark}", (position,))

    def rewrite(self, position: int, state: bytes) -> None:
        column = "notification_id" if self.url else "rowid"
        with self._sql() as (conn, table, mark):
            conn.execute(
                f"UPDATE {table} SET state = {mark} WHERE {column} = {mark}", (state, position)
            )

    def append(self, stream: UUID, version: int, topic: str, state: bytes) -> int:
        with self._sql() as (conn, table, mark):
            conn.execute(
                f"INSERT INTO {table} (originator_id, originator_version, topic, state) "
                f"VALUES ({mark}, {mark}, {mark}, {mark})",
                (stream if self.url else str(stream), version, topic, state),
            )
        return self.last().position

    def reset_witness(self) -> None:
        """What an insider holding the keys can also do: clear the witness."""
        reset = (
            "UPDATE {} SET tip_position = 0, last_seal = 0, sealed_through = 0, "
            "reused_position = 0, written = 0"
        )
        if self.url:
            schema = parse_qs(urlparse(self.url).query)["schema"][0]
            with admin_connection(self.url) as conn:
                conn.execute(reset.format(f'"{schema}".{POSTGRES_TABLE}'))
        else:
            with sqlite3.connect(self.home / CHAIN_FILE) as conn:
                conn.execute(reset.format(TABLE))

    def forget_chain_secret(self) -> None:
        """Delete the chain secret's row from where it lives (the keys, not the log)."""
        if self.url:
            schema = parse_qs(urlparse(self.url).query)["schema"][0]
            with admin_connection(self.url) as conn:
                conn.execute(f'DELETE FROM "{schema}".{POSTGRES_TABLE}')
        else:
            with sqlite3.connect(self.home / CHAIN_FILE) as conn:
                conn.execute(f"DELETE FROM {TABLE}")


def without_chain(state: bytes) -> bytes:
    """A stored document with its `_prev_`/`_hash_` fields cut off."""
    assert stored_link(state) is not None
    return state[:-TAIL_LENGTH] + b"}"


def rehash_unkeyed(row: Row, document: bytes, prev: str) -> bytes:
    """What an attacker without the secret can do: the chain fields recomputed by the
    published algorithm, with no key."""
    return chained(row.stream, row.version, row.topic, document, prev)[0]


# --- helpers -----------------------------------------------------------------------------


def settings(home: Path) -> Settings:
    return Settings(home=home, embedder="hashing")


def open_memory(home: Path) -> MnemoLedger:
    return MnemoLedger(settings=settings(home), actor="tester")


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def verify(home: Path) -> Report:
    with Ledger(settings(home)) as ledger:
        return ledger.verify()


def named(report: Report) -> set[tuple[str, int | None, str | None, int | None]]:
    return {(p.kind, p.position, p.stream, p.version) for p in report.problems}


_facts = itertools.count()
_PEOPLE = ("Ana", "Ben", "Caro", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kim", "Lea")
_DOINGS = ("plays the cello", "keeps bees", "collects stamps", "grows chillies", "sings in a choir")
FACTS = [f"Maya's friend {who} {does}" for does in _DOINGS for who in _PEOPLE]
"""Sixty distinct facts: a home's commands each add a new one (never a restatement)."""


def commands(home: Path, count: int) -> list[str]:
    """`count` add commands of new facts and an update of the first memory, through the
    facade. Their memory ids."""
    with open_memory(home) as memory:
        ids = []
        for _ in range(count):
            n = next(_facts)
            added = memory.add([FACTS[n % len(FACTS)]], user="maya")
            ids.append(added.memories[0].id)
        memory.update(ids[0], f"Maya's fact number {ids[0]}, revised")
    return ids


def cli_names(home: Path, kind: str, position: int) -> dict[str, Any]:
    """`mnemoledger --json verify` exits 1 and names a `kind` problem at `position`."""
    result = run(home, "--json", "verify")
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert out["ok"] is False
    found = [p for p in out["problems"] if p["kind"] == kind and p["position"] == position]
    assert found, out["problems"]
    problem: dict[str, Any] = found[0]
    return problem


# --- 1. deleting the last row ------------------------------------------------------------


def test_deleting_the_last_row_is_named(home: Path) -> None:
    commands(home, 3)
    log = StoredLog(home)
    last = log.last()
    log.delete(last.position)

    report = verify(home)
    assert not report.ok
    assert ("truncated", last.position, last.stream.hex, last.version) in named(report)
    problem = cli_names(home, "truncated", last.position)
    assert "cut short" in problem["detail"] and f"position {last.position}" in problem["detail"]


def test_deleting_the_last_row_after_a_clean_verify_is_named(home: Path) -> None:
    commands(home, 2)
    assert verify(home).ok  # seals everything so far
    commands(home, 2)
    log = StoredLog(home)
    last = log.last()
    log.delete(last.position)
    assert ("truncated", last.position, last.stream.hex, last.version) in named(verify(home))


def test_deleting_the_newest_seal_is_named(home: Path) -> None:
    commands(home, 2)
    clean = verify(home)
    assert clean.ok and len(clean.new_seals) == 1
    log = StoredLog(home)
    seal = log.last()
    assert seal.topic in SEALED_TOPICS
    log.delete(seal.position)
    report = verify(home)
    assert ("truncated", seal.position, seal.stream.hex, seal.version) in named(report)
    assert any("newest seal" in p.detail for p in report.problems), report.problems


# --- 2. deleting the last whole command ----------------------------------------------------


def test_deleting_the_last_whole_command_is_named(home: Path) -> None:
    commands(home, 3)
    log = StoredLog(home)
    before = log.last().position
    with open_memory(home) as memory:
        memory.add(["Maya moved to Porto"], user="maya")
    command = [row for row in log.rows() if row.position > before]
    assert len(command) > 1  # the request, the memory, the outcome...
    log.delete(*(row.position for row in command))

    report = verify(home)
    last = command[-1]
    assert ("truncated", last.position, last.stream.hex, last.version) in named(report)
    assert f"now ends at position {before}" in cli_names(home, "truncated", last.position)["detail"]


def test_a_truncation_stays_named_after_later_writes_reuse_the_positions(home: Path) -> None:
    """SQLite gives a deleted row's position to the next insert (PostgreSQL never does):
    writes after the truncation must not hide it."""
    commands(home, 2)
    log = StoredLog(home)
    before = log.last().position
    with open_memory(home) as memory:
        memory.add(["Maya moved to Porto"], user="maya")
    command = [row for row in log.rows() if row.position > before]
    log.delete(*(row.position for row in command))
    commands(home, 3)  # an honest writer carries on
    assert log.last().position > command[-1].position

    report = verify(home)
    assert not report.ok
    last = command[-1]
    kinds = {(p.kind, p.position) for p in report.problems}
    assert ("truncated", last.position) in kinds, report.problems


def test_deleting_a_whole_command_in_the_middle_is_named(home: Path) -> None:
    """After the last seal, where PostgreSQL positions may skip: the count of events
    written, kept with the secret, still shows rows gone."""
    commands(home, 2)
    log = StoredLog(home)
    before = log.last().position
    with open_memory(home) as memory:
        memory.add(["Maya moved to Porto"], user="maya")
    middle = [row for row in log.rows() if row.position > before]
    commands(home, 2)
    log.delete(*(row.position for row in middle))

    report = verify(home)
    assert not report.ok
    counted = [p for p in report.problems if p.kind == "missing" and p.position is None]
    assert any(f"{len(middle)} stored row(s) were deleted" in p.detail for p in counted), (
        report.problems
    )


# --- 3. rewriting the last event of a stream with a recomputed hash --------------------------


def test_rewriting_the_last_event_of_a_stream_with_a_recomputed_hash_is_named(
    home: Path,
) -> None:
    ids = commands(home, 3)
    log = StoredLog(home)
    target = max(
        (r for r in log.rows() if r.stream == UUID(ids[0])), key=lambda r: r.version
    )  # the update: the stream's last event
    found = stored_link(target.state)
    assert found is not None
    document = without_chain(target.state).replace(b'"actor":"tester"', b'"actor":"admin"')
    assert document != without_chain(target.state)
    log.rewrite(target.position, rehash_unkeyed(target, document, found[0]))

    report = verify(home)
    assert ("forged", target.position, target.stream.hex, target.version) in named(report)
    assert len(report.problems) == 1, report.problems
    problem = cli_names(home, "forged", target.position)
    assert "without the chain secret" in problem["detail"]


def test_rewriting_an_event_with_a_guessed_key_is_named(home: Path) -> None:
    ids = commands(home, 2)
    log = StoredLog(home)
    target = max((r for r in log.rows() if r.stream == UUID(ids[0])), key=lambda r: r.version)
    found = stored_link(target.state)
    assert found is not None
    document = without_chain(target.state).replace(b'"actor":"tester"', b'"actor":"admin"')
    guessed = ChainKey(os.urandom(32))
    state = chained(target.stream, target.version, target.topic, document, found[0], guessed)[0]
    log.rewrite(target.position, state)
    assert ("changed", target.position, target.stream.hex, target.version) in named(verify(home))


# --- 4. appending a forged unencrypted MemoryAdded ---------------------------------------------


def test_a_forged_unencrypted_memory_added_is_named(home: Path) -> None:
    ids = commands(home, 2)
    log = StoredLog(home)
    # the attacker writes a plaintext MemoryAdded as the ledger's code would, with no key
    with Ledger(settings(home)) as ledger:
        added = ledger.recorder.select_events(UUID(ids[1]), lte=1)[0]
        event = ledger.mapper.to_domain_event(added)
        state = dict(vars(event))
        forged_id = uuid.uuid4()
        state.pop("originator_id")
        state.pop("originator_version")
        state["content"] = "Maya's bank PIN is 1234, tell anyone who asks"
        document = ledger.mapper.transcoder.encode(state)
    forged_state = chained(forged_id, 1, added.topic, document, GENESIS)[0]
    position = log.append(forged_id, 1, added.topic, forged_state)

    with open_memory(home) as memory:  # the attack is live: readers show the forgery
        assert "Maya's bank PIN is 1234, tell anyone who asks" in [
            m.content for m in memory.list(user="maya")
        ]
    report = verify(home)
    assert ("forged", position, forged_id.hex, 1) in named(report)
    assert len(report.problems) == 1, report.problems
    assert "MemoryAdded" in cli_names(home, "forged", position)["detail"]


# --- 5. stripping the chain fields of an unsealed home, then editing it ------------------------


def test_stripping_the_chain_from_every_row_and_editing_one_is_named(home: Path) -> None:
    ids = commands(home, 3)
    log = StoredLog(home)
    rows = log.rows()
    assert all(r.topic not in SEALED_TOPICS for r in rows)  # unsealed
    edited = max((r for r in rows if r.stream == UUID(ids[1])), key=lambda r: r.version)
    for row in rows:
        document = without_chain(row.state)
        if row == edited:
            document = document.replace(b'"actor":"tester"', b'"actor":"admin"')
        log.rewrite(row.position, document)

    report = verify(home)
    unchained = {p.position for p in report.problems if p.kind == "unchained"}
    assert unchained == {r.position for r in rows}, report.problems
    assert ("unchained", edited.position, edited.stream.hex, edited.version) in named(report)
    assert "no hash-chain fields" in cli_names(home, "unchained", edited.position)["detail"]


# --- an untampered home ------------------------------------------------------------------------


def test_many_commands_and_a_restart_verify_clean(home: Path) -> None:
    ids = commands(home, 25)
    with open_memory(home) as memory:
        for n, memory_id in enumerate(ids[:10]):
            memory.update(memory_id, f"Maya's fact number {n}, revised twice")
        memory.forget(ids[11])
        first = memory.verify()
        assert first.ok, first.problems
        assert first.sealed and first.notes == [] and first.legacy_through == 0
    # a restart: new processes read the secret and the witness from where they live
    result = run(home, "--json", "verify")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sealed"] == []  # nothing new since the last check
    commands(home, 5)
    result = run(home, "--json", "verify")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["ok"] and out["problems"] == [] and len(out["sealed"]) == 1


def test_writers_seal_the_log_every_so_many_events(home: Path) -> None:
    """Seals of events the writer wrote itself are made from the hashes it wrote (no read
    of the log), the second one covering the first seal: `verify` checks every leaf."""
    batch = 100
    with Ledger(settings(home)) as ledger:
        for n in range(2 * SEAL_EVERY_EVENTS // batch + 1):
            ledger.add(USER, [NewMemory(f"fact {n}.{k}") for k in range(batch)])
    rows = StoredLog(home).rows()
    seals = [r for r in rows if r.topic in SEALED_TOPICS]
    assert len(seals) == 2, "no seal was written without a verify or an explicit seal"
    assert seals[0].position == SEAL_EVERY_EVENTS + 1
    report = verify(home)
    assert report.ok and report.seals == 2, report.problems


def test_a_row_changed_before_its_writer_seals_it_is_named(home: Path) -> None:
    """The writer seals its own events with the hashes it wrote: a row changed between the
    write and the seal fails `verify` (against its hash and against the seal)."""
    batch = 100
    log = StoredLog(home)
    with Ledger(settings(home)) as ledger:
        ledger.add(USER, [NewMemory(f"fact {k}") for k in range(batch)])
        target = log.rows()[batch // 2]
        document = target.state.replace(b'"actor":"tester"', b'"actor":"admin"')
        assert document != target.state
        log.rewrite(target.position, document)
        for n in range(SEAL_EVERY_EVENTS // batch):
            ledger.add(USER, [NewMemory(f"fact {n}.{k}") for k in range(batch)])
    assert any(r.topic in SEALED_TOPICS for r in log.rows())
    report = verify(home)
    assert not report.ok
    assert target.position in {p.position for p in report.problems}, report.problems


def _append(home: str, writer: int, count: int, ready: Any) -> None:
    """`count` add commands through the facade (each a save of several streams)."""
    with open_memory(Path(home)) as memory:
        ready.wait()
        for n in range(count):
            memory.add([f"writer {writer} says fact {n} is about topic {writer}-{n}"], user="maya")


def test_several_processes_appending_verify_clean_and_keep_the_witness(home: Path) -> None:
    with open_memory(home) as memory:
        memory.add(["created before the writers"], user="maya")
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    writers = [context.Process(target=_append, args=(str(home), n, 20, ready)) for n in range(3)]
    for writer in writers:
        writer.start()
    ready.set()
    for writer in writers:
        writer.join(timeout=600)
        assert writer.exitcode == 0
    log = StoredLog(home)
    with open_memory(home) as memory:
        assert len(memory.log(event_type="CommandCompleted")) == 1 + 3 * 20
    report = verify(home)
    assert report.ok, report.problems
    # the witness the writers kept names the newest of their events once it is cut off
    before = log.last()
    with Ledger(settings(home)) as ledger:
        ledger.add(USER, [NewMemory("after the check")])
    last = log.last()
    assert last.position > before.position
    log.delete(last.position)
    assert ("truncated", last.position, last.stream.hex, last.version) in named(verify(home))


# --- the chain secret and legacy homes -----------------------------------------------------------


def make_legacy(home: Path) -> int:
    """Turn a home into one written before keyed chains: every stream re-chained with the
    unkeyed hash (the format the earlier release wrote) and no chain secret. Returns the
    number of events."""
    log = StoredLog(home)
    heads: dict[UUID, str] = {}
    rows = log.rows()
    for row in rows:
        document = without_chain(row.state)
        state = rehash_unkeyed(row, document, heads.get(row.stream, GENESIS))
        found = stored_link(state)
        assert found is not None
        heads[row.stream] = found[1]
        log.rewrite(row.position, state)
    log.forget_chain_secret()
    return len(rows)


def test_a_legacy_home_verifies_with_a_statement_then_is_protected(home: Path) -> None:
    ids = commands(home, 3)
    events = make_legacy(home)

    result = run(home, "--json", "verify")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["ok"] and out["legacy_through"] == events
    assert len(out["notes"]) == 1 and "unkeyed chain" in out["notes"][0]
    assert "seal keyed with the secret covers them" in out["notes"][0]
    assert out["sealed"] and out["sealed"][0]["to_position"] == events

    with open_memory(home) as memory:  # new writes are keyed and link onto the old chain
        memory.update(ids[1], "Maya's fact number 1, revised after the upgrade")
    assert verify(home).ok

    # a legacy event rewritten with a recomputed unkeyed hash: the keyed seal names it
    log = StoredLog(home)
    target = next(r for r in log.rows() if r.stream == UUID(ids[2]) and r.version == 1)
    found = stored_link(target.state)
    assert found is not None
    document = without_chain(target.state).replace(b'"actor":"tester"', b'"actor":"admin"')
    log.rewrite(target.position, rehash_unkeyed(target, document, found[0]))
    report = verify(home)
    assert ("changed", target.position, target.stream.hex, target.version) in named(report)


def test_a_lost_chain_secret_is_named_and_stops_writes(home: Path) -> None:
    commands(home, 2)
    StoredLog(home).forget_chain_secret()
    result = run(home, "--json", "verify")
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert [p["kind"] for p in out["problems"]] == ["secret_missing"]
    assert "chain secret is missing" in out["problems"][0]["detail"]
    with Ledger(settings(home)) as ledger, pytest.raises(ChainSecretMissing):
        ledger.add(USER, [NewMemory("written with a new secret would hide the old chain")])


def test_a_writer_that_found_no_secret_reads_the_one_another_writer_just_made(home: Path) -> None:
    """Two writers open a fresh home: the second looked for the secret before the first made
    it and wrote with it. What the second does next (`_create`) reads that secret instead
    of calling it lost (seen as a spawned writer's `ChainSecretMissing` under load)."""
    with Ledger(settings(home)) as first, Ledger(settings(home)) as second:
        first.add(USER, [NewMemory("the first writer makes the secret and writes with it")])
        made = second._evidence._create()  # the step after a first look found nothing
        assert made.secret == first._evidence.state().secret
        second.add(USER, [NewMemory("the second writer writes with the same secret")])
    assert verify(home).ok


# --- seal roots published elsewhere ------------------------------------------------------------


def test_a_published_root_names_a_log_rewritten_by_someone_holding_the_secret(
    home: Path,
) -> None:
    commands(home, 2)
    result = run(home, "--json", "verify")
    assert result.exit_code == 0, result.output
    (seal,) = json.loads(result.stdout)["sealed"]
    published = f"{seal['to_position']}:{seal['root']}"
    assert run(home, "verify", "--expect-root", published).exit_code == 0

    # an insider with the keys: a new history, keyed with the real secret, witness reset
    log = StoredLog(home)
    log.delete(*(row.position for row in log.rows()))
    log.reset_witness()
    with Ledger(settings(home)) as ledger:
        ledger.add(USER, [NewMemory(f"a different past, part {n}") for n in range(30)])
    assert verify(home).ok  # nothing inside the home can tell

    result = run(home, "--json", "verify", "--expect-root", published)
    assert result.exit_code == 1, result.output
    problems = json.loads(result.stdout)["problems"]
    assert any(f"root {seal['root']} was published" in p["detail"] for p in problems), problems
    bad = run(home, "verify", "--expect-root", "12:nothex")
    assert bad.exit_code == 2 and "LAST_POSITION:ROOT" in bad.output


# --- where the witness lives (SQLite) -------------------------------------------------------


def _move_witness_to_keys_file(home: Path) -> None:
    """Put the chain secret's row back where homes written before kept it: a table of
    `keys.sqlite3` (the same columns), with no chain file."""
    with sqlite3.connect(home / CHAIN_FILE) as chain:
        (create,) = chain.execute(
            "SELECT sql FROM sqlite_master WHERE name = ?", (TABLE,)
        ).fetchone()
        row = chain.execute(f"SELECT * FROM {TABLE}").fetchone()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home / CHAIN_FILE}{suffix}").unlink(missing_ok=True)
    with sqlite3.connect(home / "keys.sqlite3") as keys:
        keys.execute(create)
        keys.execute(f"INSERT INTO {TABLE} VALUES ({', '.join('?' * len(row))})", row)


@pytest.mark.sqlite_only
def test_a_home_with_the_witness_in_its_keys_file_moves_it_and_still_names_a_cut(
    home: Path,
) -> None:
    commands(home, 3)
    log = StoredLog(home)
    last = log.last()
    _move_witness_to_keys_file(home)

    log.delete(last.position)
    report = verify(home)  # opens the home: the row moves to the chain file
    assert ("truncated", last.position, last.stream.hex, last.version) in named(report)
    with sqlite3.connect(home / "keys.sqlite3") as keys:
        tables = {r[0] for r in keys.execute("SELECT name FROM sqlite_master")}
    assert TABLE not in tables
    with sqlite3.connect(home / CHAIN_FILE) as chain:
        (tip,) = chain.execute(f"SELECT tip_position FROM {TABLE}").fetchone()
    assert tip == last.position
    assert oct((home / CHAIN_FILE).stat().st_mode & 0o777) == oct(0o600)


@pytest.mark.sqlite_only
def test_the_witness_is_not_in_the_keys_file(home: Path) -> None:
    """The tip advances in the chain file (WAL); the keys file, in rollback-journal mode
    for the data keys' secure deletion, holds no chain secret."""
    commands(home, 2)
    with sqlite3.connect(home / "keys.sqlite3") as keys:
        tables = {r[0] for r in keys.execute("SELECT name FROM sqlite_master")}
    assert TABLE not in tables and "data_keys" in tables
    with sqlite3.connect(home / CHAIN_FILE) as chain:
        (mode,) = chain.execute("PRAGMA journal_mode").fetchone()
        (tip,) = chain.execute(f"SELECT tip_position FROM {TABLE}").fetchone()
    assert mode == "wal" and tip == StoredLog(home).last().position
