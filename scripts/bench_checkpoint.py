"""Save and load times of supervisor checkpoints (seed 003 §15: "sub-100ms checkpoint
save/load times").

    python scripts/bench_checkpoint.py [--saves 200] [--threads 10] [--kb 8] [--db URL]

Opens a fresh home in a temporary directory (the event log on SQLite there, or on the
PostgreSQL `--db` / `$MNEMOLEDGER_DB` names), saves `--saves` checkpoints of about `--kb`
KB each round-robin over `--threads` threads of one user (each save a new version of its
thread), loading each thread's newest after every save, then loads earlier versions from
the log; prints p50, p95 and max in ms of each. A save returns the checkpoint as the read
model holds it (caught up), so it includes what a load would do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings


def state(step: int, kb: int) -> dict[str, Any]:
    """An agent's state of about `kb` KB: graph, memory context, history, agent states."""
    turn = {"role": "user", "content": "Plan the trip to Porto, with trains and a museum. " * 2}
    turns = max(1, kb * 1024 // 150)
    return {
        "graph": {"node": "planner", "step": step, "next": ["search", "answer"]},
        "memory_context": ["Maya lives in Lisbon", "Maya prefers trains"],
        "messages": [dict(turn, n=i) for i in range(turns)],
        "agents": {"planner": {"retries": step % 3, "score": 0.5}},
    }


def summary(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(
        f"{label:<28} n={len(ms):<5} p50 {statistics.median(ms):7.2f} ms   "
        f"p95 {p95:7.2f} ms   max {ms[-1]:7.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--threads", type=int, default=10)
    parser.add_argument("--kb", type=int, default=8, help="size of each checkpoint, roughly")
    parser.add_argument("--db", default=os.environ.get("MNEMOLEDGER_DB") or None)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-checkpoint-")) / "home"
    settings = Settings(home=home, embedder="hashing", db=args.db)
    saves: list[float] = []
    loads: list[float] = []
    earlier: list[float] = []
    with MnemoLedger(settings=settings, actor="bench") as memory:
        print(f"event store: {'PostgreSQL' if args.db else 'SQLite'}; home {home}")
        memory.save_checkpoint("warmup", "t", state(0, 1))  # opens files, creates keys
        memory.load_checkpoint("warmup", "t")
        size = 0
        for n in range(args.saves):
            thread = f"thread-{n % args.threads}"
            data = state(n, args.kb)
            started = time.perf_counter()
            saved = memory.save_checkpoint("maya", thread, data)
            saves.append(time.perf_counter() - started)
            size = saved.size
            started = time.perf_counter()
            loaded = memory.load_checkpoint("maya", thread)
            loads.append(time.perf_counter() - started)
            assert loaded is not None and loaded.revision == saved.revision
        for n in range(min(args.saves, 50)):
            thread = f"thread-{n % args.threads}"
            started = time.perf_counter()
            old = memory.load_checkpoint("maya", thread, version=1)
            earlier.append(time.perf_counter() - started)
            assert old is not None and old.revision == 1
        print(f"{args.saves} saves over {args.threads} threads, {size} bytes each")
        summary("save_checkpoint", saves)
        summary("load_checkpoint (newest)", loads)
        summary("load_checkpoint (version=1)", earlier)
        started = time.perf_counter()
        memory.rebuild("checkpoints")
        print(f"rebuild checkpoints model      {time.perf_counter() - started:7.3f} s")


if __name__ == "__main__":
    main()
