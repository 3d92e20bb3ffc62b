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
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import UUID

import orjson
from eventsourcing.persistence import IntegrityError

from mnemoledger.commands.write.sanitize import RecordScreen
from mnemoledger.ledger import EventRecord, Ledger
from mnemoledger.ledger.errors import InvalidInput, UnknownUser
from mnemoledger.ledger.event import METADATA_FIELDS
from mnemoledger.projections.history import event_name

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

FORMATS = ("jsonl", "parquet", "csv")
READ_PAGE = 5000
IMPORT_BATCH = 500
"""Events saved per transaction on import."""

Progress = Callable[[int, int], None]

ERASED = "UserErased"


@cache
def timeline_schema() -> pa.Schema:
    """The timeline table: one row per event; `data` is the event's own fields as JSON."""
    import pyarrow as pa

    return pa.schema(
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
    import pyarrow as pa

    schema = timeline_schema()
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
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
    return pa.table(columns, schema=schema)


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
    import duckdb  # DuckDB and Arrow load for a Parquet or CSV export only

    timeline = timeline_table(records)
    options = "FORMAT PARQUET" if format == "parquet" else "FORMAT CSV, HEADER"
    target = str(path).replace("'", "''")
    with duckdb.connect() as db:
        db.register("timeline", timeline)
        db.execute(f"COPY (SELECT * FROM timeline ORDER BY position) TO '{target}' ({options})")


REQUIRED_FIELDS = ("stream", "version", "type", "at")
"""What every line of an exported JSONL file has (`EventRecord.as_json()`)."""


class Exported(NamedTuple):
    """One event of an exported file, with the line it is on."""

    line: int
    record: EventRecord


def read_jsonl(path: Path) -> list[Exported]:
    """The events of an exported JSONL file; `InvalidInput` naming the first bad line and
    what is wrong with it (a byte that is not UTF-8 by its offset, a missing field by name)."""
    try:
        lines = path.read_bytes().splitlines(keepends=True)
    except OSError as error:
        raise InvalidInput(f"cannot read {path}: {error.strerror or error}") from None
    records: list[Exported] = []
    offset = 0
    for number, line in enumerate(lines, start=1):
        where = f"{path}, line {number}"
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InvalidInput(
                f"{where}: not UTF-8: byte 0x{line[error.start]:02x} at offset "
                f"{offset + error.start} of the file (column {error.start + 1} of the line)"
            ) from None
        offset += len(line)
        if not text.strip():
            continue
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as error:
            content = text.rstrip("\r\n")
            at = (
                "at the end of the line"
                if error.pos >= len(content)
                else f"at column {error.pos + 1} of the line"
            )
            raise InvalidInput(f"{where}: not JSON ({error.msg} {at})") from None
        try:
            records.append(Exported(number, _exported_event(obj)))
        except ValueError as error:
            raise InvalidInput(f"{where}: not an exported event: {error}") from None
    return records


_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
_JSON_KINDS[type(None)] = "null"


def _exported_event(obj: Any) -> EventRecord:
    """One line's object as an event; `ValueError` saying which field is missing or wrong."""
    if not isinstance(obj, dict):
        raise ValueError(
            f"a JSON {_JSON_KINDS.get(type(obj), 'value')} where an object was expected"
        )
    missing = [name for name in REQUIRED_FIELDS if name not in obj]
    if missing:
        fields = ", ".join(repr(name) for name in missing)
        raise ValueError(f"missing field{'s' if len(missing) > 1 else ''} {fields}")
    version = obj["version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError(f"field 'version' should be an integer, not {version!r}")
    position = obj.get("position")
    if position is not None and (isinstance(position, bool) or not isinstance(position, int)):
        raise ValueError(f"field 'position' should be an integer, not {position!r}")
    texts = {name: obj.get(name) for name in ("stream", "type", "at", *METADATA_FIELDS)}
    for name, value in texts.items():
        if value is not None and not isinstance(value, str):
            raise ValueError(f"field {name!r} should be a string, not {value!r}")
    try:
        UUID(hex=obj["stream"])
    except ValueError:
        raise ValueError(
            f"field 'stream' should be a stream id (32 hex digits), not {obj['stream']!r}"
        ) from None
    try:
        at = datetime.fromisoformat(obj["at"])
    except ValueError:
        raise ValueError(f"field 'at' should be an ISO-8601 time, not {obj['at']!r}") from None
    data = obj.get("data")
    if data is not None and not isinstance(data, dict):
        raise ValueError(f"field 'data' should be an object, not {data!r}")
    return EventRecord(
        position=position,
        stream_id=str(obj["stream"]),
        version=version,
        type=str(obj["type"]),
        at=at,
        user_id=texts["user_id"] or "",
        actor=texts["actor"] or "",
        agent_id=texts["agent_id"],
        thread_id=texts["thread_id"],
        causation_id=texts["causation_id"] or "",
        prompt_version=texts["prompt_version"],
        data=dict(data or {}),
    )


def import_records(
    ledger: Ledger,
    records: list[Exported],
    progress: Progress | None = None,
    source: Path | None = None,
) -> int:
    """Append the exported events to `ledger`, in order; returns how many. `InvalidInput`
    naming the line (of `source`) of the first event that cannot apply, and why."""
    # Imported here: the replay engine loads the whole stack (every stage, consolidation),
    # which every facade would otherwise pay for when it opens.
    from mnemoledger.commands.audit.replay.reapply import Reapplier, created_by

    batch = Reapplier(ledger, check_types=True)
    screened = RecordScreen()
    saved = 0
    for number, (line, record) in enumerate(records, start=1):
        where = f"{source}, line {line}" if source is not None else f"line {line}"
        where += f" ({record.type} on {record.stream_id}) cannot apply"
        try:
            applied = batch.add(screened(record))
        except InvalidInput as error:
            raise InvalidInput(f"{where}: {error}") from None
        if not applied:
            if record.version == 1 and created_by(record.type) is None:
                raise InvalidInput(f"{where}: no stream starts with a {record.type!r} event")
            raise InvalidInput(f"{where}: its stream is not in this ledger (was the export cut?)")
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
