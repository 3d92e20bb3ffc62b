"""Per-user export and import (seed 003 §8: "exportable per user").

JSONL is the faithful event stream: every event of every stream the user has events in,
in log order, one `EventRecord.as_json()` a line; `import` re-applies it (same ids,
versions, times and provenance), so the read models come out identical. Parquet and CSV
are the user's timeline table (one row per event), written by DuckDB from an Arrow table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa  # type: ignore[import-untyped]
from eventsourcing.persistence import IntegrityError

from mnemoledger.commands.audit.replay.reapply import Reapplier
from mnemoledger.commands.write.sanitize import RecordScreen
from mnemoledger.ledger import EventRecord, Ledger
from mnemoledger.ledger.errors import InvalidInput, UnknownUser
from mnemoledger.projections.history import event_name

FORMATS = ("jsonl", "parquet", "csv")
READ_PAGE = 5000
IMPORT_BATCH = 500
"""Events saved per transaction on import."""

Progress = Callable[[int, int], None]

ERASED = "UserErased"

TIMELINE_SCHEMA = pa.schema(
    [
        ("position", pa.int64()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("event", pa.string()),
        ("type", pa.string()),
        ("stream", pa.string()),
        ("version", pa.int64()),
        ("user_id", pa.string()),
        ("actor", pa.string()),
        ("agent_id", pa.string()),
        ("thread_id", pa.string()),
        ("causation_id", pa.string()),
        ("prompt_version", pa.string()),
        ("content", pa.string()),
        ("data", pa.string()),
    ]
)
"""The timeline table: one row per event; `data` is the event's own fields as JSON."""


def all_events(ledger: Ledger) -> Iterator[EventRecord]:
    after = 0
    while page := ledger.read(after, READ_PAGE):
        yield from page
        after = page[-1].position or after


def user_events(ledger: Ledger, user: str) -> list[EventRecord]:
    """Every event of every stream holding an event of `user`, in log order; nothing for
    an erased user (after `UserErased` their export is empty); `UnknownUser` if the log
    holds no event of `user` (as `erase` says: nothing to export, no file written)."""
    streams: set[str] = set()
    for record in all_events(ledger):
        if record.user_id == user:
            if record.type == ERASED:
                return []
            streams.add(record.stream_id)
    if not streams:
        raise UnknownUser(user)
    return [r for r in all_events(ledger) if r.stream_id in streams]


def timeline_table(records: list[EventRecord]) -> pa.Table:
    """The timeline rows of `records` as an Arrow table."""
    columns: dict[str, list[Any]] = {name: [] for name in TIMELINE_SCHEMA.names}
    for r in records:
        content = r.data.get("content")
        for name, value in (
            ("position", r.position),
            ("at", r.at),
            ("event", event_name(r.type)),
            ("type", r.type),
            ("stream", r.stream_id),
            ("version", r.version),
            ("user_id", r.user_id),
            ("actor", r.actor),
            ("agent_id", r.agent_id),
            ("thread_id", r.thread_id),
            ("causation_id", r.causation_id),
            ("prompt_version", r.prompt_version),
            ("content", content if isinstance(content, str) else None),
            ("data", json.dumps(r.data, ensure_ascii=False, sort_keys=True)),
        ):
            columns[name].append(value)
    return pa.table(columns, schema=TIMELINE_SCHEMA)


def write(records: list[EventRecord], path: Path, format: str) -> None:
    """Write `records` to `path` as JSONL (the events) or Parquet/CSV (the timeline)."""
    if format not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if format == "jsonl":
        with path.open("wb") as out:
            for record in records:
                out.write(orjson.dumps(record.as_json()) + b"\n")
        return
    timeline = timeline_table(records)
    options = "FORMAT PARQUET" if format == "parquet" else "FORMAT CSV, HEADER"
    target = str(path).replace("'", "''")
    with duckdb.connect() as db:
        db.register("timeline", timeline)
        db.execute(f"COPY (SELECT * FROM timeline ORDER BY position) TO '{target}' ({options})")


def read_jsonl(path: Path) -> list[EventRecord]:
    """The events of an exported JSONL file; `InvalidInput` naming the first bad line."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as error:
        raise InvalidInput(f"cannot read {path}: {error}") from None
    records: list[EventRecord] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
            records.append(
                EventRecord(
                    position=obj.get("position"),
                    stream_id=str(obj["stream"]),
                    version=int(obj["version"]),
                    type=str(obj["type"]),
                    at=datetime.fromisoformat(obj["at"]),
                    user_id=obj.get("user_id") or "",
                    actor=obj.get("actor") or "",
                    agent_id=obj.get("agent_id"),
                    thread_id=obj.get("thread_id"),
                    causation_id=obj.get("causation_id") or "",
                    prompt_version=obj.get("prompt_version"),
                    data=dict(obj.get("data") or {}),
                )
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise InvalidInput(f"{path}, line {number}: not an exported event ({error})") from None
    return records


def import_records(
    ledger: Ledger, records: list[EventRecord], progress: Progress | None = None
) -> int:
    """Append the exported events to `ledger`, in order; returns how many."""
    batch = Reapplier(ledger)
    screened = RecordScreen()
    saved = 0
    for number, record in enumerate(records, start=1):
        if not batch.add(screened(record)):
            raise InvalidInput(
                f"event {number} ({record.type} on {record.stream_id}) cannot apply: its stream "
                "is not in this ledger (was the export cut?)"
            )
        if len(batch.events) >= IMPORT_BATCH or number == len(records):
            try:
                saved += batch.flush()
            except IntegrityError:
                raise InvalidInput(
                    "these events are already in this ledger (or clash with it): "
                    "import into a new home"
                ) from None
            if progress is not None:
                progress(saved, len(records))
    return saved
