"""What makes tampering with the log evident, wired into one application.

- The chain key: loaded from the chain secret store (`ledger.chain_secret`), or created on
  the first write or `verify`; a home whose log predates the secret keeps its old events as
  the legacy range.
- The witness: after every save the store remembers the newest position written and its
  hash and counts the save's events, so `verify` names a log cut short after its last
  seal and rows deleted anywhere; a save that finds the former tip gone (rows were
  deleted, then written on) leaves that tip for `verify` to name.
- Seals, written automatically: by a writer once SEAL_EVERY_EVENTS events are unsealed,
  and by every `verify` that found nothing wrong. On SQLite a writer that wrote every
  unsealed event itself writes the seal in the transaction of the save that makes it due
  (`SealWithin`), and the store takes the tip and the seal in one write: a batch then costs
  two synced commits (log, witness) instead of five.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from uuid import UUID

from eventsourcing.persistence import (
    ApplicationRecorder,
    IntegrityError,
    Notification,
    Recording,
    StoredEvent,
)

from mnemoledger.ledger.chain_secret import ChainSecretStore, ChainState, Tip
from mnemoledger.ledger.errors import IntegrityViolation, LedgerError
from mnemoledger.ledger.integrity import ChainKey, link_of, stored_link, unchained_hash
from mnemoledger.ledger.mapper import LedgerMapper
from mnemoledger.ledger.policy import SEAL_EVERY_EVENTS
from mnemoledger.ledger.provenance import Provenance, acting_as
from mnemoledger.ledger.seal import (
    SEALED_TOPICS,
    Seal,
    SealRange,
    last_sealed_position,
    ranges_to_seal,
    ranges_written,
)
from mnemoledger.ledger.sqlite_recorder import InTransaction
from mnemoledger.ledger.verify import SECRET_MISSING, Problem, Progress, Report, Verifier

Save = Callable[..., list[Recording[UUID]]]

WRITTEN_KEPT = 4 * SEAL_EVERY_EVENTS
"""At most this many hashes of events written are kept for the next automatic seal."""


class ChainSecretMissing(LedgerError):
    """The log holds keyed events but the chain secret is gone from where it lives."""


class TamperEvidence:
    """The chain key, the tip and the automatic seals of one application."""

    def __init__(
        self, recorder: ApplicationRecorder, mapper: LedgerMapper, store: ChainSecretStore
    ) -> None:
        self.recorder = recorder
        self.mapper = mapper
        self.store = store
        self._state: ChainState | None = None
        self._key: ChainKey | None = None
        self._sealed_through = 0
        self._sealing = False
        self._seal_refused_at = 0
        self._written: dict[int, tuple[str, bool]] = {}
        """(hash, is a seal) by position of the events this process saved since its last
        seal: an automatic seal of only these needs no read of the log."""
        self._seals_scanned = (0, 0)
        """(last position sealed, position of the newest seal) as the last scan found them:
        the next scan reads only the seals written since (a writer seals every
        SEAL_EVERY_EVENTS events, and every seal read again was quadratic)."""
        """The position at which an automatic seal last met a tampered event."""
        mapper.chain.key = self.key
        mapper.chain.last_stored = self.last_hash

    # --- the chain key -------------------------------------------------------------------

    def state(self) -> ChainState:
        """The stored secret and witness, the secret created if the home has none yet."""
        if self._state is None:
            state = self.store.load() or self._create()
            self._state, self._key = state, ChainKey(state.secret)
            self._sealed_through = state.sealed_through
        return self._state

    def key(self) -> ChainKey:
        if self._key is None:
            self.state()
        assert self._key is not None
        return self._key

    def _create(self) -> ChainState:
        """A new secret; the events already in the log become the legacy range, unless the
        newest one carries a keyed hash: then another process made the secret since this
        one looked (it is read), or the secret was lost, not never made."""
        end = self.recorder.max_notification_id() or 0
        for row in self.recorder.select_notifications(end, 1, stop=end) if end else []:
            oid = row.originator_id
            link = link_of(
                oid if isinstance(oid, UUID) else UUID(oid),
                row.originator_version,
                row.topic,
                self.mapper.document(row.state),
            )
            if link is not None and link.hash != link.computed:
                # another process may have made the secret and written with it since our
                # first look (two writers opening a fresh home): then it is there now
                made = self.store.load()
                if made is not None:
                    return made
                raise ChainSecretMissing(
                    f"the log's newest event (position {end}) does not carry the old "
                    "unkeyed chain, so it was written with a chain secret, and the chain "
                    "secret is missing (or that event was changed): restore the secret "
                    "(table chain_secret of chain.sqlite3 beside the log file, or "
                    "mnemoledger_chain_secret in the log's PostgreSQL schema)"
                )
        return self.store.create(legacy_through=end)

    def last_hash(self, originator_id: UUID) -> tuple[int, str] | None:
        """(version, stored hash) of the stream's newest stored event, for the chain."""
        found = self.recorder.select_events(originator_id, desc=True, limit=1)
        if not found:
            return None
        stored = found[0]
        document = self.mapper.document(stored.state)
        link = stored_link(document)
        if link is not None:
            return stored.originator_version, link[1]
        digest = unchained_hash(originator_id, stored.originator_version, stored.topic, document)
        return stored.originator_version, digest

    # --- after every save ------------------------------------------------------------------

    @property
    def sealing(self) -> bool:
        """Whether the save under way is a seal's own."""
        return self._sealing

    def seal_within(self, unsynced: Sequence[Recording[UUID]]) -> SealWithin:
        """A hook for a save's transaction (`ledger.sqlite_recorder`) that writes the
        automatic seal there when one is due; `unsynced`: events written before without a
        sync, which the save's commit makes durable."""
        return SealWithin(self, unsynced)

    def saved(
        self,
        recordings: Sequence[Recording[UUID]],
        save: Save,
        within: SealWithin | None = None,
    ) -> None:
        """Remember the newest event written; seal when enough events are unsealed.
        `within`: the save's hook, if it ran (a seal it wrote is witnessed with the save,
        tip and seal in one write of the store)."""
        if not recordings:
            return
        sealed = None if within is None else within.written
        if sealed is not None:
            recordings = [*recordings, *sealed.recordings]
        last = max(recordings, key=lambda r: r.notification.id)
        oid = last.domain_event.originator_id
        version = last.domain_event.originator_version
        known = self.mapper.chain.known(oid)
        if known is None or known[0] != version:
            known = self.last_hash(oid)
        first = min(r.notification.id for r in recordings)
        tip = None if known is None else Tip(last.notification.id, oid.hex, version, known[1])
        if sealed is not None:
            # the positions it sealed are forgotten at once: only those after are kept
            self._remember_written([r for r in recordings if r.notification.id > sealed.through])
            self._sealed_by_this_process(sealed.through, sealed.newest)
            if tip is None:
                self.store.sealed(sealed.through, sealed.newest)
            else:
                self.store.advance_tip_sealed(
                    tip, first, len(recordings), sealed.through, sealed.newest
                )
            return
        if tip is not None:
            self.store.advance_tip(tip, first, len(recordings))
        self._remember_written(recordings)
        position = last.notification.id
        if (
            self._sealing
            or position - self._sealed_through < SEAL_EVERY_EVENTS
            or position - self._seal_refused_at < SEAL_EVERY_EVENTS
        ):
            return
        stored = self.store.load()
        self._sealed_through = stored.sealed_through if stored else 0
        if position - self._sealed_through < SEAL_EVERY_EVENTS:
            return
        try:
            self.seal(save, Provenance(), through=position)
        except IntegrityError:
            pass  # another process sealed the same range first
        except IntegrityViolation:
            self._seal_refused_at = position  # tampered: `verify` names it; the write stands

    def _remember_written(self, recordings: Sequence[Recording[UUID]]) -> None:
        """Note the hash of each recorded event whose hash this process computed (the
        newest of its stream in the save), for the next automatic seal."""
        if len(self._written) > WRITTEN_KEPT:
            self._written.clear()  # no seal for long (refused): the log is read instead
        known = self.mapper.chain.known
        for recording in recordings:
            event = recording.domain_event
            found = known(event.originator_id)
            if found is not None and found[0] == event.originator_version:
                notification = recording.notification
                self._written[notification.id] = (found[1], notification.topic in SEALED_TOPICS)

    # --- seals and verification ----------------------------------------------------------

    def seal(self, save: Save, provenance: Provenance, through: int | None = None) -> list[Seal]:
        """Seal the log from the last sealed position to `through` (the newest event)."""
        state = self.state()
        self._seals_scanned = last_sealed_position(self.recorder, self.mapper, self._seals_scanned)
        start = self._seals_scanned[0] + 1
        end = (self.recorder.max_notification_id() or 0) if through is None else through
        written = self._written
        ranges = list(
            ranges_to_seal(
                self.recorder, self.mapper, start, end, self.key(), state.legacy_through, written
            )
        )
        for position in [p for p in written if p <= end]:
            del written[position]
        if not any(sealed.unsealed_events for sealed in ranges):
            return []  # only seals since the last seal: the witness keeps the newest
        seals = self._new_seals(ranges, provenance)
        if not seals:
            return seals
        self._sealing = True
        try:
            recordings = save(*seals)
        finally:
            self._sealing = False
        newest = max(r.notification.id for r in recordings)
        self._sealed_through = max(self._sealed_through, seals[-1].to_position)
        self.store.sealed(seals[-1].to_position, newest)
        return seals

    def _sealed_by_this_process(self, through: int, newest: int) -> None:
        """Note a seal this process committed: through `through`, at position `newest`."""
        written = self._written
        for position in [p for p in written if p <= through]:
            del written[position]
        self._sealed_through = max(self._sealed_through, through)
        if newest > self._seals_scanned[1]:
            self._seals_scanned = (max(self._seals_scanned[0], through), newest)

    def _new_seals(self, ranges: Sequence[SealRange], provenance: Provenance) -> list[Seal]:
        with acting_as(replace(provenance, user_id="")):
            return [
                Seal(
                    from_position=sealed.from_position,
                    to_position=sealed.to_position,
                    events=len(sealed.leaves),
                    root=sealed.root,
                    leaves=sealed.encoded_leaves(),
                    gaps=sealed.gaps,
                )
                for sealed in ranges
            ]

    def verify(
        self,
        save: Save,
        contiguous: bool,
        progress: Progress | None = None,
        published: Mapping[int, str] | None = None,
    ) -> Report:
        """Check the whole log (see ledger.verify); when nothing is wrong, seal what was
        unsealed, so the next truncation or forgery shows even without the tip."""
        try:
            self.state()
        except ChainSecretMissing as error:
            report = Report()
            report.problems.append(Problem(SECRET_MISSING, None, None, None, str(error)))
            return report
        witness = self.store.load()
        assert witness is not None
        verifier = Verifier(
            self.recorder,
            self.mapper,
            key=self.key(),
            legacy_through=witness.legacy_through,
            tip=witness.tip,
            reused=witness.reused,
            written=witness.written,
            last_seal=(witness.last_seal, witness.sealed_through),
            contiguous_positions=contiguous,
            published=published,
        )
        report = verifier.run(progress)
        if report.ok and report.sealed_through < report.last_event:
            try:
                sealed = self.seal(save, _verifier(), through=report.checked_through)
            except (IntegrityError, IntegrityViolation):
                sealed = []  # sealed by another process meanwhile / changed since checked
            report.new_seals.extend(sealed)
        verifier.legacy_notes(report.new_seals)
        return report

    def close(self) -> None:
        self.store.close()


