"""A rebuild replays the log into every read model side by side (one thread per group of
read models, pages read ahead): what it writes is exactly what catching up page by page
writes, an interrupted or failed rebuild is finished by the next catch-up, and erased users
stay out."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import EventRecord, MemoryNotFound
from mnemoledger.projections import runner as runner_module
from mnemoledger.projections.runner import Runner, _rebuild_groups
from tests.read_models import open_memory
from tests.test_rebuild import AT, WORDS, apply, read_model_tables

SECRET = "quokkalantern"


def varied(memory: MnemoLedger, erased_user: bool = True) -> list[str]:
    """Adds for three users, updates, forgets, restores, TTLs, links, served recalls and
    engram cycles (decay, merges, lifecycle); then the third user is erased (and writes
    again) while the others go on."""
    ids: list[str] = []

    def change(op: tuple[Any, ...]) -> None:
        with suppress(MemoryNotFound):  # a memory of the erased user
            apply(memory, ids, op)

    for n in range(45):
        words = [WORDS[(n * 5 + k) % len(WORDS)] for k in range(1 + n % 3)]
        user = ("u1", "u2", "u3")[n % 3]
        if user == "u3":
            words = [*words, SECRET]
        apply(memory, ids, ("add", words, user))
        if n % 4 == 3:
            change(("update", n * 3, [WORDS[n % len(WORDS)], "Porto"]))
        if n % 7 == 6:
            change(("forget", n))
        if n % 10 == 9:
            change(("restore", n - 3))
        if n % 8 == 7:
            change(("ttl", n * 5, 1 + n % 30))
        if n % 6 == 5:
            change(("link", n, n * 13))
            memory.search("tea Lisbon", user="u1", k=5, at=AT)
        if n % 15 == 14:
            change(("consolidate", n * 2))
    if erased_user:
        memory.erase(user="u3")
        for n in range(6):  # the log goes on after the erasure
            apply(memory, ids, ("add", [WORDS[n], "after"], ("u1", "u2", "u3")[n % 3]))
            change(("update", n * 11, [WORDS[n + 1], "later"]))
    memory.refresh()
    return ids


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Rebuild pages of 7 events, and read ahead by one page only: many pages in flight."""
    monkeypatch.setattr(runner_module, "REBUILD_PAGE_SIZE", 7)
    monkeypatch.setattr(runner_module, "REBUILD_PAGES_AHEAD", 1)
    yield


def _small(memory: MnemoLedger) -> Runner:
    runner = memory.parts.runner
    runner.page_size = 7
    return runner


def test_a_rebuild_in_many_pages_writes_what_catching_up_writes(
    tmp_path: Path, small_pages: None
) -> None:
    home = tmp_path / "home"
    with open_memory(home) as memory:
        ids = varied(memory)
        incremental = read_model_tables(home)
        assert _small(memory).rebuild() > len(ids)
        rebuilt = read_model_tables(home)
    assert rebuilt.keys() == incremental.keys()
    assert [table for table, rows in incremental.items() if rebuilt[table] != rows] == []
    assert SECRET not in repr(rebuilt)  # the erased user stays out


def test_an_interrupted_rebuild_is_finished_by_the_next_catch_up(
    tmp_path: Path, small_pages: None
) -> None:
    home = tmp_path / "home"
    with open_memory(home) as memory:
        varied(memory, erased_user=False)
        incremental = read_model_tables(home)
        runner = _small(memory)
        pages: list[int] = []

        def interrupt(done: int, _total: int) -> None:
            pages.append(done)
            if len(pages) == 3:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            runner.rebuild(progress=interrupt)
        assert any(p.position() < memory.ledger.last_position() for p in runner.projections)
        assert runner.catch_up() > 0
        assert all(p.position() == memory.ledger.last_position() for p in runner.projections)
        assert read_model_tables(home) == incremental


