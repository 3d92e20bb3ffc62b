"""The base of every ledger event: the library's event plus the provenance metadata."""

from __future__ import annotations

from dataclasses import field

from eventsourcing.domain import Aggregate

from mnemoledger.ledger.provenance import current


def _user_id() -> str:
    return current().user_id


def _actor() -> str:
    return current().actor


def _agent_id() -> str | None:
    return current().agent_id


def _thread_id() -> str | None:
    return current().thread_id


def _causation_id() -> str:
    return current().causation_id


def _prompt_version() -> str | None:
    return current().prompt_version


class LedgerEvent(Aggregate.Event):
    """An immutable fact in the log; `timestamp` (UTC) comes from the library."""

    user_id: str = field(default_factory=_user_id, init=False)
    actor: str = field(default_factory=_actor, init=False)
    agent_id: str | None = field(default_factory=_agent_id, init=False)
    thread_id: str | None = field(default_factory=_thread_id, init=False)
    causation_id: str = field(default_factory=_causation_id, init=False)
    prompt_version: str | None = field(default_factory=_prompt_version, init=False)


METADATA_FIELDS = (
    "user_id",
    "actor",
    "agent_id",
    "thread_id",
    "causation_id",
    "prompt_version",
)

ADDED_LATER = frozenset({"said_at"})
"""Event fields added after events of their type were first recorded (a memory's `said_at`,
on `MemoryAdded` and `MemoryReinforced`): events recorded before lack them, and are read,
folded and re-applied with None."""
