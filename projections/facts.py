"""The `facts` read model (seed 001 §9 fact graph): subject-predicate-object triples the
memories state, with when each holds, and a word index over subjects and objects.

Follows `FactStated` and `FactEnded`. A fact whose memory left the store (forgotten,
superseded, evicted, expired, lapsed) is hidden until the memory is restored; a purged
memory's facts are deleted. Entities are matched case- and accent-insensitively.
"""

from __future__ import annotations

import builtins
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mnemoledger.ledger import EventRecord
from mnemoledger.projections.sqlite_model import SQLiteReadModel

STATED = "FactStated"
ENDED = "FactEnded"
_GONE = frozenset(
    {
        "MemorySoftDeleted",
        "MemorySuperseded",
        "MemoryEvicted",
        "MemoryExpired",
        "MemoryLapsed",
    }
)
_BACK = "MemoryRestored"
_PURGED = "MemoryPurged"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS facts (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
    " user_id TEXT NOT NULL, memory_id TEXT NOT NULL, subject TEXT NOT NULL,"
    " predicate TEXT NOT NULL, object TEXT NOT NULL, subject_key TEXT NOT NULL,"
    " object_key TEXT NOT NULL, valid_from TEXT NOT NULL, valid_until TEXT,"
    " superseded_by TEXT, position INTEGER NOT NULL, memory_present INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS facts_by_subject ON facts (user_id, subject_key, predicate)",
    "CREATE INDEX IF NOT EXISTS facts_by_object ON facts (user_id, object_key)",
    "CREATE INDEX IF NOT EXISTS facts_by_memory ON facts (memory_id)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(subject, object,"
    " content='facts', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')",
)
_COLUMNS = (
    "id, user_id, memory_id, subject, predicate, object, valid_from, valid_until,"
    " superseded_by, position"
)


