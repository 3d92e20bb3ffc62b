"""The worker's side jobs, every second while its consolidation cycles run: extract the
conversation threads that went quiet (seed 004 §3 Trigger 1) and rebuild the topic tree of
users whose memories changed and then stayed unchanged for 5 seconds (seed 001 §6.2, §6.4:
"memory write -> topiary trigger -> 5s debounce -> rebuild tree"; "Startup: if no tree,
immediately rebuilds"). They run on a facade of their own in a thread of their own (a facade
serves one thread at a time).

    with BackgroundJobs(lambda: MnemoLedger(home), [extract_quiet_threads]).running():
        worker.run()
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from mnemoledger.ledger.policy import EXTRACTION_POLL_SECONDS, TOPIC_REBUILD_QUIET_SECONDS

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

logger = logging.getLogger(__name__)

Job = Callable[["MnemoLedger"], None]


@dataclass
class TopicsAfterWrites:
    """Rebuild the topics of users whose memories went quiet after a change. A build that
    left the tree as it was (a topic could not be named) is not tried again until the
    user's memories change again."""

    tried: dict[str, int] = field(default_factory=dict)
    """Per user, the memory position of the last build tried."""
    seen_position: int | None = None
    """The log's position at the last look (None before the first: at start every user
    without a tree is due)."""
    moved_at: datetime | None = None
    """When the log was first seen at that position."""
    settled: bool = False
    """A look ran after the quiet window that followed the last move: until the log moves
    again, every user due then was seen."""

    def __call__(self, memory: MnemoLedger) -> None:
        # a look reads every memory's position: only while a change may still be going
        # quiet, not every second of an idle log
        position, now = memory.parts.ledger.last_position(), memory.parts.clock()
        if position != self.seen_position or self.moved_at is None:
            self.seen_position, self.moved_at, self.settled = position, now, False
        elif self.settled:
            return
        if (now - self.moved_at).total_seconds() >= TOPIC_REBUILD_QUIET_SECONDS:
            self.settled = True
        for user, latest in memory.topics_due().items():
            if self.tried.get(user) != latest:
                self.tried[user] = latest
                memory.build_topics(user=user)


@dataclass
class BackgroundJobs:
    """Runs each job every `poll` seconds until stopped."""

    open_facade: Callable[[], AbstractContextManager[MnemoLedger]]
    jobs: Sequence[Job]
    poll: float = EXTRACTION_POLL_SECONDS
    stop_event: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with self.open_facade() as memory:
            while not self.stop_event.wait(self.poll):
                for job in self.jobs:
                    try:
                        job(memory)
                    except Exception:  # the next poll tries again; the failure is logged
                        logger.exception("background job %s failed", job)

    @contextmanager
    def running(self) -> Iterator[BackgroundJobs]:
        """Run the jobs in a background thread for as long as the block runs."""
        thread = threading.Thread(target=self.run, name="worker-side-jobs", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.stop_event.set()
            thread.join()