class _FailsOnce:
    """Wraps a read model: its second page of a rebuild fails once."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.pages = 0
        self.failed = False

    def apply(self, records: Sequence[EventRecord]) -> None:
        self.pages += 1
        if self.pages == 2 and not self.failed:
            self.failed = True
            raise OSError("disk full")
        self.inner.apply(records)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_read_model_that_fails_does_not_stop_the_others(
    tmp_path: Path, small_pages: None
) -> None:
    home = tmp_path / "home"
    with open_memory(home) as memory:
        varied(memory, erased_user=False)
        incremental = read_model_tables(home)
        ledger = memory.parts.ledger
        failing = _FailsOnce(memory.parts.graph_model)
        others = [p for p in memory.parts.runner.projections if p.name != "graph"]
        runner = Runner(ledger, [failing, *others], lock_path=tmp_path / "lock")
        runner.page_size = 7
        with pytest.raises(OSError, match="disk full"):
            runner.rebuild()
        last = ledger.last_position()
        assert all(p.position() == last for p in others)  # rebuilt all the same
        assert failing.position() < last
        assert runner.catch_up() > 0
        assert failing.position() == last
        assert read_model_tables(home) == incremental


def test_read_models_sharing_an_embedder_are_replayed_in_one_thread(tmp_path: Path) -> None:
    with open_memory(tmp_path / "home") as memory:
        projections = memory.parts.runner.projections
        groups = _rebuild_groups(projections)
    assert sorted(p.name for g in groups for p in g) == sorted(p.name for p in projections)
    shared = [g for g in groups if len(g) > 1]
    assert [[p.name for p in g] for g in shared] == [["vectors", "transcripts"]]


def test_the_keyword_index_a_rebuild_builds_is_the_one_catching_up_builds(
    tmp_path: Path,
) -> None:
    """Texts the index reads as they are (printable ASCII) and texts it reads otherwise
    (CJK runs as bigrams, accents, control characters), with keys and tags: a rebuild's
    keyword index has the vocabulary page-by-page indexing gives, and finds the same."""
    from mnemoledger.ledger import NewMemory, Provenance

    texts = [
        ("plain ascii about tea", None, ()),
        ("我喜欢喝咖啡 in Lisbon", "饮料", ("咖啡", "drinks")),
        ("café au lait à Porto", "boisson", ("matin",)),
        ("line one\nline two\tand a tab", "notes", ()),
        ("", None, ()),
        ("tagged only", None, ("日本語", "tea")),
    ]
    home = tmp_path / "home"
    with open_memory(home) as memory:
        provenance = Provenance(user_id="u1", actor="tester")
        memory.ledger.add(
            provenance,
            [NewMemory(text or "x", key=key, tags=list(tags)) for text, key, tags in texts],
        )
        memory.refresh()
        incremental = read_model_tables(home)
        found = [memory.search(q, user="u1", k=5, at=AT) for q in ("咖啡", "cafe", "tab", "日本")]
        assert memory.rebuild().events > 0
        assert read_model_tables(home) == incremental
        again = [memory.search(q, user="u1", k=5, at=AT) for q in ("咖啡", "cafe", "tab", "日本")]
    assert again == found
    assert all(found)


def test_a_bulk_loads_pages_checkpoint_the_wal_less_often_and_restore_the_setting(
    tmp_path: Path,
) -> None:
    """Inside a layers bulk load, page commits checkpoint only every `BULK_WAL_PAGES`; the
    connection gets its setting back afterwards (also when a page fails)."""
    import sqlite3

    from mnemoledger.projections.layers import BULK_WAL_PAGES, _fewer_checkpoints

    db = sqlite3.connect(tmp_path / "model.sqlite3")
    db.execute("PRAGMA wal_autocheckpoint = 1000")

    def setting() -> int:
        return int(db.execute("PRAGMA wal_autocheckpoint").fetchone()[0])

    with _fewer_checkpoints(db.execute):
        assert setting() == BULK_WAL_PAGES
    assert setting() == 1000
    with pytest.raises(RuntimeError), _fewer_checkpoints(db.execute):
        raise RuntimeError("a page failed")
    assert setting() == 1000


def test_the_keyword_index_is_built_with_a_larger_buffer_and_left_with_the_default(
    tmp_path: Path,
) -> None:
    """The build of a rebuild's keyword index buffers `FTS_BULK_HASH_BYTES` of terms; the
    index keeps FTS5's default for the pages that follow, and finds what it found."""
    import sqlite3

    from sqlalchemy import event

    from mnemoledger.projections import layers as layers_module

    setting = "SELECT v FROM memories_fts_config WHERE k = 'hashsize'"
    during_build: list[Any] = []

    def watch(_conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
        if statement == layers_module._FTS_REBUILD:
            during_build.append(cursor.connection.execute(setting).fetchall())

    home = tmp_path / "home"
    with open_memory(home) as memory:
        varied(memory, erased_user=False)
        found = memory.search("tea Porto", user="u1", k=5, at=AT)
        layers = memory.parts.layers
        event.listen(layers.engine, "before_cursor_execute", watch)
        db = sqlite3.connect(layers.path)
        try:
            assert db.execute(setting).fetchall() == []  # FTS5's default, never set
            assert memory.rebuild().events > 0
            assert during_build == [[(layers_module.FTS_BULK_HASH_BYTES,)]]
            assert db.execute(setting).fetchall() == [(layers_module.FTS_DEFAULT_HASH_BYTES,)]
        finally:
            db.close()
        assert memory.search("tea Porto", user="u1", k=5, at=AT) == found != []
