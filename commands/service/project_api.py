"""Read models as a separate process in the Python API: `ProjectMixin` adds `project` to
`MnemoLedger`.

    stop = threading.Event()          # set it (e.g. from a signal handler) to stop
    memory.project(follow=True, stop=stop)

A follower catches up from the log, then keeps following it while writers write
(LISTEN/NOTIFY on PostgreSQL, polling on SQLite). The read models stay in the data
directory (SQLite and FAISS files); readers in other processes still catch up first, so
they never depend on a follower running, it only keeps their catch-up short.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from pydantic import BaseModel

from mnemoledger.ledger import Ledger
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.projections.runner import FOLLOW_POLL_SECONDS, Runner

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


class ProjectMixin:
    """Run the read-model runner once or as a follower.

    Expects on `self`: `ledger` and `runner` (the `Runner` over every read model).
    """

    ledger: Ledger
    runner: Runner

    def project(
        self,
        *,
        follow: bool = False,
        stop: threading.Event | None = None,
        poll_seconds: float = FOLLOW_POLL_SECONDS,
        caught_up: Callable[[int], None] | None = None,
    ) -> ProjectResult:
        """Bring every read model up to date with the log; with `follow`, keep doing so
        until `stop` is set. `caught_up(n)` hears of each catch-up that applied n events."""
        if not 0 < poll_seconds <= MAX_POLL_SECONDS:
            raise InvalidInput(
                f"poll interval must be above 0 and at most {MAX_POLL_SECONDS:g} seconds; "
                f"got {poll_seconds:g}"
            )
        stop = stop or threading.Event()
        if follow:
            events = self.runner.follow(stop, poll_seconds, caught_up)
        else:
            events = self.runner.catch_up(stop=stop)
        position = min((p.position() for p in self.runner.projections), default=0)
        return ProjectResult(events=events, position=position, followed=follow)
