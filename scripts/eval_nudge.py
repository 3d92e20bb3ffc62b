"""How well each memoryNudge disclosure rule tells a storable user message (seed 004 §12).

    python scripts/eval_nudge.py --data tests/data/nudge_messages.jsonl [--json]

Each line of the set is `{"text": ..., "storable": true|false}`: whether the message shares a
lasting personal fact or preference worth storing. Prints, for `facts` (default) and
`patterns` (the seed's rule), how many messages each rule counts as storable, its precision
and recall.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, get_args

from mnemoledger.commands.recall.nudge import storable
from mnemoledger.ledger.policy import NudgeDisclosure


def score(cases: list[dict[str, Any]], disclosure: NudgeDisclosure) -> dict[str, float]:
    said = [storable(case["text"], disclosure) for case in cases]
    truth = [bool(case["storable"]) for case in cases]
    hits = sum(s and t for s, t in zip(said, truth, strict=True))
    return {
        "counted": sum(said),
        "precision": round(hits / max(1, sum(said)), 3),
        "recall": round(hits / max(1, sum(truth)), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    lines = args.data.read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    figures = {mode: score(cases, mode) for mode in get_args(NudgeDisclosure)}
    if args.json:
        print(json.dumps({"messages": len(cases), **figures}, indent=2))
        return
    print(f"{len(cases)} messages, {sum(c['storable'] for c in cases)} storable")
    for mode, figure in figures.items():
        print(
            f"{mode:9} counted {figure['counted']:3}  precision {figure['precision']:.3f}  "
            f"recall {figure['recall']:.3f}"
        )


if __name__ == "__main__":
    main()
