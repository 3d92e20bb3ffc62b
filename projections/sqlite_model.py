"""The shared machinery of small SQLite read models: a file, a schema, a position.

Each page of events is applied in one `BEGIN IMMEDIATE` transaction that also records the
page's last position, so a crash never leaves the rows ahead of or behind the position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.sqlite_files import connect_shared

BULK_CACHE_KIB = 65_536
"""SQLite's page cache, in KiB, for a connection while it bulk-loads a read model (a
rebuild; SQLite's default is 2,000). The randomly keyed indexes of 100k memories (~5 MB)
then stay cached instead of being read back from the OS, and a page's transaction is not
spilled to the WAL before it commits (measured: inserting 100k memory rows into a table
shaped like `layers`, 19 -> 14 µs CPU per row)."""


@contextmanager
def larger_cache(execute: Callable[[str], Any], kib: int | None = None) -> Iterator[None]:
    """The connection whose `execute` is given has a `kib` (default `BULK_CACHE_KIB`) page
    cache inside the block (it shrinks back to what it was after it, freeing the memory)."""
    (before,) = execute("PRAGMA cache_size").fetchone()
    execute(f"PRAGMA cache_size = {-int(BULK_CACHE_KIB if kib is None else kib)}")
    try:
        yield
    finally:
        execute(f"PRAGMA cache_size = {int(before)}")


_POSITION_TABLE = (
    "CREATE TABLE IF NOT EXISTS projection_position (name TEXT PRIMARY KEY, position INTEGER)"
)


class SQLiteReadModel:
    """Subclasses name themselves, list their schema and tables, and handle records."""

    name: str
    schema: Sequence[str] = ()
    """CREATE statements of the model's tables."""
    tables: Sequence[str] = ()
    """Tables a reset empties."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = connect_shared(path)
        self.db.execute("PRAGMA synchronous=NORMAL")  # as layers, vectors: rebuildable
        for statement in (*self.schema, _POSITION_TABLE):
            self.db.execute(statement)

    def position(self) -> int:
        row = self.db.execute(
            "SELECT position FROM projection_position WHERE name = ?", (self.name,)
        ).fetchone()
        return int(row[0]) if row else 0

    def apply(self, records: Sequence[EventRecord]) -> None:
        if not records:
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for record in records:
                self.handle(record)
            self.db.execute(
                "INSERT OR REPLACE INTO projection_position VALUES (?, ?)",
                (self.name, records[-1].position),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            self.after_rollback()
            raise
        self.after_commit()

    def handle(self, record: EventRecord) -> None:
        """Fold one event into the tables (inside the page's transaction)."""
        raise NotImplementedError

    def after_commit(self) -> None:
        """Work that must follow a committed page (e.g. writing files)."""

    def after_rollback(self) -> None:
        """Forget work prepared for a page that did not commit."""

    def reset(self) -> None:
        for table in self.tables:
            self.db.execute(f"DELETE FROM {table}")
        self.db.execute("DELETE FROM projection_position")

    def close(self) -> None:
        self.db.close()
