"""Time travel: the read models as they were at a point of the log.

The read models are rebuilt in a scratch directory by the projections' own `Runner`, fed
by a view of the live log that ends at the chosen position; the live read models are not
touched. The scratch directory is deleted afterwards, so nothing derived from the log
outlives the call (an erased user's content cannot linger in a cache).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mnemoledger.commands.audit.timepoints import Point, parse_point
from mnemoledger.ledger import EventRecord, InvalidInput, Ledger

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

READ_MODELS_FOR_READS = ("layers", "core", "graph")
"""What list, get and core read; search also needs `vectors`."""

SCAN_PAGE = 1000


class LogUpTo:
    """The live ledger, with its log ending at `until` for the readers of the log."""

    def __init__(self, ledger: Ledger, until: int) -> None:
        self._ledger = ledger
        self.until = until

    def last_position(self) -> int:
        return min(self._ledger.last_position(), self.until)

    def read(self, after: int = 0, limit: int = 1000, stop: int | None = None) -> list[EventRecord]:
        end = self.until if stop is None else min(stop, self.until)
        if end <= after:
            return []
        return self._ledger.read(after, limit, end)

    def save(self, *_objs: Any, **_kwargs: Any) -> Any:
        """A view of the past writes nothing (the live log would take it)."""
        raise InvalidInput("a view of the ledger as it was is read-only")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger, name)


def position_at(ledger: Ledger, point: Point) -> int:
    """The position the log had reached at `point`: the position itself (capped at the
    end of the log), or, for a time, the end of the longest start of the log whose events
    were all stamped at or before it (events are stamped when decided, so the events of one
    transaction are not in time order; the first one stamped later ends the prefix)."""
    if isinstance(point, int):
        return min(point, ledger.last_position())
    reached = 0
    after = 0
    while page := ledger.read(after, SCAN_PAGE):
        for record in page:
            if record.at > point:
                return reached
            reached = record.position or reached
        after = page[-1].position or after
    return reached


@contextmanager
def read_models_at(
    live: MnemoLedger, point: str | int | Point, extra: Sequence[str] = ()
) -> Iterator[MnemoLedger]:
    """A read-only `MnemoLedger` whose read models (those reads need, plus `extra`) stop
    at `point`; built in a scratch directory, removed on exit."""
    position = position_at(live.ledger, parse_point(point))
    scratch = Path(tempfile.mkdtemp(prefix="mnemoledger-as-of-"))
    try:
        # The scratch ledger's own (empty) log is never read: the view of the live one
        # replaces it, so whatever the live ledger needs to decode its events still holds.
        # no query expansion in the past: its LLM call would be recorded, a write
        settings = live.settings.model_copy(
            update={"home": scratch, "db": None, "search_expand": "off"}
        )
        past = type(live)(settings=settings, actor=live.actor)
        past.ledger.close()
        view = cast(Ledger, LogUpTo(live.ledger, position))
        past.ledger = view
        past.runner.ledger = view
        every = list(past.runner.projections)
        wanted = {*READ_MODELS_FOR_READS, *extra}
        past.runner.projections = [p for p in every if p.name in wanted]
        try:
            yield past
        finally:
            for projection in every:
                projection.close()
            past.embedder.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
