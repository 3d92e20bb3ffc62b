"""A bulk load (a rebuild) runs its transactions with a larger SQLite page cache, and
gives the connection back with the cache it had."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemoledger.projections.sqlite_model import BULK_CACHE_KIB, larger_cache


def cache_size(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA cache_size").fetchone()[0])


def test_the_cache_is_larger_inside_and_as_before_after(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "model.sqlite3")
    db.execute("PRAGMA cache_size = -3000")
    with larger_cache(db.execute):
        assert cache_size(db) == -BULK_CACHE_KIB
    assert cache_size(db) == -3000
    with pytest.raises(RuntimeError), larger_cache(db.execute, kib=4096):
        assert cache_size(db) == -4096
        raise RuntimeError("a page failed")
    assert cache_size(db) == -3000, "restored when the block fails too"
