"""Adds processed after their request is durable: `add(..., wait=False)`.

    result = memory.add(["I moved to Lisbon in May"], user="maya", wait=False)
    result.pending                       # True: the request is in the log, nothing decided
    memory.command(result.command_id)    # its status; `completed` once processed
    memory.search("Lisbon", user="maya") # waits for this process's adds first: finds it

The request (`AddRequested`, the add's raw input) is saved before the call returns; the
stages run afterwards from that saved input, exactly as a waiting add runs them. Who runs
them:

- the process that recorded it, in one background thread (`AddProcessor`) that works on
  read models of its own (a facade serves one thread at a time) and shares the embedder and
  the LLM provider; closing the ledger waits for it to finish what it was given;
- `mnemoledger worker` and `serve`, which process every pending add they find (the
  `pending_adds` read model, rebuilt from the log): at start, then every second for adds
  pending longer than `PENDING_ADD_GRACE_SECONDS`. An add whose process died after the
  request was saved is therefore processed by the next worker or server; nothing is lost.

Two runs never both decide an add: each checks, under the user's writer lock, that the
add's stream has not ended (`command_run.still_requested`); the later one returns the
recorded outcome.

The read rule: every read of a ledger that brings its read models up to date first waits
for the adds this process is still processing on the same log (any user's), up to
`PENDING_READ_WAIT_SECONDS`, so a read sees every add this process acknowledged. Reads in
other processes do not wait: they see a pending add once it is processed.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from mnemoledger.commands.write.add import AddOutcome, AddPipeline, outcome_of, request_of
from mnemoledger.ledger import Ledger, Provenance, Settings
from mnemoledger.ledger.command import REQUESTED
from mnemoledger.ledger.errors import LedgerError, MemoryNotFound
from mnemoledger.ledger.store import writer_locks

if TYPE_CHECKING:
    from mnemoledger.commands.parts import Parts

logger = logging.getLogger(__name__)

PENDING_READ_WAIT_SECONDS: Final = 300.0
"""How long a read waits for this process's unfinished adds before it gives up
(`AddsStillProcessing`): as long as a writer waits for a user's writer lock."""
PENDING_ADD_GRACE_SECONDS: Final = 5.0
"""How long a pending add is left to the process that recorded it before a worker's or a
server's periodic look takes it up (their look at start takes every pending add)."""
ADD_REQUESTED: Final = "AddRequested"


class AddsStillProcessing(LedgerError):
    """A read waited too long for adds this process is still processing."""


class CommandNotFound(MemoryNotFound):
    """No command has this id."""

    def __str__(self) -> str:
        return f"no command with id {self.args[0]!r}"


class NotAnAdd(LedgerError):
    """The command is not an add."""


