#!/usr/bin/env python3
"""Fit how a search combines the relevance model's verdict with the retrievers' ranking.

    python scripts/fit_blend.py tests/data/questions_heldout.jsonl \\
        tests/data/questions_rule_tests.jsonl [--models DIR] [--json]

A search reads its best fused candidates beside the question with the relevance model
(`LearnedJudge.relevance`); each read candidate's relevance is then a logistic regression
of two signals: the model's logit and the retrievers' fused relevance
(`LearnedJudge.relevance_blend`). Its three numbers are fitted here, on question stores the
relevance model was never fitted on (its manifest's data must not name them), through the
product: each store added, each question searched with the model on (`eval_relevance.py
--dump`'s candidates), every read candidate labelled by whether it answers. The fit is
written into the relevance model's manifest (`blend`), with the files' hashes and this
command. Printed: first-place accuracy among the read candidates (the model alone, the
fused order alone, the blend), over all the files (a fitting figure) and with each file
left out of the fit and scored (what carries to another author).

Needs the `train` extra (scikit-learn).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from eval_relevance import score_file  # noqa: E402

from mnemoledger import MnemoLedger  # noqa: E402
from mnemoledger.commands.judge.learned import MODELS, likelihood_logit  # noqa: E402
from mnemoledger.ledger import Settings  # noqa: E402

Candidate = dict[str, Any]


def signals(row: Candidate) -> list[float]:
    """What the blend reads of a candidate: the model's logit, the fused relevance."""
    return [likelihood_logit(float(row["answer"])), float(row["fused"])]


def fit(rows: list[Candidate]) -> tuple[float, float, float]:
    """(weight of the logit, weight of the fused relevance, bias)."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0, max_iter=1000)
    model.fit([signals(r) for r in rows], [bool(r["label"]) for r in rows])
    (w_answer, w_fused), bias = model.coef_[0], model.intercept_[0]
    return float(w_answer), float(w_fused), float(bias)


def first_place(rows: list[Candidate], blend: tuple[float, float, float]) -> dict[str, float]:
    """Among each question's read candidates (questions with an answer among them), how
    often the first by each order answers."""
    asked: dict[tuple[str, int, str], list[Candidate]] = defaultdict(list)
    for row in rows:
        asked[(row["set"], row["store"], row["query"])].append(row)
    answerable = [group for group in asked.values() if any(r["label"] for r in group)]

    def blended(row: Candidate) -> float:
        logit, fused = signals(row)
        return blend[0] * logit + blend[1] * fused + blend[2]

    orders = {"model": lambda r: r["answer"], "fused": lambda r: r["fused"], "blend": blended}
    return {
        name: round(sum(max(g, key=key)["label"] for g in answerable) / len(answerable), 3)
        for name, key in orders.items()
    } | {"questions": len(answerable)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="question stores (JSONL)")
    parser.add_argument("--models", type=Path, default=MODELS, help="the fitted files' folder")
    parser.add_argument("--json", action="store_true", help="print only a JSON report")
    args = parser.parse_args()
    models = args.models.resolve()
    os.environ["MNEMOLEDGER_JUDGE_MODELS"] = str(models)
    manifest_file = models / "relevance.json"
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    seen = {Path(name).name for name in manifest["data"]}
    if clash := sorted(p.name for p in args.files if p.name in seen):
        parser.error(f"the relevance model was fitted on {', '.join(clash)}: use other files")
    console = Console(stderr=True, quiet=args.json)
    candidates: list[Candidate] = []
    with (
        tempfile.TemporaryDirectory(prefix="mnemoledger-blend-") as home,
        MnemoLedger(settings=Settings(home=Path(home)), actor="fit-blend") as memory,
        Progress(console=console) as progress,
    ):
        for path in args.files:
            score_file(path, memory, progress, ("learned",), candidates)
    blend = fit(candidates)
    report: dict[str, Any] = {"all files (fitting)": first_place(candidates, blend)}
    if len(args.files) > 1:
        for path in args.files:
            kept = [r for r in candidates if r["set"] != path.name]
            left = [r for r in candidates if r["set"] == path.name]
            report[f"{path.name} left out"] = first_place(left, fit(kept))
    manifest["blend"] = {
        "answer_logit": round(blend[0], 6),
        "fused": round(blend[1], 6),
        "bias": round(blend[2], 6),
        "candidates": len(candidates),
        "data": {
            str(p): hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in sorted(args.files)
        },
        "command": "python scripts/fit_blend.py " + " ".join(str(p) for p in args.files),
    }
    manifest_file.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    report["blend"] = manifest["blend"]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, scores in report.items():
        console.print(f"{name}: {scores}", markup=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
