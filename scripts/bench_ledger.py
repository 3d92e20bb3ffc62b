"""Benchmark the ledger against its own foundations, on this machine, in one run.

a) batched append: `Ledger.add` of batches of 1000 contents (~490 bytes) vs plain sqlite3
   `executemany` of the very rows the ledger stored, into a fresh file with the same schema
   (WAL, synchronous=FULL, one transaction)                 -> append_ratio_to_raw >= 0.30
b) durable single add: `Ledger.add` of one memory per call vs `Application.save` of a bare
   library aggregate holding the same content, in the same directory, calls interleaved
                                                             -> single_add_ratio >= 0.8
c) rebuild: a ledger of N events (adds across 10 users, plus updates, TTLs and forgets),
   caught up once to fill the embedding cache (hashing embedder), then `Runner.rebuild()`
                                                             -> rebuild_events_per_s >= 50k
   (and, for scale, `Ledger.read` of the whole log alone: no rebuild can be faster)

Each phase also reports its CPU time per event (the process's, all threads): on a shared
machine the wall-clock rates swing with the load and the disk, the CPU times much less.

Usage: python scripts/bench_ledger.py [--events N] [--phases abc] [--json] [--home DIR] [--db URL]
(`--phases c` runs only the rebuild part; the table shows the parts that ran.)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mnemoledger.ledger import Ledger, Memory, NewMemory, Provenance, Settings
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.store import is_postgres, persistence_env, postgres_env

BATCH = 1000
"""Contents per `Ledger.add` in the batched-append phase (and per save when building)."""
CONTENT_BYTES = 490
USERS = 10
SINGLE_CALLS = 300
RAW_RUNS = 3

GOAL_APPEND_RATIO = 0.30
GOAL_SINGLE_RATIO = 0.8
GOAL_REBUILD_RATE = 50_000.0

RAW_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS stored_events (originator_id TEXT, "
    "originator_version INTEGER, topic TEXT, state BLOB, "
    "PRIMARY KEY (originator_id, originator_version))"
)
"""The library's SQLite events table (eventsourcing.sqlite.SQLiteApplicationRecorder)."""
RAW_INSERT = "INSERT INTO stored_events VALUES (?,?,?,?)"

_SAMPLE = (
    "the user said they prefer oolong tea in the morning and coffee after lunch while "
    "working on the quarterly report with their sister who lives in Lisbon near the river "
    "they run on tuesdays keep notes in a paper notebook dislike loud open offices and plan "
    "a trip to Porto in spring to visit an old friend from university who now teaches "
    "mathematics at a small school by the sea where the weather is mild all year"
)
_WORDS = _SAMPLE.split()


# --- workload ----------------------------------------------------------------------------


class Contents:
    """Distinct texts of about CONTENT_BYTES bytes: a numbered prefix and a varied body."""

    def __init__(self, seed: int = 7, bodies: int = 997) -> None:
        rng = random.Random(seed)
        self._bodies = []
        for _ in range(bodies):
            words: list[str] = []
            while sum(len(w) + 1 for w in words) < CONTENT_BYTES:
                words.append(rng.choice(_WORDS))
            self._bodies.append(" ".join(words))

    def __call__(self, n: int, tag: str = "") -> str:
        prefix = f"{tag}#{n}: "
        return prefix + self._bodies[n % len(self._bodies)][: CONTENT_BYTES - len(prefix)]


@dataclass
class Results:
    events: int
    store: str
    figures: dict[str, Any] = field(default_factory=dict)


# --- output ------------------------------------------------------------------------------


