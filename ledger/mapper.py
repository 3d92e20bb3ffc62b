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

from typing import Any
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import (
    Cipher,
    Compressor,
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    Transcoder,
)
from eventsourcing.utils import get_topic, resolve_topic

from mnemoledger.ledger.data_keys import KeyStore
from mnemoledger.ledger.encryption import ENVELOPE_FIELD, ContentCipher, associated_data
from mnemoledger.ledger.event import LedgerEvent
from mnemoledger.ledger.integrity import HASH_FIELD, PREV_FIELD, HashChain, chained
from mnemoledger.ledger.topics import register_legacy_topics

register_legacy_topics()


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
        originator_id = _uuid(state.pop("originator_id"))
        version: int = state.pop("originator_version")
        if class_version > 1:
            state["class_version"] = class_version
        if is_event:
            user_id = state.get("user_id")
            if user_id:
                self.content.seal(state, user_id, associated_data(originator_id, version))
        elif type(inner := state.get("state")) is dict:  # a snapshot of an aggregate
            user_id = inner.get("user_id")
            if isinstance(user_id, str) and user_id:
                inner = dict(inner)
                self.content.seal(inner, user_id, associated_data(originator_id, version))
                state["state"] = inner
        stored = self.transcoder.encode(state)
        if is_event:
            previous = self.chain.previous(originator_id, version)
            stored, digest = chained(
                originator_id, version, topic, stored, previous, self.chain.key()
            )
            self.chain.stored(originator_id, version, digest)
        if self.compressor:
            stored = self.compressor.compress(stored)
        if self.cipher:
            stored = self.cipher.encrypt(stored)
        return StoredEvent(
            originator_id=originator_id, originator_version=version, topic=topic, state=stored
        )

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


def _uuid(value: UUID | str) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))
