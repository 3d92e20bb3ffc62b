"""The engram part of the `layers` read model (seed 001 §1-§3, 003 §3-§4, §7).

Kept in the layers database and written in the same transaction as the memory rows:
- `engram_users`: each user's epoch count, the log position and clock value of the last
  epoch, the last insight time;
- `engram_memories`: per memory, the epoch it entered its layer, the epoch it was last
  used (created or served: the soft-delete clock, counted in epochs so idle time costs
  nothing, seed 001 §2.4), gate rejections and the epoch a retry is allowed from, whether
  triage kept it, when a lapsed memory is purged;
- `engram_pairs`: pair keys a cycle examined (merge, reconcile, core overlap, daily
  fingerprints), never examined again (fingerprints: until they age out).

Importance decay is derived here from `ConsolidationEpochCompleted` (seed 001 §2.7): each
active memory's importance is `max(0, base - rate(kind) x (D - d))`, where D is the sum of
the user's epoch decays so far, and `base`, `d` were taken when the memory last changed
importance, kind or state. The formula gives the same value however many epochs are folded
at once, so the rows are brought up to date once per page (and, within a page, just the
rows the page touches), not once per epoch: a rebuild costs O(pages x memories), not
O(epochs x memories), and incremental and rebuilt read models agree exactly. Nothing decays
between epochs, so idle time decays nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.policy import ACTIVE, DECAY_FLOOR, DECAY_RATE_BY_KIND, SEMANTIC

EPOCH_EVENT = "ConsolidationEpochCompleted"

_TABLES = (
    "CREATE TABLE IF NOT EXISTS engram_users (user_id TEXT PRIMARY KEY, epoch INTEGER NOT NULL,"
    " position INTEGER NOT NULL, at TEXT, last_insight_at TEXT,"
    " decay_total REAL NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS engram_memories (id TEXT PRIMARY KEY, user_id TEXT NOT NULL,"
    " entered_epoch INTEGER NOT NULL, used_epoch INTEGER NOT NULL DEFAULT 0,"
    " gate_rejections INTEGER NOT NULL DEFAULT 0,"
    " gate_retry_epoch INTEGER, triaged INTEGER NOT NULL DEFAULT 0, purge_at TEXT,"
    " base_importance REAL NOT NULL, base_total REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS engram_memories_by_user ON engram_memories (user_id)",
    "CREATE TABLE IF NOT EXISTS engram_pairs (user_id TEXT NOT NULL, kind TEXT NOT NULL,"
    " key TEXT NOT NULL, epoch INTEGER NOT NULL, at TEXT NOT NULL,"
    " PRIMARY KEY (user_id, kind, key))",
)
_NAMES = ("engram_users", "engram_memories", "engram_pairs")


def outdated(conn: Connection) -> bool:
    """The engram tables exist with another schema (the layers model is then replayed)."""
    found = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(engram_memories)")]
    return bool(found) and "used_epoch" not in found


def create(conn: Connection) -> None:
    for statement in _TABLES:
        conn.exec_driver_sql(statement)


def drop(conn: Connection) -> None:
    for name in _NAMES:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {name}")


def segments(
    records: Sequence[EventRecord],
) -> Iterator[tuple[Sequence[EventRecord], EventRecord | None]]:
    """The records split at each epoch event: (the records before it, the epoch event)."""
    start = 0
    for index, record in enumerate(records):
        if record.type == EPOCH_EVENT:
            yield records[start:index], record
            start = index + 1
    if start < len(records):
        yield records[start:], None


def apply(conn: Connection, records: Sequence[EventRecord]) -> None:
    """Fold the per-memory engram facts of `records` (no epoch event among them), after
    the memory rows were written."""
    epochs: dict[str, int] = {}
    added = [
        (r.stream_id, r.user_id, _epoch_of(conn, r.user_id, epochs), r.data["importance"])
        for r in records
        if r.type == "MemoryAdded"
    ]
    if added:
        conn.exec_driver_sql(
            "INSERT OR REPLACE INTO engram_memories "
            "(id, user_id, entered_epoch, used_epoch, base_importance, base_total) "
            "VALUES (?, ?, ?, ?, ?, COALESCE((SELECT decay_total FROM engram_users "
            "WHERE engram_users.user_id = ?), 0))",
            [(i, u, e, e, imp, u) for i, u, e, imp in added],
        )
    rebased: set[str] = set()
    for record in records:
        handler = _HANDLERS.get(record.type)
        if handler is not None:
            handler(conn, record, epochs)
        if record.type in _REBASING:
            rebased.add(record.stream_id)
    for chunk in _chunks(sorted(rebased)):
        marks = ", ".join("?" * len(chunk))
        conn.exec_driver_sql(
            "UPDATE engram_memories SET "
            "base_importance = (SELECT importance FROM memories m WHERE m.id = engram_memories.id),"
            " base_total = COALESCE((SELECT decay_total FROM engram_users u "
            "WHERE u.user_id = engram_memories.user_id), 0) "
            f"WHERE id IN ({marks})",
            tuple(chunk),
        )


def apply_epoch(conn: Connection, record: EventRecord) -> None:
    """One more epoch for the user: its decay total grows (rows follow in `materialize`)."""
    d = record.data
    conn.exec_driver_sql(
        "INSERT INTO engram_users (user_id, epoch, position, at, decay_total) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET epoch = excluded.epoch, "
        "position = excluded.position, at = excluded.at, "
        "decay_total = engram_users.decay_total + excluded.decay_total",
        (
            record.user_id,
            d["epoch"],
            d.get("decided_at", record.position),
            d["now"],
            d["decay"],
        ),
    )
    pairs = [(record.user_id, kind, key, d["epoch"], d["now"]) for kind, key in d["pairs"]]
    if pairs:
        conn.exec_driver_sql(
            "INSERT OR REPLACE INTO engram_pairs (user_id, kind, key, epoch, at) "
            "VALUES (?, ?, ?, ?, ?)",
            pairs,
        )


def materialize(conn: Connection, user_id: str, memory_ids: Sequence[str] | None = None) -> None:
    """Write the decayed importance of the user's active memories (or of `memory_ids`)."""
    rates = " ".join(f"WHEN '{kind}' THEN {rate!r}" for kind, rate in DECAY_RATE_BY_KIND.items())
    sql = (
        f"UPDATE memories SET importance = MAX({DECAY_FLOOR!r}, e.base_importance - "
        f"(CASE memories.kind {rates} ELSE {DECAY_RATE_BY_KIND[SEMANTIC]!r} END) "
        "* (u.decay_total - e.base_total)) "
        "FROM engram_memories e, engram_users u "
        "WHERE e.id = memories.id AND u.user_id = memories.user_id "
        "AND memories.user_id = ? AND memories.state = ?"
    )
    if memory_ids is None:
        conn.exec_driver_sql(sql, (user_id, ACTIVE))
        return
    for chunk in _chunks(list(memory_ids)):
        marks = ", ".join("?" * len(chunk))
        conn.exec_driver_sql(f"{sql} AND memories.id IN ({marks})", (user_id, ACTIVE, *chunk))


