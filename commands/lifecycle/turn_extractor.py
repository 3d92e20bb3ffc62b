"""The worker's side job: extract conversation threads that went quiet (seed 004 §3
Trigger 1), every second, on a facade of its own in a thread of its own, while the worker's
consolidation cycles run on theirs (a facade serves one thread at a time).

    with QuietThreadExtractor(lambda: MnemoLedger(home)).running():
        worker.run()
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from mnemoledger.commands.write.turn_queue_api import QueuedExtraction
from mnemoledger.ledger.policy import EXTRACTION_IDLE_SECONDS, EXTRACTION_POLL_SECONDS

logger = logging.getLogger(__name__)


class ExtractsQueued(Protocol):
    def extract_queued(self, *, idle_seconds: float = ...) -> Sequence[QueuedExtraction]: ...


@dataclass
class QuietThreadExtractor:
    """Calls `extract_queued` every `poll` seconds until stopped."""

    open_facade: Callable[[], AbstractContextManager[ExtractsQueued]]
    poll: float = EXTRACTION_POLL_SECONDS
    idle_seconds: float = EXTRACTION_IDLE_SECONDS
    """How long a thread must have been quiet to be extracted."""
    on_extracted: Callable[[QueuedExtraction], None] = lambda _done: None
    stop_event: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with self.open_facade() as memory:
            while not self.stop_event.wait(self.poll):
                try:
                    for done in memory.extract_queued(idle_seconds=self.idle_seconds):
                        self.on_extracted(done)
                except Exception:  # the next poll tries again; the failure is logged
                    logger.exception("extracting queued turns failed")

    @contextmanager
    def running(self) -> Iterator[QuietThreadExtractor]:
        """Extract in a background thread for as long as the block runs."""
        thread = threading.Thread(target=self.run, name="quiet-thread-extractor", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.stop_event.set()
            thread.join()
