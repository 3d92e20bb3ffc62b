"""The hash chain: every stored event carries the keyed hash of its stream's previous event.

An event's hash covers what is stored (stream id, version, topic and the transcoded state,
the link to the previous event included), so it never depends on a data key: erasing a
user leaves every hash valid. It is an HMAC-SHA256 keyed with the log's chain secret
(`ledger.chain_secret`), which lives with the keys and never in the log: whoever can write
the log but not read the secret cannot write an event that verifies, nor rewrite one and
recompute its hash. The stored JSON ends with two plaintext fields, always last and of
fixed length, so the chain is read and checked without parsing the document:

    {...the event's state...,"_prev_":"<64 hex>","_hash_":"<64 hex>"}

`_hash_` is the event's own hash over everything before it (a changed byte anywhere in the
row shows), and `_prev_` is the `_hash_` of the stream's previous version (a removed,
reordered or replaced event breaks the link of its successor). The first event of a stream
links to `GENESIS`. Events written before the home had a chain secret carry the same
fields with an unkeyed SHA-256 (the legacy chain, `key=None` below).
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple
from uuid import UUID

from mnemoledger.ledger.policy import CHAIN_CACHE_STREAMS

PREV_FIELD = "_prev_"
HASH_FIELD = "_hash_"
GENESIS = "0" * 64
"""What the first event of every stream links to."""

_PREV_OPEN = b',"_prev_":"'
_HASH_OPEN = b'","_hash_":"'
_CLOSE = b'"}'
TAIL_LENGTH = len(_PREV_OPEN) + 64 + len(_HASH_OPEN) + 64 + len(_CLOSE)
"""Bytes the two chain fields add at the end of a stored document."""
_HASHED_TAIL = len(_HASH_OPEN) + 64 + len(_CLOSE)
"""Bytes after the part an event's own hash covers (`_hash_` and the closing brace)."""


class Link(NamedTuple):
    """The chain fields of one stored event."""

    prev: str
    """The hash of the stream's previous event (GENESIS for the first)."""
    hash: str
    """The event's own hash, as stored."""
    computed: str
    """The event's hash recomputed from the stored bytes (equal to `hash` unless changed)."""


class ChainKey:
    """HMAC-SHA256 with the log's chain secret."""

    def __init__(self, secret: bytes) -> None:
        self._base = hmac.new(secret, digestmod=hashlib.sha256)

    def new(self) -> hmac.HMAC:
        return self._base.copy()


def event_hash(
    originator_id: UUID, version: int, topic: str, covered: bytes, key: ChainKey | None = None
) -> str:
    """HMAC-SHA256 (SHA-256 without a key: the legacy chain) over the stream id, version,
    topic and the stored document up to `_hash_`."""
    digest = key.new() if key is not None else hashlib.sha256()
    # one update of the joined bytes: the same digest, one Python-level call instead of five
    digest.update(
        b"".join(
            (
                originator_id.bytes,
                version.to_bytes(8, "big", signed=True),
                topic.encode(),
                b"\0",
                covered,
            )
        )
    )
    return digest.hexdigest()


def chained(
    originator_id: UUID,
    version: int,
    topic: str,
    document: bytes,
    prev: str,
    key: ChainKey | None = None,
) -> tuple[bytes, str]:
    """`document` (a JSON object) with its link to `prev` and its own hash appended, and
    that hash (keyed with `key`; unkeyed only to write the legacy chain)."""
    if document[-1:] != b"}" or len(document) < 3:
        raise ValueError("the hash chain needs a non-empty JSON object")
    covered = b"".join((document[:-1], _PREV_OPEN, prev.encode(), b'"'))
    digest = event_hash(originator_id, version, topic, covered, key)
    return b"".join((covered, _HASH_OPEN[1:], digest.encode(), _CLOSE)), digest


def stored_link(stored: bytes) -> tuple[str, str] | None:
    """(`_prev_`, `_hash_`) of a stored document, None if it has no chain fields."""
    if len(stored) < TAIL_LENGTH or not stored.endswith(_CLOSE):
        return None
    tail = stored[-TAIL_LENGTH:]
    if not tail.startswith(_PREV_OPEN) or tail[11 + 64 : 11 + 64 + 12] != _HASH_OPEN:
        return None
    return tail[11 : 11 + 64].decode("ascii", "replace"), tail[-66:-2].decode("ascii", "replace")


def link_of(
    originator_id: UUID, version: int, topic: str, stored: bytes, key: ChainKey | None = None
) -> Link | None:
    """The chain fields of a stored document and its hash recomputed with `key` (unkeyed
    when None); None if it has no chain fields."""
    found = stored_link(stored)
    if found is None:
        return None
    covered = stored[:-_HASHED_TAIL] + b'"'
    return Link(found[0], found[1], event_hash(originator_id, version, topic, covered, key))