def touched(records: Sequence[EventRecord]) -> list[str]:
    """Memory ids whose rows `records` read or write."""
    ids: set[str] = set()
    for record in records:
        if record.type == "RecallServed":
            ids.update(record.data.get("memory_ids") or ())
        else:
            ids.add(record.stream_id)
    return sorted(ids)


def _chunks(items: list[str], size: int = 500) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _epoch_of(conn: Connection, user_id: str, epochs: dict[str, int]) -> int:
    if user_id not in epochs:
        value = conn.exec_driver_sql(
            "SELECT epoch FROM engram_users WHERE user_id = ?", (user_id,)
        ).scalar()
        epochs[user_id] = int(value or 0)
    return epochs[user_id]


def _moved(conn: Connection, record: EventRecord, _epochs: dict[str, int]) -> None:
    _set(conn, record.stream_id, entered_epoch=record.data["epoch"])


def _merged(conn: Connection, record: EventRecord, _epochs: dict[str, int]) -> None:
    _set(conn, record.stream_id, entered_epoch=record.data["epoch"])


def _gate(conn: Connection, record: EventRecord, _epochs: dict[str, int]) -> None:
    if record.data["decision"] == "reject":
        conn.exec_driver_sql(
            "UPDATE engram_memories SET gate_rejections = gate_rejections + 1, "
            "gate_retry_epoch = ? WHERE id = ?",
            (record.data["retry_epoch"], record.stream_id),
        )