class Reporter:
    """Progress bars on stderr, unless the output is JSON."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.console = Console(stderr=True)

    @contextmanager
    def phase(self, label: str, total: int) -> Iterator[Callable[[int], None]]:
        """A progress bar; the yielded callable sets how much of `total` is done."""
        if self.quiet:
            yield lambda _done: None
            return
        columns = (
            TextColumn("{task.description:<36}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=self.console) as progress:
            task = progress.add_task(label, total=total)
            yield lambda done: progress.update(task, completed=done)
            progress.update(task, completed=total)


# --- a) batched append -------------------------------------------------------------------


def bench_append(
    home: Path, db: str | None, n: int, contents: Contents, report: Reporter
) -> dict[str, Any]:
    settings = Settings(home=home / "append", db=db, embedder="hashing")
    provenance = Provenance(user_id="bench-user", actor="bench", agent_id="bench-agent")
    elapsed = cpu = 0.0
    with Ledger(settings) as ledger:
        start = ledger.last_position()
        with report.phase("a) Ledger.add, batches of 1000", n) as done:
            for first in range(0, n, BATCH):
                items = [NewMemory(contents(i, "a")) for i in range(first, min(first + BATCH, n))]
                t0, c0 = time.perf_counter(), time.process_time()
                ledger.add(provenance, items)
                elapsed += time.perf_counter() - t0
                cpu += time.process_time() - c0
                done(first + len(items))
        rows = stored_rows(ledger, start, n, report)
    ledger_rate = n / elapsed

    # the raw insert is short and disk-bound: take the median of RAW_RUNS fresh files
    raw_rates = []
    (home / "append").mkdir(parents=True, exist_ok=True)
    with report.phase("a) sqlite3 executemany, one txn", RAW_RUNS * len(rows)) as done:
        for run in range(RAW_RUNS):
            raw_path = home / "append" / f"raw-{run}.sqlite3"
            raw_rates.append(len(rows) / raw_executemany(raw_path, rows))
            for suffix in ("", "-wal", "-shm"):
                Path(f"{raw_path}{suffix}").unlink(missing_ok=True)
            done((run + 1) * len(rows))
    raw_rate = statistics.median(raw_rates)
    return {
        "ledger_append_events_per_s": ledger_rate,
        "raw_executemany_rows_per_s": raw_rate,
        "raw_executemany_runs_rows_per_s": raw_rates,
        "append_ratio_to_raw": ledger_rate / raw_rate,
        "append_cpu_us_per_event": cpu / n * 1e6,
        "append_state_bytes_avg": sum(len(r[3]) for r in rows) / len(rows),
    }


def stored_rows(
    ledger: Ledger, after: int, n: int, report: Reporter
) -> list[tuple[str, int, str, bytes]]:
    """The rows the ledger stored after position `after`, as the SQLite recorder has them."""
    rows: list[tuple[str, int, str, bytes]] = []
    with report.phase("a) reading the stored rows back", n) as done:
        while True:
            page = ledger.recorder.select_notifications(after, 5000, inclusive_of_start=False)
            if not page:
                break
            for s in page:
                oid = s.originator_id
                rows.append(
                    (
                        oid.hex if isinstance(oid, UUID) else str(oid),
                        s.originator_version,
                        s.topic,
                        bytes(s.state),
                    )
                )
            after = page[-1].id
            done(len(rows))
    return rows


def raw_executemany(path: Path, rows: list[tuple[str, int, str, bytes]]) -> float:
    """Seconds to insert `rows` with one executemany in one transaction, commit included."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute(RAW_SCHEMA)
        t0 = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany(RAW_INSERT, rows)
        conn.execute("COMMIT")
        return time.perf_counter() - t0
    finally:
        conn.close()


# --- b) durable single add ---------------------------------------------------------------


class Note(Aggregate):
    """The library's minimal aggregate, carrying the same content as a memory."""

    def __init__(self, content: str) -> None:
        self.content = content


