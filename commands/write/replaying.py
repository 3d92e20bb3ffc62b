"""Hooks that let a replay run a pipeline again exactly as it first ran.

A recorded replay must create the aggregates the original command created under the same
ids, and read the same clock where a pipeline turns "now" into stored data (a note's
expiry). Inside `replaying(script)` the hooks take those values from the script; outside
it each hook is one context-variable read and returns what the pipeline computed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.domain import Aggregate

A = TypeVar("A", bound=Aggregate)


@dataclass
class ReplayScript:
    """What the original run of one command decided that a re-run cannot recompute."""

    ids: deque[UUID] = field(default_factory=deque)
    """Ids of the aggregates the command created, in creation order (the command first)."""
    ttls: deque[tuple[float, str]] = field(default_factory=deque)
    """(days, expires_at) of the TTLs the command set, in order."""
    now: datetime | None = None
    """When the command ran."""


_script: ContextVar[ReplayScript | None] = ContextVar("replay_script", default=None)


@contextmanager
def replaying(script: ReplayScript) -> Iterator[ReplayScript]:
    """Make `script` answer the hooks of the pipelines run inside."""
    token = _script.set(script)
    try:
        yield script
    finally:
        _script.reset(token)


def now() -> datetime:
    """The time a pipeline decides at: the original run's time in a replay."""
    script = _script.get()
    if script is not None and script.now is not None:
        return script.now
    return datetime.now(UTC)


def recorded_ttl(days: float, expires_at: str) -> tuple[float, str]:
    """(days, expires_at) of a TTL a pipeline sets: the original ones in a replay."""
    script = _script.get()
    if script is not None and script.ttls:
        return script.ttls.popleft()
    return days, expires_at


def recorded_ids(aggregates: list[A]) -> list[A]:
    """Freshly created aggregates, under the original run's ids in a replay."""
    script = _script.get()
    if script is None:
        return aggregates
    return [_rekeyed(aggregate, script) for aggregate in aggregates]


def recorded_id(aggregate: A) -> A:
    """A freshly created aggregate, under the original run's id in a replay."""
    script = _script.get()
    return aggregate if script is None else _rekeyed(aggregate, script)


def _rekeyed(aggregate: A, script: ReplayScript) -> A:
    if not script.ids:
        return aggregate
    pending = aggregate.collect_events()
    if len(pending) != 1:  # not freshly created: leave it as it is
        aggregate.pending_events.extend(pending)
        return aggregate
    created: Any = pending[0]
    # Events are frozen; the created event has not been stored yet, so it can still be
    # given its recorded id before the aggregate is folded from it again.
    object.__setattr__(created, "originator_id", script.ids.popleft())
    rekeyed: A = created.mutate(None)
    rekeyed.pending_events.append(created)
    return rekeyed
