#!/usr/bin/env python3
"""Leave-one-set-out extraction figures: the learned parts fitted without a set, scored on it.

    OMP_NUM_THREADS=1 .venv/bin/python scripts/cv_extraction.py [--sets ...] [--rules-only] [--json]

For each labelled set (`scripts/fit_extractor.py` ALL_SETS: every set but the blind
`extraction_holdout9.jsonl`), the value tagger and the clause classifier are fitted on all the
other sets, exactly as `scripts/fit_extractor.py` fits the shipped ones on all of them, and
`ingest` is scored on the left-out set (`scripts/eval_extraction.py`). `--rules-only` also
scores each set with neither learned part. The word rules are not refitted: they were written
while reading the misses of every set (those of `extraction_holdout4.jsonl` and
`extraction_holdout5.jsonl` only in the last pass, for names, refused tools and schedules kept
in the user's words; those of `extraction_holdout6.jsonl` and `extraction_dev11.jsonl` in the
pass after holdout6 was scored; those of `extraction_holdout7.jsonl` and
`extraction_dev12.jsonl` in the pass after holdout7 was scored), so a row measures unseen text
only for what the learned parts do; the blind set is the figure for unseen text.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mnemoledger.commands.llm.rules import learned, tagger  # noqa: E402
from scripts.eval_extraction import Score, evaluate, load  # noqa: E402
from scripts.fit_extractor import (  # noqa: E402
    ALL_SETS,
    embed,
    examples,
    fit,
    fit_tagger,
    read_rows,
    tagged_sentences,
)


def _score(path: str) -> Score:
    with tempfile.TemporaryDirectory() as home:
        return evaluate(load(ROOT / path), Path(home))["all"]


def _add(total: Score, part: Score) -> None:
    total.extracted += part.extracted
    total.matched_memories += part.matched_memories
    total.labelled += part.labelled
    total.matched_facts += part.matched_facts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sets", nargs="*", default=list(ALL_SETS), help="the sets to leave out")
    parser.add_argument("--rules-only", action="store_true", help="also score without learning")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = {path: read_rows((path,)) for path in ALL_SETS}
    clauses = {path: examples((path,)) for path in ALL_SETS}
    vectors = {path: embed(texts) for path, (texts, _) in clauses.items()}
    results: dict[str, dict[str, dict[str, float]]] = {}
    totals: dict[str, Score] = {}
    for path in args.sets:
        others = [other for other in ALL_SETS if other != path]
        runs: dict[str, Score] = {}
        if args.rules_only:
            tagger.use(None)
            learned.use(None)
            runs["rules only"] = _score(path)
        tagger.use(fit_tagger(tagged_sentences([r for other in others for r in rows[other]])))
        x = np.vstack([vectors[other] for other in others])
        y = np.vstack([clauses[other][1] for other in others])
        learned.use(fit(x, y))
        runs["learned"] = _score(path)
        results[path] = {name: s.as_json() for name, s in runs.items()}
        for name, s in runs.items():
            _add(totals.setdefault(name, Score()), s)
            if not args.json:
                print(
                    f"{Path(path).stem:22} {name:10} P {s.precision:.3f} R {s.recall:.3f}"
                    f" ({s.matched_facts}/{s.labelled}, {s.extracted} extracted)",
                    flush=True,
                )
    results["all"] = {name: s.as_json() for name, s in totals.items()}
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, s in totals.items():
            print(
                f"{'all':22} {name:10} P {s.precision:.3f} R {s.recall:.3f}"
                f" ({s.matched_facts}/{s.labelled}, {s.extracted} extracted)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
