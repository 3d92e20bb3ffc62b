"""Re-applying one recorded event to another ledger, whatever its type.

Direct verbs (update, link, ttl, forget, restore), consent decisions, recalls and any
event a replay does not re-execute are re-applied as they were recorded: the event class
is found from the aggregate (by the event's name), built from the recorded fields under
the recorded provenance and time, and saved through the target ledger (so its own mapper
encodes it). New event types need no code here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate
from eventsourcing.utils import get_topic

from ledger import EventRecord, Ledger, Provenance
from ledger.provenance import acting_as


def provenance_of(record: EventRecord) -> Provenance:
    """The provenance an event was recorded under."""
    return Provenance(
        user_id=record.user_id,
        actor=record.actor,
        agent_id=record.agent_id,
        thread_id=record.thread_id,
        causation_id=record.causation_id,
        prompt_version=record.prompt_version,
    )


def reapply(ledger: Ledger, record: EventRecord) -> bool:
    """Append `record` to its stream in `ledger`; False when that stream is not there (or
    the event's type is unknown), so the event cannot apply."""
    with acting_as(provenance_of(record)):
        if record.version == 1:
            cls = created_by(record.type)
            if cls is None:
                return False
            event_class = getattr(cls, record.type)
            event: Any = event_class(
                originator_topic=get_topic(cls),
                originator_id=UUID(hex=record.stream_id),
                originator_version=cls.INITIAL_VERSION,
                timestamp=record.at,
                **init_fields(event_class, record.data),
            )
            aggregate: Any = event.mutate(None)
            aggregate.pending_events.append(event)
        else:
            try:
                aggregate = ledger.repository.get(UUID(hex=record.stream_id))
            except AggregateNotFoundError:
                return False
            event_class = getattr(type(aggregate), record.type, None)
            if event_class is None:
                return False
            aggregate.trigger_event(
                event_class, timestamp=record.at, **init_fields(event_class, record.data)
            )
    ledger.save(aggregate)
    return True


def init_fields(event_class: type[Any], data: dict[str, Any]) -> dict[str, Any]:
    """The recorded fields the event class takes."""
    names = _init_names(event_class)
    return {k: v for k, v in data.items() if k in names}


_INIT_NAMES: dict[type[Any], frozenset[str]] = {}


def _init_names(event_class: type[Any]) -> frozenset[str]:
    names = _INIT_NAMES.get(event_class)
    if names is None:
        names = frozenset(f.name for f in dataclasses.fields(event_class) if f.init)
        _INIT_NAMES[event_class] = names
    return names


def created_by(event_type: str) -> type[Any] | None:
    """The aggregate class whose "created" event is named `event_type`."""
    for cls in _aggregate_classes():
        event_class = cls.__dict__.get(event_type)
        if isinstance(event_class, type) and issubclass(event_class, Aggregate.Created):
            return cls
    return None


def _aggregate_classes() -> Iterator[type[Any]]:
    seen: set[type[Any]] = set()
    pending: list[type[Any]] = [Aggregate]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                pending.append(sub)
                yield sub
