"""The offline judge: fine-tuned MiniLM cross-encoders exported to ONNX, run with
onnxruntime.

`relation.onnx` reads a pair (older, newer) and gives four logits (`RELATIONS`);
`turns.onnx` reads one turn with its role and gives two (worth keeping, an instruction to
the model); `relevance.onnx` reads (question, memory) and gives one (the memory answers the
question: what a search ranks by); `facts.onnx` labels each word of a user's turn
(`facts.LABELS`: which words state a fact about them). The first two were fitted by
`scripts/fit_judge.py`, the others by `scripts/fit_relevance.py` and `scripts/fit_facts.py`,
all from all-MiniLM-L6-v2; each has a manifest (`<name>.json`: the data it was fitted on, the
command, its held-out figures).
The files load on first use, so importing the judge costs nothing.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from mnemoledger.commands.judge.facts import StatedFact, Word, context, decode, pieces
from mnemoledger.commands.judge.guards import (
    SAID_AGAIN,
    beside,
    contradicted,
    denies,
    denies_something_else,
    for_now,
    held_apart,
    not_restated,
    other_holders,
    other_values,
    said_to_a_person,
    same_words,
)
from mnemoledger.commands.judge.judgement import Relation, Role, Turn
from mnemoledger.commands.judge.kinds import KINDS, Kind
from mnemoledger.commands.judge.text import passage, statement, turn
from mnemoledger.ledger.policy import REPLACES_CUT

MODELS: Final = Path(__file__).resolve().parent / "models"
"""The fitted files shipped with the package."""
MODELS_ENV: Final = "MNEMOLEDGER_JUDGE_MODELS"
"""A folder of fitted files to use instead (a refit, a leave-one-author-out fold)."""
CACHE_SIZE: Final = 4096
"""Answers kept per question kind: consolidation asks about the same pairs again."""
LINEAR_RELEVANCE_WEIGHT: Final = 0.7
"""A relevance model without a fitted blend (an older fit, a fold's refit): this share of a
read candidate's relevance is the model's likelihood, the rest the fused relevance."""
LIKELIHOOD_FLOOR: Final = 1e-4
"""A likelihood is read as a logit within [floor, 1 - floor] (a saturated sigmoid's 0 or 1
has none)."""

REFIT: Final = {"relevance": "scripts/fit_relevance.py", "facts": "scripts/fit_facts.py"}
"""The script that fits a model, where it is not `scripts/fit_judge.py <model>`."""

UNKNOWN_TOKEN: Final = "[UNK]"
UNREADABLE_SHARE: Final = 0.5
"""A text whose tokens are more than half unknown is not read by the models: two such
statements are kept side by side, and the piece is kept (the seed's phrasings still screen
it)."""

UNLEARNED_SCRIPTS: Final = (
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3400, 0x9FFF),  # CJK ideographs
    (0xAC00, 0xD7AF),  # hangul
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
)
"""Scripts whose characters the English base model has as single pieces without meaning
(a model fitted from a multilingual base reads them: its manifest says `multilingual`)."""

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ModelMissing(RuntimeError):
    """A fitted model file is not where the judge looks for it."""


@dataclass(frozen=True)
class _Manifest:
    max_length: int
    outputs: tuple[str, ...]
    replaces_cut: float
    context: str = "assistant"
    """What the facts model reads beside a turn (`facts.CONTEXTS`)."""
    confidence_cut: float = 0.0
    """The facts model's least confidence in a value it reports (chosen on sets it was not
    fitted on; its manifest says which)."""
    blend: tuple[float, float, float] | None = None
    """The relevance model's: the weights of its logit and of the retrievers' fused
    relevance, and the bias, of the logistic regression that combines them
    (`scripts/fit_blend.py`)."""
    multilingual: bool = False
    """Fitted from a multilingual base: no script is unlearned to it."""
    unknown_token: str = UNKNOWN_TOKEN
    """Its tokenizer's piece for what it does not know."""