class InFlight:
    """The adds this process is processing in the background, on one log."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: dict[str, Future[Any]] = {}

    def track(self, command_id: str, future: Future[Any]) -> None:
        """Count `future` among the unfinished adds until it is done."""
        with self._lock:
            self._futures[command_id] = future

        def forget(_done: Future[Any]) -> None:
            with self._lock:
                if self._futures.get(command_id) is future:
                    del self._futures[command_id]

        future.add_done_callback(forget)

    def ids(self) -> set[str]:
        """The adds still being processed."""
        with self._lock:
            return set(self._futures)

    def wait(self, timeout: float = PENDING_READ_WAIT_SECONDS) -> None:
        """Return once every add tracked now is done (failed ones included: their command
        records why); `AddsStillProcessing` after `timeout` seconds."""
        if getattr(_THREAD, "processing", False):
            return  # the background thread itself: its own adds are not ahead of it
        with self._lock:
            futures = list(self._futures.values())
        if not futures:
            return
        _, not_done = wait_for(futures, timeout)
        if not_done:
            raise AddsStillProcessing(
                f"{len(not_done)} add(s) of this process still processing after {timeout:g} s;"
                " try again later"
            )


_THREAD = threading.local()
_IN_FLIGHT: dict[str, InFlight] = {}
_IN_FLIGHT_GUARD = threading.Lock()


def in_flight(settings: Settings) -> InFlight:
    """This process's unfinished background adds on the log `settings` name (shared by
    every ledger of the process on that log)."""
    namespace = writer_locks(settings).namespace
    with _IN_FLIGHT_GUARD:
        return _IN_FLIGHT.setdefault(namespace, InFlight())


os.register_at_fork(after_in_child=_IN_FLIGHT.clear)  # a forked child runs none of them


def recorded_add(ledger: Ledger, command_id: str) -> tuple[Provenance, bool]:
    """Who asked for the add (its request's provenance) and whether it is still pending;
    `CommandNotFound`, `NotAnAdd` otherwise."""
    try:
        first = ledger.stream(command_id)[0]
    except MemoryNotFound:
        raise CommandNotFound(command_id) from None
    if first.type != ADD_REQUESTED:
        raise NotAnAdd(f"command {command_id} is a {first.type}, not an add")
    provenance = Provenance(
        user_id=first.user_id,
        actor=first.actor,
        agent_id=first.agent_id,
        thread_id=first.thread_id,
        causation_id=first.causation_id,
        prompt_version=first.prompt_version,
    )
    return provenance, ledger.command(command_id).status == REQUESTED


def process_recorded(ledger: Ledger, pipeline: AddPipeline, command_id: str) -> AddOutcome:
    """Run the stages of a recorded add from its saved input (an add already decided
    returns its recorded outcome)."""
    provenance, pending = recorded_add(ledger, command_id)
    if not pending:
        return outcome_of(ledger, command_id)
    command = ledger.command(command_id)
    return pipeline.process(command, request_of(command.input), provenance)


def pipeline_on(owner: AddPipeline, parts: Parts) -> AddPipeline:
    """`owner`'s add pipeline (its provider, judge, settings) over `parts`' log and read
    models."""
    return replace(
        owner,
        ledger=parts.ledger,
        layers=parts.layers,
        vectors=parts.vectors,
        embedder=parts.embedder,
        refresh=parts.refresh_for_add,
        consent=parts.consent_model,
    )


@dataclass(frozen=True)
class DueAdd:
    """A pending add found in the log."""

    command_id: str
    user_id: str


def due_adds(
    parts: Parts, *, user: str | None, older_than_seconds: float, now: datetime | None
) -> list[DueAdd]:
    """Pending adds recorded at least `older_than_seconds` ago, oldest first, but those
    this process is already processing."""
    parts.runner.catch_up(names=(parts.pending_adds_model.name,))
    moment = now or parts.clock()
    recorded_before = moment - timedelta(seconds=older_than_seconds)
    busy = in_flight(parts.settings).ids()
    return [
        DueAdd(p.command_id, p.user_id)
        for p in parts.pending_adds_model.pending(user)
        if p.requested_at <= recorded_before and p.command_id not in busy
    ]


class AddProcessor:
    """Processes the adds this process recorded without waiting, one at a time, in a
    thread of its own, on read models of its own (opened there on first use)."""

    def __init__(
        self,
        settings: Settings,
        open_parts: Callable[[], Parts],
        pipeline: Callable[[Parts], AddPipeline],
    ) -> None:
        self.settings = settings
        self._open_parts = open_parts
        self._pipeline = pipeline
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._parts: Parts | None = None

    def submit(self, command_id: str) -> Future[AddOutcome]:
        """Process the recorded add `command_id` in the background."""
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="add-later")
            future = self._executor.submit(self._process, command_id)
        in_flight(self.settings).track(command_id, future)
        return future

    def _process(self, command_id: str) -> AddOutcome:
        _THREAD.processing = True
        try:
            if self._parts is None:
                self._parts = self._open_parts()
            parts = self._parts
            return process_recorded(parts.ledger, self._pipeline(parts), command_id)
        except Exception as error:  # recorded on the command; `command(id)` tells
            logger.warning("add %s failed: %s", command_id, error)
            raise

    def close(self) -> None:
        """Finish the adds given so far, then release the read models."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        if self._parts is not None:
            self._parts.close()
            self._parts = None
