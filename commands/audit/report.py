"""`report`: operations and LLM usage, by DuckDB over the event log (seed 003 §14, seed 001
§7 `llm_usage`).

The log is loaded into DuckDB as two Arrow tables: `ops` (one row per memory operation:
bucket, node, op, status) and `llm` (one row per recorded LLM call: stage, model, tokens,
latency). Nothing is stored: the figures are always those of the log.

Nodes (seed 003 §14) are named by the command that caused an operation: `hotpath` (add),
`episodic` (ingest), `notes`, `worker` (consolidation), `api` (direct verbs), `context`
(recalls served).
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa  # type: ignore[import-untyped]
from pydantic import BaseModel

from mnemoledger.commands.audit.export import all_events
from mnemoledger.ledger import Ledger
from mnemoledger.ledger.errors import InvalidInput

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
}
"""Seed 003 §14's op of each event type (others: the event type itself, for memories)."""


class OperationCount(BaseModel):
    bucket: str
    node: str
    op: str
    status: str
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
    llm: list[LLMUsageRow]


def build_report(ledger: Ledger, *, user: str | None = None, bucket: str = "day") -> Report:
    if bucket not in BUCKETS:
        raise InvalidInput(f"bucket must be one of {', '.join(BUCKETS)}; got {bucket!r}")
    ops: dict[str, list[Any]] = {"ts": [], "node": [], "op": [], "status": []}
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
        ops["ts"].append(r.at)
        ops["node"].append(node)
        ops["op"].append(op)
        ops["status"].append(status)
    ops_table = pa.table(
        ops,
        schema=pa.schema(
            [
                ("ts", pa.timestamp("us", tz="UTC")),
                ("node", pa.string()),
                ("op", pa.string()),
                ("status", pa.string()),
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
        operations = db.execute(
            f"SELECT strftime(date_trunc('{bucket}', ts), '%Y-%m-%dT%H:%M:%SZ') AS bucket,"
            " node, op, status, count(*) FROM ops GROUP BY ALL ORDER BY ALL"
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
            OperationCount(bucket=b, node=n, op=o, status=s, count=c)
            for b, n, o, s, c in operations
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
