"""Re-applying one recorded event to another ledger, whatever its type.

Direct verbs (update, link, ttl, forget, restore), consent decisions, recalls and any
event a replay does not re-execute are re-applied as they were recorded: the event class
is found from the aggregate (by the event's name), built from the recorded fields under
the recorded provenance and time, and saved through the target ledger (so its own mapper
encodes it). New event types need no code here.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate
from eventsourcing.utils import get_topic
from pydantic import TypeAdapter, ValidationError

from mnemoledger.ledger import EventRecord, Ledger, Provenance
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.event import ADDED_LATER, METADATA_FIELDS
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.seal import Seal


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


class IncompleteEvent(InvalidInput):
    """A recorded event lacks data fields its type needs (e.g. an exported file edited by
    hand); the message names them."""


class MistypedEvent(InvalidInput):
    """A recorded event's data field holds the wrong kind of value (a number where a list
    of tags belongs, e.g. an exported file edited by hand); the message names the field."""


SEALED = Seal.Sealed.__name__  # type: ignore[attr-defined]  # from created_event_name
"""Seal events: never re-applied (see `Reapplier.add`)."""


def reapply(ledger: Ledger, record: EventRecord) -> bool:
    """Append `record` to its stream in `ledger`; False when that stream is not there (or
    the event's type is unknown), so the event cannot apply."""
    batch = Reapplier(ledger)
    if not batch.add(record):
        return False
    batch.flush()
    return True


class Reapplier:
    """Re-applies many recorded events and saves them together, in their order."""

    def __init__(self, ledger: Ledger, *, check_types: bool = False) -> None:
        """`check_types`: refuse (`MistypedEvent`) an event whose data field holds the wrong
        kind of value, as a file from outside may (import); a ledger's own log does not need it."""
        self.ledger = ledger
        self.check_types = check_types
        self.events: list[Any] = []
        self._aggregates: dict[str, Any] = {}

    def add(self, record: EventRecord) -> bool:
        """Build `record`'s event on its stream (saved by `flush`); False if it cannot apply.

        Seals are never applied: they certify the positions of the log they were written in,
        which a replayed or imported copy does not share (it can `seal` its own)."""
        if record.type == SEALED:
            return False
        with acting_as(provenance_of(record)):
            if record.version == 1:
                cls = created_by(record.type)
                if cls is None:
                    return False
                event_class = getattr(cls, record.type)
                _require_fields(event_class, record)
                if self.check_types:
                    _check_types(event_class, record)
                event: Any = event_class(
                    originator_topic=get_topic(cls),
                    originator_id=UUID(hex=record.stream_id),
                    originator_version=cls.INITIAL_VERSION,
                    timestamp=record.at,
                    **_with_optional(event_class, init_fields(event_class, record)),
                )
                aggregate: Any = event.mutate(None)
            else:
                aggregate = self._aggregate(record.stream_id)
                event_class = declared_event(type(aggregate), record.type)
                if aggregate is None or event_class is None:
                    return False
                _require_fields(event_class, record)
                if self.check_types:
                    _check_types(event_class, record)
                aggregate.trigger_event(
                    event_class,
                    timestamp=record.at,
                    **_with_optional(event_class, init_fields(event_class, record)),
                )
                [event] = aggregate.collect_events()
        self._aggregates[record.stream_id] = aggregate
        self.events.append(event)
        return True

    def flush(self) -> int:
        """Save the events built so far in one transaction; returns how many."""
        count = len(self.events)
        if self.events:
            self.ledger.save(*self.events)
        self.events = []
        self._aggregates.clear()
        return count

    def _aggregate(self, stream_id: str) -> Any:
        aggregate = self._aggregates.get(stream_id)
        if aggregate is None:
            try:
                aggregate = self.ledger.repository.get(UUID(hex=stream_id))
            except AggregateNotFoundError:
                return None
        return aggregate


def declared_event(cls: type[Any], name: str) -> type[Any] | None:
    """The event class `name` as the class that declared it defines it (subclasses of an
    aggregate get copies of their bases' event classes; the stored topic, and the
    library's map of decorated methods, name the declaring class's)."""
    for klass in reversed(cls.__mro__):
        event_class = klass.__dict__.get(name)
        if isinstance(event_class, type):
            return event_class
    return None


def init_fields(event_class: type[Any], record: EventRecord) -> dict[str, Any]:
    """The recorded fields the event class takes. A field that is also provenance
    metadata (a created event's `user_id`) is stored once, as the metadata."""
    names = _init_names(event_class)
    fields = {k: v for k, v in record.data.items() if k in names}
    metadata = provenance_of(record)
    for name in names & set(METADATA_FIELDS):
        fields.setdefault(name, getattr(metadata, name))
    return fields


_INIT_NAMES: dict[type[Any], frozenset[str]] = {}
_REQUIRED_NAMES: dict[type[Any], frozenset[str]] = {}
_GIVEN_NAMES = frozenset({"originator_id", "originator_version", "originator_topic", "timestamp"})
"""Fields the re-applier sets itself (the stream, its version, the recorded time)."""


def _require_fields(event_class: type[Any], record: EventRecord) -> None:
    """`IncompleteEvent` naming the fields without a default that `record` does not hold
    (an optional field, `_optional_names`, may be absent)."""
    required = _REQUIRED_NAMES.get(event_class)
    if required is None:
        required = (
            frozenset(
                f.name
                for f in dataclasses.fields(event_class)
                if f.init
                and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING
            )
            - _GIVEN_NAMES
            - _optional_names(event_class)
        )
        _REQUIRED_NAMES[event_class] = required
    missing = sorted(required - set(init_fields(event_class, record)))
    if missing:
        names = ", ".join(repr(name) for name in missing)
        plural = "s" if len(missing) > 1 else ""
        raise IncompleteEvent(f"a {record.type} event needs the data field{plural} {names}")


_FIELD_TYPES: dict[type[Any], dict[str, TypeAdapter[Any]]] = {}


def _field_types(event_class: type[Any]) -> dict[str, TypeAdapter[Any]]:
    """A strict validator per data field of `event_class` (none if its annotations do not
    resolve). Strict: a value of the right JSON kind passes unchanged (an integer where a
    float belongs too), while a string does not stand in for a number or a list."""
    adapters = _FIELD_TYPES.get(event_class)
    if adapters is None:
        try:
            hints = typing.get_type_hints(event_class)
        except (NameError, TypeError):
            hints = {}
        adapters = {
            name: TypeAdapter(hints[name], config={"strict": True})
            for name in _init_names(event_class) - _GIVEN_NAMES
            if name in hints
        }
        _FIELD_TYPES[event_class] = adapters
    return adapters


def _check_types(event_class: type[Any], record: EventRecord) -> None:
    """`MistypedEvent` naming the first data field of `record` whose value is not of the
    kind its event type declares (e.g. `tags` not a list of strings)."""
    adapters = _field_types(event_class)
    for name, value in init_fields(event_class, record).items():
        adapter = adapters.get(name)
        if adapter is None:
            continue
        try:
            adapter.validate_python(value)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            inside = "".join(f"[{part!r}]" for part in first["loc"])
            wanted = first["msg"].removeprefix("Input ")
            raise MistypedEvent(
                f"a {record.type} event's data field {name!r}{inside} {wanted}, "
                f"not {_short(first['input'])}"
            ) from None


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _optional_names(event_class: type[Any]) -> frozenset[str]:
    """The fields of `event_class` added after events of its type were first recorded
    (`ADDED_LATER`): events recorded before lack them, and are folded with None."""
    return ADDED_LATER & _init_names(event_class)


def _with_optional(event_class: type[Any], fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` with None for each optional field they lack (`_optional_names`)."""
    return {**dict.fromkeys(_optional_names(event_class) - fields.keys()), **fields}


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
