"""The `graph` read model: relation edges between memories (seed 003 §2, memU links).

Edges are **undirected relations**, stored once per unordered pair: the primary key is the
pair in canonical order (`lo` < `hi`), so a `MemoryLinked` from A to B and a later one from
B to A are one relation. `from_id`/`to_id` keep the direction in which the relation was
first recorded (what `edges()` shows); `neighbours()` and `related()` orient each edge
away from the memory asked about.

When a pair is linked again:
- `strength` is the **maximum** ever recorded: order-independent, so an automatic link from
  either end or a re-link never weakens a relation;
- `type`: a manual type (anything but `auto`) replaces `auto` and an earlier manual type;
  `auto` never replaces a manual type, so `mnemoledger link --type T` keeps its type.

Nothing is removed when a memory is superseded or forgotten: a small `nodes` table folds
each memory's user, state and layer (from the memory events that add, end, restore or move
it), and queries asked with `active_only` return only
edges whose both ends are active (restoring a memory brings its edges back).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.policy import (
    ACTIVE,
    AUTO_LINK_TYPE,
    ENTRY_LAYER,
    EVICTED,
    EXPIRED,
    FORGOTTEN,
    PURGED,
    RELATED_BULLETS_MAX,
    SUPERSEDED,
)
from mnemoledger.projections.sqlite_model import SQLiteReadModel

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS nodes ("
    " memory_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, state TEXT NOT NULL,"
    " layer TEXT NOT NULL, kind TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS nodes_by_user ON nodes (user_id)",
    "CREATE TABLE IF NOT EXISTS edges ("
    " lo TEXT NOT NULL, hi TEXT NOT NULL, from_id TEXT NOT NULL, to_id TEXT NOT NULL,"
    " user_id TEXT NOT NULL, type TEXT NOT NULL, strength REAL NOT NULL,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL, position INTEGER NOT NULL,"
    " PRIMARY KEY (lo, hi))",
    "CREATE INDEX IF NOT EXISTS edges_by_hi ON edges (hi)",
    "CREATE INDEX IF NOT EXISTS edges_by_user ON edges (user_id)",
)

_LINK = (
    "INSERT INTO edges (lo, hi, from_id, to_id, user_id, type, strength, created_at,"
    " updated_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (lo, hi) DO UPDATE SET"
    " strength = MAX(edges.strength, excluded.strength),"
    " type = CASE WHEN excluded.type = ? AND edges.type != ? THEN edges.type"
    " ELSE excluded.type END,"
    " updated_at = excluded.updated_at, position = excluded.position"
)

_STATES = {
    "MemorySuperseded": SUPERSEDED,
    "MemorySoftDeleted": FORGOTTEN,
    "MemoryRestored": ACTIVE,
    "MemoryLapsed": FORGOTTEN,  # seed 003 §7 soft delete (restorable until purged)
    "MemoryEvicted": EVICTED,
    "MemoryExpired": EXPIRED,
    "MemoryPurged": PURGED,
}
"""The events that end (or bring back) a memory, as the `layers` model reads them: an edge
to a memory in any state but active neither boosts a result nor shows as a related line."""

_LAYER_FIELD = {"MemoryPromoted": "to_layer", "MemoryDemoted": "to_layer", "MemoryMerged": "layer"}
"""The events that move a memory between layers, and the field naming its new layer."""

_MAX_PARAMETERS = 400
"""Memory ids per `IN (...)` list (SQLite allows 999 bound parameters by default; queries
bind each id twice)."""

_ACTIVE_ENDS = "".join(
    f" AND EXISTS (SELECT 1 FROM nodes n WHERE n.memory_id = e.{end} AND n.state = '{ACTIVE}')"
    for end in ("lo", "hi")
)
"""Both ends of edge `e` are active memories."""

_EDGE_COLUMNS = "e.from_id, e.to_id, e.type, e.strength, e.user_id, e.created_at, e.updated_at"


@dataclass(frozen=True)
class Edge:
    """One relation between two memories of a user."""

    from_id: str
    to_id: str
    type: str
    strength: float
    user_id: str
    created_at: str
    """When the pair was first linked (ISO-8601 UTC)."""
    updated_at: str
    """When the pair was last linked."""

    def as_json(self) -> dict[str, Any]:
        return {
            "from": self.from_id,
            "to": self.to_id,
            "type": self.type,
            "strength": self.strength,
        }


@dataclass(frozen=True)
class Node:
    """A memory as the graph sees it."""

    memory_id: str
    user_id: str
    state: str
    layer: str
    """Buffer, Working or Core (consolidation promotes, demotes and merges upward)."""
    kind: str


class GraphProjection(SQLiteReadModel):
    """Relation edges and memory states under `directory/graph.sqlite3`."""

    name = "graph"
    schema = _SCHEMA
    tables = ("edges", "nodes")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        super().__init__(directory / "graph.sqlite3")

    # --- folding events ------------------------------------------------------------------

    def handle(self, record: EventRecord) -> None:
        if record.type == "MemoryLinked":
            self._linked(record)
        elif record.type == "MemoryAdded":
            self.db.execute(
                "INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?, ?)",
                (record.stream_id, record.user_id, ACTIVE, ENTRY_LAYER, record.data["kind"]),
            )
        elif record.type in _STATES:
            self.db.execute(
                "UPDATE nodes SET state = ? WHERE memory_id = ?",
                (_STATES[record.type], record.stream_id),
            )
        elif record.type in _LAYER_FIELD:
            self.db.execute(
                "UPDATE nodes SET layer = ? WHERE memory_id = ?",
                (record.data[_LAYER_FIELD[record.type]], record.stream_id),
            )

    def _linked(self, record: EventRecord) -> None:
        source, target = record.stream_id, str(record.data["target_id"])
        if source == target:
            return
        lo, hi = sorted((source, target))
        at = record.at.isoformat()
        self.db.execute(
            _LINK,
            (
                lo,
                hi,
                source,
                target,
                record.user_id,
                str(record.data["link_type"]),
                float(record.data["strength"]),
                at,
                at,
                record.position,
                AUTO_LINK_TYPE,
                AUTO_LINK_TYPE,
            ),
        )

    # --- queries -------------------------------------------------------------------------

    def neighbours(
        self, memory_id: str, min_strength: float = 0.0, *, active_only: bool = False
    ) -> builtins.list[Edge]:
        """Every edge of `memory_id` with strength >= `min_strength`, oriented from it,
        strongest first (ties by the other end's id)."""
        sql = (
            f"SELECT {_EDGE_COLUMNS} FROM edges e WHERE (e.lo = ? OR e.hi = ?) AND e.strength >= ?"
        )
        if active_only:
            sql += _ACTIVE_ENDS
        rows = self.db.execute(sql, (memory_id, memory_id, min_strength)).fetchall()
        edges = [_oriented(Edge(*row), memory_id) for row in rows]
        edges.sort(key=lambda edge: (-edge.strength, edge.to_id))
        return edges

    def related(
        self, memory_id: str, limit: int = RELATED_BULLETS_MAX, *, active_only: bool = True
    ) -> builtins.list[Edge]:
        """The `limit` strongest edges of `memory_id` (to active memories by default)."""
        if limit <= 0:
            return []
        return self.neighbours(memory_id, active_only=active_only)[:limit]

    def max_related_strength(
        self, memory_ids: Sequence[str], *, active_only: bool = True
    ) -> dict[str, float]:
        """The strongest edge of each memory (0.0 when it has none), for the retrieval boost
        of seed 003 §2; edges to inactive memories do not count by default."""
        best = dict.fromkeys(memory_ids, 0.0)
        ids = list(best)
        for start in range(0, len(ids), _MAX_PARAMETERS):
            chunk = ids[start : start + _MAX_PARAMETERS]
            marks = ", ".join("?" * len(chunk))
            active = _ACTIVE_ENDS if active_only else ""
            sql = " UNION ALL ".join(
                f"SELECT e.{end}, MAX(e.strength) FROM edges e"
                f" WHERE e.{end} IN ({marks}){active} GROUP BY e.{end}"
                for end in ("lo", "hi")
            )
            for memory_id, strength in self.db.execute(sql, (*chunk, *chunk)):
                best[memory_id] = max(best[memory_id], float(strength))
        return best

    def edges(
        self, user_id: str, min_strength: float = 0.0, *, active_only: bool = False
    ) -> builtins.list[Edge]:
        """Every relation of `user_id`, once each, in the direction first recorded,
        strongest first (ties by ids)."""
        sql = f"SELECT {_EDGE_COLUMNS} FROM edges e WHERE e.user_id = ? AND e.strength >= ?"
        if active_only:
            sql += _ACTIVE_ENDS
        sql += " ORDER BY e.strength DESC, e.lo, e.hi"
        return [Edge(*row) for row in self.db.execute(sql, (user_id, min_strength))]

    def node(self, memory_id: str) -> Node | None:
        """A memory's user, state, layer and kind, if the graph has seen it added."""
        row = self.db.execute(
            "SELECT memory_id, user_id, state, layer, kind FROM nodes WHERE memory_id = ?",
            (memory_id,),
        ).fetchone()
        return None if row is None else Node(*row)

    def nodes(self, user_id: str, *, active_only: bool = False) -> builtins.list[Node]:
        """A user's memories (for a graph view), ordered by id."""
        sql = "SELECT memory_id, user_id, state, layer, kind FROM nodes WHERE user_id = ?"
        params: tuple[str, ...] = (user_id,)
        if active_only:
            sql += " AND state = ?"
            params += (ACTIVE,)
        return [Node(*row) for row in self.db.execute(sql + " ORDER BY memory_id", params)]

    def counts(self) -> dict[str, int]:
        """How many edges and nodes the read model holds."""
        edges = self.db.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
        nodes = self.db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
        return {"edges": int(edges), "nodes": int(nodes)}


def _oriented(edge: Edge, memory_id: str) -> Edge:
    """The edge read from `memory_id`'s end."""
    if edge.from_id == memory_id:
        return edge
    return replace(edge, from_id=memory_id, to_id=edge.from_id)
