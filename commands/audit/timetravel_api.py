"""`TimeTravel`: reads as of a point of the log (`--as-of TIME|POSITION`).

    with memory.as_of("2026-05-01T12:00") as past:
        past.list(user="maya")
        past.core(user="maya").markdown
    with memory.as_of(120, search=True) as past:
        past.search("where does she live", user="maya")

The read models are rebuilt up to that point in a scratch directory (`commands.timetravel`);
the live ones never change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Generic, TypeVar

from mnemoledger.commands.audit.timepoints import Point, parse_point
from mnemoledger.commands.parts import Parts

Live = TypeVar("Live")
"""The facade: what `as_of` views in the past, and what the view is."""

ViewAt = Callable[[Live, Point, Sequence[str]], AbstractContextManager[Live]]
"""Opens a read-only `Live` whose read models (plus the extra ones named) stop at a point:
`commands.audit.timetravel.read_models_at`."""


class TimeTravel(Generic[Live]):
    """Read the ledger as it stood at a point: a log position, or a time."""

    def __init__(self, parts: Parts, live: Live, view_at: ViewAt[Live]) -> None:
        self.parts = parts
        self.live = live
        self.view_at = view_at

    @contextmanager
    def as_of(self, point: str | int | datetime, *, search: bool = False) -> Iterator[Live]:
        """`MnemoLedger.as_of`: a read-only view as of `point` (documented there)."""
        with self.view_at(self.live, parse_point(point), ("vectors",) if search else ()) as past:
            yield past

    def position_at(self, point: str | int | datetime) -> int:
        """`MnemoLedger.position_at`: the log position at `point` (documented there)."""
        from mnemoledger.commands.audit.timetravel import position_at

        return position_at(self.parts.ledger, parse_point(point))
