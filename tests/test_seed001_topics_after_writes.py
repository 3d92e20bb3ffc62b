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


class CountingLooks:
    """The ledger, counting the job's looks at which users are due."""

    def __init__(self, memory: MnemoLedger) -> None:
        self.memory = memory
        self.looks = 0

    def topics_due(self) -> dict[str, int]:
        self.looks += 1
        return self.memory.topics_due()

    def __getattr__(self, name: str) -> object:
        return getattr(self.memory, name)


def test_s6_4_an_idle_log_is_not_looked_at_every_second(memory: MnemoLedger) -> None:
    memory.add(["I play the cello."], user="maya")
    changed = last_change(memory, "maya")
    spy = CountingLooks(memory)
    job = TopicsAfterWrites()
    memory.parts.clock = lambda: changed + timedelta(seconds=1)
    job(spy)  # type: ignore[arg-type]
    assert spy.looks == 1 and topic_builds(memory) == 0  # not quiet yet
    memory.parts.clock = lambda: changed + timedelta(seconds=TOPIC_REBUILD_QUIET_SECONDS + 1)
    job(spy)  # type: ignore[arg-type]
    assert spy.looks == 2 and topic_builds(memory) == 1
    job(spy)  # type: ignore[arg-type]  # the build wrote: a new window opens
    quiet_again = changed + timedelta(seconds=2 * TOPIC_REBUILD_QUIET_SECONDS + 2)
    memory.parts.clock = lambda: quiet_again
    job(spy)  # type: ignore[arg-type]  # the window after the build is over: one last look
    looks = spy.looks
    for _ in range(5):
        job(spy)  # type: ignore[arg-type]
    assert spy.looks == looks and topic_builds(memory) == 1  # idle: no look, no build
    memory.parts.clock = lambda: datetime.now(UTC)
    memory.add(["I live in Lyon."], user="maya")
    job(spy)  # type: ignore[arg-type]
    assert spy.looks == looks + 1  # the log moved: looking again