def _verifier() -> Provenance:
    return Provenance(actor="verify")


@dataclass(frozen=True)
class WrittenSeal:
    """The seal a save wrote in its own transaction."""

    recordings: list[Recording[UUID]]
    through: int
    """The last position it covers (the save's newest event)."""
    newest: int
    """The position of its newest `Sealed` event."""


class SealWithin:
    """The automatic seal, written inside a save's transaction (SQLite) when one is due and
    every position to seal is one this process wrote itself (the save's events among them,
    so the log is not read for their hashes): the seal commits, and is synced, with the
    save. Otherwise nothing is written here and the save seals afterwards, as before."""

    def __init__(self, evidence: TamperEvidence, unsynced: Sequence[Recording[UUID]]) -> None:
        self._evidence = evidence
        self._unsynced = list(unsynced)
        self.written: WrittenSeal | None = None
        """Set once the seal is inserted (it counts only if the save commits)."""

    def __call__(
        self, stored_events: Sequence[StoredEvent], positions: Sequence[int], log: InTransaction
    ) -> None:
        self.written = None
        evidence = self._evidence
        if not positions or evidence.sealing:
            return
        end = max(positions)
        if (
            end - evidence._sealed_through < SEAL_EVERY_EVENTS
            or end - evidence._seal_refused_at < SEAL_EVERY_EVENTS
        ):
            return
        # the save holds the log's write lock: the seals read here are all there are
        evidence._seals_scanned = scanned = last_sealed_position(
            evidence.recorder, evidence.mapper, evidence._seals_scanned, log.select_notifications
        )
        evidence._sealed_through = max(evidence._sealed_through, scanned[0])
        start = scanned[0] + 1
        if end - scanned[0] < SEAL_EVERY_EVENTS:
            return
        ours = dict(self._hashes(stored_events, positions))
        ours.update(
            self._hashes(
                [r.notification for r in self._unsynced],
                [r.notification.id for r in self._unsynced],
            )
        )
        written = {**evidence._written, **ours}  # a dict: ChainMap lookups cost ~1 µs each
        if not all(map(written.__contains__, range(start, end + 1))):
            return  # others wrote some: the save seals afterwards, reading the log
        ranges = list(ranges_written(start, end, written))
        if not any(sealed.unsealed_events for sealed in ranges):
            return
        seals = evidence._new_seals(ranges, Provenance())
        events = [event for seal in seals for event in seal.collect_events()]
        stored = [evidence.mapper.to_stored_event(event) for event in events]
        inserted = log.insert_unless_conflicting(stored)
        if inserted is None:
            return  # cannot happen under the write lock; the save stands either way
        recordings = [
            Recording(event, _notification(row, position))
            for event, row, position in zip(events, stored, inserted, strict=True)
        ]
        self.written = WrittenSeal(recordings, ranges[-1].to_position, max(inserted))

    def _hashes(
        self, stored_events: Sequence[Any], positions: Sequence[int]
    ) -> list[tuple[int, tuple[str, bool]]]:
        """(position, (hash as written, is a seal)) of chained stored events: the hash the
        mapper just computed for it in this save, else read from its bytes."""
        mapper = self._evidence.mapper
        document = mapper.document if mapper.cipher or mapper.compressor else bytes
        chained_now = mapper.chain.pending() or {}
        found = []
        for row, position in zip(stored_events, positions, strict=True):
            now = chained_now.get(row.originator_id)
            if now is not None and now[0] == row.originator_version:
                found.append((position, (now[1], row.topic in SEALED_TOPICS)))
                continue
            link = stored_link(document(row.state))
            if link is not None:
                found.append((position, (link[1], row.topic in SEALED_TOPICS)))
        return found


def _notification(stored: StoredEvent, position: int) -> Notification:
    return Notification(
        id=position,
        originator_id=stored.originator_id,
        originator_version=stored.originator_version,
        topic=stored.topic,
        state=stored.state,
    )
