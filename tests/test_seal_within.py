"""The automatic seal written in the transaction of the save that makes it due (SQLite).

These tests name the SQLite log explicitly: on PostgreSQL the seal is a save of its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import StoredEvent

from mnemoledger.ledger import Ledger, NewMemory, Provenance, Settings
from mnemoledger.ledger.chain_secret import CHAIN_FILE, SQLiteChainSecrets, Tip
from mnemoledger.ledger.policy import SEAL_EVERY_EVENTS
from mnemoledger.ledger.seal import SEALED_TOPICS
from mnemoledger.ledger.sqlite_recorder import WITHIN_TRANSACTION, InTransaction
from mnemoledger.ledger.tamper import TamperEvidence

USER = Provenance(user_id="maya", actor="tester")
BATCH = SEAL_EVERY_EVENTS // 2 + 100


def sqlite_settings(home: Path) -> Settings:
    return Settings(home=home, db=f"sqlite:///{home / 'ledger.sqlite3'}", embedder="hashing")


def log_rows(home: Path) -> list[tuple[int, str, int, str]]:
    """(position, stream, version, topic) of every stored event."""
    with sqlite3.connect(home / "ledger.sqlite3") as conn:
        return [
            (int(p), str(s), int(v), str(t))
            for p, s, v, t in conn.execute(
                "SELECT rowid, originator_id, originator_version, topic FROM stored_events "
                "ORDER BY rowid"
            )
        ]


def add_batch(ledger: Ledger, n: int, size: int = BATCH) -> None:
    ledger.add(USER, [NewMemory(f"fact {n}.{k}") for k in range(size)])


def test_the_seal_commits_with_the_batch_that_makes_it_due(tmp_path: Path) -> None:
    with Ledger(sqlite_settings(tmp_path)) as ledger:
        add_batch(ledger, 0)
        assert not any(t in SEALED_TOPICS for *_, t in log_rows(tmp_path))
        add_batch(ledger, 1)
        rows = log_rows(tmp_path)
        seals = [r for r in rows if r[3] in SEALED_TOPICS]
        assert len(seals) == 1
        batch_end = max(p for p, *_, t in rows if t not in SEALED_TOPICS)
        assert seals[0][0] == batch_end + 1, "the seal directly follows the batch it seals"
        seal = ledger.repository.get(UUID(seals[0][1]))
        assert (seal.from_position, seal.to_position) == (1, batch_end)
    witness = SQLiteChainSecrets(tmp_path / CHAIN_FILE).load()
    assert witness is not None and witness.tip is not None
    assert witness.tip.position == seals[0][0], "the tip names the seal, written with it"
    assert (witness.sealed_through, witness.last_seal) == (batch_end, seals[0][0])
    assert witness.written == len(rows)
    with Ledger(sqlite_settings(tmp_path)) as ledger:
        report = ledger.verify()
    assert report.ok and report.seals == 1, report.problems


def test_a_batch_whose_seal_fails_is_rolled_back_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One transaction: when writing the seal fails, the batch's events are not in the log
    either, and the next save seals them all."""
    with Ledger(sqlite_settings(tmp_path)) as ledger:
        add_batch(ledger, 0)
        before = log_rows(tmp_path)

        def broken(*_args: Any) -> list[Any]:
            raise RuntimeError("the disk broke while sealing")

        monkeypatch.setattr(TamperEvidence, "_new_seals", broken)
        with pytest.raises(RuntimeError, match="while sealing"):
            add_batch(ledger, 1)
        assert log_rows(tmp_path) == before
        monkeypatch.undo()
        add_batch(ledger, 2)
        rows = log_rows(tmp_path)
        assert [t in SEALED_TOPICS for *_, t in rows].count(True) == 1
        assert rows[-1][3] in SEALED_TOPICS
        report = ledger.verify()
    assert report.ok and report.seals == 1, report.problems


def test_a_writer_that_did_not_write_every_unsealed_event_seals_from_the_log(
    tmp_path: Path,
) -> None:
    """Two writers of one log: the one whose save makes a seal due did not write the
    other's events, so it seals after its save, reading the log; `verify` checks it."""
    with Ledger(sqlite_settings(tmp_path)) as first, Ledger(sqlite_settings(tmp_path)) as second:
        add_batch(first, 0)
        add_batch(second, 1)
        rows = log_rows(tmp_path)
        seals = [r for r in rows if r[3] in SEALED_TOPICS]
        assert len(seals) == 1
        seal = second.repository.get(UUID(seals[0][1]))
        assert seal.to_position == seals[0][0] - 1
        add_batch(first, 2)  # learns the other's seal from the log: seals only what follows
        add_batch(first, 3)
        report = first.verify()
    assert report.ok and report.seals == 2, report.problems


def test_a_hook_reads_the_save_uncommitted_and_skips_a_conflicting_insert(
    tmp_path: Path,
) -> None:
    seen: list[int] = []
    skipped: list[list[int] | None] = []

    def hook(stored: Sequence[StoredEvent], positions: Sequence[int], log: InTransaction) -> None:
        seen.extend(n.id for n in log.select_notifications(0, 100))
        skipped.append(log.insert_unless_conflicting([stored[0]]))  # the save's own event

    with Ledger(sqlite_settings(tmp_path)) as ledger:
        add_batch(ledger, 0, size=2)
        memories = ledger.draft(USER, [NewMemory("one more"), NewMemory("and another")])
        recordings = ledger.save(*memories, **{WITHIN_TRANSACTION: hook})
    positions = [r.notification.id for r in recordings]
    assert positions == [3, 4]
    assert seen == [1, 2, 3, 4], "the hook sees the save's own rows before the commit"
    assert skipped == [None]
    assert [p for p, *_ in log_rows(tmp_path)] == [1, 2, 3, 4]


def test_the_store_takes_the_tip_and_the_seal_in_one_write(tmp_path: Path) -> None:
    """On the store the environment names (PostgreSQL under MNEMOLEDGER_TEST_DB): the tip,
    the count and the seal mark move together, and an older seal never replaces a newer."""
    with Ledger(Settings(home=tmp_path, embedder="hashing")) as ledger:
        add_batch(ledger, 0, size=3)
        store = ledger._evidence.store
        before = store.load()
        assert before is not None and before.tip is not None
        last = ledger.last_position()
        tip = Tip(last + 1, "ab" * 16, 1, "cd" * 32)
        store.advance_tip_sealed(tip, last + 1, 1, last, last + 1)
        after = store.load()
        assert after is not None
        assert after.tip == tip
        assert after.written == before.written + 1
        assert (after.sealed_through, after.last_seal) == (last, last + 1)
        store.advance_tip_sealed(tip, last + 1, 0, 1, last)  # an older seal: kept out
        kept = store.load()
        assert kept is not None and (kept.sealed_through, kept.last_seal) == (last, last + 1)
