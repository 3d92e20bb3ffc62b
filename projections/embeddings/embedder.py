"""What every embedding provider offers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    model: str
    """Identifies the model; part of the embedding cache key."""
    dimensions: int
    """Vector size."""

    def passages(self, texts: Sequence[str]) -> Vectors:
        """Embed documents to store: shape (len(texts), dimensions)."""
        ...

    def query(self, text: str) -> Vectors:
        """Embed a search query: shape (dimensions,)."""
        ...
