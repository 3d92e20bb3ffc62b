"""`verify`: walk every stored row of the log and name whatever is not as it was written.

Checks, in one pass in position order:
- each event's bytes against its own hash, keyed with the chain secret (a changed byte:
  `changed`; a hash recomputed without the secret, as a forger or rewriter must: `forged`;
  no chain fields where the chain is keyed: `unchained`);
- each stream's versions are contiguous and in position order (`missing`, `reordered`);
- each event links to the hash of its stream's previous version (a replaced or altered
  predecessor: `changed`);
- every seal: each position of its range holds the event it sealed (`changed`, `missing`,
  `reordered` by position), and the root matches;
- on SQLite, where positions never skip, no position is absent anywhere (`missing`);
- the witness kept with the chain secret: the newest event ever written and the newest
  seal are still in the log (`truncated`).
Events written before the home had a chain secret (the legacy range) may carry the old
unkeyed chain; the report says so in `notes`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder, Notification

from mnemoledger.ledger.chain_secret import Tip
from mnemoledger.ledger.integrity import (
    CHANGED,
    FORGED,
    GENESIS,
    LEGACY,
    LEGACY_UNCHAINED,
    UNCHAINED,
    ChainKey,
    check_row,
)
from mnemoledger.ledger.mapper import LedgerMapper
from mnemoledger.ledger.policy import SEAL_LEAF_BYTES, VERIFY_PAGE_SIZE
from mnemoledger.ledger.records import event_type
from mnemoledger.ledger.seal import SEALED_TOPICS, Seal, leaf, root_of

MISSING = "missing"
REORDERED = "reordered"
TRUNCATED = "truncated"
SECRET_MISSING = "secret_missing"
KINDS = (CHANGED, FORGED, UNCHAINED, MISSING, REORDERED, TRUNCATED, SECRET_MISSING)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Problem:
    """One thing that is not as written."""

    kind: str
    """One of KINDS."""
    position: int | None
    """Where in the global log (None when the event is gone without a known position)."""
    stream: str | None
    version: int | None
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "position": self.position,
            "stream": self.stream,
            "version": self.version,
            "detail": self.detail,
        }


@dataclass
class Report:
    """What `verify` found."""

    events: int = 0
    seals: int = 0
    sealed_through: int = 0
    """The last position covered by a seal (0 when nothing is sealed)."""
    problems: list[Problem] = field(default_factory=list)
    checked_through: int = 0
    """The last position the check read (the log's end when it started)."""
    last_event: int = 0
    """The last position that holds an event other than a seal."""
    legacy_through: int = 0
    """Positions up to here were written before the home had a chain secret (0: none)."""
    notes: list[str] = field(default_factory=list)
    """What is true but is no problem (the legacy range and how far it is protected)."""
    new_seals: list[Seal] = field(default_factory=list)
    """Seals this verification wrote (it seals what it found intact and unsealed)."""

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Head:
    version: int
    hash: str
    position: int


class Verifier:
    """One verification of the log held by `recorder`, decoded with `mapper`."""

    def __init__(
        self,
        recorder: ApplicationRecorder,
        mapper: LedgerMapper,
        *,
        key: ChainKey,
        legacy_through: int,
        tip: Tip | None,
        reused: Tip | None,
        written: int,
        last_seal: tuple[int, int],
        contiguous_positions: bool,
        published: Mapping[int, str] | None = None,
    ) -> None:
        self.recorder = recorder
        self.mapper = mapper
        self.key = key
        self.legacy_through = legacy_through
        self.tip = tip
        """The newest event any writer recorded (read before the log's end)."""
        self.reused = reused
        """A former newest event a later save found gone, if any."""
        self.written = written
        """Events saved after the legacy range, as counted by their writers."""
        self._counted = 0
        """Events found after the legacy range."""
        self.last_seal = last_seal
        """(position, sealed through) of the newest seal any writer recorded."""
        self.contiguous = contiguous_positions
        self.published = dict(published or {})
        """Seal roots published elsewhere: last position sealed -> root."""
        self._roots: dict[int, tuple[int, str]] = {}
        """Last position sealed -> (position of the seal, root), for each seal read."""
        self.report = Report(legacy_through=legacy_through)
        self._legacy = 0
        self._legacy_unchained = 0
        self._seal_positions: dict[int, int] = {}
        """Position of each seal read -> the last position it covers."""
        self._heads: dict[UUID, _Head] = {}
        self._late: dict[tuple[UUID, int], int] = {}
        """(stream, version) reported missing -> index of that problem (it may come later)."""
        self._hashes = bytearray()
        self._present = bytearray()
        self._named: set[int] = set()
        """Positions already named as changed, forged or unchained (not named again)."""
        self._chained_seen = False

    def run(self, progress: Progress | None = None) -> Report:
        end = self.recorder.max_notification_id() or 0
        self.report.checked_through = end
        self._hashes = bytearray(32 * (end + 1))
        self._present = bytearray(end + 1)
        expected = 1
        after = 0
        while after < end:
            page = self.recorder.select_notifications(
                after, VERIFY_PAGE_SIZE, stop=end, inclusive_of_start=False
            )
            if not page:
                break
            for row in page:
                if self.contiguous:
                    for gap in range(expected, row.id):
                        self._problem(
                            MISSING,
                            gap,
                            None,
                            None,
                            "no event at this position: positions never skip on SQLite, "
                            "so a stored row was deleted",
                        )
                expected = row.id + 1
                self._row(row)
            after = page[-1].id
            if progress:
                progress(after, end)
        self._witness(end)
        self._published()
        return self.report

    # --- one row -------------------------------------------------------------------------

    def _row(self, row: Notification) -> None:
        self.report.events += 1
        position = row.id
        self._counted += position > self.legacy_through
        oid = row.originator_id if isinstance(row.originator_id, UUID) else UUID(row.originator_id)
        version = row.originator_version
        self._present[position] = 1
        try:
            document = self.mapper.document(row.state)
        except Exception as error:  # the application cipher refused the bytes
            self._problem(CHANGED, position, oid, version, f"unreadable: {error}")
            document = row.state
        checked = check_row(
            oid,
            version,
            row.topic,
            document,
            in_legacy_range=position <= self.legacy_through,
            key=self.key,
        )
        what = event_type(row.topic)
        if checked.verdict == CHANGED:
            self._problem(
                CHANGED,
                position,
                oid,
                version,
                f"{what}: the stored bytes no longer match the event's hash",
            )
        elif checked.verdict == FORGED:
            self._problem(
                FORGED,
                position,
                oid,
                version,
                f"{what}: its hash was computed without the chain secret (an event written "
                "or rewritten outside the ledger)",
            )
        elif checked.verdict == UNCHAINED:
            self._problem(
                UNCHAINED,
                position,
                oid,
                version,
                f"{what}: no hash-chain fields (stripped, or inserted outside the ledger); "
                "every event after the legacy range must carry them",
            )
        elif checked.verdict == LEGACY:
            self._legacy += 1
            self._chained_seen = True
        elif checked.verdict == LEGACY_UNCHAINED:
            self._legacy_unchained += 1
            if self._chained_seen:
                self._problem(
                    UNCHAINED, position, oid, version, "the event lost its hash-chain fields"
                )
        else:
            self._chained_seen = True
        digest, stored_hash = checked.digest, checked.stored
        self._hashes[32 * position : 32 * position + 32] = bytes.fromhex(digest)
        self._stream(position, oid, version, checked.prev, stored_hash)
        if row.topic not in SEALED_TOPICS:
            self.report.last_event = position
        elif position not in self._named:
            self._seal(position, row)

    def _stream(
        self, position: int, oid: UUID, version: int, prev: str | None, stored_hash: str
    ) -> None:
        head = self._heads.get(oid)
        expected = head.version + 1 if head else 1
        if version == expected:
            if prev is not None and prev != (head.hash if head else GENESIS):
                before = f"version {head.version} at position {head.position}" if head else ""
                self._problem(
                    CHANGED,
                    position,
                    oid,
                    version,
                    "does not link to the stream's previous event "
                    f"{before}: one of the two was changed or replaced".replace("  ", " "),
                )
            self._heads[oid] = _Head(version, stored_hash, position)
        elif version > expected:
            for lost in range(expected, version):
                self._late[(oid, lost)] = len(self.report.problems)
                self._problem(
                    MISSING,
                    None,
                    oid,
                    lost,
                    f"version {lost} is not in the log (version {version} is at position "
                    f"{position})",
                )
            self._heads[oid] = _Head(version, stored_hash, position)
        else:
            index = self._late.pop((oid, version), None)
            assert head is not None
            detail = (
                f"version {version} comes after version {head.version} "
                f"(position {head.position}) in the log: events were moved"
            )
            problem = Problem(REORDERED, position, oid.hex, version, detail)
            if index is not None:
                self.report.problems[index] = problem
            else:
                self.report.problems.append(problem)

    # --- seals ---------------------------------------------------------------------------

    def _seal(self, position: int, row: Notification) -> None:
        try:
            seal = self.mapper.to_domain_event(row)
            first, last = int(seal.from_position), int(seal.to_position)  # type: ignore[attr-defined]
            gaps = set(seal.gaps)  # type: ignore[attr-defined]
            prefixes = Seal.leaf_prefixes(seal)  # type: ignore[arg-type]
            root = str(seal.root)  # type: ignore[attr-defined]
        except Exception as error:
            self._problem(CHANGED, position, None, None, f"unreadable seal: {error}")
            return
        self.report.seals += 1
        self.report.sealed_through = max(self.report.sealed_through, last)
        self._seal_positions[position] = last
        self._roots[last] = (position, root)
        sealed = [p for p in range(first, last + 1) if p not in gaps]
        if len(sealed) != len(prefixes):
            self._problem(CHANGED, position, None, None, "the seal's leaves do not fit its range")
            return
        leaves: list[bytes] = []
        wrong: list[int] = []
        for p, prefix in zip(sealed, prefixes, strict=True):
            if p >= len(self._present) or not self._present[p]:
                if not self.contiguous:  # on SQLite the gap was already named
                    self._problem(
                        MISSING, p, None, None, f"sealed by the seal at position {position}"
                    )
                continue
            one = leaf(p, self._hashes[32 * p : 32 * p + 32].hex())
            leaves.append(one)
            if one[:SEAL_LEAF_BYTES] != prefix:
                wrong.append(p)
        for p in gaps:
            if p < len(self._present) and self._present[p]:
                self._problem(
                    CHANGED, p, None, None, f"was empty when sealed (seal at position {position})"
                )
        if root_of(leaves) == root and not wrong:
            return
        by_position = dict(zip(sealed, prefixes, strict=True))
        for p in wrong:
            if p in self._named:
                continue
            current = self._hashes[32 * p : 32 * p + 32].hex()
            moved_from = next(
                (
                    q
                    for q in wrong
                    if q != p and leaf(q, current)[:SEAL_LEAF_BYTES] == by_position[q]
                ),
                None,
            )
            stream, version = self._event_at(p)
            if moved_from is not None:
                self._problem(
                    REORDERED,
                    p,
                    stream,
                    version,
                    f"sealed at position {moved_from} (seal at position {position})",
                )
            else:
                self._problem(
                    CHANGED,
                    p,
                    stream,
                    version,
                    f"not the event sealed here (seal at position {position})",
                )
        if not wrong and root_of(leaves) != root:
            self._problem(
                CHANGED,
                position,
                None,
                None,
                f"positions {first}-{last} no longer match the seal's root",
            )

    # --- the witness kept with the secret ---------------------------------------------

    def _witness(self, end: int) -> None:
        """The newest event and the newest seal ever written must still be in the log."""
        tip = self.tip
        if tip is not None:
            held = self._hashes[32 * tip.position : 32 * tip.position + 32].hex()
            present = tip.position <= end and self._present[tip.position]
            if not present:
                self.report.problems.append(
                    Problem(
                        TRUNCATED,
                        tip.position,
                        tip.stream,
                        tip.version,
                        f"the log was cut short: the newest event written (stream {tip.stream} "
                        f"version {tip.version} at position {tip.position}) is gone; the log "
                        f"now ends at position {end}",
                    )
                )
            elif held != tip.hash and tip.position not in self._named:
                stream, version = self._event_at(tip.position)
                self._problem(
                    TRUNCATED,
                    tip.position,
                    stream,
                    version,
                    f"the newest event written here was stream {tip.stream} version "
                    f"{tip.version}; it was deleted and the position reused",
                )
        if self._counted < self.written:
            lost = self.written - self._counted
            self.report.problems.append(
                Problem(
                    MISSING,
                    None,
                    None,
                    None,
                    f"{self.written} events were written after position {self.legacy_through}"
                    f" and the log holds {self._counted} of them: {lost} stored row(s) were "
                    "deleted",
                )
            )
        if self.reused is not None:
            gone = self.reused
            self.report.problems.append(
                Problem(
                    TRUNCATED,
                    gone.position,
                    gone.stream,
                    gone.version,
                    f"the log was cut short and written on: position {gone.position} held "
                    f"stream {gone.stream} version {gone.version} when it was the newest "
                    "event, and a later write found it gone",
                )
            )
        position, through = self.last_seal
        if (
            position
            and position not in self._named
            and self._seal_positions.get(position) != through
        ):
            self.report.problems.append(
                Problem(
                    TRUNCATED,
                    position,
                    None,
                    None,
                    f"the newest seal written (at position {position}, sealing through "
                    f"position {through}) is not in the log",
                )
            )

    def _published(self) -> None:
        """Each root published elsewhere must be the root of a seal in the log: a log
        rewritten and resealed by someone holding the chain secret fails here."""
        for through, root in sorted(self.published.items()):
            found = self._roots.get(through)
            if found is None:
                self.report.problems.append(
                    Problem(
                        MISSING,
                        None,
                        None,
                        None,
                        f"no seal through position {through} is in the log, but root "
                        f"{root} was published for one",
                    )
                )
            elif found[1] != root:
                self._problem(
                    CHANGED,
                    found[0],
                    None,
                    None,
                    f"the seal through position {through} has root {found[1]}, but root "
                    f"{root} was published: the log was rewritten and sealed again",
                )

    def legacy_notes(self, new_seals: list[Seal]) -> None:
        """Say what the legacy range is and whether a keyed seal (found, or written by
        this check: `new_seals`) now covers it."""
        if not self.legacy_through:
            return
        covered = max(
            (last for at, last in self._seal_positions.items() if at > self.legacy_through),
            default=0,
        )
        covered = max([covered, *(seal.to_position for seal in new_seals)])
        protected = (
            "and a seal keyed with the secret covers them"
            if covered >= self.legacy_through
            else "and no keyed seal covers them yet (`mnemoledger seal` or a clean `verify` "
            "writes one)"
        )
        self.report.notes.append(
            f"positions 1-{self.legacy_through} were written before this home had a chain "
            f"secret: {self._legacy} events carry the old unkeyed chain and "
            f"{self._legacy_unchained} none; a rewrite of them that recomputes their hashes "
            f"shows only against a seal written since, {protected}"
        )

    # --- helpers -------------------------------------------------------------------------

    def _event_at(self, position: int) -> tuple[UUID | None, int | None]:
        found = self.recorder.select_notifications(position, 1, stop=position)
        if not found:
            return None, None
        oid = found[0].originator_id
        return (oid if isinstance(oid, UUID) else UUID(oid)), found[0].originator_version

    def _problem(
        self,
        kind: str,
        position: int | None,
        stream: UUID | None,
        version: int | None,
        detail: str,
    ) -> None:
        if kind in (CHANGED, FORGED, UNCHAINED) and position is not None:
            self._named.add(position)
        self.report.problems.append(
            Problem(kind, position, stream.hex if stream else None, version, detail)
        )
