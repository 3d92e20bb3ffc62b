"""Luminary's maintenance loop (seed 002) as operations of their own:

- `prune_expired` is pruneExpired: every note whose `expires_at` has passed is purged
  (`MemoryExpired` first if it was still active, then `MemoryPurged`: its content leaves the
  read models, its events stay in the log). It returns how many notes it pruned. Each user's
  run is one recorded command (`PruneRequested` ... `CommandCompleted`) that appends to the
  user's consistency stream, like every write. Consolidation cycles apply the same rule
  (`consolidation.lifecycle.prune_expired`); this runs it alone, at once.
- `merge_volatile` is the loop's batch merge: a user's volatile notes at least
  `VOLATILE_MERGE_AFTER_DAYS` old (still active: not expired, not superseded; seed 002's
  targets are those written without a TTL, which never expire) are merged by
  mergeNotes, oldest first, in batches of `MERGE_BATCH_SIZE` per scope. A batch needs two
  notes (mergeNotes merges 2+); a lone note waits for the next run. The worker runs it after
  every consolidation cycle (`commands.lifecycle.worker`).

Only notes (memories with a note kind) are touched: a plain memory with a TTL is expired by
consolidation and stays restorable from its events, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Final, Protocol, runtime_checkable

from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.write.command_run import decide_until_saved
from mnemoledger.commands.write.notes import DEFAULT_NOTE_SCOPE
from mnemoledger.commands.write.replaying import now as replaying_now
from mnemoledger.commands.write.replaying import recorded_id
from mnemoledger.ledger import Ledger, Memory, Provenance
from mnemoledger.ledger.command import Command
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import ACTIVE, EXPIRED, VOLATILE
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.user import UserStream
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.layers import LayersProjection, MemoryRow

VOLATILE_MERGE_AFTER_DAYS: Final = 7  # seed 002: "the Maintenance Loop's 7-day batch merge"
MERGE_BATCH_SIZE: Final = 5  # seed 002 mergeNotes: "Called by Maintenance Loop in batches of 5"
PRUNE_REASON: Final = "prune-expired"
"""`reason` of the `MemoryPurged` events pruneExpired writes (consolidation's rule name)."""


class PruneCommand(Command, created_event_name="PruneRequested"):
    """Luminary pruneExpired for one user, run on its own (seed 002)."""


@runtime_checkable
class MaintenanceHost(Protocol):
    """What the maintenance operations need of `MnemoLedger`."""

    ledger: Ledger
    layers: LayersProjection

    def refresh(self, progress: Any = None) -> int: ...

    def users_with_memories(self) -> list[str]: ...

    def merge_notes(
        self, note_ids: Sequence[str], *, agent: str | None = None, thread: str | None = None
    ) -> Any: ...

    def _provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance: ...


@dataclass
class UserPrune:
    """What pruneExpired did for one user."""

    user: str
    pruned: list[str]
    """Ids of the notes purged, in id order."""
    command_id: str | None
    """The recorded command; None when nothing was due (nothing is written then)."""


@dataclass
class PruneResult:
    """pruneExpired's answer: `count` notes pruned, at the clock value `now`."""

    count: int
    now: str
    users: list[UserPrune] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "now": self.now,
            "users": [
                {
                    "user": u.user,
                    "count": len(u.pruned),
                    "pruned": u.pruned,
                    "command_id": u.command_id,
                }
                for u in self.users
            ],
        }


def _aware(now: datetime | None) -> datetime:
    moment = now or replaying_now()
    if moment.tzinfo is None:
        raise InvalidInput("the clock value must be timezone-aware (UTC)")
    return moment


def _users(host: MaintenanceHost, user: str | None) -> list[str]:
    return [str(identifier("user", user))] if user is not None else host.users_with_memories()


def _due(row: MemoryRow, now: datetime) -> bool:
    """An expired note not yet pruned: past `expires_at`, active or already expired."""
    return (
        row.note_kind is not None
        and row.state in (ACTIVE, EXPIRED)
        and row.expires_at is not None
        and datetime.fromisoformat(row.expires_at) <= now
    )


def _due_in_log(memory: Memory, now: datetime) -> bool:
    return (
        memory.note_kind is not None
        and memory.state in (ACTIVE, EXPIRED)
        and memory.expires_at is not None
        and datetime.fromisoformat(memory.expires_at) <= now
    )