def bench_single(
    home: Path, db: str | None, calls: int, contents: Contents, report: Reporter
) -> dict[str, Any]:
    directory = home / "single"
    settings = Settings(home=directory, db=db, embedder="hashing")
    env = persistence_env(settings)
    if env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        env["SQLITE_DBNAME"] = str(directory / "library.sqlite3")
    env.pop("APPLICATION_RECORDER_TOPIC", None)  # the library's own recorder, unchanged
    provenance = Provenance(user_id="bench-user", actor="bench")
    ledger_seconds = library_seconds = 0.0
    with (
        Ledger(settings) as ledger,
        Application[UUID](env=env) as app,
        report.phase("b) one add per call vs library save", calls) as done,
    ):
        # warm both (tables, connections, first-call imports), then interleave the calls
        ledger.add(provenance, [NewMemory(contents(0, "warm"))])
        app.save(Note(contents(0, "warm")))
        for i in range(calls):
            text = contents(i, "b")
            t0 = time.perf_counter()
            ledger.add(provenance, [NewMemory(text)])
            t1 = time.perf_counter()
            app.save(Note(text))
            t2 = time.perf_counter()
            ledger_seconds += t1 - t0
            library_seconds += t2 - t1
            done(i + 1)
    ledger_rate, library_rate = calls / ledger_seconds, calls / library_seconds
    return {
        "ledger_single_add_per_s": ledger_rate,
        "library_single_save_per_s": library_rate,
        "single_add_ratio_to_library_save": ledger_rate / library_rate,
    }


# --- c) rebuild --------------------------------------------------------------------------


def bench_rebuild(
    home: Path, db: str | None, n: int, contents: Contents, report: Reporter
) -> dict[str, Any]:
    from mnemoledger.projections.embeddings import make_embedder
    from mnemoledger.projections.embeddings.cache import CachedEmbedder, EmbeddingCache
    from mnemoledger.projections.layers import LayersProjection
    from mnemoledger.projections.runner import Runner
    from mnemoledger.projections.vectors import VectorsProjection

    directory = home / "rebuild"
    settings = Settings(home=directory, db=db, embedder="hashing")
    with Ledger(settings) as ledger:
        mix = build_ledger(ledger, n, contents, report)
        embedder = CachedEmbedder(
            make_embedder(settings), EmbeddingCache(directory / "embeddings.sqlite3")
        )
        projections_dir = settings.projections_dir
        layers = LayersProjection(projections_dir / "layers.sqlite3")
        vectors = VectorsProjection(projections_dir / "vectors", embedder)
        runner = Runner(ledger, [layers, vectors], lock_path=projections_dir / ".lock")
        try:
            total = ledger.last_position()
            with report.phase("c) catch-up (fills embedding cache)", total) as done:
                t0 = time.perf_counter()
                caught_up = runner.catch_up(progress=lambda d, _t: done(d))
                catch_up_seconds = time.perf_counter() - t0
            with report.phase("c) reading the log alone (decoded)", total) as done:
                t0, c0 = time.perf_counter(), time.process_time()
                decoded = read_whole_log(ledger, done)
                read_seconds = time.perf_counter() - t0
                read_cpu = time.process_time() - c0
            with report.phase("c) Runner.rebuild()", total) as done:
                t0, c0 = time.perf_counter(), time.process_time()
                rebuilt = runner.rebuild(progress=lambda d, _t: done(d))
                rebuild_seconds = time.perf_counter() - t0
                rebuild_cpu = time.process_time() - c0
        finally:
            layers.close()
            vectors.close()
            embedder.close()
    return {
        "rebuild_events": rebuilt,
        "rebuild_events_per_s": rebuilt / rebuild_seconds,
        "rebuild_cpu_us_per_event": rebuild_cpu / rebuilt * 1e6,
        "catch_up_events_per_s": caught_up / catch_up_seconds,
        "read_decode_events_per_s": decoded / read_seconds,
        "read_decode_cpu_us_per_event": read_cpu / decoded * 1e6,
        "rebuild_mix": mix,
        "embedder": f"hashing ({settings.hashing_dimensions}-d)",
    }


def read_whole_log(ledger: Ledger, done: Callable[[int], None]) -> int:
    """Events read and decoded (`Ledger.read`, pages as a rebuild reads them): the floor
    under any rebuild, which reads every event once."""
    from mnemoledger.projections.runner import REBUILD_PAGE_SIZE

    after = count = 0
    while page := ledger.read(after, REBUILD_PAGE_SIZE):
        count += len(page)
        after = page[-1].position or after
        done(count)
    return count


