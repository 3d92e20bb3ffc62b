"""Who caused a change: the metadata every ledger event carries.

As in the eventsourcing library's content-management example, the metadata travels in a
context variable that the event classes read when they are constructed, so aggregate
methods stay free of bookkeeping arguments.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from mnemoledger.ledger.policy import SYSTEM_ACTOR


@dataclass(frozen=True)
class Provenance:
    """The metadata of one command: who, on whose behalf, where, and why."""

    user_id: str = ""
    """The user whose memory changes."""
    actor: str = SYSTEM_ACTOR
    """The person or process that issued the command."""
    agent_id: str | None = None
    """The agent that asked, if any."""
    thread_id: str | None = None
    """The conversation thread the change belongs to, if any."""
    causation_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    """The command run that caused the event (one id per facade call)."""
    prompt_version: str | None = None
    """The prompt that decided the change, where an LLM decided."""


_current: ContextVar[Provenance | None] = ContextVar("provenance", default=None)


def current() -> Provenance:
    """The provenance of the command being executed (a system one outside any command)."""
    return _current.get() or Provenance()


@contextmanager
def acting_as(provenance: Provenance) -> Iterator[Provenance]:
    """Make `provenance` current for the events created inside."""
    token = _current.set(provenance)
    try:
        yield provenance
    finally:
        _current.reset(token)
