"""`report`: operations and LLM usage, by DuckDB over the event log (seed 003 §14, seed 001
§7 `llm_usage`).

The log is loaded into DuckDB as two Arrow tables: `ops` (one row per memory operation:
time, node, op, status, the memory's category and, where the log holds one, `sim`: the best
neighbour score) and `llm` (one row per recorded LLM call: stage, model, tokens, latency).
Nothing is stored: the figures are always those of the log.

Seed 003 §14's fields: `classify` is one row per memory written, `ok` when the writer named
its category, `skipped` when the reader derives one (kind, note kind, namespace); `category`
is that category, on every row about the memory; `sim` is the strength of the new memory's
strongest link to an older one written by the same command (the relations layer's
neighbour score), a link's strength, and reconcile's pair similarity.

Nodes (seed 003 §14) are named by the command that caused an operation: `hotpath` (add),
`episodic` (ingest), `notes`, `worker` (consolidation), `api` (direct verbs), `context`
(recalls served).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.audit.export import all_events
from mnemoledger.ledger import Ledger
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.projections.layers import effective_category

BUCKETS = ("hour", "day", "week", "month")

NODES = {
    "AddRequested": "hotpath",
    "IngestRequested": "episodic",
    "NoteRequested": "notes",
    "ConsolidationRequested": "worker",
}
"""Seed 003 §14's node of each command type; operations outside a command are `api`."""

OPS = {
    "MemoryAdded": "create",
    "MemoryUpdated": "update",
    "MemorySuperseded": "merge",
    "MemoryReinforced": "merge",
    "MemorySoftDeleted": "delete",
    "MemoryRestored": "restore",
    "MemoryLinked": "link",
    "TTLSet": "ttl",
    "RecallServed": "search",
    "CommandFailed": "command",
    "CommandCompleted": "command",
    "GateDecided": "gate",
    "TriageDecided": "triage",
    "MemoryPromoted": "promote",
    "MemoryDemoted": "demote",
    "ReconcileDecided": "reconcile",
}
"""Seed 003 §14's op of each event type (others: the event type itself, for memories)."""


CLASSIFY = "classify"
"""The op of each memory written: how it got its category (seed 003 §14)."""


class OperationCount(BaseModel):
    bucket: str
    node: str
    op: str
    status: str
    count: int
    avg_sim: float | None = None
    """The mean best-neighbour score of the rows that have one (None: none has)."""
    max_sim: float | None = None


class CategoryCount(BaseModel):
    """Operations on the memories of one category (seed 003 §14's `category`)."""

    bucket: str
    node: str
    op: str
    category: str
    count: int


class LLMUsageRow(BaseModel):
    stage: str
    model: str
    provider: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    avg_latency_ms: float
    p95_latency_ms: float


class Report(BaseModel):
    """What the log says happened, and what the LLM cost."""

    events: int
    bucket: str
    operations: list[OperationCount]
    categories: list[CategoryCount] = []
    llm: list[LLMUsageRow]


