"""`Export`: a user's events out (JSONL, Parquet, CSV) and back in (JSONL).

memory.export(user="maya", format="jsonl", path="maya.jsonl")
other.import_events("maya.jsonl")          # in another home: identical read models
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from mnemoledger.commands.audit import export
from mnemoledger.commands.parts import Parts
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.runner import Progress


class ExportResult(BaseModel):
    user: str
    format: str
    path: str
    events: int


class ImportResult(BaseModel):
    path: str
    events: int
    users: list[str]


class Export:
    """A user's events out of the log, and exported events back into it."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def export(self, *, user: str, format: str, path: str | Path) -> ExportResult:
        """`MnemoLedger.export`: write a user's events to a file (documented there)."""
        identifier("user", user)
        records = export.user_events(self.parts.ledger, user)
        target = Path(path).expanduser()
        export.write(records, target, format)
        return ExportResult(user=user, format=format, path=str(target), events=len(records))

    def import_events(self, path: str | Path, progress: Progress | None = None) -> ImportResult:
        """`MnemoLedger.import_events`: append an exported JSONL's events (documented there)."""
        source = Path(path).expanduser()
        records = export.read_jsonl(source)
        count = export.import_records(self.parts.ledger, records, progress, source)
        self.parts.refresh()
        users = sorted({r.record.user_id for r in records if r.record.user_id})
        return ImportResult(path=str(source), events=count, users=users)
