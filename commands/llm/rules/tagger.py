"""A learned value extractor for the offline rules: a token tagger over the user's sentences.

The rules read values through phrasings they know; the long tail of phrasing defeats them. This
tagger reads each word of a user sentence with its neighbours (word, lower case, shape,
affixes, the two words either side, the nearest cue word before it such as "at", "in", "as",
"from", and membership of the gazetteer and the lexicons of jobs, languages, software and
diets) and labels it as the beginning (B-) or inside (I-) of a value of one attribute, or
outside any value (O). One averaged perceptron, decoded left to right (the previous label is a
feature), with weights in `commands/data/tagger.json` fitted by `scripts/fit_extractor.py` on
the labelled extraction sets. Its spans fill the attributes the rules found nothing for.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

import numpy as np

from mnemoledger.commands.llm.rules.attributes import ENDED
from mnemoledger.commands.llm.rules.learned import _NOT_THE_USER, ORIGIN
from mnemoledger.commands.llm.rules.user_facts import (
    _A_JOB_NOUN,
    _DIETS,
    _HEDGE,
    _LANGUAGE_NAMES,
    _LOST_JOB,
    _NOT_NAMES,
    _SOMEONE_ELSE,
    _SUPPOSING,
    _WONDERING,
    FOOD_GROUPS,
    NEGATION,
    Stated,
    _gazetteer,
    _is_tool_name,
    clauses,
    known_place,
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


ATTRIBUTES: Final = (
    "name",
    "occupation",
    "employer",
    "location",
    "hometown",
    "tool",
    "language",
    "allergy",
    "diet",
)
"""The attributes whose value is a span of the user's words."""
LABELS: Final = ("O", *(f"{p}-{a}" for a in ATTRIBUTES for p in ("B", "I")))
WEIGHTS: Final = Path(__file__).resolve().parent.parent.parent / "data" / "tagger.json"
MIN_MARGIN: Final = 0.0
"""The least margin (the span's label over the next best, at its weakest word) for a span to
become a fact; chosen by cross-validation over the labelled sets (`scripts/cv_extraction.py`)."""

TOKEN: Final = re.compile(r"\w(?:[\w'’.&+#-]*[\w+#])?|[^\w\s]")
_CUES: Final = _words(
    "at in for as a an the from with called named is am i'm im been use using speak "
    "me my of to near based live living work working job @ : - | , ( was teach study "
    "studying doing"
)
"""Words whose nearest occurrence before a word tells what slot the word is in."""
_FIRST_PERSON: Final = re.compile(r"\b(?:i|i'm|im|i've|me|my|myself|we|our)\b", re.IGNORECASE)
_PAST: Final = re.compile(
    r"\b(?:used to|was|were|previously|formerly|ex-\w+|left|quit|before that|grew up|born"
    r"|originally|raised)\b",
    re.IGNORECASE,
)
_JOB: Final = re.compile(rf"(?i:{_A_JOB_NOUN.pattern})s?")
_DIET: Final = re.compile(rf"(?i:{_DIETS}|{FOOD_GROUPS})")


def fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(sentence: str) -> list[str]:
    return TOKEN.findall(sentence)


def _shape(word: str) -> str:
    shape = re.sub(r"[A-Z\u00c0-\u00de]", "X", word)
    shape = re.sub(r"[a-z\u00df-\u024f]", "x", shape)
    shape = re.sub(r"\d", "d", shape)
    return re.sub(r"(.)\1+", r"\1\1", shape)


def _word_classes(words: Sequence[str]) -> list[list[str]]:
    """Lexicon and gazetteer classes of each word, n-grams included ("new york", "vs code")."""
    places = _gazetteer()
    folded = [fold(w) for w in words]
    classes: list[list[str]] = [[] for _ in words]
    for i, word in enumerate(folded):
        for n in (3, 2, 1):
            if i + n > len(words):
                continue
            phrase = " ".join(folded[i : i + n])
            raw = " ".join(words[i : i + n])
            found = []
            if phrase in places and (n > 1 or word not in _COMMON):
                found.append("gaz")
            if _JOB.fullmatch(phrase):
                found.append("job")
            if n == 1 and phrase in _LANGUAGE_NAMES:
                found.append("lang")
            if _is_tool_name(raw):
                found.append("soft")
            if _DIET.fullmatch(phrase):
                found.append("diet")
            for j in range(i, i + n):
                classes[j] += [f"{c}{n}" if j == i else f"{c}{n}in" for c in found]
    return classes


_NOT_NAMES_LOWER: Final = frozenset(n.lower() for n in _NOT_NAMES)
_COMMON: Final = _words(
    "a an the i me my we our you it is am are was in on at to of and or but so for "
    "with as by from up out all just like not no yes ok okay hi hey thanks please "
    "very really work job home day days week time good best most more new old big "
    "little"
)


