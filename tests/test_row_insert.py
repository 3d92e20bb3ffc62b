"""`RowInsert` writes what a plain executemany of the same rows writes (rows no two of which
write the same row, as its callers give): each None a NULL, every other value bound as it
was, whatever mix of Nones the rows have."""

from __future__ import annotations

import sqlite3
from typing import Any

from mnemoledger.projections.sqlite_model import RowInsert

COLUMNS = ("id", "a", "b", "c", "d")
CREATE = "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b REAL, c BLOB, d INTEGER NOT NULL)"


def written(rows: list[tuple[Any, ...]], insert: RowInsert | None) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(":memory:")
    db.execute(CREATE)
    if insert is None:
        db.executemany("INSERT OR REPLACE INTO t VALUES (?, ?, ?, ?, ?)", rows)
    else:
        insert.run(db.executemany, rows)
    found = db.execute(
        "SELECT id, a, typeof(a), b, typeof(b), c, typeof(c), d FROM t ORDER BY id"
    ).fetchall()
    db.close()
    return found


def test_rows_with_any_mix_of_nones_are_written_as_a_plain_executemany_writes() -> None:
    rows = [
        (n, None if n % 2 else f"text {n}", None if n % 3 else n / 7, None if n % 5 else b"\0x", n)
        for n in range(60)
    ]
    rows += [(60, "bytearray", 0.5, bytearray(b"blob"), -1)]
    insert = RowInsert("INSERT OR REPLACE INTO t (id, a, b, c, d)", 5, nullable=[1, 2, 3])
    assert written(rows, insert) == written(rows, None)
    assert len(insert._statements) == 8  # one statement per pattern of Nones met


def test_a_column_not_named_nullable_is_bound_even_when_none() -> None:
    insert = RowInsert("INSERT INTO t (id, a, b, c, d)", 5, nullable=[1])
    db = sqlite3.connect(":memory:")
    db.execute(CREATE)
    try:
        insert.run(db.executemany, [(1, None, None, None, 3)])
        assert db.execute("SELECT * FROM t").fetchall() == [(1, None, None, None, 3)]
        try:
            insert.run(db.executemany, [(2, "x", None, None, None)])
        except sqlite3.IntegrityError:
            pass  # NOT NULL still enforced: the None was bound, not dropped
        else:  # pragma: no cover
            raise AssertionError("a None in a NOT NULL column was accepted")
    finally:
        db.close()


def test_a_tail_follows_the_values() -> None:
    insert = RowInsert(
        "INSERT INTO t (id, a, b, c, d)",
        5,
        " ON CONFLICT (id) DO UPDATE SET a = excluded.a, d = excluded.d",
        nullable=[1, 2, 3],
    )
    db = sqlite3.connect(":memory:")
    db.execute(CREATE)
    try:
        insert.run(db.executemany, [(1, "one", None, None, 1), (2, "two", 2.0, b"", 3)])
        insert.run(db.executemany, [(1, None, 1.5, None, 2)])
        assert db.execute("SELECT * FROM t ORDER BY id").fetchall() == [
            (1, None, None, None, 2),
            (2, "two", 2.0, b"", 3),
        ]
    finally:
        db.close()
