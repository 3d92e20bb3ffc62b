"""Seed 001 §6.2 / §6.4: a memory write triggers a topic rebuild after a 5-second quiet
window (each new write restarts it); a user with no tree is rebuilt at once; a build that
left the tree unchanged is not retried until the memories change again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mnemoledger import MnemoLedger
from mnemoledger.commands.lifecycle.background import TopicsAfterWrites
from mnemoledger.ledger.policy import TOPIC_REBUILD_QUIET_SECONDS


def last_change(memory: MnemoLedger, user: str) -> datetime:
    return max(datetime.fromisoformat(m.updated_at) for m in memory.list(user=user))


def topic_builds(memory: MnemoLedger) -> int:
    return sum(r.type == "TopicsRequested" for r in memory.parts.ledger.read(limit=10_000))


def test_s6_4_topics_rebuild_once_writes_are_quiet_for_five_seconds(memory: MnemoLedger) -> None:
    memory.add(["I play the cello.", "I live in Lyon."], user="maya")
    changed = last_change(memory, "maya")
    quiet = timedelta(seconds=TOPIC_REBUILD_QUIET_SECONDS)
    assert memory.topics_due(now=changed + quiet - timedelta(seconds=0.1)) == {}
    due = memory.topics_due(now=changed + quiet)
    assert list(due) == ["maya"]  # no tree yet: due as soon as the writes are quiet

    job = TopicsAfterWrites()
    memory.parts.clock = lambda: changed + quiet
    job(memory)
    assert topic_builds(memory) == 1 and memory.topics_due(now=changed + quiet) == {}
    job(memory)
    assert topic_builds(memory) == 1  # nothing changed since the build

    memory.parts.clock = lambda: datetime.now(UTC)
    memory.add(["I am learning Italian."], user="maya")
    changed = last_change(memory, "maya")
    assert list(memory.topics_due(now=changed + quiet)) == ["maya"]
    memory.parts.clock = lambda: changed + quiet
    job(memory)
    assert topic_builds(memory) == 2
    tree = memory.topics(user="maya")
    assert sum(t.members for t in tree.topics if not t.parent) >= 3


def test_s6_4_a_build_tried_at_a_position_is_not_retried_there(memory: MnemoLedger) -> None:
    memory.add(["I like chess."], user="maya")
    later = last_change(memory, "maya") + timedelta(seconds=TOPIC_REBUILD_QUIET_SECONDS)
    (position,) = memory.topics_due(now=later).values()
    job = TopicsAfterWrites(tried={"maya": position})  # as if a build there kept no tree
    memory.parts.clock = lambda: later
    job(memory)
    assert topic_builds(memory) == 0
    memory.parts.clock = lambda: datetime.now(UTC)
    memory.add(["I play go on Sundays."], user="maya")
    later = last_change(memory, "maya") + timedelta(seconds=TOPIC_REBUILD_QUIET_SECONDS)
    assert memory.topics_due(now=later)["maya"] > position  # a new change: tried again
