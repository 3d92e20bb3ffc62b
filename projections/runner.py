"""Follows the ledger's notification log in pages and feeds the read models.

The library's ProjectionRunner needs `recorder.subscribe()`, which SQLite lacks, so this
runner pulls (`select_notifications`). One read of the log feeds every projection; a file
lock keeps two processes from catching up the same read models at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock

from ledger import Ledger
from projections.projection import Projection

PAGE_SIZE = 1000
"""Events per page: the unit of one read-model transaction."""

Progress = Callable[[int, int], None]
"""Called with (events processed so far, events to process in all)."""


class Runner:
    """Keeps a set of projections up to date with the log."""

    def __init__(
        self,
        ledger: Ledger,
        projections: Sequence[Projection],
        lock_path: Path,
        page_size: int = PAGE_SIZE,
    ) -> None:
        self.ledger = ledger
        self.projections = list(projections)
        self.page_size = page_size
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(lock_path))

    def catch_up(self, progress: Progress | None = None) -> int:
        """Apply every event the projections have not seen; returns how many were read."""
        with self._lock:
            return self._catch_up(self.projections, progress)

    def rebuild(self, names: Sequence[str] = (), progress: Progress | None = None) -> int:
        """Drop the named projections (all if none named) and replay them from position 0."""
        chosen = [p for p in self.projections if not names or p.name in names]
        with self._lock:
            for projection in chosen:
                projection.reset()
            return self._catch_up(chosen, progress)

    def _catch_up(self, projections: Sequence[Projection], progress: Progress | None) -> int:
        if not projections:
            return 0
        positions = {p.name: p.position() for p in projections}
        start = min(positions.values())
        end = self.ledger.last_position()
        total = max(end - start, 0)
        done = 0
        after = start
        while after < end:
            page = self.ledger.read(after, self.page_size, stop=end)
            if not page:
                break
            for projection in projections:
                seen = positions[projection.name]
                unseen = (
                    page
                    if page[0].position and page[0].position > seen
                    else [r for r in page if r.position is not None and r.position > seen]
                )
                if unseen:
                    projection.apply(unseen)
                    positions[projection.name] = unseen[-1].position or seen
            last = page[-1].position
            assert last is not None
            done += last - after
            after = last
            if progress:
                progress(min(done, total), total)
        return done

    def close(self) -> None:
        """Close every projection."""
        for projection in self.projections:
            projection.close()
