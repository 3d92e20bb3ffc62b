#!/usr/bin/env python3
"""Leave authors out: refit the judge's relation model without some authors' memory cases,
then score those cases with the refit. The generalisation figure for sets we wrote.

    pip install -e ".[train]"
    python scripts/loao_judge.py [--per-author] [--runner ../shared/tools/memory_cases.py]

Each of our labelled case sets (`tests/data/memory_cases*.jsonl`, the newest new authors'
aside: `fit_judge.NEVER`) is one
author's. By default the authors are split into three folds (a refit costs ~10 minutes on
two cores), which is stricter than leaving one out: each refit also lacks the fold's other
authors. `--per-author` refits once per author. The turn model is never fitted on case
sets, so every fold uses the shipped one. Prints one line per set, then the mean pass rate,
and with `--json` the whole report.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "commands" / "judge" / "models"
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "scripts"))

from fit_judge import NEVER  # noqa: E402  (the sets never fitted on are never folds either)

FOLDS = 3


def case_sets() -> list[str]:
    names = [p.name for p in DATA.glob("memory_cases*.jsonl") if p.name not in NEVER]

    def order(name: str) -> int:
        digits = "".join(ch for ch in name if ch.isdigit())
        return int(digits) if digits else 1

    return sorted(names, key=order)


def pass_rate(runner: Path, data: Path, models: Path) -> dict[str, float]:
    env = {**os.environ, "MNEMOLEDGER_JUDGE_MODELS": str(models)}
    done = subprocess.run(
        [sys.executable, str(runner), "--data", str(data), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    report, _ = json.JSONDecoder().raw_decode(done.stdout[done.stdout.index("{") :])
    return {"pass_rate": report["pass_rate"], "passed": report["passed"], "cases": report["cases"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-author", action="store_true", help="one refit per author")
    parser.add_argument(
        "--runner", type=Path, default=ROOT.parent / "shared" / "tools" / "memory_cases.py"
    )
    parser.add_argument("--fold", type=int, help="run only this fold (1-based)")
    parser.add_argument(
        "--base", help="the relation model's base (fit_judge.py --base; default: the shipped one)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sets = case_sets()
    folds = [[s] for s in sets] if args.per_author else [sets[i::FOLDS] for i in range(FOLDS)]
    report: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as work:
        for k, fold in enumerate(folds):
            if args.fold is not None and k + 1 != args.fold:
                continue
            out = Path(work) / f"fold{k}"
            out.mkdir()
            for model in MODELS.iterdir():  # every shipped model but the one refitted
                if not model.name.startswith("relation."):
                    shutil.copy(model, out / model.name)
            print(f"fold {k + 1}/{len(folds)}: refit without {', '.join(fold)}", flush=True)
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "scripts" / "fit_judge.py"),
                    "relation",
                    *(["--base", args.base] if args.base else []),
                    "--out",
                    str(out),
                    "--leave-out",
                    *fold,
                ],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for name in fold:
                report[name] = pass_rate(args.runner, DATA / name, out)
                print(f"  {name}: {report[name]['pass_rate']:.3f}", flush=True)
    cases = sum(r["cases"] for r in report.values())
    passed = sum(r["passed"] for r in report.values())
    mean = sum(r["pass_rate"] for r in report.values()) / len(report)
    print(f"left-out authors: {passed:g}/{cases:g} cases = {passed / cases:.3f}; mean {mean:.3f}")
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