@dataclass(frozen=True)
class Sentence:
    words: list[str]
    feats: list[list[str]]


def prepare(sentence: str) -> Sentence:
    """A sentence's words and the features of each (all but the previous label)."""
    words = tokens(sentence)
    lower = [w.casefold() for w in words]
    classes = _word_classes(words)
    flags = []
    if _SOMEONE_ELSE.search(sentence):
        flags.append("s:else")
    if _WONDERING.search(sentence) or _SUPPOSING.search(sentence):
        flags.append("s:wonder")
    if sentence.rstrip().endswith("?"):
        flags.append("s:question")
    if _PAST.search(sentence):
        flags.append("s:past")
    if _FIRST_PERSON.search(sentence):
        flags.append("s:i")
    if sentence == sentence.lower():
        flags.append("s:lower")
    feats: list[list[str]] = []
    for i, word in enumerate(words):
        low = lower[i]
        f = ["bias", f"w={low}", f"sh={_shape(word)}", f"p3={low[:3]}", f"s3={low[-3:]}"]
        f.append(f"s2={low[-2:]}")
        if word[:1].isupper():
            f.append("cap" if i else "cap0")
            if low in _NOT_NAMES_LOWER:
                f.append("notname")
        if i == 0:
            f.append("first")
        if i == len(words) - 1:
            f.append("last")
        for d in (-2, -1, 1, 2):
            j = i + d
            other = lower[j] if 0 <= j < len(words) else ("<s>" if j < 0 else "</s>")
            f.append(f"w{d}={other}")
            if 0 <= j < len(words):
                f += [f"c{d}={c}" for c in classes[j]]
                f.append(f"sh{d}={_shape(words[j])}")
        f.append(f"w-1w={lower[i - 1] if i else '<s>'}|{low}")
        f.append(f"ww+1={low}|{lower[i + 1] if i + 1 < len(words) else '</s>'}")
        f.append(f"w-2-1={lower[i - 2] if i > 1 else '<s>'}|{lower[i - 1] if i else '<s>'}")
        cue = next((lower[j] for j in range(i - 1, max(-1, i - 5), -1) if lower[j] in _CUES), "")
        f.append(f"cue={cue}")
        f.append(f"cue|sh={cue}|{_shape(word)}")
        f += [f"cue|c={cue}|{c}" for c in classes[i]]
        f += [f"p4={low[:4]}", f"s4={low[-4:]}"]
        f += [f"c={c}" for c in classes[i]]
        f += [f"{flag}|{c}" for flag in flags for c in (classes[i] or ["-"])[:1]]
        f += flags
        feats.append(f)
    return Sentence(words, feats)


@dataclass
class Model:
    index: dict[str, int]
    weights: np.ndarray
    """(features, labels)"""

    def scores(self, feats: Iterable[str]) -> np.ndarray:
        ids = [self.index[f] for f in feats if f in self.index]
        return self.weights[ids].sum(axis=0) if ids else np.zeros(len(LABELS))


def _allowed(previous: str, label: str) -> bool:
    return not label.startswith("I-") or previous[2:] == label[2:]


def decode(model: Model, sentence: Sentence) -> list[tuple[str, float]]:
    """Each word's label and margin, left to right."""
    out: list[tuple[str, float]] = []
    previous = "O"
    for feats in sentence.feats:
        s = model.scores([*feats, f"prev={previous}", f"prev={previous}|{feats[1]}"])
        order = np.argsort(-s)
        best = next(int(k) for k in order if _allowed(previous, LABELS[k]))
        rest = [s[k] for k in order if k != best]
        out.append((LABELS[best], float(s[best] - max(rest))))
        previous = LABELS[best]
    return out


@dataclass(frozen=True)
class Span:
    attribute: str
    text: str
    margin: float
    word_before: str
    """The sentence's word before the span ("" at its start)."""


def spans(model: Model, sentence: str) -> list[Span]:
    prepared = prepare(sentence)
    found: list[Span] = []
    current: list[int] = []
    attribute = ""
    margin = 0.0
    labels = decode(model, prepared)

    def close() -> None:
        if current:
            text = " ".join(prepared.words[i] for i in current)
            before = prepared.words[current[0] - 1] if current[0] else ""
            found.append(Span(attribute, text, margin, before))

    for i, (label, m) in enumerate(labels):
        if label.startswith("I-") and current and label[2:] == attribute:
            current.append(i)
            margin = min(margin, m)
            continue
        close()
        current, attribute, margin = ([i], label[2:], m) if label != "O" else ([], "", 0.0)
    close()
    return found


@lru_cache(maxsize=1)
def shipped_model() -> Model | None:
    try:
        data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return from_json(data)


