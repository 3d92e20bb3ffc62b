"""The hash chain: every stored event carries the hash of its stream's previous event.

An event's hash covers what is stored (stream id, version, topic and the transcoded state,
the link to the previous event included), so it never depends on a data key: erasing a
user leaves every hash valid. The stored JSON ends with two plaintext fields, always last
and of fixed length, so the chain is read and checked without parsing the document:

    {...the event's state...,"_prev_":"<64 hex>","_hash_":"<64 hex>"}

`_hash_` is the event's own hash over everything before it (a changed byte anywhere in the
row shows), and `_prev_` is the `_hash_` of the stream's previous version (a removed,
reordered or replaced event breaks the link of its successor). The first event of a stream
links to `GENESIS`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple
from uuid import UUID

from ledger.policy import CHAIN_CACHE_STREAMS

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


def event_hash(originator_id: UUID, version: int, topic: str, covered: bytes) -> str:
    """SHA-256 over the stream id, version, topic and the stored document up to `_hash_`."""
    digest = hashlib.sha256(originator_id.bytes)
    digest.update(version.to_bytes(8, "big", signed=True))
    digest.update(topic.encode())
    digest.update(b"\0")
    digest.update(covered)
    return digest.hexdigest()


def chained(
    originator_id: UUID, version: int, topic: str, document: bytes, prev: str
) -> tuple[bytes, str]:
    """`document` (a JSON object) with its link to `prev` and its own hash appended, and
    that hash."""
    if document[-1:] != b"}" or len(document) < 3:
        raise ValueError("the hash chain needs a non-empty JSON object")
    covered = b"".join((document[:-1], _PREV_OPEN, prev.encode(), b'"'))
    digest = event_hash(originator_id, version, topic, covered)
    return b"".join((covered, _HASH_OPEN[1:], digest.encode(), _CLOSE)), digest


def link_of(originator_id: UUID, version: int, topic: str, stored: bytes) -> Link | None:
    """The chain fields of a stored document and its recomputed hash; None if it has none
    (an event written before the chain existed)."""
    if len(stored) < TAIL_LENGTH or not stored.endswith(_CLOSE):
        return None
    tail = stored[-TAIL_LENGTH:]
    if not tail.startswith(_PREV_OPEN) or tail[11 + 64 : 11 + 64 + 12] != _HASH_OPEN:
        return None
    prev = tail[11 : 11 + 64].decode("ascii", "replace")
    stored_hash = tail[-66:-2].decode("ascii", "replace")
    computed = event_hash(originator_id, version, topic, stored[:-_HASHED_TAIL] + b'"')
    return Link(prev, stored_hash, computed)


def unchained_hash(originator_id: UUID, version: int, topic: str, stored: bytes) -> str:
    """The hash of an event stored before the chain existed (over all its bytes)."""
    return event_hash(originator_id, version, topic, stored)


class HashChain:
    """The last hash of each stream, for linking new events without reading the log.

    A hash is remembered only once the save that stored it has committed (`batch`): a save
    that lost an optimistic-concurrency race must not leave a hash the log never got. On a
    miss the stream's last stored event is read (`last_stored`).
    """

    def __init__(self) -> None:
        self.last_stored: Callable[[UUID], tuple[int, str] | None] = lambda _id: None
        """(version, hash) of a stream's newest stored event; set by the application."""
        self._known: dict[UUID, tuple[int, str]] = {}
        self._local = threading.local()

    def previous(self, originator_id: UUID, version: int) -> str:
        """The hash the event at `version` of the stream links to."""
        if version <= 1:
            return GENESIS
        pending: dict[UUID, tuple[int, str]] | None = getattr(self._local, "pending", None)
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
        pending: dict[UUID, tuple[int, str]] | None = getattr(self._local, "pending", None)
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

    def forget(self) -> None:
        """Drop every remembered hash (e.g. after the log was changed from outside)."""
        self._known = {}


def row_hash(originator_id: UUID, version: int, topic: str, document: bytes) -> str:
    """The hash of a stored event recomputed from its bytes (chained or not)."""
    link = link_of(originator_id, version, topic, document)
    if link is None:
        return unchained_hash(originator_id, version, topic, document)
    return link.computed
