"""What every read model offers the runner."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mnemoledger.ledger import EventRecord


class Projection(Protocol):
    """A read model derived only from the log, rebuildable from position 0."""

    name: str
    """Short name used by `mnemoledger rebuild NAME`."""

    def position(self) -> int:
        """The position of the last event this read model has processed (0 = none)."""
        ...

    def apply(self, records: Sequence[EventRecord]) -> None:
        """Process `records` (positions ascending, all above `position()`) and record the
        position of the last one, durably and in the same transaction as the read-model
        write (or atomically with it). The runner never passes an erased user's events from
        before their erasure: a read model holds nothing of an erased user."""
        ...

    def reset(self) -> None:
        """Drop the read model: afterwards `position()` is 0."""
        ...

    def close(self) -> None:
        """Release files and connections."""
        ...
