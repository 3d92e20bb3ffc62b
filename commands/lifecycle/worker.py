"""`mnemoledger worker`: consolidation cycles on an interval (seed 001 §2: "every 30 min"),
stopped gracefully by SIGTERM or SIGINT: the cycle in progress finishes and is saved, then
the loop ends. Each user's daily pass and insights (seed 003 §3-§4) run once a day, in the
first cycle 24 h after the last; the topic tree is rebuilt after a cycle that changed it.

After each cycle the worker runs Luminary's maintenance loop (seed 002): a user's volatile
notes a week old are merged in batches of 5 (`prune.merge_volatile`). Expired notes are
pruned by the cycle itself (its lifecycle rules); `mnemoledger prune-expired` does that
alone.

The clock and the pause are injectable, so tests drive months of cycles in seconds:

    clock = SimulatedClock(datetime(2031, 1, 1, tzinfo=UTC))
    Worker(memory, interval=1800, clock=clock.now, pause=clock.advance).run(cycles=1440)
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import Any, Protocol

from mnemoledger.commands.lifecycle.consolidate_api import ConsolidateResult

logger = logging.getLogger(__name__)


class Consolidates(Protocol):
    def consolidate(
        self,
        *,
        user: str | None = None,
        dry_run: bool = False,
        now: datetime | None = None,
        audit: bool | None = None,
        daily: bool | None = False,
        agent: str | None = None,
    ) -> ConsolidateResult: ...

    def build_topics(self, *, user: str, agent: str | None = None) -> dict[str, Any]: ...


NO_MEMORY_CHANGE = frozenset({"core"})
"""Operations that change no memory (the waiting core candidates read into core.md): a
cycle with only these leaves the topic tree as it was."""


def _changed_memories(result: ConsolidateResult, user: str) -> bool:
    """Whether the cycle decided anything about `user`'s memories."""
    return any(o["user"] == user and o["op"] not in NO_MEMORY_CHANGE for o in result.operations)


@dataclass
class SimulatedClock:
    """A clock that moves only when told: `advance(seconds)` is the worker's pause."""

    current: datetime

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


@dataclass
class Worker:
    """Runs `consolidate` every `interval` seconds until stopped."""

    memory: Consolidates
    interval: float
    user: str | None = None
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    pause: Callable[[float], None] | None = None
    """Waits between cycles (default: the stop event's wait, so a signal ends it at once)."""
    topics: bool = True
    """Rebuild a user's topic tree after a cycle that changed something (seed 001 §6.2:
    "consolidation completes -> topiary trigger")."""
    maintenance: bool = True
    """Merge each user's week-old volatile notes after every cycle (seed 002's maintenance
    loop), when `memory` is a whole ledger (a `prune.MaintenanceHost`)."""
    on_cycle: Callable[[ConsolidateResult], None] = lambda _result: None
    on_error: Callable[[Exception], None] = lambda error: logger.error(
        "consolidation cycle failed: %s", error
    )
    """A failed cycle (recorded on its command as `CommandFailed`) does not stop the worker:
    the next interval tries again."""
    stop_event: threading.Event = field(default_factory=threading.Event)
    cycles: int = 0

    def stop(self) -> None:
        self.stop_event.set()

    def run(self, max_cycles: int | None = None) -> int:
        """Cycles until stopped (or `max_cycles` ran); returns how many ran."""
        while not self.stop_event.is_set():
            try:
                # each user's daily pass (seed 003 §4) runs in the first cycle 24 h after its last
                result = self.memory.consolidate(user=self.user, now=self.clock(), daily=None)
                if self.topics:
                    for cycle in result.users:
                        if _changed_memories(result, cycle.user):
                            self.memory.build_topics(user=cycle.user)
                self._maintain(result)
            except Exception as error:
                self.cycles += 1
                self.on_error(error)
            else:
                self.cycles += 1
                self.on_cycle(result)
            if max_cycles is not None and self.cycles >= max_cycles:
                break
            if self.pause is not None:
                self.pause(self.interval)
            else:
                self.stop_event.wait(self.interval)
        return self.cycles

    def _maintain(self, result: ConsolidateResult) -> None:
        """The maintenance loop's batch merge for the users the cycle visited."""
        if not self.maintenance or result.dry_run:
            return
        from mnemoledger.commands.lifecycle.prune import MaintenanceHost, merge_volatile

        if not isinstance(self.memory, MaintenanceHost):
            return
        now = datetime.fromisoformat(result.now)
        for cycle in result.users:
            merge_volatile(self.memory, user=cycle.user, now=now)

    @contextmanager
    def stopping_on_signals(self) -> Iterator[Worker]:
        """SIGTERM / SIGINT stop the loop after the current cycle (main thread only)."""

        def handler(_signum: int, _frame: FrameType | None) -> None:
            self.stop()

        previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield self
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old)
