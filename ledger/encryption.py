"""Crypto-shredding: the content of a user's events, encrypted with that user's data key.

Every text, list or dict field of an event that belongs to a user is content unless it is
named in `PLAINTEXT_FIELDS` (ids, enumerations, times, provenance: what readers need to
fold and route events). New fields are therefore encrypted unless someone decides they are
structural. The content fields of one event travel together in one AES-GCM envelope,
bound to the event's stream and version, in place of the fields:

    "_sealed_": {"k": key id, "c": base64(nonce + ciphertext), "f": {"content": "s", ...}}

`f` keeps each field's shape, so once the key is destroyed the event still decodes to a
valid, redacted event: texts read `ERASED_TEXT`, lists `[]`, dicts `{}`.
"""

from __future__ import annotations

import binascii
import os
from collections.abc import Callable
from typing import Any
from uuid import UUID

import orjson
from cryptography.exceptions import InvalidTag

from mnemoledger.ledger.data_keys import KeyStore
from mnemoledger.ledger.errors import IntegrityViolation
from mnemoledger.ledger.event import METADATA_FIELDS
from mnemoledger.ledger.policy import ERASED_TEXT
from mnemoledger.ledger.transcoding import PlainJSON

ENVELOPE_FIELD = "_sealed_"
NONCE_BYTES = 12
"""AES-GCM's nonce: random, fresh for every envelope."""

PLAINTEXT_FIELDS = frozenset(
    {
        *METADATA_FIELDS,
        # the library's own
        "originator_topic",
        "timestamp",
        "class_version",
        # memories: routing, classification, lifecycle
        "kind",
        "source",
        "namespace",
        "note_kind",
        "stability",
        "sensitivity",
        "category",
        "layer",
        "state",
        "from_layer",
        "to_layer",
        "via",
        "decision",
        "superseded_by",
        "target_id",
        "other_id",
        "link_type",
        "absorbed",
        "expires_at",
        "expired_at",
        "purge_at",
        "said_at",
        # commands and LLM calls (the request and response stay secret)
        "stage",
        "prompt_id",
        "version",
        "provider",
        "model",
        "status",
        # streams of ids and times
        "command_id",
        "added",
        "superseded",
        "reinforced",
        "memory_ids",
        "categories",
        "return_mode",
        "at",
        "now",
        # consent: which profile field and who decided (the proposed value stays secret)
        "field",
        "by",
    }
)
"""Fields never encrypted: identifiers, enumerations and times that projections need to
fold an erased user's events. Anything else that is a text, list or dict is content."""

_SHAPES: dict[type, str] = {str: "s", list: "l", tuple: "l", dict: "d"}
_REDACTED: dict[str, Callable[[], Any]] = {
    "s": lambda: ERASED_TEXT,
    "l": list,
    "d": dict,
}


def associated_data(originator_id: UUID, version: int) -> bytes:
    """What an envelope is bound to: it cannot be moved to another event."""
    return originator_id.bytes + version.to_bytes(8, "big", signed=True)


class ContentCipher:
    """Seals and opens the content fields of event states with the users' data keys."""

    def __init__(
        self,
        keys: KeyStore,
        encode: Callable[[Any], bytes],
        decode: Callable[[bytes], Any],
    ) -> None:
        self.keys = keys
        self._encode = encode
        self._decode = decode
        self._candidates: dict[tuple[str, ...], tuple[str, ...]] = {}
        """Per layout of a state (its field names): the fields that may be content."""

    def seal(
        self, state: dict[str, Any], user_id: str, aad: bytes, nonce: bytes | None = None
    ) -> None:
        """Move the content fields of `state` into an envelope encrypted for `user_id`
        (`nonce`: NONCE_BYTES fresh random bytes, never used before; read here if None)."""
        layout = tuple(state)
        candidates = self._candidates.get(layout)
        if candidates is None:
            candidates = self._candidates[layout] = tuple(
                name for name in layout if name not in PLAINTEXT_FIELDS and name[:1] != "_"
            )
        content: dict[str, Any] = {}
        shapes: dict[str, str] = {}
        for name in candidates:
            value = state[name]
            shape = _SHAPES.get(type(value))
            if shape is not None:
                content[name] = value
                shapes[name] = shape
                del state[name]
        if not content:
            return
        kid, aead = self.keys.for_user(user_id)
        if nonce is None:
            nonce = os.urandom(NONCE_BYTES)
        sealed = aead.encrypt(nonce, self._dumps(content), aad)
        state[ENVELOPE_FIELD] = PlainJSON(
            k=kid, c=binascii.b2a_base64(nonce + sealed, newline=False).decode("ascii"), f=shapes
        )

    def _dumps(self, content: dict[str, Any]) -> bytes:
        """orjson for texts and lists of texts (the common content, written alike by any
        JSON encoder); the transcoder for anything else (its custom types, e.g. UUIDs)."""
        for value in content.values():
            if type(value) is not str and not (
                type(value) is list and all(type(item) is str for item in value)
            ):
                return self._encode(content)
        try:
            return orjson.dumps(content)
        except orjson.JSONEncodeError:  # e.g. a lone surrogate, which `json` escapes
            return self._encode(content)

    def open(self, state: dict[str, Any], aad: bytes) -> bool:
        """Put the content fields back into `state` (in place); redacted ones if the key
        was destroyed. Returns False when the content was redacted."""
        envelope = state.pop(ENVELOPE_FIELD, None)
        if envelope is None:
            return True
        return self.open_envelope(state, envelope, aad)

    def open_envelope(self, state: dict[str, Any], envelope: dict[str, Any], aad: bytes) -> bool:
        """`open` with the envelope already taken out of `state`."""
        aead = self.keys.by_id(envelope["k"])
        if aead is None:
            for name, shape in envelope["f"].items():
                state[name] = _REDACTED[shape]()
            return False
        blob = binascii.a2b_base64(envelope["c"])  # what base64.b64decode does
        try:
            plaintext = aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], aad)
        except InvalidTag:
            raise IntegrityViolation(
                "an event's encrypted content does not match its stream and version: "
                "the stored event was changed (run `mnemoledger verify`)"
            ) from None
        state.update(self._loads(plaintext))
        return True

    def _loads(self, plaintext: bytes) -> dict[str, Any]:
        """orjson alone for texts and lists of texts (what `_dumps` writes with orjson, and
        what any JSON decoder reads alike); the transcoder for anything else (its custom
        types, e.g. UUIDs, revived)."""
        try:
            content = orjson.loads(plaintext)
        except orjson.JSONDecodeError:
            return dict(self._decode(plaintext))
        if type(content) is dict:
            for value in content.values():
                if type(value) is not str and not (
                    type(value) is list and all(type(item) is str for item in value)
                ):
                    return dict(self._decode(plaintext))
            return content
        return dict(self._decode(plaintext))
