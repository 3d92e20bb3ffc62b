#!/usr/bin/env python3
"""Cross-validated extraction figures: the value tagger fitted without a set, scored on it.

    OMP_NUM_THREADS=1 .venv/bin/python scripts/cv_extraction.py [--margin 2.0 ...] [--json]

For each labelled set the tagger trains on (`scripts/fit_extractor.py` TAGGER_TRAIN), the
tagger is fitted on all the others and `ingest` is scored on that set
(`scripts/eval_extraction.py`), with the tagger and without it (rules and clause classifier
only). The rules were written on every set but `extraction_holdout4.jsonl` (blind when they
were), so only that set's row measures the whole extractor on unseen text; the other rows
measure what the tagger adds where the rules already know the phrasing (`extraction_dev8.jsonl`
to `extraction_dev10.jsonl` were scored before any rule was fitted to them, then developed on).
The clause classifier is not refitted per set. The blind `extraction_holdout5.jsonl` is not
part of this.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mnemoledger.commands.llm.rules import tagger  # noqa: E402
from scripts.eval_extraction import Score, evaluate, load  # noqa: E402
from scripts.fit_extractor import (  # noqa: E402
    TAGGER_TRAIN,
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
    parser.add_argument("--margin", type=float, nargs="*", default=[tagger.MIN_MARGIN])
    parser.add_argument("--sets", nargs="*", default=list(TAGGER_TRAIN))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = {path: read_rows((path,)) for path in TAGGER_TRAIN}
    results: dict[str, dict[str, dict[str, float]]] = {}
    totals: dict[str, Score] = {}
    for path in args.sets:
        train = [row for other, r in rows.items() if other != path for row in r]
        model = fit_tagger(tagged_sentences(train))
        tagger.use(None)
        runs = {"rules only": _score(path)}
        tagger.use(model)
        for margin in args.margin:
            setattr(tagger, "MIN_MARGIN", margin)  # noqa: B010 (a Final the sweep varies)
            runs[f"tagger {margin}"] = _score(path)
        results[path] = {name: s.as_json() for name, s in runs.items()}
        for name, s in runs.items():
            _add(totals.setdefault(name, Score()), s)
            if not args.json:
                print(
                    f"{Path(path).stem:22} {name:12} P {s.precision:.3f} R {s.recall:.3f}"
                    f" ({s.matched_facts}/{s.labelled}, {s.extracted} extracted)",
                    flush=True,
                )
    results["all"] = {name: s.as_json() for name, s in totals.items()}
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, s in totals.items():
            print(f"{'all':22} {name:12} P {s.precision:.3f} R {s.recall:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