def entity_key(text: str) -> str:
    """How an entity is compared: case-folded, without accents, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.split())


@dataclass(frozen=True)
class FactRow:
    """One fact as the read model holds it."""

    id: str
    user_id: str
    memory_id: str
    """The memory that states it."""
    subject: str
    predicate: str
    object: str
    valid_from: str
    """Since when it holds (UTC, ISO 8601)."""
    valid_until: str | None
    """When it stopped holding; None while it holds."""
    superseded_by: str | None
    """The fact that replaced it, if one did."""
    position: int
    hop: int = 0
    """In a graph query: 1 for a fact about the entity asked for, 2 for one a hop away."""


class FactsProjection(SQLiteReadModel):
    """Every user's facts, their validity, and a word index over subjects and objects."""

    name = "facts"
    schema = _SCHEMA
    tables = ("facts",)

    def __init__(self, directory: Path) -> None:
        super().__init__(directory / "facts.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type == STATED:
            self._stated(record)
        elif record.type == ENDED:
            self.db.execute(
                "UPDATE facts SET valid_until = ?, superseded_by = ? WHERE id = ?",
                (
                    str(record.data["valid_until"]),
                    record.data.get("superseded_by"),
                    str(record.data["fact_id"]),
                ),
            )
        elif record.type in _GONE or record.type == _BACK:
            self.db.execute(
                "UPDATE facts SET memory_present = ? WHERE memory_id = ?",
                (int(record.type == _BACK), record.stream_id),
            )
        elif record.type == _PURGED:
            for (rowid,) in self.db.execute(
                "SELECT rowid FROM facts WHERE memory_id = ?", (record.stream_id,)
            ).fetchall():
                self._unindex(int(rowid))
            self.db.execute("DELETE FROM facts WHERE memory_id = ?", (record.stream_id,))

    def _stated(self, record: EventRecord) -> None:
        data = record.data
        subject, obj = str(data["subject"]), str(data["object"])
        cursor = self.db.execute(
            "INSERT INTO facts (id, user_id, memory_id, subject, predicate, object,"
            " subject_key, object_key, valid_from, valid_until, superseded_by, position,"
            " memory_present) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, 1)",
            (
                str(data["fact_id"]),
                record.user_id,
                record.stream_id,
                subject,
                str(data["predicate"]),
                obj,
                entity_key(subject),
                entity_key(obj),
                str(data["valid_from"]),
                record.position,
            ),
        )
        self.db.execute(
            "INSERT INTO facts_fts (rowid, subject, object) VALUES (?, ?, ?)",
            (cursor.lastrowid, subject, obj),
        )

    def _unindex(self, rowid: int) -> None:
        row = self.db.execute("SELECT subject, object FROM facts WHERE rowid = ?", (rowid,))
        subject, obj = row.fetchone()
        self.db.execute(
            "INSERT INTO facts_fts (facts_fts, rowid, subject, object) VALUES ('delete', ?, ?, ?)",
            (rowid, subject, obj),
        )

    def reset(self) -> None:
        super().reset()
        self.db.execute("INSERT INTO facts_fts (facts_fts) VALUES ('delete-all')")

    # --- readers -------------------------------------------------------------------------

    def _where_valid(self, at: str | None) -> tuple[str, tuple[str, ...]]:
        """Facts whose memory is in the store and that hold at `at` (None: any time)."""
        if at is None:
            return "memory_present = 1", ()
        return (
            "memory_present = 1 AND valid_from <= ? AND (valid_until IS NULL OR valid_until > ?)",
            (at, at),
        )

    def holding(
        self, user_id: str, subject: str, predicate: str, at: str
    ) -> builtins.list[FactRow]:
        """The user's facts about `subject` with `predicate` that hold at `at`."""
        valid, params = self._where_valid(at)
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE user_id = ? AND subject_key = ?"
            f" AND predicate = ? AND {valid} ORDER BY position",
            (user_id, entity_key(subject), predicate, *params),
        ).fetchall()
        return [_row(r) for r in rows]

    def list(
        self, user_id: str, *, at: str | None, limit: int, predicate: str | None = None
    ) -> builtins.list[FactRow]:
        """The user's facts (holding at `at`, or all when None), newest first."""
        valid, params = self._where_valid(at)
        extra, extra_params = (
            ("", ()) if predicate is None else (" AND predicate = ?", (predicate,))
        )
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE user_id = ? AND {valid}{extra}"
            " ORDER BY position DESC LIMIT ?",
            (user_id, *params, *extra_params, limit),
        ).fetchall()
        return [_row(r) for r in rows]

    def about(
        self, user_id: str, entity: str, *, at: str | None, hops: int, limit: int
    ) -> builtins.list[FactRow]:
        """Facts naming `entity` (every word of it, in the subject or the object), then,
        up to `hops`, facts about the entities those facts lead to (query_multihop)."""
        words = [w for w in entity_key(entity).split() if any(c.isalnum() for c in w)]
        if not words:
            return []
        match = " AND ".join('"' + w.replace('"', '""') + '"' for w in words)
        valid, params = self._where_valid(at)
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE rowid IN"
            " (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?)"
            f" AND user_id = ? AND {valid} ORDER BY position DESC LIMIT ?",
            (match, user_id, *params, limit),
        ).fetchall()
        found = {str(r[0]): _row(r, hop=1) for r in rows}
        frontier = {entity_key(entity)}
        reached = [*found.values()]
        for hop in range(2, hops + 1):
            frontier = {
                key
                for fact in reached
                for key in (entity_key(fact.subject), entity_key(fact.object))
                if key not in frontier
            }
            if not frontier or len(found) >= limit:
                break
            marks = ",".join("?" * len(frontier))
            rows = self.db.execute(
                f"SELECT {_COLUMNS} FROM facts WHERE user_id = ? AND {valid} AND"
                f" (subject_key IN ({marks}) OR object_key IN ({marks}))"
                " ORDER BY position DESC LIMIT ?",
                (user_id, *params, *frontier, *frontier, limit - len(found)),
            ).fetchall()
            reached = [_row(r, hop=hop) for r in rows if str(r[0]) not in found]
            found.update((fact.id, fact) for fact in reached)
        return builtins.list(found.values())[:limit]

    def get(self, fact_id: str) -> FactRow | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM facts WHERE id = ?", (fact_id,))
        found = row.fetchone()
        return None if found is None else _row(found)


def _row(row: Sequence[object], hop: int = 0) -> FactRow:
    return FactRow(
        id=str(row[0]),
        user_id=str(row[1]),
        memory_id=str(row[2]),
        subject=str(row[3]),
        predicate=str(row[4]),
        object=str(row[5]),
        valid_from=str(row[6]),
        valid_until=None if row[7] is None else str(row[7]),
        superseded_by=None if row[8] is None else str(row[8]),
        position=int(str(row[9])),
        hop=hop,
    )