def prune_expired(
    host: MaintenanceHost,
    *,
    user: str | None = None,
    now: datetime | None = None,
    agent: str | None = None,
) -> PruneResult:
    """pruneExpired: purge every note of `user` (default: every user) whose `expires_at` is
    at or before `now` (default: the current time); returns how many were pruned."""
    moment = _aware(now)
    host.refresh()
    outcomes = [_prune_user(host, name, moment, agent) for name in _users(host, user)]
    return PruneResult(
        count=sum(len(o.pruned) for o in outcomes),
        now=moment.isoformat(),
        users=[o for o in outcomes if o.pruned],
    )


def _prune_user(host: MaintenanceHost, user: str, now: datetime, agent: str | None) -> UserPrune:
    if not any(_due(row, now) for row in host.layers.list(user)):
        return UserPrune(user=user, pruned=[], command_id=None)
    provenance = host._provenance(user, agent, None)
    with acting_as(provenance):
        command: Command = recorded_id(
            PruneCommand(input={"operation": "prune-expired", "user": user, "now": now.isoformat()})
        )
    host.ledger.save(command)
    decided = replace(provenance, causation_id=command.id.hex)

    def decide(command: Command, stream: UserStream) -> UserPrune:
        # the read model found the candidates; the log confirms each on fresh state
        rows = [row for row in host.layers.list(user) if _due(row, now)]
        notes = [host.ledger.memory(row.id) for row in sorted(rows, key=lambda r: r.id)]
        notes = [note for note in notes if _due_in_log(note, now)]
        with acting_as(decided):
            for note in notes:
                if note.state == ACTIVE and note.expires_at is not None:
                    note.expire(note.expires_at)
                note.purge(PRUNE_REASON)
        core = core_sync.follow(host.ledger, decided, user, notes)
        pruned = [note.id.hex for note in notes]
        with acting_as(decided):
            command.complete({"pruned": pruned, "count": len(pruned)})
            stream.changed(command.id.hex, [], [], [])
        host.ledger.save(command, stream, *notes, *([core] if core is not None else []))
        return UserPrune(user=user, pruned=pruned, command_id=command.id.hex)

    return decide_until_saved(host.ledger, command, decided, decide, host.refresh)


@dataclass
class MergeBatch:
    """One batch the maintenance loop merged."""

    user: str
    scope: str
    merged: list[str]
    summary: str
    """The id of the summary note the batch became."""


def volatile_batches(
    layers: LayersProjection, user: str, now: datetime
) -> list[tuple[str, list[str]]]:
    """(scope, note ids) of the batches due for the weekly merge: active volatile notes at
    least `VOLATILE_MERGE_AFTER_DAYS` old, unexpired and unsuperseded, oldest first, up to
    `MERGE_BATCH_SIZE` per batch, per scope; a batch of one is not due."""
    cutoff = now - timedelta(days=VOLATILE_MERGE_AFTER_DAYS)
    by_scope: dict[str, list[MemoryRow]] = {}
    for row in layers.list(user, state=ACTIVE):
        if (
            row.note_kind is not None
            and row.stability == VOLATILE
            and row.superseded_by is None
            and not row.is_expired(now)
            and datetime.fromisoformat(row.created_at) <= cutoff
        ):
            scope = (row.metadata or {}).get("scope")
            by_scope.setdefault(scope if isinstance(scope, str) else DEFAULT_NOTE_SCOPE, []).append(
                row
            )
    batches: list[tuple[str, list[str]]] = []
    for scope in sorted(by_scope):
        rows = sorted(by_scope[scope], key=lambda r: (r.created_at, r.position))
        for start in range(0, len(rows), MERGE_BATCH_SIZE):
            batch = [row.id for row in rows[start : start + MERGE_BATCH_SIZE]]
            if len(batch) >= 2:
                batches.append((scope, batch))
    return batches


def merge_volatile(
    host: MaintenanceHost,
    *,
    user: str | None = None,
    now: datetime | None = None,
    agent: str | None = None,
) -> list[MergeBatch]:
    """The maintenance loop's batch merge for `user` (default: every user): each due batch
    of week-old volatile notes becomes one summary note (mergeNotes, one recorded command
    per batch). Returns the batches merged."""
    moment = _aware(now)
    host.refresh()
    merged: list[MergeBatch] = []
    for name in _users(host, user):
        for scope, ids in volatile_batches(host.layers, name, moment):
            result = host.merge_notes(ids, agent=agent)
            merged.append(MergeBatch(user=name, scope=scope, merged=ids, summary=result.note.id))
    return merged