def build_ledger(ledger: Ledger, n: int, contents: Contents, report: Reporter) -> dict[str, int]:
    """About `n` events: ~90% MemoryAdded over USERS users, then updates, TTLs and forgets
    of random memories (saved BATCH aggregates per transaction to keep the setup quick)."""
    rng = random.Random(11)
    changes = n // 10
    adds = n - changes
    mix = {"MemoryAdded": adds, "MemoryUpdated": 0, "TTLSet": 0, "MemorySoftDeleted": 0}
    ids: list[UUID] = []
    with report.phase("c) building the ledger", n) as done:
        for first in range(0, adds, BATCH):
            count = min(BATCH, adds - first)
            user = f"user-{(first // BATCH) % USERS}"
            provenance = Provenance(user_id=user, actor="bench", agent_id="bench-agent")
            items = [NewMemory(contents(i, user)) for i in range(first, first + count)]
            ids.extend(m.id for m in ledger.add(provenance, items))
            done(first + count)
        chosen = rng.sample(ids, min(changes, len(ids)))
        for first in range(0, len(chosen), BATCH):
            memories = [ledger.memory(i) for i in chosen[first : first + BATCH]]
            for k, memory in enumerate(memories):
                with acting_as(Provenance(user_id=memory.user_id, actor="bench")):
                    change(memory, first + k, contents, mix)
            ledger.save(*memories)
            done(adds + first + len(memories))
    return mix


def change(memory: Memory, k: int, contents: Contents, mix: dict[str, int]) -> None:
    roll = k % 10
    if roll < 6:
        memory.update(contents(k, "updated"))
        mix["MemoryUpdated"] += 1
    elif roll < 8:
        memory.set_ttl(30.0, "2099-01-01T00:00:00+00:00")
        mix["TTLSet"] += 1
    else:
        memory.forget()
        mix["MemorySoftDeleted"] += 1


# --- PostgreSQL: one fresh schema per phase ---------------------------------------------


@contextmanager
def phase_db(db: str | None, phase: str) -> Iterator[str | None]:
    """`db` itself for SQLite (each phase has its own directory, hence its own file); on
    PostgreSQL a fresh schema for the phase, dropped afterwards, so that each phase starts
    from an empty log as it does on SQLite."""
    if not is_postgres(db):
        yield db
        return
    import psycopg

    assert db is not None
    env = postgres_env(db)
    schema = f"bench_{phase}_{random.randrange(16**8):08x}"
    connection = psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=env["POSTGRES_PORT"],
        user=env["POSTGRES_USER"],
        password=env["POSTGRES_PASSWORD"] or None,
        autocommit=True,
    )
    with connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield f"{db.split('?', 1)[0]}?schema={schema}"
        finally:
            connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