def _triaged(conn: Connection, record: EventRecord, _epochs: dict[str, int]) -> None:
    _set(conn, record.stream_id, triaged=1)


def _lapsed(conn: Connection, record: EventRecord, _epochs: dict[str, int]) -> None:
    _set(conn, record.stream_id, purge_at=record.data["purge_at"])


def _restored(conn: Connection, record: EventRecord, _epochs: dict[str, int]) -> None:
    _set(conn, record.stream_id, purge_at=None)


def _served(conn: Connection, record: EventRecord, epochs: dict[str, int]) -> None:
    """A memory served to an agent is used now: its idle epochs start again."""
    ids = sorted(set(record.data.get("memory_ids") or ()))
    for chunk in _chunks(ids):
        marks = ", ".join("?" * len(chunk))
        conn.exec_driver_sql(
            f"UPDATE engram_memories SET used_epoch = ? WHERE id IN ({marks})",
            (_epoch_of(conn, record.user_id, epochs), *chunk),
        )


def _insights(conn: Connection, record: EventRecord, epochs: dict[str, int]) -> None:
    conn.exec_driver_sql(
        "INSERT INTO engram_users (user_id, epoch, position, last_insight_at) "
        "VALUES (?, 0, 0, ?) ON CONFLICT (user_id) DO UPDATE SET "
        "last_insight_at = excluded.last_insight_at",
        (record.user_id, record.data["at"]),
    )


def _set(conn: Connection, memory_id: str, **values: Any) -> None:
    assignments = ", ".join(f"{name} = ?" for name in values)
    conn.exec_driver_sql(
        f"UPDATE engram_memories SET {assignments} WHERE id = ?", (*values.values(), memory_id)
    )


_REBASING = frozenset(
    {
        "MemoryMerged",
        "ImportanceAdjusted",
        "TriageDecided",
        "MemorySoftDeleted",
        "MemoryLapsed",
        "MemoryRestored",
        "MemoryEvicted",
        "MemoryExpired",
        "MemoryPurged",
        "MemorySuperseded",
    }
)
"""Events after which a memory's decay starts again from its current importance (its
importance, kind or state changed)."""

_HANDLERS = {
    "MemoryPromoted": _moved,
    "MemoryDemoted": _moved,
    "MemoryMerged": _merged,
    "GateDecided": _gate,
    "TriageDecided": _triaged,
    "MemoryLapsed": _lapsed,
    "MemoryRestored": _restored,
    "InsightsWritten": _insights,
    "RecallServed": _served,
}


# --- readers (the consolidation cycle's view) ------------------------------------------


class UserEpoch(NamedTuple):
    epoch: int
    """Epochs completed."""
    position: int
    """Log position the last epoch decided at (0: none): memories changed after it are
    scanned for pairs again."""
    at: str | None
    """The clock value of the last epoch."""
    last_insight_at: str | None


class MemoryFacts(NamedTuple):
    entered_epoch: int
    used_epoch: int
    """Epochs completed when the memory was created or last served."""
    gate_rejections: int
    gate_retry_epoch: int | None
    triaged: bool
    purge_at: str | None


def user_epoch(engine: Engine, user_id: str) -> UserEpoch:
    with engine.connect() as conn:
        row = conn.exec_driver_sql(
            "SELECT epoch, position, at, last_insight_at FROM engram_users WHERE user_id = ?",
            (user_id,),
        ).first()
    return UserEpoch(0, 0, None, None) if row is None else UserEpoch(*row)


def memory_facts(engine: Engine, user_id: str) -> dict[str, MemoryFacts]:
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT id, entered_epoch, used_epoch, gate_rejections, gate_retry_epoch, triaged,"
            " purge_at FROM engram_memories WHERE user_id = ?",
            (user_id,),
        ).all()
    return {r[0]: MemoryFacts(r[1], r[2], r[3], r[4], bool(r[5]), r[6]) for r in rows}


def pair_keys(engine: Engine, user_id: str, kind: str, since: str | None = None) -> set[str]:
    """Keys of `kind` recorded for the user (at or after `since`, if given)."""
    sql = "SELECT key FROM engram_pairs WHERE user_id = ? AND kind = ?"
    params: tuple[Any, ...] = (user_id, kind)
    if since is not None:
        sql += " AND at >= ?"
        params += (since,)
    with engine.connect() as conn:
        return {r[0] for r in conn.exec_driver_sql(sql, params)}