def from_json(data: dict[str, object]) -> Model:
    features = data["features"]
    assert isinstance(features, dict)
    index: dict[str, int] = {}
    weights = np.zeros((len(features), len(LABELS)), dtype=np.float32)
    for row, (feature, sparse) in enumerate(features.items()):
        index[feature] = row
        for label, value in sparse.items():
            weights[row, LABELS.index(label)] = value
    return Model(index, weights)


def to_json(model: Model, trained_on: Sequence[str], sentences: int) -> dict[str, object]:
    features: dict[str, dict[str, float]] = {}
    for feature, row in sorted(model.index.items()):
        sparse = {
            LABELS[k]: round(float(v), 2)
            for k, v in enumerate(model.weights[row])
            if abs(v) >= 0.005
        }
        if sparse:
            features[feature] = sparse
    return {
        "labels": list(LABELS),
        "trained_on": list(trained_on),
        "sentences": sentences,
        "features": features,
    }


_active: list[Model | None] = []
"""A model set by `use` (cross-validation) in place of the shipped one."""


def use(model: Model | None) -> None:
    _active[:] = [model]


def _model() -> Model | None:
    return _active[0] if _active else shipped_model()


_PET: Final = re.compile(
    r"\b(?:my|our) (?:\w+ )?(?:dog|dog's|cat|cat's|pet|pet's|puppy|kitten|parrot|rabbit"
    r"|hamster|horse|pony|tortoise|snake|goldfish|beagle|labrador|terrier)\b",
    re.IGNORECASE,
)
_TEAM: Final = re.compile(r"^(?:my|our) (?:\w+ )?(?:team|company|stack)\b", re.IGNORECASE)
MIN_NAME_MARGIN: Final = 3.0
"""A name, which replaces the one the user gave before, needs more certainty than the rest."""
_PLACE_CUES: Final = _words("in from based to at @ - : | , near outside")
"""A place the gazetteer does not know is read only right after one of these ("in nyc")."""


def _clause_of(sentence: str, value: str) -> str:
    return next((c for c in clauses(sentence) if value in c), sentence)


def _gated(sentence: str, span: Span) -> bool:
    """Whether the span's clause is about someone else, a plan, the past, a like, or negated
    before it: the tagger reads only what the user states of themselves."""
    clause = _clause_of(sentence, span.text)
    before = clause[: clause.find(span.text)] if span.text in clause else clause
    team = span.attribute == "tool" and _TEAM.match(clause) is not None  # "our team uses Jira"
    return bool(
        _NOT_THE_USER.search(clause)
        or (_SOMEONE_ELSE.search(clause) and not team)
        or _HEDGE.search(clause)
        or ENDED.search(clause)
        or (span.attribute in ("employer", "occupation") and _LOST_JOB.search(clause))
        or NEGATION.search(before)
        or (span.attribute == "name" and _PET.search(clause))
        or (span.attribute == "location" and ORIGIN.search(before) is not None)
        or (span.attribute == "language" and _REPLY_IN.search(before) is not None)
    )


_REPLY_IN: Final = re.compile(
    r"\b(?:reply|replies|answer|answers|respond|responses|write)(?: \w+){0,3}? in $",
    re.IGNORECASE,
)
"""'reply in german pls': the language wanted for replies, a style, not news of a language."""


def _plausible(span: Span) -> bool:
    value = span.text
    if span.attribute in ("location", "hometown"):
        return known_place(value) or span.word_before.casefold() in _PLACE_CUES
    if span.attribute == "name":
        first = value.split()[0]
        return first.casefold() not in _NOT_NAMES_LOWER and fold(first) not in _LANGUAGE_NAMES
    if span.attribute == "language":
        return fold(value) in _LANGUAGE_NAMES
    if span.attribute == "tool":
        return _is_tool_name(value) or not value.islower() or not value.isalpha()
    return True


def tagged_facts(sentence: str) -> list[tuple[Stated, float]]:
    """The facts the tagger reads in a user sentence, each with its margin."""
    model = _model()
    if model is None or sentence.rstrip().endswith("?"):
        return []
    if _WONDERING.search(sentence) or _SUPPOSING.search(sentence):
        return []
    facts: list[tuple[Stated, float]] = []
    for span in spans(model, sentence):
        least = MIN_NAME_MARGIN if span.attribute == "name" else MIN_MARGIN
        if span.margin < least or _gated(sentence, span) or not _plausible(span):
            continue
        value = span.text.strip(" .,:;-|@")
        if not value or not any(c.isalnum() for c in value):
            continue
        if span.attribute in ("tool", "allergy"):
            facts.append((Stated(span.attribute, value, item=value), span.margin))
        elif span.attribute == "language":
            value = value[:1].upper() + value[1:]
            facts.append((Stated("language", value, item=value), span.margin))
        else:
            facts.append((Stated(span.attribute, value), span.margin))
    return facts
