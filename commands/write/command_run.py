"""Running a command's decision against fresh state until it saves.

Every write pipeline saves its raw input first, then decides and saves everything in one
transaction, which always appends to the user's stream. Each attempt first reads that
stream's version and only then brings the read models up to date, so whatever another
writer commits after the read models were read also moved the stream on, and the save
conflicts; the decision then runs again on fresh state. Any other failure is recorded on
the command's stream and raised.

Writers of one user take turns: each attempt holds the user's writer lock
(`ledger.store.WriterLocks`, shared by every process on the store) from reading the
stream to the save. Without it, the version check alone let short decisions (a
restatement) win every overlap against long ones (a new memory: reconstruction, links,
core update), and 4 writers x 100 adds on one user gave up 4-10 adds after every retry.
The version check and the re-run stay for writers that do not take the lock.
"""

from __future__ import annotations

import random
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeVar

from eventsourcing.persistence import IntegrityError

from mnemoledger.ledger import Ledger, Provenance
from mnemoledger.ledger.command import REQUESTED, Command
from mnemoledger.ledger.errors import LedgerError
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.store import WriterLocks, writer_locks
from mnemoledger.ledger.user import UserStream

T = TypeVar("T")

DECISION_ATTEMPTS = 10
"""Runs of one decision before concurrent writers are given up on."""
RETRY_PAUSE_SECONDS = 0.02
"""Base of the jittered pause between runs, so two writers stop colliding in step."""
RETRY_PAUSE_MAX_SECONDS = 0.5
"""Cap of the pause, which doubles with every conflict (4 writers on one user gave up 1-2.5%
of their adds after 10 runs with a pause growing linearly)."""


def decide_until_saved(
    ledger: Ledger,
    command: Command,
    provenance: Provenance,
    decide: Callable[[Command, UserStream], T],
    refresh: Callable[[], object],
) -> T:
    """`decide(command, user_stream)` until its save (which must include the user stream)
    succeeds; failures are recorded on the command."""
    locks = _locks_of(ledger)
    for attempt in range(DECISION_ATTEMPTS):
        try:
            refresh()  # most of the catching up, before other writers have to wait
            with locks.hold(provenance.user_id):
                user = ledger.user_stream(provenance, provenance.user_id)
                refresh()
                return decide(command, user)
        except IntegrityError as conflict:
            if attempt == DECISION_ATTEMPTS - 1:
                record_failure(ledger, command, conflict, provenance)
                raise
            pause = min(RETRY_PAUSE_MAX_SECONDS, RETRY_PAUSE_SECONDS * 2**attempt)
            time.sleep(random.uniform(0, pause))
            command = ledger.command(command.id)
        except AlreadyDecided:
            raise  # the other run recorded how it ended
        except Exception as error:
            record_failure(ledger, command, error, provenance)
            raise
    raise AssertionError("unreachable")


class AlreadyDecided(LedgerError):
    """Another run decided this command first (a worker took up a recorded add while the
    process that recorded it was still on its way to it): nothing more is recorded."""


def still_requested(ledger: Ledger, command: Command) -> None:
    """Raise `AlreadyDecided` when the command's stream already ended (completed or
    failed); called under the user's writer lock, so two runs never both decide it."""
    if ledger.command(command.id).status != REQUESTED:
        raise AlreadyDecided(command.id.hex)


def holds_a_writer_lock(ledger: Ledger) -> bool:
    """Whether this thread holds a user's writer lock of `ledger`'s store."""
    return _locks_of(ledger).holding()


_LOCKS: weakref.WeakKeyDictionary[Ledger, WriterLocks] = weakref.WeakKeyDictionary()


def user_write_lock(ledger: Ledger, user_id: str) -> AbstractContextManager[None]:
    """The user's writer lock, shared by every process on the log (reentrant in a thread),
    for work that must read and decide with no other writer of the user in between."""
    return _locks_of(ledger).hold(user_id)


def _locks_of(ledger: Ledger) -> WriterLocks:
    locks = _LOCKS.get(ledger)
    if locks is None:
        locks = _LOCKS[ledger] = writer_locks(ledger.settings)
    return locks


def record_failure(
    ledger: Ledger, command: Command, error: BaseException, provenance: Provenance
) -> None:
    """The request's stream says why it failed (best effort: the error is raised anyway)."""
    try:
        fresh = ledger.command(command.id)
        with acting_as(provenance):
            fresh.fail(str(error)[:500] or type(error).__name__, type(error).__name__)
        ledger.save(fresh)
    except Exception:
        return
