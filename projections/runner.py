"""Follows the ledger's notification log in pages and feeds the read models.

The library's ProjectionRunner needs `recorder.subscribe()`, which SQLite lacks, so this
runner pulls (`select_notifications`). One read of the log feeds every projection; a file
lock keeps two processes from catching up the same read models at once.

A rebuild replays the log into emptied read models through their bulk path where they
offer one (`projection.BulkLoading`: the layers model builds its keyword index once at the
end, the vectors model writes its rows and indices once at the end), with Python's cyclic
garbage collector paused. Each read model (read models sharing an embedder together) is
reset, fed and ended in a thread of its own while this thread reads the next pages: their
SQLite work, which releases the GIL, overlaps.

`follow()` keeps catching up until told to stop: woken by the library's LISTEN/NOTIFY
subscription on PostgreSQL, by polling on SQLite.

Erasures reach every process through catching up. Each catch-up first drops the keys of
users erased since the last one (`KeyStore.sync`) and looks for new `UserErased` events in
the log; a new one makes it purge the home's read models before anything else: rebuild
them all without the erased users, drop cached vectors nothing uses any more and compact
every SQLite file of the home (`projections.erasures`). An erased user's events before
their erasure are never fed to a read model, so erased memories leave every reader.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from filelock import FileLock

from mnemoledger.ledger import EventRecord, Ledger
from mnemoledger.ledger.application import collector_paused
from mnemoledger.ledger.chain_secret import CHAIN_FILE
from mnemoledger.ledger.data_keys import key_file
from mnemoledger.ledger.erasure import Erasure
from mnemoledger.ledger.store import is_postgres, persistence_env
from mnemoledger.ledger.topics import topics_of
from mnemoledger.projections.compact import compact_directory
from mnemoledger.projections.embeddings.cache import CachedEmbedder
from mnemoledger.projections.erasures import ErasureLog
from mnemoledger.projections.projection import BulkLoading, Projection

T = TypeVar("T")

PAGE_SIZE = 1000
"""Events per page: the unit of one read-model transaction."""

REBUILD_PAGE_SIZE = 10_000
"""Pages of a rebuild are larger: fewer commits of randomly keyed index pages (measured:
FTS5 inserts run ~1.8x faster in transactions of 10k rows than of 1k)."""

FOLLOW_POLL_SECONDS = 0.2
"""How often a follower looks for new events when nothing wakes it (SQLite has no
LISTEN/NOTIFY; on PostgreSQL this is only a safety net)."""

Progress = Callable[[int, int], None]
"""Called with (events processed so far, events to process in all)."""

ERASURE_TOPICS = topics_of(Erasure.UserErased)  # type: ignore[attr-defined]
"""The stored topic of `UserErased`, looked for in the log on every catch-up."""

ERASURES_FILE = "erasures.sqlite3"


_BULK_LOADING_TYPES: dict[type, bool] = {}


def _offers_bulk_loading(projection: Projection) -> TypeGuard[BulkLoading]:
    """`isinstance(projection, BulkLoading)`, decided once per class: a runtime protocol
    check inspects every member each time (40-70 µs), and every catch-up asks it."""
    kind = type(projection)
    offers = _BULK_LOADING_TYPES.get(kind)
    if offers is None:
        offers = _BULK_LOADING_TYPES[kind] = isinstance(projection, BulkLoading)
    return offers


@dataclass(frozen=True)
class Purge:
    """What purging a home's read models of newly erased users did."""

    projections: list[str]
    """Read models rebuilt without the erased users."""
    events: int
    """Events replayed by the rebuild."""
    embeddings_dropped: int
    """Cached vectors no rebuilt read model uses (the erased users' among them)."""
    files_compacted: list[Path] = field(default_factory=list)
    """SQLite files vacuumed so no deleted bytes remain."""


def _end_each(loads: Sequence[ExitStack]) -> None:
    """End the bulk loads of a rebuild that went well, one after another: one that fails
    does not keep the others from ending (the first error is raised once all have ended).
    Ending them side by side, one thread each, measured no faster on two busy cores."""
    error: BaseException | None = None
    for load in loads:
        try:
            load.close()
        except BaseException as failure:
            error = error or failure
    if error is not None:
        raise error


