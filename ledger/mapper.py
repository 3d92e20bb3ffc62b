"""The ledger's Mapper: the library's, plus per-user content encryption and the hash chain.

Writing an event: its content fields are sealed with the user's data key
(`ledger.encryption`), the state is transcoded, then linked to the stream's previous event
and hashed with the chain key (`ledger.integrity`), and only then compressed and encrypted
with the application-wide cipher if one is configured. Reading reverses it; an erased
user's events come back redacted. Snapshots are not chained (they are not part of the log)
but their state is sealed like an event's, so a snapshot never keeps an erased user's
content.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import (
    Cipher,
    Compressor,
    EventStore,
    Mapper,
    MapperDeserialisationError,
    Notification,
    Recording,
    StoredEvent,
    Transcoder,
)
from eventsourcing.utils import get_topic, resolve_topic

from mnemoledger.ledger.data_keys import KeyStore
from mnemoledger.ledger.encryption import (
    ENVELOPE_FIELD,
    NONCE_BYTES,
    ContentCipher,
    associated_data,
)
from mnemoledger.ledger.event import LedgerEvent
from mnemoledger.ledger.integrity import (
    GENESIS,
    HASH_FIELD,
    PREV_FIELD,
    ChainKey,
    HashChain,
    chained,
)
from mnemoledger.ledger.topics import register_legacy_topics

register_legacy_topics()

_new = object.__new__
_set = object.__setattr__


class LedgerMapper(Mapper[UUID]):
    """Seals content per user and chains every stored event of a stream."""

    def __init__(
        self,
        transcoder: Transcoder,
        keys: KeyStore,
        compressor: Compressor | None = None,
        cipher: Cipher | None = None,
    ) -> None:
        super().__init__(transcoder, compressor=compressor, cipher=cipher)
        self.keys = keys
        self.chain = HashChain()
        self.content = ContentCipher(keys, transcoder.encode, transcoder.decode)
        self._kinds: dict[type, tuple[str, int, bool]] = {}
        """(topic, class version, is a ledger event) by event class."""

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        return self._to_stored(domain_event, None, self.chain.pending())

    def to_stored_events(
        self, domain_events: Sequence[DomainEventProtocol[UUID]]
    ) -> list[StoredEvent]:
        """`to_stored_event` of each event, sharing what a batch can share: one read of the
        OS's random source for every content nonce, the chain's pending hashes and key
        looked up once."""
        count = len(domain_events)
        pending = self.chain.pending()
        to_stored = self._to_stored
        if count < 2:
            return [to_stored(event, None, pending) for event in domain_events]
        nonces = os.urandom(NONCE_BYTES * count)
        key = self.chain.key()
        return [
            to_stored(event, nonces[start : start + NONCE_BYTES], pending, key)
            for start, event in zip(
                range(0, NONCE_BYTES * count, NONCE_BYTES), domain_events, strict=True
            )
        ]

    def _to_stored(
        self,
        domain_event: DomainEventProtocol[UUID],
        nonce: bytes | None,
        pending: dict[UUID, tuple[int, str]] | None,
        key: ChainKey | None = None,
    ) -> StoredEvent:
        """`nonce`: fresh random bytes for the content's envelope (None: read here);
        `pending`: the hashes of the save under way (`HashChain.pending`); `key`: the chain
        key, if the caller has it at hand."""
        cls = type(domain_event)
        kind = self._kinds.get(cls)
        if kind is None:
            kind = self._kinds[cls] = (
                get_topic(cls),
                getattr(cls, "class_version", 1),
                issubclass(cls, LedgerEvent),
            )
        topic, class_version, is_event = kind
        state = dict(vars(domain_event))
        originator_id = state.pop("originator_id")
        if type(originator_id) is not UUID:
            originator_id = _uuid(originator_id)
        version: int = state.pop("originator_version")
        if class_version > 1:
            state["class_version"] = class_version
        if is_event:
            user_id = state.get("user_id")
            if user_id:
                self.content.seal(state, user_id, associated_data(originator_id, version), nonce)
        elif type(inner := state.get("state")) is dict:  # a snapshot of an aggregate
            user_id = inner.get("user_id")
            if isinstance(user_id, str) and user_id:
                inner = dict(inner)
                self.content.seal(inner, user_id, associated_data(originator_id, version), nonce)
                state["state"] = inner
        stored = self.transcoder.encode(state)
        if is_event:
            previous = (
                GENESIS if version <= 1 else self.chain.previous(originator_id, version, pending)
            )
            stored, digest = chained(
                originator_id, version, topic, stored, previous, key or self.chain.key()
            )
            if pending is not None:
                pending[originator_id] = (version, digest)
        if self.compressor:
            stored = self.compressor.compress(stored)
        if self.cipher:
            stored = self.cipher.encrypt(stored)
        # what `StoredEvent(...)` makes, without the frozen dataclass's keyword handling
        stored_event: StoredEvent = _new(StoredEvent)
        _set(
            stored_event,
            "__dict__",
            {
                "originator_id": originator_id,
                "originator_version": version,
                "topic": topic,
                "state": stored,
            },
        )
        return stored_event

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        cls = resolve_topic(stored_event.topic)
        originator_id = _uuid(stored_event.originator_id)
        version = stored_event.originator_version
        try:
            state: dict[str, Any] = self.transcoder.decode(self.document(stored_event.state))
        except Exception as error:
            raise MapperDeserialisationError(
                f"Failed to deserialise state of stored event with topic "
                f"'{stored_event.topic}', originator_id '{originator_id}' and "
                f"originator_version {version}: {error}"
            ) from error
        state.pop(PREV_FIELD, None)
        state.pop(HASH_FIELD, None)
        if ENVELOPE_FIELD in state:
            self.content.open(state, associated_data(originator_id, version))
        elif type(inner := state.get("state")) is dict and ENVELOPE_FIELD in inner:
            self.content.open(inner, associated_data(originator_id, version))
        state["originator_id"] = originator_id
        state["originator_version"] = version
        class_version = getattr(cls, "class_version", 1)
        from_version = state.pop("class_version", 1)
        while from_version < class_version:
            getattr(cls, f"upcast_v{from_version}_v{from_version + 1}")(state)
            from_version += 1
        domain_event = object.__new__(cls)
        object.__setattr__(domain_event, "__dict__", state)
        return domain_event  # type: ignore[no-any-return]

    def document(self, stored: bytes) -> bytes:
        """The transcoded document of a stored state (application cipher and compressor
        undone): what the hash chain covers."""
        if self.cipher:
            stored = self.cipher.decrypt(stored)
        if self.compressor:
            stored = self.compressor.decompress(stored)
        return stored


class LedgerEventStore(EventStore[UUID]):
    """The library's event store, mapping a save's events as one batch
    (`LedgerMapper.to_stored_events`) and making its recordings without the frozen
    dataclasses' keyword handling (~1.5 µs per event)."""

    def put(
        self, domain_events: Sequence[DomainEventProtocol[UUID]], **kwargs: Any
    ) -> list[Recording[UUID]]:
        mapper = self.mapper
        if isinstance(mapper, LedgerMapper):
            stored_events = mapper.to_stored_events(domain_events)
        else:
            stored_events = list(map(mapper.to_stored_event, domain_events))
        positions = self.recorder.insert_events(stored_events, **kwargs)
        recordings: list[Recording[UUID]] = []
        if positions:
            assert len(positions) == len(stored_events)
            for event, stored, position in zip(
                domain_events, stored_events, positions, strict=True
            ):
                notification = _new(Notification)
                _set(
                    notification,
                    "__dict__",
                    {
                        "originator_id": stored.originator_id,
                        "originator_version": stored.originator_version,
                        "topic": stored.topic,
                        "state": stored.state,
                        "id": position,
                    },
                )
                recording = _new(Recording)
                _set(recording, "__dict__", {"domain_event": event, "notification": notification})
                recordings.append(recording)
        return recordings


def _uuid(value: UUID | str) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))