class _Model:
    """One ONNX classifier and its tokenizer, loaded on first use."""

    def __init__(self, folder: Path, name: str) -> None:
        self._folder = folder
        self._name = name
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self.manifest: _Manifest | None = None

    def _ready(self) -> None:
        """Load the model and its manifest, once."""
        with self._lock:
            if self._session is None:
                self._load()

    def _missing(self, path: Path) -> ModelMissing:
        refit = REFIT.get(self._name, f"scripts/fit_judge.py {self._name}")
        return ModelMissing(
            f"the judge's {self._name} model is missing: {path} (refit it with `python {refit}`)"
        )

    def _load(self) -> None:
        onnx_file = self._folder / f"{self._name}.onnx"
        if not onnx_file.exists():
            raise self._missing(onnx_file)
        import onnxruntime

        manifest = json.loads((self._folder / f"{self._name}.json").read_text(encoding="utf-8"))
        # a model fitted from another base than the folder's others names its own tokenizer
        tokenizer_file = self._folder / str(manifest.get("tokenizer", "tokenizer.json"))
        if not tokenizer_file.exists():
            raise self._missing(tokenizer_file)
        self.manifest = _Manifest(
            int(manifest["max_length"]),
            tuple(manifest["outputs"]),
            float(manifest.get("replaces_cut", REPLACES_CUT)),
            str(manifest.get("context", "assistant")),
            float(manifest.get("confidence_cut", 0.0)),
            _blend(manifest.get("blend")),
            bool(manifest.get("multilingual", False)),
            str(manifest.get("unknown_token", UNKNOWN_TOKEN)),
        )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(onnx_file), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = _tokenizer(tokenizer_file, self.manifest.max_length)

    def logits(self, inputs: Sequence[str | tuple[str, str]]) -> npt.NDArray[np.float32]:
        """One row of logits per input (a text, or a pair of texts).

        Each input is run on its own: the int8 model quantises its activations with one
        scale per run, so inputs run together would move each other's answers (a pair's
        verdict would depend on what else the add asked). Tokenised in one batch."""
        self._ready()
        rows = []
        for encoded in self._tokenizer.encode_batch(list(inputs)):
            feeds = {
                "input_ids": np.array([encoded.ids], dtype=np.int64),
                "attention_mask": np.array([encoded.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([encoded.type_ids], dtype=np.int64),
            }
            (logits,) = self._session.run(["logits"], feeds)
            rows.append(np.asarray(logits, dtype=np.float32)[0])
        return np.array(rows, dtype=np.float32).reshape(len(rows), -1)

    def word_logits(
        self, inputs: Sequence[tuple[Sequence[str], Sequence[str]]]
    ) -> list[npt.NDArray[np.float32]]:
        """For each input (a text's words, and the words read beside it), one row of logits
        per word of the text: those of its first piece (a word cut off by the length limit
        has a row of zeros). Each input is run on its own, as in `logits`."""
        self._ready()
        rows = []
        for said, next_to in inputs:
            encoded = self._tokenizer.encode(
                list(said), list(next_to) or None, is_pretokenized=True
            )
            feeds = {
                "input_ids": np.array([encoded.ids], dtype=np.int64),
                "attention_mask": np.array([encoded.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([encoded.type_ids], dtype=np.int64),
            }
            (logits,) = self._session.run(["logits"], feeds)
            per_word = np.zeros((len(said), logits.shape[-1]), dtype=np.float32)
            seen: set[int] = set()
            for position, (word, sequence) in enumerate(
                zip(encoded.word_ids, encoded.sequence_ids, strict=True)
            ):
                if sequence == 0 and word is not None and word not in seen:
                    seen.add(word)
                    per_word[word] = logits[0, position]
            rows.append(per_word)
        return rows

    def context(self) -> str:
        """What the model reads beside a text, as its manifest says (loaded on first use)."""
        return self.loaded_manifest().context

    def loaded_manifest(self) -> _Manifest:
        """The model's manifest (the model is loaded on first use)."""
        self._ready()
        assert self.manifest is not None
        return self.manifest

    @property
    def replaces_cut(self) -> float:
        """The cut the model's manifest names (read when the model is loaded)."""
        assert self.manifest is not None, "read after the first logits()"
        return self.manifest.replaces_cut

    def unreadable(self, text: str) -> bool:
        """Most of `text` is in a script the model never learned (Chinese, Japanese, Korean)
        or unknown to its vocabulary: what it would answer is noise."""
        manifest = self.loaded_manifest()
        letters = [ch for ch in text if ch.isalpha()]
        unlearned = sum(any(a <= ord(ch) <= b for a, b in UNLEARNED_SCRIPTS) for ch in letters)
        if not manifest.multilingual and letters and unlearned > UNREADABLE_SHARE * len(letters):
            return True
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        unknown = self._tokenizer.token_to_id(manifest.unknown_token)
        return bool(ids) and sum(i == unknown for i in ids) > UNREADABLE_SHARE * len(ids)


@cache
def _tokenizer(file: Path, max_length: int) -> Any:
    """The tokenizer in `file`, cutting at `max_length` pieces: loaded once for every model
    that names it (a multilingual one takes ~280 MB)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(file))
    tokenizer.enable_truncation(max_length)
    tokenizer.no_padding()
    return tokenizer


class _Cache(OrderedDict[Any, Any]):
    """A bounded map of answers, oldest out first."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self._size = size
        self._lock = threading.Lock()

    def answers(self, keys: Sequence[K], compute: Callable[[list[K]], list[V]]) -> list[V]:
        """The answer of each key, computing the missing ones in one call."""
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self))
        if missing:
            computed = compute(missing)
            with self._lock:
                for key, value in zip(missing, computed, strict=True):
                    self[key] = value
                    self.move_to_end(key)
                while len(self) > self._size:
                    self.popitem(last=False)
                found = {key: self[key] for key in keys if key in self}
            found.update(zip(missing, computed, strict=True))
            return [found[k] for k in keys]
        with self._lock:
            return [self[k] for k in keys]


def _softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    shifted = logits.astype(np.float64) - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


def _blend(fitted: dict[str, float] | None) -> tuple[float, float, float] | None:
    if fitted is None:
        return None
    return float(fitted["answer_logit"]), float(fitted["fused"]), float(fitted["bias"])


def likelihood_logit(likelihood: float) -> float:
    """The logit of a likelihood, read within [LIKELIHOOD_FLOOR, 1 - LIKELIHOOD_FLOOR] (what
    the search's blend reads; `scripts/fit_blend.py` fits it on the same)."""
    p = min(max(likelihood, LIKELIHOOD_FLOOR), 1.0 - LIKELIHOOD_FLOOR)
    return math.log(p / (1.0 - p))


def _sigmoid(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    return 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))  # type: ignore[no-any-return]


class LearnedJudge:
    """The judge of the offline default: small fine-tuned transformers."""

    def __init__(self, models: Path = MODELS) -> None:
        self.models = models
        self._relation = _Model(models, "relation")
        self._turns = _Model(models, "turns")
        self._relevance = _Model(models, "relevance")
        self._facts = _Model(models, "facts")
        self._kinds = _Model(models, "kinds")
        self._relations = _Cache(CACHE_SIZE)
        self._turn_scores = _Cache(CACHE_SIZE)
        self._answers = _Cache(CACHE_SIZE)
        self._stated = _Cache(CACHE_SIZE)
        self._kind_of = _Cache(CACHE_SIZE)

    def relations(self, pairs: Sequence[tuple[str, str]]) -> list[Relation]:
        return self._relations.answers(list(pairs), self._relate)

    def _relate(self, pairs: list[tuple[str, str]]) -> list[Relation]:
        probabilities = _softmax(
            self._relation.logits([(statement(older), statement(newer)) for older, newer in pairs])
        )
        answers = []
        for (older, newer), row in zip(pairs, probabilities, strict=True):
            relation = Relation(*(float(p) for p in row))
            if same_words(older, newer):
                relation = SAID_AGAIN
            elif self._relation.unreadable(older) or self._relation.unreadable(newer):
                relation = Relation(replaces=0.0, restates=0.0, adds=1.0, unrelated=0.0)
            elif other_holders(older, newer):
                relation = held_apart(relation)
            elif denies_something_else(older, newer):
                relation = beside(relation)
            elif denies(older, newer):
                relation = contradicted(relation)
            elif other_values(older, newer):
                relation = not_restated(relation)
            answers.append(replace(relation, replaces_cut=self._relation.replaces_cut))
        return answers

    def _scores(self, turns: Sequence[Turn]) -> list[tuple[float, float]]:
        def compute(keys: list[tuple[str, Role]]) -> list[tuple[float, float]]:
            texts = [turn(text, role) for text, role in keys]
            probabilities = _sigmoid(self._turns.logits(texts))
            return [
                (1.0, 0.0) if self._turns.unreadable(text) else (float(row[0]), float(row[1]))
                for (text, _), row in zip(keys, probabilities, strict=True)
            ]

        return self._turn_scores.answers([(t.text, t.role) for t in turns], compute)

    def worth_keeping(self, turns: Sequence[Turn]) -> list[float]:
        return [keep for keep, _ in self._scores(turns)] if turns else []

    def instructions(self, turns: Sequence[Turn]) -> list[float]:
        return [instruction for _, instruction in self._scores(turns)] if turns else []

    def relevance(self, query: str, memories: Sequence[str]) -> list[float]:
        """For each memory, the likelihood that it answers `query` (what a search ranks by:
        not whether it shares words with the question, but whether a careful reader would
        pick it to answer)."""

        def compute(keys: list[tuple[str, str]]) -> list[float]:
            probabilities = _sigmoid(self._relevance.logits([(q, passage(m)) for q, m in keys]))
            return [float(row[0]) for row in probabilities]

        return self._answers.answers([(query, m) for m in memories], compute) if memories else []

    def relevance_blend(self, answer: float, fused: float) -> float:
        """The relevance a search ranks a candidate the relevance model read by: the model's
        likelihood that it answers (`relevance`) and the retrievers' fused relevance,
        combined by the logistic regression fitted on questions the model never saw (its
        manifest's `blend`; without one, `LINEAR_RELEVANCE_WEIGHT` of the likelihood)."""
        fitted = self._relevance.loaded_manifest().blend
        if fitted is None:
            return LINEAR_RELEVANCE_WEIGHT * answer + (1 - LINEAR_RELEVANCE_WEIGHT) * fused
        w_answer, w_fused, bias = fitted
        return 1.0 / (
            1.0 + math.exp(-(w_answer * likelihood_logit(answer) + w_fused * fused + bias))
        )

    def facts(self, turns: Sequence[tuple[str, str]]) -> list[list[StatedFact]]:
        """For each user turn of one conversation, in order (its text, and the assistant's
        turn before it or ""), the facts it states about the user, in the order said. One
        model run per piece of a turn."""
        kind = self._facts.context()
        inputs: list[tuple[int, str, list[Word], list[str]]] = []
        for index, (text, asked) in enumerate(turns):
            beside = context(asked, turns[index - 1][0] if index else "", kind)
            inputs += [(index, text, piece, beside) for piece in pieces(text)]
        if not inputs:
            return [[] for _ in turns]
        rows = self._facts.word_logits([([w.text for w in p], b) for _, _, p, b in inputs])
        assert self._facts.manifest is not None  # loaded by context()
        labels = self._facts.manifest.outputs
        found: list[list[StatedFact]] = [[] for _ in turns]
        outside = np.eye(len(labels))[labels.index("O")]
        cut = self._facts.manifest.confidence_cut
        for (index, text, piece, _), logits in zip(inputs, rows, strict=True):
            probabilities = _softmax(logits)
            probabilities[~logits.any(axis=1)] = outside  # cut off by the length limit: unread
            found[index] += [
                f for f in decode(text, piece, probabilities, labels) if f.confidence >= cut
            ]
        return found

    def stated(self, texts: Sequence[str]) -> list[list[StatedFact]]:
        """For each text, read on its own (no turn before it), the facts it states about
        the user: the consent gate asks about the same notes and bullets again."""

        def compute(keys: list[str]) -> list[list[StatedFact]]:
            return [self.facts([(text, "")])[0] for text in keys]

        return self._stated.answers(list(texts), compute) if texts else []

    def kinds(self, texts: Sequence[str]) -> list[Kind]:
        """For each text, what kind of memory it is (`kinds.KINDS`): the likeliest, but
        never the assistant's persona for a turn a named speaker said to another person
        (`guards.said_to_a_person`), and a passing state when a time adverbial binds it to
        now (`guards.for_now`)."""

        def compute(keys: list[str]) -> list[Kind]:
            logits = self._kinds.logits([statement(text) for text in keys])
            read: list[Kind] = []
            for text, row in zip(keys, logits, strict=True):
                first, second = (KINDS[int(i)] for i in np.argsort(-row)[:2])
                kind = second if first == "agent" and said_to_a_person(text) else first
                read.append("passing" if for_now(text, kind) else kind)
            return read

        return self._kind_of.answers(list(texts), compute) if texts else []


@cache
def _judge_in(folder: Path) -> LearnedJudge:
    return LearnedJudge(folder)


def default_judge() -> LearnedJudge:
    """The process's judge: the shipped models, or those in `$MNEMOLEDGER_JUDGE_MODELS`."""
    chosen = os.environ.get(MODELS_ENV)
    return _judge_in(Path(chosen).expanduser().resolve() if chosen else MODELS)
