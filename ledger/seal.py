"""Seals: checkpoints of the global log, each a `Sealed` event in a stream of its own.

A seal covers the positions `from_position..to_position`: its `root` is a SHA-256 over the
leaves of every event in that range, in position order, where a leaf is
SHA-256(position, event hash). It also keeps the first `SEAL_LEAF_BYTES` of each leaf, so
`verify` can name the very position whose event was changed, removed or moved, and the
positions that were already absent when it was sealed (`gaps`; PostgreSQL may skip ids).
Like every event, a `Sealed` event carries a hash keyed with the chain secret, so a seal
cannot be forged without it; its stream id derives from `from_position`, so two processes
sealing the same range at once conflict instead of writing it twice. The root can be
published elsewhere: a log rewritten in full (even by someone holding the secret) would no
longer match it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate
from eventsourcing.persistence import ApplicationRecorder, Notification

from mnemoledger.ledger.errors import IntegrityViolation
from mnemoledger.ledger.event import LedgerEvent
from mnemoledger.ledger.integrity import CHANGED, FORGED, UNCHAINED, ChainKey, check_row
from mnemoledger.ledger.mapper import LedgerMapper
from mnemoledger.ledger.policy import SEAL_LEAF_BYTES, SEAL_MAX_EVENTS, VERIFY_PAGE_SIZE
from mnemoledger.ledger.topics import topics_of


@dataclass
class Seal(Aggregate, created_event_name="Sealed"):
    """A checkpoint of the log: the root hash of the events in a range of positions."""

    class Event(LedgerEvent):
        """Every event of a seal carries the provenance metadata."""

    from_position: int
    """First position covered."""
    to_position: int
    """Last position covered."""
    events: int
    """How many events the range held when sealed."""
    root: str
    """SHA-256 (hex) over the leaves of the range, in position order."""
    leaves: str
    """Base64 of the first SEAL_LEAF_BYTES of every leaf, in position order."""
    gaps: list[int]
    """Positions of the range that held no event when sealed."""

    @staticmethod
    def create_id(from_position: int) -> UUID:
        """One stream per first position sealed."""
        return uuid5(_SEAL_NAMESPACE, str(from_position))

    def leaf_prefixes(self) -> list[bytes]:
        raw = base64.b64decode(self.leaves)
        return [raw[i : i + SEAL_LEAF_BYTES] for i in range(0, len(raw), SEAL_LEAF_BYTES)]


_SEAL_NAMESPACE = UUID("6f1c2a57-3e0b-4d8e-9a41-5c7d2b8e0f13")

SEALED_TOPICS = topics_of(Seal.Sealed)  # type: ignore[attr-defined]  # from created_event_name


def leaf(position: int, event_hash: str) -> bytes:
    """The leaf of one event: its position bound to its hash."""
    return hashlib.sha256(position.to_bytes(8, "big") + bytes.fromhex(event_hash)).digest()


def root_of(leaves: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for one in leaves:
        digest.update(one)
    return digest.hexdigest()


@dataclass(frozen=True)
class SealRange:
    """What a new seal will record (computed before the Seal is created)."""

    from_position: int
    to_position: int
    leaves: list[bytes]
    gaps: list[int]
    unsealed_events: int = 0
    """Events of the range other than seals (a range of seals alone is not resealed)."""

    @property
    def root(self) -> str:
        return root_of(self.leaves)

    def encoded_leaves(self) -> str:
        return base64.b64encode(b"".join(x[:SEAL_LEAF_BYTES] for x in self.leaves)).decode()


SelectSeals = Callable[[int, int, Sequence[str]], Sequence[Notification]]
"""(after, limit, topics) -> the notifications of those topics after `after`."""


def last_sealed_position(
    recorder: ApplicationRecorder,
    mapper: LedgerMapper,
    scanned: tuple[int, int] = (0, 0),
    select: SelectSeals | None = None,
) -> tuple[int, int]:
    """(the last position covered by any seal, 0 when nothing was sealed; the position of
    the newest seal read). `scanned`: what an earlier call returned, so only the seals
    written since are read (positions are handed out in commit order on both stores).
    `select`: reads the log instead of the recorder (inside a save's transaction)."""
    last, after = scanned
    while True:
        if select is not None:
            page = select(after, VERIFY_PAGE_SIZE, SEALED_TOPICS)
        else:
            page = recorder.select_notifications(
                after, VERIFY_PAGE_SIZE, topics=SEALED_TOPICS, inclusive_of_start=False
            )
        if not page:
            return last, after
        for notification in page:
            seal = mapper.to_domain_event(notification)
            last = max(last, int(seal.to_position))  # type: ignore[attr-defined]
        after = page[-1].id


def ranges_to_seal(
    recorder: ApplicationRecorder,
    mapper: LedgerMapper,
    start: int,
    end: int,
    key: ChainKey,
    legacy_through: int,
    written: Mapping[int, tuple[str, bool]] | None = None,
) -> Iterator[SealRange]:
    """The ranges of at most SEAL_MAX_EVENTS events that seal positions start..end.

    Refuses to seal an event whose bytes no longer match its keyed hash, or that carries no
    chain fields or an unkeyed hash where the chain is keyed: sealing would certify the
    change (run `verify` to see it).

    `written`: (hash, is a seal) by position of events this process wrote itself, hashed
    with the key as it wrote them. When it holds every position of the range, the range is
    sealed from it without reading the log: a seal then binds the hashes as written, so a
    row changed since still fails `verify` against its own hash and against the seal."""
    if written is not None and start <= end and all(p in written for p in range(start, end + 1)):
        yield from ranges_written(start, end, written)
        return
    leaves: list[bytes] = []
    gaps: list[int] = []
    others = 0
    first = start
    expected = start
    after = start - 1
    while after < end:
        page = recorder.select_notifications(
            after, VERIFY_PAGE_SIZE, stop=end, inclusive_of_start=False
        )
        if not page:
            break
        for row in page:
            gaps.extend(range(expected, row.id))
            originator_id = _uuid(row.originator_id)
            document = mapper.document(row.state)
            checked = check_row(
                originator_id,
                row.originator_version,
                row.topic,
                document,
                in_legacy_range=row.id <= legacy_through,
                key=key,
            )
            if checked.verdict in (CHANGED, FORGED, UNCHAINED):
                raise IntegrityViolation(
                    f"event at position {row.id} (stream {originator_id.hex} version "
                    f"{row.originator_version}) is {checked.verdict}; run `mnemoledger verify`"
                )
            leaves.append(leaf(row.id, checked.digest))
            others += row.topic not in SEALED_TOPICS
            expected = row.id + 1
            if len(leaves) == SEAL_MAX_EVENTS:
                yield SealRange(first, row.id, leaves, gaps, others)
                leaves, gaps, first, others = [], [], row.id + 1, 0
        after = page[-1].id
    gaps.extend(range(expected, end + 1))
    if leaves or gaps:
        yield SealRange(first, end, leaves, gaps, others)


def ranges_written(
    start: int, end: int, written: Mapping[int, tuple[str, bool]]
) -> Iterator[SealRange]:
    """`ranges_to_seal` of a range of positions all in `written` (no gaps)."""
    for first in range(start, end + 1, SEAL_MAX_EVENTS):
        last = min(first + SEAL_MAX_EVENTS - 1, end)
        positions = range(first, last + 1)
        leaves = [leaf(p, written[p][0]) for p in positions]
        others = sum(1 for p in positions if not written[p][1])
        yield SealRange(first, last, leaves, [], others)


def _uuid(value: UUID | str) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))
