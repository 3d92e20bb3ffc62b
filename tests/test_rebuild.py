"""Incremental read models equal rebuilt ones, for any sequence of operations."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemoledger import MnemoLedger
from mnemoledger.ledger import InvalidTransition, Settings

AT = datetime(2030, 1, 1, tzinfo=UTC)
"""Searches judge recency at one fixed time, so scores compare exactly."""

WORDS = ["tea", "coffee", "Lisbon", "Porto", "dog", "marathon", "peanuts", "Neovim", "billing"]

operation = st.one_of(
    st.tuples(
        st.just("add"),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        st.sampled_from(["u1", "u2"]),
    ),
    st.tuples(
        st.just("update"),
        st.integers(0, 10_000),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    ),
    st.tuples(st.just("forget"), st.integers(0, 10_000)),
    st.tuples(st.just("restore"), st.integers(0, 10_000)),
    st.tuples(st.just("ttl"), st.integers(0, 10_000), st.integers(1, 30)),
    st.tuples(st.just("link"), st.integers(0, 10_000), st.integers(0, 10_000)),
    st.tuples(st.just("refresh")),
    st.tuples(st.just("consolidate"), st.integers(0, 120)),
)


def snapshot(memory: MnemoLedger) -> dict[str, Any]:
    views: dict[str, Any] = {
        "list": [m.model_dump() for m in memory.list()],
    }
    for user in ("u1", "u2"):
        views[f"latest {user}"] = [m.model_dump() for m in memory.latest(user=user)]
        for query in ("tea Lisbon", "dog marathon", "peanuts"):
            views[f"search {user} {query}"] = [
                h.model_dump() for h in memory.search(query, user=user, k=5, at=AT)
            ]
    return views


def apply(memory: MnemoLedger, ids: list[str], op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "add":
        ids.extend(m.id for m in memory.add([" ".join(op[1])], user=op[2]).memories)
    elif kind == "refresh":
        memory.refresh()
    elif kind == "consolidate":  # an engram cycle op[1] days after AT (decay, lifecycle)
        memory.consolidate(now=AT + timedelta(days=op[1]))
    elif ids:
        target = ids[op[1] % len(ids)]
        try:
            if kind == "update":
                memory.ledger.update(memory._provenance("", None, None), target, " ".join(op[2]))
            elif kind == "forget":
                memory.ledger.forget(memory._provenance("", None, None), target)
            elif kind == "restore":
                memory.ledger.restore(memory._provenance("", None, None), target)
            elif kind == "ttl":
                memory.ledger.set_ttl(memory._provenance("", None, None), target, op[2])
            elif kind == "link":
                other = ids[op[2] % len(ids)]
                memory.ledger.link(memory._provenance("", None, None), target, other)
        except InvalidTransition:
            pass
        except ValueError as error:  # links across users or to itself are refused
            assert "linked" in str(error)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=20, max_size=40))
def test_incremental_equals_rebuilt(operations: list[tuple[Any, ...]]) -> None:
    home = Path(tempfile.mkdtemp())
    try:
        ids: list[str] = []
        with MnemoLedger(settings=Settings(home=home, embedder="hashing")) as memory:
            for op in operations:
                apply(memory, ids, op)
            incremental = snapshot(memory)
        shutil.rmtree(home / "projections")
        with MnemoLedger(settings=Settings(home=home, embedder="hashing")) as memory:
            memory.rebuild()
            assert snapshot(memory) == incremental
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_rebuild_after_deleting_read_model_files_gives_identical_cli_output(
    tmp_path: Path,
) -> None:
    from tests.test_cli import run_json

    home = tmp_path / "home"
    for i in range(30):
        run_json(home, "add", f"fact {i} about {WORDS[i % len(WORDS)]}", "--user", f"u{i % 3}")
    first = run_json(home, "list", "--user", "u1")
    run_json(home, "forget", first[0]["id"])
    run_json(home, "update", first[1]["id"], "now about coffee and Porto")
    search = ("search", "coffee Porto", "--user", "u1", "--at", "2030-01-01T00:00:00+0000")
    before = (run_json(home, "list"), run_json(home, *search))
    shutil.rmtree(home / "projections")
    result = run_json(home, "rebuild")
    assert result["events"] == run_json(home, "stats")["events"] > 32
    assert set(result["projections"]) == {
        "layers",
        "vectors",
        "core",
        "consent",
        "delta",
        "graph",
        "transcripts",
        "history",
        "topics",
        "latest",
        "checkpoints",
        "facts",
        "flushes",
        "turn_queue",
        "pending_adds",
    }
    after = (run_json(home, "list"), run_json(home, *search))
    assert after == before


# --- the read models' tables themselves --------------------------------------------------

_STRUCTURAL = ("sqlite_", "memories_fts_")
"""SQLite's own tables and the FTS5 index's shadow tables, whose segments depend on how the
index was written (page by page, or built at once); the index's vocabulary is compared."""

