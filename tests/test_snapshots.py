"""Snapshots of the long per-user streams (core document, consistency stream): stored
every SNAPSHOT_INTERVAL events, and a stream read through its snapshot has the same state
as the stream folded from all its events."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Ledger, Provenance, Settings
from mnemoledger.ledger.application import SNAPSHOT_INTERVAL
from mnemoledger.ledger.core import CoreDocument
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.user import UserStream

SAVES = 2 * SNAPSHOT_INTERVAL + 5
ACTOR = Provenance(user_id="maya", actor="tester")


def folded_from_events(ledger: Ledger, stream: UUID) -> dict[str, Any]:
    """The stream's state from its events alone, ignoring snapshots."""
    aggregate = None
    for event in ledger.repository.event_store.get(stream):
        aggregate = event.mutate(aggregate)
    return state(aggregate)


def state(aggregate: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(aggregate).items() if k != "_pending_events"}


def snapshot_versions(ledger: Ledger, stream: UUID) -> list[int]:
    assert ledger.snapshots is not None
    return [s.originator_version for s in ledger.snapshots.get(stream)]


def test_long_user_streams_are_read_through_snapshots(home: Path) -> None:
    with Ledger(Settings(home=home)) as ledger:
        for n in range(SAVES):
            user = ledger.user_stream(ACTOR, "maya")
            core = ledger.core_document(ACTOR, "maya")
            with acting_as(ACTOR):
                user.changed(f"command-{n}", [f"m{n}"], [], [])
                core.update(f"## USER\n- fact {n}\n", {"USER": [f"fact {n}"]}, [f"m{n}"])
            ledger.save(user, core)
        for stream in (UserStream.create_id("maya"), CoreDocument.create_id("maya")):
            assert snapshot_versions(ledger, stream) == [SNAPSHOT_INTERVAL, 2 * SNAPSHOT_INTERVAL]
        user = ledger.user_stream(ACTOR, "maya")
        core = ledger.core_document(ACTOR, "maya")
        assert user.revision == SAVES and core.revision == SAVES
        assert core.markdown == f"## USER\n- fact {SAVES - 1}\n"
        assert state(user) == folded_from_events(ledger, user.id)
        assert state(core) == folded_from_events(ledger, core.id)


def test_writes_go_on_from_a_snapshot(home: Path) -> None:
    with Ledger(Settings(home=home)) as ledger:
        for n in range(SNAPSHOT_INTERVAL):
            user = ledger.user_stream(ACTOR, "maya")
            with acting_as(ACTOR):
                user.changed(f"command-{n}", [], [], [])
            ledger.save(user)
        assert snapshot_versions(ledger, UserStream.create_id("maya")) == [SNAPSHOT_INTERVAL]
    with MnemoLedger(settings=Settings(home=home, embedder="hashing")) as memory:
        result = memory.add(["Maya drinks oolong tea"], user="maya")
        assert [m.content for m in result.memories] == ["Maya drinks oolong tea"]
        stream = memory.ledger.user_stream(ACTOR, "maya")
        assert stream.revision == SNAPSHOT_INTERVAL + 1
        assert state(stream) == folded_from_events(memory.ledger, stream.id)
