"""A read-only, fast view of stored events for readers of the log.

Projections read hundreds of thousands of events on a rebuild; folding each into a library
domain event object costs more than the rest of the work, so readers get `EventRecord`s
decoded straight from the stored JSON. Ledger events hold only JSON-native values plus the
library's timestamp, which is the one field converted here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import Mapper

from mnemoledger.ledger.encryption import ENVELOPE_FIELD, ContentCipher
from mnemoledger.ledger.event import METADATA_FIELDS
from mnemoledger.ledger.integrity import HASH_FIELD, PREV_FIELD


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One event as readers see it."""

    position: int | None
    """Notification id in the global log (None when read from a single stream)."""
    stream_id: str
    """The aggregate (memory, core document, command) the event belongs to."""
    version: int
    """The event's version within its stream."""
    type: str
    """The event's name, e.g. `MemoryAdded`."""
    at: datetime
    """When it happened (UTC)."""
    user_id: str
    actor: str
    agent_id: str | None
    thread_id: str | None
    causation_id: str
    prompt_version: str | None
    data: dict[str, Any] = field(default_factory=dict)
    """The event's own fields."""

    def as_json(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "type": self.type,
            "stream": self.stream_id,
            "version": self.version,
            "at": self.at.isoformat(),
            "user_id": self.user_id,
            "actor": self.actor,
            "agent_id": self.agent_id,
            "thread_id": self.thread_id,
            "causation_id": self.causation_id,
            "prompt_version": self.prompt_version,
            "data": self.data,
        }


Row = tuple[int | None, UUID | str, int, str, bytes]
"""A stored event as the log gives it: (position, originator id, version, topic, state)."""


def event_type(topic: str) -> str:
    """`ledger.memory:Memory.MemoryAdded` -> `MemoryAdded`."""
    return topic.rsplit(".", 1)[-1].rsplit(":", 1)[-1]


class RecordDecoder:
    """Turns stored (topic, state) pairs into `EventRecord`s, honouring the app's mapper:
    its cipher and compressor, and its users' data keys (an erased user's content comes
    back redacted, see `ledger.encryption`)."""

    def __init__(self, mapper: Mapper[Any], content: ContentCipher | None = None) -> None:
        self._cipher = mapper.cipher
        self._compressor = mapper.compressor
        self._content = content

    def decode(
        self,
        position: int | None,
        originator_id: UUID | str,
        version: int,
        topic: str,
        state: bytes,
    ) -> EventRecord:
        return self.decode_rows(((position, originator_id, version, topic, state),))[0]

    def decode_rows(self, rows: Iterable[Row]) -> list[EventRecord]:
        """`decode` of each row, in one loop (a rebuild decodes the whole log)."""
        cipher, compressor, content = self._cipher, self._compressor, self._content
        loads, fromisoformat, types = orjson.loads, datetime.fromisoformat, _TYPES
        open_envelope = None if content is None else content.open_envelope
        records: list[EventRecord] = []
        append = records.append
        for position, originator_id, version, topic, state in rows:
            if cipher is not None:
                state = cipher.decrypt(state)
            if compressor is not None:
                state = compressor.decompress(state)
            # Ledger events hold strings, bools, bounded floats and small ints only, which
            # orjson reads exactly as `json` does.
            data: dict[str, Any] = loads(state)
            pop = data.pop
            pop(PREV_FIELD, None)
            pop(HASH_FIELD, None)
            stream, raw = stream_id(originator_id)
            envelope = pop(ENVELOPE_FIELD, None)
            if envelope is not None:
                if open_envelope is None:
                    data[ENVELOPE_FIELD] = envelope
                else:
                    open_envelope(data, envelope, raw + version.to_bytes(8, "big", signed=True))
            timestamp = pop("timestamp")
            pop("originator_topic", None)
            pop("class_version", None)
            name = types.get(topic)
            if name is None:
                name = types[topic] = event_type(topic)
            append(
                EventRecord(
                    position,
                    stream,
                    version,
                    name,
                    fromisoformat(timestamp["_data_"]),
                    pop("user_id", None) or "",
                    pop("actor", None) or "",
                    pop("agent_id", None),
                    pop("thread_id", None),
                    pop("causation_id", None) or "",
                    pop("prompt_version", None),
                    data,
                )
            )
        return records


assert METADATA_FIELDS == (
    "user_id",
    "actor",
    "agent_id",
    "thread_id",
    "causation_id",
    "prompt_version",
), "EventRecord.decode pops these fields by name, in this order"

_TYPES: dict[str, str] = {}
"""Event names by stored topic (a log holds a few dozen topics)."""


def stream_id(originator_id: UUID | str) -> tuple[str, bytes]:
    """The stream id as `UUID.hex` spells it, and the UUID's 16 bytes, from a UUID or its
    text as stored (the ledger's SQLite recorder keeps `UUID.hex`, 32 characters)."""
    if type(originator_id) is str and len(originator_id) == _UUID_HEX:
        try:
            raw = bytes.fromhex(originator_id)
        except ValueError:
            raw = b""
        if len(raw) == _UUID_BYTES:
            return raw.hex(), raw
    uuid = originator_id if isinstance(originator_id, UUID) else UUID(originator_id)
    return uuid.hex, uuid.bytes


_UUID_HEX = 32
_UUID_BYTES = 16