_PER_BUILD = {("transcript_meta", "generation"), ("position", "generation")}
"""Rows (table, first value) and columns (table, name) that name one build of a read model,
new on every reset by design."""

_FTS_VOCABULARY = "SELECT term, doc, cnt FROM memories_fts_vocab ORDER BY term"


def read_model_tables(home: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of every SQLite read model under `home/projections`, and
    the keyword index's vocabulary (term, documents, occurrences)."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    for path in sorted((home / "projections").rglob("*.sqlite3")):
        db = sqlite3.connect(path)
        try:
            tables = [
                str(row[0])
                for row in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
                )
            ]
            for table in tables:
                if table.startswith(_STRUCTURAL) or table == "memories_fts":
                    continue
                columns = [
                    f'"{row[1]}"'
                    for row in db.execute(f'PRAGMA table_info("{table}")')
                    if (table, row[1]) not in _PER_BUILD
                ]
                rows = [
                    row
                    for row in db.execute(f'SELECT {", ".join(columns)} FROM "{table}"')
                    if (table, row[0]) not in _PER_BUILD
                ]
                found[f"{path.relative_to(home)}:{table}"] = sorted(rows, key=repr)
            if "memories_fts" in tables:
                found[f"{path.relative_to(home)}:vocabulary"] = db.execute(
                    _FTS_VOCABULARY
                ).fetchall()
        finally:
            db.close()
    return found


def test_a_rebuild_writes_the_same_tables_as_the_incremental_path(tmp_path: Path) -> None:
    """A varied log (adds for two users, updates, forgets, restores, TTLs, links, served
    recalls, engram cycles with decay, an erasure-free merge of pages) caught up page by
    page, then rebuilt through the bulk path: every table of every read model is equal."""
    from tests.read_models import open_memory

    home = tmp_path / "home"
    ids: list[str] = []
    with open_memory(home) as memory:
        for n in range(60):
            words = [WORDS[(n * 7 + k) % len(WORDS)] for k in range(1 + n % 4)]
            apply(memory, ids, ("add", words, "u1" if n % 3 else "u2"))
            if n % 5 == 4:
                apply(memory, ids, ("update", n * 3, [WORDS[n % len(WORDS)], "Porto"]))
            if n % 7 == 6:
                apply(memory, ids, ("forget", n))
            if n % 11 == 10:
                apply(memory, ids, ("restore", n - 4))
            if n % 9 == 8:
                apply(memory, ids, ("ttl", n * 5, 1 + n % 30))
            if n % 8 == 7:
                apply(memory, ids, ("link", n, n * 13))
            if n % 6 == 5:
                memory.search("tea Lisbon", user="u1", k=5, at=AT)
            if n % 20 == 19:
                apply(memory, ids, ("consolidate", n))
        memory.refresh()
        incremental = read_model_tables(home)
        assert memory.rebuild().events > len(ids)
        rebuilt = read_model_tables(home)
    assert rebuilt.keys() == incremental.keys()
    differ = [table for table, rows in incremental.items() if rebuilt[table] != rows]
    assert differ == []
    assert any(rows for table, rows in incremental.items() if table.endswith("vocabulary"))