# --- main --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=100_000, help="events per phase (a, c)")
    parser.add_argument("--single", type=int, default=SINGLE_CALLS, help="calls in phase b")
    parser.add_argument(
        "--phases",
        default="abc",
        help="the parts to run, e.g. 'c' for the rebuild alone (default: abc)",
    )
    parser.add_argument("--json", action="store_true", help="print only a JSON object")
    parser.add_argument("--home", type=Path, help="data directory (default: a temp dir)")
    parser.add_argument("--db", help="event store URL for the ledger (Settings.db)")
    args = parser.parse_args(argv)
    if args.events < BATCH:
        parser.error(f"--events must be at least {BATCH}")
    phases = set(args.phases.lower())
    if not phases or not phases <= set("abc"):
        parser.error("--phases takes some of the letters a, b and c")

    report = Reporter(quiet=args.json)
    contents = Contents()
    load_before = _load_average()
    with _home(args.home) as home:
        store = "sqlite" if not args.db or args.db.startswith("sqlite") else args.db.split(":")[0]
        results = Results(events=args.events, store=store)
        if "a" in phases:
            with phase_db(args.db, "append") as db:
                results.figures.update(bench_append(home, db, args.events, contents, report))
        if "b" in phases:
            with phase_db(args.db, "single") as db:
                results.figures.update(bench_single(home, db, args.single, contents, report))
        if "c" in phases:
            with phase_db(args.db, "rebuild") as db:
                results.figures.update(bench_rebuild(home, db, args.events, contents, report))

    figures = {
        "events": results.events,
        "single_calls": args.single,
        "store": results.store,
        "raw_baseline": "sqlite3 executemany, WAL, synchronous=FULL, one transaction",
        "python": platform.python_version(),
        "eventsourcing": version("eventsourcing"),
        "load_average_start_end": [load_before, _load_average()],
        **results.figures,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_table(figures)
    return 0


def _load_average() -> float | None:
    """The machine's one-minute load average (None where the OS has none): the figures of
    a shared machine are read with it."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # pragma: no cover - Windows
        return None


@contextmanager
def _home(home: Path | None) -> Iterator[Path]:
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        yield home
        return
    with tempfile.TemporaryDirectory(prefix="bench-ledger-") as tmp:
        yield Path(tmp)


def print_table(f: dict[str, Any]) -> None:
    def mark(ok: bool) -> str:
        return "[green]PASS[/]" if ok else "[red]FAIL[/]"

    rows: list[tuple[str, ...]] = []
    if "append_ratio_to_raw" in f:
        append = f["append_ratio_to_raw"]
        rows += [
            ("a) Ledger.add, batches of 1000", f"{f['ledger_append_events_per_s']:,.0f} ev/s"),
            ("   its CPU time per event", f"{f['append_cpu_us_per_event']:.1f} µs"),
            ("   sqlite3 executemany, 1 txn", f"{f['raw_executemany_rows_per_s']:,.0f} rows/s"),
            (
                "   append_ratio_to_raw",
                f"{append:.3f}",
                f">= {GOAL_APPEND_RATIO}",
                mark(append >= GOAL_APPEND_RATIO),
            ),
        ]
    if "single_add_ratio_to_library_save" in f:
        single = f["single_add_ratio_to_library_save"]
        rows += [
            ("b) Ledger.add, 1 memory per call", f"{f['ledger_single_add_per_s']:,.0f} /s"),
            ("   library save, bare aggregate", f"{f['library_single_save_per_s']:,.0f} /s"),
            (
                "   single_add_ratio_to_library_save",
                f"{single:.3f}",
                f">= {GOAL_SINGLE_RATIO}",
                mark(single >= GOAL_SINGLE_RATIO),
            ),
        ]
    if "rebuild_events_per_s" in f:
        rebuild = f["rebuild_events_per_s"]
        rows += [
            ("c) catch-up (embeds, fills cache)", f"{f['catch_up_events_per_s']:,.0f} ev/s"),
            ("   Ledger.read of the whole log", f"{f['read_decode_events_per_s']:,.0f} ev/s"),
            ("   its CPU time per event", f"{f['read_decode_cpu_us_per_event']:.1f} µs"),
            (
                f"   Runner.rebuild(), {f['rebuild_events']:,} events",
                f"{rebuild:,.0f} ev/s",
                f">= {GOAL_REBUILD_RATE:,.0f}",
                mark(rebuild >= GOAL_REBUILD_RATE),
            ),
            ("   its CPU time per event (all threads)", f"{f['rebuild_cpu_us_per_event']:.1f} µs"),
        ]
    table = Table(
        title=f"mnemoledger bench: {f['events']:,} events, store {f['store']}, "
        f"Python {f['python']}, eventsourcing {f['eventsourcing']}"
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("goal", justify="right")
    table.add_column("", justify="center")
    for row in rows:
        table.add_row(*row)
    console = Console()
    console.print(table)
    notes = [
        f"Load average (1 min) at start / end: {f['load_average_start_end'][0]} / "
        f"{f['load_average_start_end'][1]}."
    ]
    if "embedder" in f:
        notes.append(
            f"Embedder: {f['embedder']}, chosen so that filling the cache is quick; the "
            f"rebuild reads every vector from the warm cache. Rebuild mix: {f['rebuild_mix']}."
        )
    if "append_state_bytes_avg" in f:
        notes.append(f"Mean stored event state: {f['append_state_bytes_avg']:.0f} bytes.")
    console.print(" ".join(notes))
    if f["store"] != "sqlite":
        console.print(
            f"The ledger (and the library's save in b) ran on {f['store']}, a fresh schema "
            f"per phase; the raw baseline is always {f['raw_baseline']}."
        )


if __name__ == "__main__":
    sys.exit(main())
