"""What every read model offers the runner."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class BulkLoading(Protocol):
    """A read model with a faster path for a rebuild (the runner uses it when offered)."""

    def bulk(self) -> AbstractContextManager[None]:
        """Around every `apply` of a rebuild from an empty read model: work that is cheaper
        done once over the whole log (indexes) may be left to the end of the block. If the
        block is left by an exception, the read model stays consistent enough for
        `finish_bulk` to complete it."""
        ...

    def finish_bulk(self) -> None:
        """Complete what an interrupted bulk load left undone (nothing if none): called
        by the runner, under its lock, before every catch-up."""
        ...