def build_report(ledger: Ledger, *, user: str | None = None, bucket: str = "day") -> Report:
    if bucket not in BUCKETS:
        raise InvalidInput(f"bucket must be one of {', '.join(BUCKETS)}; got {bucket!r}")
    import duckdb  # DuckDB and Arrow load when a report is asked for, not with the API
    import pyarrow as pa  # type: ignore[import-untyped]

    ops: dict[str, list[Any]] = {
        "ts": [],
        "node": [],
        "op": [],
        "status": [],
        "category": [],
        "sim": [],
    }
    categories: dict[str, str] = {}
    """Memory id -> its category, from its MemoryAdded."""
    created_at: dict[tuple[str, str | None], int] = {}
    """(memory id, command) -> the row of its creation, which its links' best score fills."""

    def row(ts: Any, node: str, op: str, status: str, category: str | None, sim: Any) -> int:
        for name, value in zip(ops, (ts, node, op, status, category, sim), strict=True):
            ops[name].append(value)
        return len(ops["ts"]) - 1

    llm: dict[str, list[Any]] = {
        "stage": [],
        "model": [],
        "provider": [],
        "prompt_tokens": [],
        "completion_tokens": [],
        "latency_ms": [],
    }
    commands: dict[str, str] = {}
    events = 0
    for r in all_events(ledger):
        if r.type.endswith("Requested") and "input" in r.data and r.version == 1:
            commands[r.stream_id] = r.type
        if user is not None and r.user_id != user:
            continue
        events += 1
        if r.type == "LLMCallRecorded":
            d = r.data
            llm["stage"].append(str(d.get("stage", "?")))
            llm["model"].append(str(d.get("model", "?")))
            llm["provider"].append(str(d.get("provider", "?")))
            llm["prompt_tokens"].append(int(d.get("prompt_tokens") or 0))
            llm["completion_tokens"].append(int(d.get("completion_tokens") or 0))
            llm["latency_ms"].append(float(d.get("latency_ms") or 0.0))
        op = OPS.get(r.type) or (r.type if r.type.startswith("Memory") else None)
        if op is None:
            continue
        command = commands.get(r.stream_id) or commands.get(r.causation_id)
        node = "context" if op == "search" else NODES.get(command or "", "api")
        if r.type == "CommandFailed":
            status = "error"
        elif r.type.endswith("Decided"):
            status = str(r.data.get("decision", "ok"))
        else:
            status = "ok"
        d = r.data
        if r.type == "MemoryAdded":
            named = d.get("category")
            derived = effective_category(
                named if isinstance(named, str) else None,
                str(d.get("kind") or ""),
                str(d.get("namespace") or ""),
                d.get("note_kind") if isinstance(d.get("note_kind"), str) else None,
            )
            categories[r.stream_id] = derived
            row(r.at, node, CLASSIFY, "ok" if named else "skipped", derived, None)
        category = categories.get(r.stream_id)
        sim = _number(d.get("strength") if r.type == "MemoryLinked" else d.get("similarity"))
        at = row(r.at, node, op, status, category, sim)
        if r.type == "MemoryAdded":
            created_at[(r.stream_id, r.causation_id)] = at
        elif r.type == "MemoryLinked" and sim is not None:
            created = created_at.get((r.stream_id, r.causation_id))
            if created is not None:  # the new memory's best neighbour, in the same command
                best = ops["sim"][created]
                ops["sim"][created] = sim if best is None else max(best, sim)
    ops_table = pa.table(
        ops,
        schema=pa.schema(
            [
                ("ts", pa.timestamp("us", tz="UTC")),
                ("node", pa.string()),
                ("op", pa.string()),
                ("status", pa.string()),
                ("category", pa.string()),
                ("sim", pa.float64()),
            ]
        ),
    )
    llm_table = pa.table(
        llm,
        schema=pa.schema(
            [
                ("stage", pa.string()),
                ("model", pa.string()),
                ("provider", pa.string()),
                ("prompt_tokens", pa.int64()),
                ("completion_tokens", pa.int64()),
                ("latency_ms", pa.float64()),
            ]
        ),
    )
    with duckdb.connect() as db:
        db.execute("SET TimeZone = 'UTC'")
        db.register("ops", ops_table)
        db.register("llm", llm_table)
        bucketed = f"strftime(date_trunc('{bucket}', ts), '%Y-%m-%dT%H:%M:%SZ') AS bucket"
        operations = db.execute(
            f"SELECT {bucketed}, node, op, status, count(*), round(avg(sim), 4), round(max(sim), 4)"
            " FROM ops GROUP BY bucket, node, op, status ORDER BY ALL"
        ).fetchall()
        by_category = db.execute(
            f"SELECT {bucketed}, node, op, category, count(*) FROM ops WHERE category IS NOT NULL"
            " GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        usage = db.execute(
            "SELECT stage, model, provider, count(*), sum(prompt_tokens), sum(completion_tokens),"
            " round(avg(latency_ms), 3), round(quantile_cont(latency_ms, 0.95), 3)"
            " FROM llm GROUP BY ALL ORDER BY stage, model, provider"
        ).fetchall()
    return Report(
        events=events,
        bucket=bucket,
        operations=[
            OperationCount(
                bucket=b, node=n, op=o, status=s, count=c, avg_sim=avg_sim, max_sim=max_sim
            )
            for b, n, o, s, c, avg_sim, max_sim in operations
        ],
        categories=[
            CategoryCount(bucket=cb, node=cn, op=co, category=cc, count=count)
            for cb, cn, co, cc, count in by_category
        ],
        llm=[
            LLMUsageRow(
                stage=s,
                model=m,
                provider=p,
                calls=c,
                prompt_tokens=int(pt),
                completion_tokens=int(ct),
                avg_latency_ms=float(avg),
                p95_latency_ms=float(p95),
            )
            for s, m, p, c, pt, ct, avg, p95 in usage
        ],
    )


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