class _InThisThread(Executor):
    """An executor that runs each task at once, in the caller's thread."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:
            future.set_exception(error)
        return future


STOP_CHECK_SECONDS = 0.1
"""How quickly a waiting follower notices `stop` (set by a signal handler)."""


def _wait(wake: threading.Event, stop: threading.Event, seconds: float) -> None:
    """Until `wake` or `stop` is set, or `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while not stop.is_set():
        left = deadline - time.monotonic()
        if left <= 0 or wake.wait(min(left, STOP_CHECK_SECONDS)):
            return


REBUILD_PAGES_AHEAD = 2
"""Pages a rebuild reads ahead of the slowest read model (memory held: ~2 pages)."""


def _kept(record: EventRecord, erased: dict[str, int]) -> bool:
    """False for an erased user's events from before their (latest) erasure."""
    erased_at = erased.get(record.user_id)
    return erased_at is None or record.position is None or record.position >= erased_at


def _rebuild_groups(projections: Sequence[Projection]) -> list[list[Projection]]:
    """The projections in groups that a rebuild replays side by side, one thread each:
    read models sharing an embedder stay in one group (an embedder is not called from two
    threads at once), in their given order."""
    groups: list[list[Projection]] = []
    by_embedder: dict[int, list[Projection]] = {}
    for projection in projections:
        embedder = getattr(projection, "embedder", None)
        if embedder is None:
            groups.append([projection])
            continue
        group = by_embedder.get(id(embedder))
        if group is None:
            group = by_embedder[id(embedder)] = []
            groups.append(group)
        group.append(projection)
    return groups


class _RebuildWorker:
    """One group of read models being rebuilt, in a thread of its own: tasks run in the
    order submitted; after one fails (or the rebuild is aborted) the rest do nothing, and
    the group's bulk loads are left as an exception leaves them (`finish_bulk` completes
    them at the next catch-up)."""

    def __init__(self, projections: Sequence[Projection]) -> None:
        self.projections = list(projections)
        names = "+".join(p.name for p in self.projections)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"rebuild-{names}")
        self._loads: list[ExitStack] = []
        self.error: BaseException | None = None

    def submit(self, task: Callable[..., None], *args: Any) -> Future[None]:
        return self._executor.submit(self._run, task, *args)

    def _run(self, task: Callable[..., None], *args: Any) -> None:
        if self.error is not None:
            return
        try:
            task(*args)
        except BaseException as error:
            self.error = error
            self._leave_loads(error)

    def start(self) -> None:
        for projection in self.projections:
            projection.reset()
        for projection in self.projections:
            if _offers_bulk_loading(projection):
                load = ExitStack()
                self._loads.append(load)
                load.enter_context(projection.bulk())
        for projection in self.projections:
            if _offers_bulk_loading(projection):
                projection.finish_bulk()  # a rebuild interrupted earlier (no-op if none)

    def apply(self, page: list[EventRecord]) -> None:
        for projection in self.projections:
            projection.apply(page)

    def end(self) -> None:
        """End the bulk loads, one after another: one that fails does not keep the others
        from ending (the first error is kept once all have ended)."""
        loads, self._loads = self._loads, []
        _end_each(loads)

    def abort(self, error: BaseException) -> None:
        """Stop after the task under way; the bulk loads are left as `error` leaves them."""
        self._executor.submit(self._run, self._fail, error)

    def _fail(self, error: BaseException) -> None:
        raise error

    def _leave_loads(self, error: BaseException) -> None:
        loads, self._loads = self._loads, []
        for load in reversed(loads):
            with suppress(BaseException):  # the first error is the one raised
                load.__exit__(type(error), error, error.__traceback__)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True)


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
        self._erasures = ErasureLog(lock_path.parent / ERASURES_FILE)
        self._home = lock_path.parent.parent
        """The data directory whose files a purge compacts (the read models' directory is
        in it, and so is the embedding cache)."""
        self._known: dict[str, int] = {}
        """Each projection's position as this runner's last catch-up or rebuild left it
        (forgotten by a rebuild or purge): when every projection a catch-up is asked for
        is where the log ends, it has nothing to do and costs one position read."""

    def catch_up(
        self,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
        names: Sequence[str] = (),
    ) -> int:
        """Apply every event the named projections (all if none named) have not seen;
        returns how many were read. A set `stop` ends the work after the page being
        applied."""
        chosen = [p for p in self.projections if not names or p.name in names]
        with self._lock:
            if self._nothing_new(chosen):
                return 0
            end = self._learn_erasures()
            if self._erasures.pending():
                self._known.clear()
                return self._purge(progress).events
            return self._catch_up(chosen, self.page_size, progress, stop, end)

    def _nothing_new(self, chosen: Sequence[Projection]) -> bool:
        """Whether the log ends where this runner's last catch-up left every projection
        of `chosen`: then a catch-up (before every read) costs one position read. The lock
        is held, so a rebuild or purge by another process is waited for; erasures append
        `UserErased`, and the keys of users erased by an interrupted erase that has none
        yet are dropped here as on every catch-up."""
        known = [self._known.get(p.name) for p in chosen]
        if not known or None in known:
            return False
        self.ledger.keys.sync()
        last = self.ledger.last_position()
        return all(position == last for position in known)

    def purge_erasures(self, progress: Progress | None = None) -> Purge | None:
        """Purge the read models of every erasure in the log they were not purged of yet;
        None when there was none (another process of the home may have done it)."""
        with self._lock:
            self._learn_erasures()
            if not self._erasures.pending():
                return None
            self._known.clear()
            return self._purge(progress)

    def follow(
        self,
        stop: threading.Event,
        poll_seconds: float = FOLLOW_POLL_SECONDS,
        caught_up: Callable[[int], None] | None = None,
    ) -> int:
        """Catch up, then keep following the log until `stop` is set; returns the events
        processed. `caught_up(n)` is called after every catch-up that processed n > 0."""
        wake = threading.Event()
        processed = 0
        with self._notifications(wake, stop):
            while not stop.is_set():
                wake.clear()
                done = self.catch_up(stop=stop)
                processed += done
                if done and caught_up:
                    caught_up(done)
                _wait(wake, stop, poll_seconds)
        return processed

    @contextmanager
    def _notifications(self, wake: threading.Event, stop: threading.Event) -> Iterator[None]:
        """On PostgreSQL, sets `wake` whenever new events are recorded (LISTEN/NOTIFY)."""
        if not is_postgres(self.ledger.settings.db):
            yield
            return
        subscription = self.ledger.recorder.subscribe(gt=self.ledger.last_position())

        def listen() -> None:
            for _ in subscription:
                wake.set()

        listener = threading.Thread(target=listen, name="notifications", daemon=True)
        with subscription:
            listener.start()
            try:
                yield
            finally:
                subscription.stop()
                listener.join()

    def rebuild(self, names: Sequence[str] = (), progress: Progress | None = None) -> int:
        """Drop the named projections (all if none named) and replay them from position 0."""
        chosen = [p for p in self.projections if not names or p.name in names]
        with self._lock:
            for projection in chosen:
                self._known.pop(projection.name, None)
            end = self._learn_erasures()
            if self._erasures.pending():
                return self._purge(progress).events
            return self._rebuild(chosen, progress, end)

    def _rebuild(self, chosen: Sequence[Projection], progress: Progress | None, end: int) -> int:
        """Reset `chosen` and replay the log into them, each group of read models (see
        `_rebuild_groups`) in a thread of its own: its reset, its pages in log order and the
        end of its bulk load run there, while this thread reads and decodes the next pages.
        SQLite releases the GIL while it works, so one read model's writes (the layers'
        rows and keyword index, the vectors' rows) overlap another's and the reading."""
        try:
            with collector_paused():
                return self._replay_in_groups(_rebuild_groups(chosen), progress, end)
        except BaseException:
            # a bulk load that failed as it ended is not where the pages left it: the next
            # catch-up must look (and finish it) instead of trusting the positions noted
            for projection in chosen:
                self._known.pop(projection.name, None)
            raise

    def _replay_in_groups(
        self, groups: Sequence[Sequence[Projection]], progress: Progress | None, end: int
    ) -> int:
        workers = [_RebuildWorker(group) for group in groups]
        try:
            for worker in workers:
                worker.submit(worker.start)
            erased = self._erasures.by_user()
            page_size = max(self.page_size, REBUILD_PAGE_SIZE)
            read = after = applied = 0
            in_flight: deque[tuple[int, list[Future[None]]]] = deque()
            while after < end:
                page = self.ledger.read(after, page_size, end)
                if not page:
                    break
                read += len(page)
                last = page[-1].position
                assert last is not None
                if erased:
                    page = [r for r in page if _kept(r, erased)]
                if page:
                    in_flight.append((last, [w.submit(w.apply, page) for w in workers]))
                    applied = last
                after = last
                # at most REBUILD_PAGES_AHEAD pages read ahead of the slowest read model
                while len(in_flight) > REBUILD_PAGES_AHEAD:
                    self._page_done(in_flight.popleft(), progress, end)
            while in_flight:
                self._page_done(in_flight.popleft(), progress, end)
            ended = [worker.submit(worker.end) for worker in workers]
            for future in ended:
                future.exception()
        except BaseException as error:
            for worker in workers:
                worker.abort(error)
            raise
        finally:
            for worker in workers:
                worker.shutdown()
        failed = next((w.error for w in workers if w.error is not None), None)
        if failed is not None:
            raise failed
        self._remember({p.name: applied for group in groups for p in group})
        return read

    @staticmethod
    def _page_done(
        page: tuple[int, list[Future[None]]], progress: Progress | None, end: int
    ) -> None:
        last, futures = page
        for future in futures:
            future.exception()  # waits; a worker keeps its own error (see _RebuildWorker)
        if progress:
            progress(last, end)

    def _learn_erasures(self) -> int:
        """Drop the keys of users erased since the last catch-up and note the `UserErased`
        events of the whole log; returns the newest position the read models follow (a view
        of the log as of a past moment stops earlier, and still leaves erased users out)."""
        self.ledger.keys.sync()
        follow = self.ledger.last_position()
        whole_log = type(self.ledger) is Ledger  # else a view that stops early (time travel)
        end = follow if whole_log else (self.ledger.recorder.max_notification_id() or 0)
        scanned = self._erasures.scanned()
        if end <= scanned:
            return follow
        found: list[tuple[int, str]] = []
        after = scanned
        while after < end:
            page = self.ledger.recorder.select_notifications(
                after, self.page_size, stop=end, topics=ERASURE_TOPICS, inclusive_of_start=False
            )
            if not page:
                break
            for notification in page:
                erased = self.ledger.mapper.to_domain_event(notification)
                user_id = str(getattr(erased, "user_id", ""))
                self.ledger.keys.forget(user_id)
                found.append((notification.id, user_id))
            after = page[-1].id
        self._erasures.note(found, end)
        return follow

    def _purge(self, progress: Progress | None) -> Purge:
        """Rebuild every read model without the erased users, drop the cached vectors no
        read model uses and compact the home's SQLite files; then note the purge."""
        through = self._erasures.latest()
        embedders = {
            id(e): e
            for p in self.projections
            if isinstance(e := getattr(p, "embedder", None), CachedEmbedder)
        }.values()
        seen: set[bytes] = set()
        for embedder in embedders:
            embedder.seen = seen
        try:
            events = self._rebuild(self.projections, progress, self.ledger.last_position())
        finally:
            for embedder in embedders:
                embedder.seen = None
        dropped = sum(e.cache.retain_only(e.model, seen) for e in embedders)
        keys = key_file(self.ledger.settings)
        skip = [keys, keys.parent / CHAIN_FILE]  # compacts itself / holds no user content
        if dbname := persistence_env(self.ledger.settings).get("SQLITE_DBNAME"):
            skip.append(Path(dbname))  # never vacuumed: its positions are rowids
        compacted = compact_directory(self._home, skip=skip)
        self._erasures.mark_purged(through)
        return Purge([p.name for p in self.projections], events, dropped, compacted)

    def _catch_up(
        self,
        projections: Sequence[Projection],
        page_size: int,
        progress: Progress | None,
        stop: threading.Event | None = None,
        end: int | None = None,
    ) -> int:
        if not projections:
            return 0
        for projection in projections:
            if _offers_bulk_loading(projection):
                projection.finish_bulk()  # a rebuild interrupted earlier (no-op if none)
        positions = {p.name: p.position() for p in projections}
        start = min(positions.values())
        if end is None:
            end = self.ledger.last_position()
        total = max(end - start, 0)
        erased = self._erasures.by_user()

        def kept(record: EventRecord) -> bool:
            """False for an erased user's events from before their (latest) erasure."""
            erased_at = erased.get(record.user_id)
            return erased_at is None or record.position is None or record.position >= erased_at

        if total == 0:
            self._remember(positions)
            return 0
        # The next page is read while the projections apply the current one: SQLite
        # releases the GIL while it works, so reading and writing overlap on two cores.
        # One page (the catch-up before a read, after a write or two) is read right here:
        # starting a thread costs more than it could overlap.
        read = 0  # on PostgreSQL positions may have gaps (rolled-back inserts): count events
        one_page = total <= page_size
        with _InThisThread() if one_page else ThreadPoolExecutor(max_workers=1) as reader:
            pending = reader.submit(self.ledger.read, start, page_size, end)
            while True:
                page = pending.result()
                if not page:
                    break
                read += len(page)
                last = page[-1].position
                assert last is not None
                stopping = stop is not None and stop.is_set()
                if last < end and not stopping:
                    pending = reader.submit(self.ledger.read, last, page_size, end)
                shown = [r for r in page if kept(r)] if erased else page
                for projection in projections:
                    seen = positions[projection.name]
                    unseen = [r for r in shown if r.position is not None and r.position > seen]
                    if unseen:
                        projection.apply(unseen)
                        positions[projection.name] = last
                if progress:
                    progress(last - start, total)
                if last >= end or stopping:
                    break
        self._remember(positions)
        return read

    def _remember(self, positions: dict[str, int]) -> None:
        """Note where a catch-up left each projection (not for a view of the log as of a
        past moment, whose end is not the log's)."""
        if type(self.ledger) is Ledger:
            self._known.update(positions)

    def close(self) -> None:
        """Close every projection."""
        for projection in self.projections:
            projection.close()
        self._erasures.close()
