"""`TimeTravelMixin`: reads as of a point of the log (`--as-of TIME|POSITION`).

    with memory.as_of("2026-05-01T12:00") as past:
        past.list(user="maya")
        past.core(user="maya").markdown
    with memory.as_of(120, search=True) as past:
        past.search("where does she live", user="maya")

The read models are rebuilt up to that point in a scratch directory (`commands.timetravel`);
the live ones never change.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, cast

from mnemoledger.commands.audit.timepoints import parse_point
from mnemoledger.ledger import Ledger

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger


class TimeTravelMixin:
    """Expects on `self`: a `MnemoLedger` (its settings, actor and ledger)."""

    ledger: Ledger

    @contextmanager
    def as_of(self, point: str | int | datetime, *, search: bool = False) -> Iterator[MnemoLedger]:
        """A read-only view whose list, get, core (and, with `search`, search) answer as
        the ledger stood at `point`: a log position, or a time."""
        from mnemoledger.commands.audit.timetravel import read_models_at

        live = cast("MnemoLedger", self)
        with read_models_at(live, parse_point(point), ("vectors",) if search else ()) as past:
            yield past

    def position_at(self, point: str | int | datetime) -> int:
        """The log position reached at `point` (a position, or a time)."""
        from mnemoledger.commands.audit.timetravel import position_at

        return position_at(self.ledger, parse_point(point))
