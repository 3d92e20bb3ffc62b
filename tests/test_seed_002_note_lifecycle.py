"""Seed 002 Note Lifecycle / TTL Calculation: "Without `ttlDays`, `expires_at = NULL` ->
preserved permanently" and "`stability: 'volatile'` notes without `ttlDays` become targets
for the Maintenance Loop's 7-day batch merge" (mergeNotes, batches of 5)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.lifecycle.prune import (
    VOLATILE_MERGE_AFTER_DAYS,
    merge_volatile,
    prune_expired,
)
from mnemoledger.ledger import Settings

USER = "u"


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        yield m


def later(days: float) -> datetime:
    return datetime.now(UTC) + timedelta(days=days)


def test_note_lifecycle_volatile_without_ttl_is_accepted_and_never_expires(
    memory: MnemoLedger,
) -> None:
    written = memory.write_note(
        "asked about the invoice", user=USER, kind="log", stability="volatile"
    )
    note = memory.get(written.note.id)
    assert note.stability == "volatile" and note.expires_at is None and note.state == "active"
    assert prune_expired(memory, now=later(365)).count == 0
    assert memory.get(note.id).state == "active"


def test_note_lifecycle_volatile_without_ttl_is_batch_merged_after_7_days(
    memory: MnemoLedger,
) -> None:
    assert VOLATILE_MERGE_AFTER_DAYS == 7
    ids = [
        memory.write_note(f"request {n} about the invoice", user=USER, kind="log",
                          stability="volatile").note.id
        for n in range(6)
    ]  # fmt: skip
    kept = memory.write_note("a stable log", user=USER, kind="log").note.id
    assert merge_volatile(memory, now=later(6)) == []  # not a week old yet
    batches = merge_volatile(memory, now=later(8))
    assert [b.merged for b in batches] == [ids[:5]]  # a batch of five; the sixth waits
    summary = memory.get(batches[0].summary)
    assert summary.note_kind == "summary" and summary.stability == "volatile"
    assert summary.expires_at is None  # it stays a target: merged again a week later
    assert all(memory.get(i).superseded_by == summary.id for i in ids[:5])
    assert memory.get(ids[5]).state == "active" and memory.get(kept).state == "active"
    again = merge_volatile(memory, now=later(16))
    assert [b.merged for b in again] == [[ids[5], summary.id]]
