"""Seed 003 §7 purge in the audit (§8) and delta (§1) read models: the events remain in the
log, the content leaves the read models (rows, change log, and the SQLite files' bytes), and
a rebuild from the log gives the same rows. Consolidation's merges, moves and ends are
recorded in both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemoledger import MnemoLedger
from mnemoledger.ledger import NewMemory, Settings
from mnemoledger.ledger.policy import PURGE_AFTER_DAYS, SOFT_DELETE_IDLE_EPOCHS
from mnemoledger.ledger.provenance import Provenance, acting_as
from mnemoledger.projections.compact import compact_directory, is_sqlite
from tests.test_cli import run
from tests.test_consolidation_helpers import (
    USER,
    Clock,
    clock,
    engram,
    of_memory,
    ops,
    place,
    set_importance,
    skip_epochs,
)

__all__ = ["clock", "engram"]

SECRET = "zeppelinwharf"


def in_thread(thread: str) -> Provenance:
    return Provenance(user_id=USER, actor="tester", agent_id="writer", thread_id=thread)


def remember_in(memory: MnemoLedger, thread: str, content: str, **fields: Any) -> str:
    [added] = memory.ledger.add(in_thread(thread), [NewMemory(content=content, **fields)])
    return added.id.hex


def read_models(memory: MnemoLedger, memory_id: str, thread: str) -> tuple[Any, ...]:
    return (
        [e.model_dump() for e in memory.memory_history(memory_id)],
        memory.delta_changes(thread),
        memory.delta(thread).header,
    )


def sqlite_files_holding(directory: Path, word: bytes) -> list[str]:
    return [
        str(p.relative_to(directory))
        for p in sorted(directory.rglob("*"))
        if p.is_file() and (is_sqlite(p) or p.name.endswith("-wal")) and word in p.read_bytes()
    ]


def purge_through_consolidation(memory: MnemoLedger, clock: Clock) -> str:
    """A memory written and edited in thread t1, kept in a second one's delta too, then
    lapsed (seed 003 §7 soft delete, idle for more than SOFT_DELETE_IDLE_EPOCHS) and purged
    PURGE_AFTER_DAYS later by the consolidation."""
    idle = remember_in(memory, "t1", f"Right now the {SECRET} podcast is on", importance=0.3)
    memory.ledger.update(in_thread("t1"), idle, f"Right now the {SECRET} podcast about kites is on")
    kept = remember_in(memory, "t1", "Maya takes sailing lessons in June", importance=0.9)
    memory.consolidate(user=USER)
    skip_epochs(memory, SOFT_DELETE_IDLE_EPOCHS, clock)
    set_importance(memory, kept, 0.9)  # above T still (the skipped decay would take it to 0)
    [lapse] = ops(memory.consolidate(user=USER), "lapse")
    assert lapse["memory"] == idle
    clock.advance(days=PURGE_AFTER_DAYS + 1)
    [purge] = ops(memory.consolidate(user=USER), "purge")
    assert purge["memory"] == idle
    return idle


def test_purge_blanks_history_and_delta_and_rebuild_agrees(
    engram: MnemoLedger, clock: Clock
) -> None:
    header_before = engram.delta("t1").header
    assert header_before is None
    idle = purge_through_consolidation(engram, clock)
    history, changes, header = read_models(engram, idle, "t1")
    assert [h["event"] for h in history] == ["ADD", "UPDATE", "LAPSE", "PURGE"]
    lapsed = history[2]
    assert lapsed["new_ref"] is not None and lapsed["new_ref"].startswith("20")
    assert SECRET not in repr(history)
    assert all(h["old_ref"] is None for h in history)
    assert history[0]["new_ref"] is None and history[0]["data"]["content"] is None
    assert SECRET not in repr(changes) and header is not None and SECRET not in header
    mine = [c for c in changes if c["memory_id"] == idle]
    assert [c["event"] for c in mine] == ["updated", "created"]
    assert all(c["meta"]["purged"] and c["meta"]["content"] == "" for c in mine)
    assert "- +created: [Knowledge] (purged) (imp=2)" in header.splitlines()
    assert "MemoryPurged" in of_memory(engram, idle), "the log keeps the events"
    assert any(SECRET in str(r.data.get("content")) for r in engram.ledger.stream(idle))

    engram.rebuild()
    assert read_models(engram, idle, "t1") == (history, changes, header)


def test_no_projection_file_keeps_the_purged_text(home: Path, clock: Clock) -> None:
    settings = Settings(home=home, embedder="hashing")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        memory.clock = clock.now
        idle = purge_through_consolidation(memory, clock)
        assert SECRET not in repr(read_models(memory, idle, "t1"))
    for args in (["history", idle], ["--json", "history", idle], ["delta", "--thread", "t1"]):
        shown = run(home, *args)
        assert shown.exit_code == 0, shown.stderr
        assert SECRET not in shown.stdout, f"`{' '.join(args)}` shows no purged text"
        assert ("PURGE" if args[-2:-1] != ["--thread"] else "(purged)") in shown.stdout
    directory = settings.projections_dir
    holding = sqlite_files_holding(directory, SECRET.encode())
    assert not [f for f in holding if f.startswith(("history", "delta"))], (
        "the history and delta files hold no byte of the purged text"
    )
    compact_directory(directory)  # what `erase` runs; merges FTS5 segments of layers
    assert sqlite_files_holding(directory, SECRET.encode()) == []


def test_merge_and_layer_moves_in_history_and_delta(engram: MnemoLedger) -> None:
    winner = remember_in(engram, "t3", "Maya lives in Paris", importance=0.4)
    loser = remember_in(engram, "t3", "Maya moved to Paris in May", importance=0.6)
    place(engram, winner, "core")
    merged_text = "Maya lives in Paris since May"
    with acting_as(in_thread("t3")):
        kept, gone = engram.ledger.memory(winner), engram.ledger.memory(loser)
        kept.absorb(
            absorbed=[loser],
            content=merged_text,
            tags=[],
            importance=0.6,
            access_added=0,
            repetition_added=1,
            evidence=None,
            layer="core",
            namespace="default",
            via="merge",
            epoch=1,
        )
        gone.supersede(winner, "merge")
    engram.ledger.save(kept, gone)
    history = engram.memory_history(winner)
    assert [(h.event, h.new_ref) for h in history] == [
        ("ADD", "Maya lives in Paris"),
        ("PROMOTE", "working"),
        ("PROMOTE", "core"),
        ("MERGE", merged_text),
    ]
    assert history[-1].old_ref == "Maya lives in Paris"
    assert [h.event for h in engram.memory_history(loser)] == ["ADD", "MERGE"]
    out = engram.delta("t3", 2)
    assert out.rev == 3, "the merge and its supersede are one command, one revision"
    assert out.header == (
        f"Memory updates since rev 2:\n- ↔merged: [Knowledge] {merged_text} (replaces 1)"
    )
    assert [(c["event"], c["memory_id"]) for c in engram.delta_changes("t3", 2)] == [
        ("merged", winner)
    ]
