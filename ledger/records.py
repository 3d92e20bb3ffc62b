"""A read-only, fast view of stored events for readers of the log.

Projections read hundreds of thousands of events on a rebuild; folding each into a library
domain event object costs more than the rest of the work, so readers get `EventRecord`s
decoded straight from the stored JSON. Ledger events hold only JSON-native values plus the
library's timestamp, which is the one field converted here.
"""

from __future__ import annotations

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
        if self._cipher is not None:
            state = self._cipher.decrypt(state)
        if self._compressor is not None:
            state = self._compressor.decompress(state)
        # Ledger events hold strings, bools, bounded floats and small ints only, which
        # orjson reads exactly as `json` does.
        data: dict[str, Any] = orjson.loads(state)
        pop = data.pop
        pop(PREV_FIELD, None)
        pop(HASH_FIELD, None)
        stream = stream_hex(originator_id)
        envelope = pop(ENVELOPE_FIELD, None)
        if envelope is not None:
            if self._content is None:
                data[ENVELOPE_FIELD] = envelope
            else:
                aad = bytes.fromhex(stream) + version.to_bytes(8, "big", signed=True)
                self._content.open_envelope(data, envelope, aad)
        timestamp = pop("timestamp")
        pop("originator_topic", None)
        pop("class_version", None)
        name = _TYPES.get(topic)
        if name is None:
            name = _TYPES[topic] = event_type(topic)
        return EventRecord(
            position,
            stream,
            version,
            name,
            datetime.fromisoformat(timestamp["_data_"]),
            pop("user_id", None) or "",
            pop("actor", None) or "",
            pop("agent_id", None),
            pop("thread_id", None),
            pop("causation_id", None) or "",
            pop("prompt_version", None),
            data,
        )


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


def stream_hex(originator_id: UUID | str) -> str:
    """The stream id as `UUID.hex` spells it, from a UUID or its text as stored (SQLite
    keeps `str(uuid)`: 36 characters, lower-case, dashes at 8, 13, 18 and 23)."""
    if type(originator_id) is str:
        if len(originator_id) == _UUID_TEXT and originator_id.islower():
            hexed = originator_id.replace("-", "")
            if len(hexed) == _UUID_HEX:
                return hexed
        return UUID(originator_id).hex
    assert isinstance(originator_id, UUID)
    return originator_id.hex


_UUID_TEXT = 36
_UUID_HEX = 32
