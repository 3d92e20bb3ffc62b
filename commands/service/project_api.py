"""The read models in the Python API: `Project` gives `MnemoLedger` its `refresh` and
`rebuild`, and `project`, the read models as a separate process.

    stop = threading.Event()          # set it (e.g. from a signal handler) to stop
    memory.project(follow=True, stop=stop)

A follower catches up from the log, then keeps following it while writers write
(LISTEN/NOTIFY on PostgreSQL, polling on SQLite). The read models stay in the data
directory (SQLite and FAISS files); readers in other processes still catch up first, so
they never depend on a follower running, it only keeps their catch-up short.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from pydantic import BaseModel

from mnemoledger.commands.models import RebuildResult
from mnemoledger.commands.parts import Parts
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.projections.runner import FOLLOW_POLL_SECONDS, Progress

MAX_POLL_SECONDS = 60.0
"""The slowest polling a follower accepts (not in the seeds: a follower that polls less
often than this is not following)."""


class ProjectResult(BaseModel):
    """What a catch-up or a follow session did."""

    events: int
    """Events applied to the read models."""
    position: int
    """The log position the read models reached."""
    followed: bool
    """Whether the process kept following the log until it was stopped."""


class Project:
    """Run the read-model runner: catch up, rebuild, or follow the log."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def refresh(self, progress: Progress | None = None) -> int:
        """`MnemoLedger.refresh`: bring the read models up to date (documented there)."""
        return self.parts.refresh(progress)

    def rebuild(
        self, projection: str | None = None, progress: Progress | None = None
    ) -> RebuildResult:
        """`MnemoLedger.rebuild`: replay read models from position 0 (documented there)."""
        runner = self.parts.runner
        names = [p.name for p in runner.projections]
        if projection is not None and projection not in names:
            raise InvalidInput(f"unknown projection {projection!r}; choose from {', '.join(names)}")
        chosen = [projection] if projection else names
        started = time.perf_counter()
        events = runner.rebuild(chosen, progress)
        return RebuildResult(
            projections=chosen, events=events, seconds=round(time.perf_counter() - started, 3)
        )

    def project(
        self,
        *,
        follow: bool = False,
        stop: threading.Event | None = None,
        poll_seconds: float = FOLLOW_POLL_SECONDS,
        caught_up: Callable[[int], None] | None = None,
    ) -> ProjectResult:
        """`MnemoLedger.project`: keep the read models up to date (documented there)."""
        if not 0 < poll_seconds <= MAX_POLL_SECONDS:
            raise InvalidInput(
                f"poll interval must be above 0 and at most {MAX_POLL_SECONDS:g} seconds; "
                f"got {poll_seconds:g}"
            )
        stop = stop or threading.Event()
        runner = self.parts.runner
        if follow:
            events = runner.follow(stop, poll_seconds, caught_up)
        else:
            events = runner.catch_up(stop=stop)
        position = min((p.position() for p in runner.projections), default=0)
        return ProjectResult(events=events, position=position, followed=follow)
