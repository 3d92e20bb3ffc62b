"""The shared machinery of small SQLite read models: a file, a schema, a position.

Each page of events is applied in one `BEGIN IMMEDIATE` transaction that also records the
page's last position, so a crash never leaves the rows ahead of or behind the position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import compress
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


class RowInsert:
    """An `INSERT ... VALUES (?, ...)` run over many rows, each row's None values written
    into the statement as NULL instead of bound.

    Python 3.11's sqlite3 binds a None (or a bytes value) through its adapter lookup,
    which raises and clears an AttributeError each time: ~0.85 µs per None on the bench
    machine, against ~0.2 µs for a str. A memory row of the layers model has a dozen Nones
    (no key, no TTL, no evidence...), which made writing it ~2.5x slower. Rows are grouped
    by which of their `nullable` columns are None; each group runs its own statement (at
    most one per pattern, cached). The rows written are the same: a NULL in the statement
    is the NULL the None would have bound."""

    def __init__(self, head: str, width: int, tail: str = "", nullable: Sequence[int] = ()) -> None:
        """`head` is the statement up to `VALUES`, `width` the values per row, `tail` what
        follows the values (e.g. `ON CONFLICT ...`); `nullable` the positions that may
        hold None (any other position is always bound)."""
        self.head = head
        self.width = width
        self.tail = tail
        self.nullable = tuple(nullable)
        self._statements: dict[tuple[bool, ...], tuple[str, tuple[bool, ...]]] = {}

    def _for(self, nulls: tuple[bool, ...]) -> tuple[str, tuple[bool, ...]]:
        found = self._statements.get(nulls)
        if found is None:
            null_at = {p for p, null in zip(self.nullable, nulls, strict=True) if null}
            marks = ["NULL" if p in null_at else "?" for p in range(self.width)]
            bound = tuple(p not in null_at for p in range(self.width))
            sql = f"{self.head} VALUES ({', '.join(marks)}){self.tail}"
            found = self._statements[nulls] = (sql, bound)
        return found

    def run(
        self, executemany: Callable[[str, list[Any]], Any], rows: Iterable[Sequence[Any]]
    ) -> None:
        """`executemany(statement, rows)` for each group of rows (in the order each group's
        first row comes; rows of one group keep their order). The groups are written one
        after another, so no two of `rows` may write the same row (rows of a dict by
        key are fine): the later one might be written first."""
        nullable = self.nullable
        groups: dict[tuple[bool, ...], list[Sequence[Any]]] = {}
        for row in rows:
            nulls = tuple([row[p] is None for p in nullable])
            group = groups.get(nulls)
            if group is None:
                groups[nulls] = [row]
            else:
                group.append(row)
        for nulls, group in groups.items():
            sql, bound = self._for(nulls)
            if all(bound):
                executemany(sql, [tuple(row) for row in group])
            else:
                executemany(sql, [tuple(compress(row, bound)) for row in group])


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
