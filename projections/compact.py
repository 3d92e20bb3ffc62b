"""Compaction: leave no deleted bytes behind in the SQLite files of a data directory.

A deleted or dropped row stays readable in SQLite's free pages, in FTS5 index segments that
were never merged, and in the write-ahead log until a checkpoint. After read models were
rebuilt without an erased user's content, every SQLite file (but the event log, whose
positions are rowids that `VACUUM` could renumber) is compacted: FTS5 indexes are merged
(`optimize`), the file is rebuilt (`VACUUM` with `secure_delete`), and its WAL is
checkpointed and truncated to zero bytes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path

_SQLITE_MAGIC = b"SQLite format 3\x00"

_FTS5_TABLES = (
    "SELECT name FROM sqlite_master WHERE type = 'table' "
    "AND lower(sql) LIKE 'create virtual table%using fts5(%'"
)


def is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def compact(path: Path) -> None:
    """Merge FTS5 segments, rebuild the file without free pages, empty its WAL."""
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        db.execute("PRAGMA secure_delete = ON")
        for (table,) in db.execute(_FTS5_TABLES).fetchall():
            quoted = '"' + str(table).replace('"', '""') + '"'
            db.execute(f"INSERT INTO {quoted}({quoted}) VALUES ('optimize')")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def compact_directory(directory: Path, skip: Collection[Path] = ()) -> list[Path]:
    """Compact every SQLite file under `directory` except those in `skip`; returns them."""
    skipped = {p.resolve() for p in skip}
    done: list[Path] = []
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.resolve() not in skipped and is_sqlite(path):
            compact(path)
            done.append(path)
    return done
