#!/usr/bin/env python3
"""What the judge costs an add, on one core.

    python scripts/bench_judge.py [--adds 200] [--related 5] [--models DIR] [--json]

An offline add asks the judge twice: the turn model over its pieces (worth keeping and an
instruction to the model, one run), and the relation model over each (related memory, new
piece) pair (one batch; `related_top_k` is 5 by default). This times both on statements of
the held-out pair set, each add with fresh texts (the judge's answer cache never hits), with
onnxruntime on one thread, and prints p50 / p90 per add and per pair.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mnemoledger.commands.judge import LearnedJudge, Turn  # noqa: E402
from mnemoledger.commands.judge.learned import MODELS  # noqa: E402

DATA = ROOT / "tests" / "data" / "pairs_heldout_en.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--related", type=int, default=5, help="related memories per add")
    parser.add_argument("--models", type=Path, default=MODELS, help="fitted files to time")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    statements = [r["newer"] for r in rows] + [r["older"] for r in rows]
    judge = LearnedJudge(args.models)
    judge.relations([("warm", "up")])  # load both models before timing
    judge.worth_keeping([Turn("warm up")])
    turns_ms, pairs_ms = [], []
    for n in range(args.adds):
        new = f"{statements[n % len(statements)]} ({n})"  # fresh text: no cache hit
        related = [
            f"{statements[(n + k + 1) % len(statements)]} ({n})" for k in range(args.related)
        ]
        started = time.perf_counter()
        judge.instructions([Turn(new)])  # the same run answers worth_keeping
        judge.worth_keeping([Turn(new)])
        middle = time.perf_counter()
        judge.relations([(old, new) for old in related])
        ended = time.perf_counter()
        turns_ms.append((middle - started) * 1000)
        pairs_ms.append((ended - middle) * 1000)
    per_add = [a + b for a, b in zip(turns_ms, pairs_ms, strict=True)]

    def q(values: list[float], share: float) -> float:
        return round(statistics.quantiles(values, n=100)[int(share * 100) - 1], 2)

    report = {
        "adds": args.adds,
        "related_per_add": args.related,
        "add_p50_ms": q(per_add, 0.5),
        "add_p90_ms": q(per_add, 0.9),
        "turn_model_p50_ms": q(turns_ms, 0.5),
        "relation_batch_p50_ms": q(pairs_ms, 0.5),
        "per_pair_p50_ms": round(q(pairs_ms, 0.5) / args.related, 2),
    }
    print(json.dumps(report, indent=2) if args.json else report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