def unchained_hash(originator_id: UUID, version: int, topic: str, stored: bytes) -> str:
    """The hash of an event stored before the chain existed (over all its bytes)."""
    return event_hash(originator_id, version, topic, stored)


CHANGED = "changed"
"""The stored bytes match neither the keyed nor the unkeyed hash."""
FORGED = "forged"
"""A hash that is the unkeyed SHA-256 of the bytes where the chain is keyed: written or
rewritten by someone without the chain secret."""
UNCHAINED = "unchained"
"""No chain fields where the chain is keyed: stripped, or inserted around the mapper."""
LEGACY = "legacy"
"""The unkeyed chain, intact, on an event written before the home had a chain secret."""
LEGACY_UNCHAINED = "legacy-unchained"
"""No chain fields on an event written before the home had a chain secret."""
KEYED = "keyed"
"""The keyed chain, intact."""


class Checked(NamedTuple):
    """What one stored event's chain fields say."""

    verdict: str
    """KEYED, LEGACY, LEGACY_UNCHAINED, CHANGED, FORGED or UNCHAINED."""
    digest: str
    """The event's hash recomputed from its bytes (what a seal's leaf binds)."""
    stored: str
    """The hash stored in the event (what its successor links to)."""
    prev: str | None
    """The link to the stream's previous event (None without chain fields)."""


def check_row(
    originator_id: UUID,
    version: int,
    topic: str,
    document: bytes,
    *,
    in_legacy_range: bool,
    key: ChainKey,
) -> Checked:
    """Check one stored document's chain fields against `key`; positions written before
    the home had a secret (`in_legacy_range`) may carry the unkeyed chain."""
    found = stored_link(document)
    if found is None:
        digest = unchained_hash(originator_id, version, topic, document)
        return Checked(LEGACY_UNCHAINED if in_legacy_range else UNCHAINED, digest, digest, None)
    prev, stored = found
    covered = document[:-_HASHED_TAIL] + b'"'
    keyed = event_hash(originator_id, version, topic, covered, key)
    if hmac.compare_digest(keyed, stored):
        return Checked(KEYED, keyed, stored, prev)
    unkeyed = event_hash(originator_id, version, topic, covered)
    if unkeyed == stored:
        return Checked(LEGACY if in_legacy_range else FORGED, unkeyed, stored, prev)
    return Checked(CHANGED, unkeyed if in_legacy_range else keyed, stored, prev)


class HashChain:
    """The last hash of each stream, for linking new events without reading the log.

    A hash is remembered only once the save that stored it has committed (`batch`): a save
    that lost an optimistic-concurrency race must not leave a hash the log never got. On a
    miss the stream's last stored event is read (`last_stored`).
    """

    def __init__(self) -> None:
        self.last_stored: Callable[[UUID], tuple[int, str] | None] = lambda _id: None
        """(version, hash) of a stream's newest stored event; set by the application."""
        self.key: Callable[[], ChainKey] = _no_key
        """The chain key (loaded or created on first use); set by the application."""
        self._known: dict[UUID, tuple[int, str]] = {}
        self._local = threading.local()

    def pending(self) -> dict[UUID, tuple[int, str]] | None:
        """The hashes of the save under way in this thread (`batch`), by stream: the
        mapper adds each event's as it chains it. None outside a save."""
        pending: dict[UUID, tuple[int, str]] | None = getattr(self._local, "pending", None)
        return pending

    def previous(
        self,
        originator_id: UUID,
        version: int,
        pending: dict[UUID, tuple[int, str]] | None = None,
    ) -> str:
        """The hash the event at `version` of the stream links to (`pending`: this
        thread's `pending()`, if the caller has it at hand)."""
        if version <= 1:
            return GENESIS
        if pending is None:
            pending = self.pending()
        for known in (pending, self._known):
            if known is not None:
                found = known.get(originator_id)
                if found is not None and found[0] == version - 1:
                    return found[1]
        last = self.last_stored(originator_id)
        if last is not None and last[0] == version - 1:
            return last[1]
        return GENESIS  # the insert conflicts (or verify names the gap)

    def stored(self, originator_id: UUID, version: int, digest: str) -> None:
        """Remember the hash of an event being saved (kept once the save commits)."""
        pending = self.pending()
        if pending is not None:
            pending[originator_id] = (version, digest)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One save: the hashes of its events count as known only if it commits."""
        pending: dict[UUID, tuple[int, str]] = {}
        self._local.pending = pending
        try:
            yield
        finally:
            self._local.pending = None
        if len(self._known) + len(pending) > CHAIN_CACHE_STREAMS:
            self._known = {}
        self._known.update(pending)

    def known(self, originator_id: UUID) -> tuple[int, str] | None:
        """(version, hash) of the stream's newest event saved by this process, if known."""
        return self._known.get(originator_id)

    def forget(self) -> None:
        """Drop every remembered hash (e.g. after the log was changed from outside)."""
        self._known = {}


def _no_key() -> ChainKey:
    raise RuntimeError("the hash chain has no key: the application did not set one")
