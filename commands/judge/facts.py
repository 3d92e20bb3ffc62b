"""What a user says about themselves, as the facts model reads it: spans of their words.

The facts model (`models/facts.onnx`, fitted by `scripts/fit_facts.py` on the labelled
conversations in `tests/data/extraction_*.jsonl`) reads one user turn beside the assistant's
turn before it (and the user's own turn before that, if its manifest says so), and labels
each word as the beginning (`B-`) or inside (`I-`) of a value of one attribute with its
polarity (`B-location+`, `I-diet-`), or outside any (`O`). What it reads beside a turn is
there for answers ("Where are you based?" / "berlin, for now") and is never labelled. This
module holds what fitting and use share: how a turn is cut into words and pieces, the labels,
and how labelled words become facts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np
import numpy.typing as npt

Attribute = Literal[
    "name",
    "occupation",
    "employer",
    "location",
    "hometown",
    "diet",
    "allergy",
    "language",
    "schedule",
    "deadline",
    "tool",
    "preference",
    "style",
    "person",
    "pet",
]
ATTRIBUTES: Final[tuple[str, ...]] = get_args(Attribute)
"""What the model finds: the user's profile fields, their tastes, how they want replies
written, and the people and animals in their life."""
SINGLE_VALUED: Final = frozenset({"name", "occupation", "employer", "location", "hometown"})
"""A conversation gives one value of these: the last one said (a correction, a move)."""
ACTIVITIES: Final = frozenset({"schedule", "deadline"})
"""Values that are an activity and its time, often apart ("standup is at 9:15")."""
ACTIVITY_GAP: Final = 4
"""Words between two spans of one activity's value that still make it one value."""
POLARITIES: Final = ("+", "-")
LABELS: Final = (
    "O",
    *(f"{edge}-{a}{p}" for a in ATTRIBUTES for p in POLARITIES for edge in ("B", "I")),
)
"""The model's outputs, in order."""

MAX_WORDS: Final = 120
"""Words of a user turn read in one piece; a longer turn is read in pieces cut at sentences."""
CONTEXT_WORDS: Final = 16
"""The last words of each turn read beside the user's (`context`)."""

_WORD: Final = re.compile(r"\w(?:[\w'’:.&/+-]*\w)?|[^\w\s]", re.UNICODE)
"""A word: letters and digits with inner apostrophes, colons, dots, hyphens ("don't",
"9:15", "J.P", "e-bike"), or one mark of punctuation."""
_SENTENCE_END: Final = frozenset(".!?;\n")


@dataclass(frozen=True)
class Word:
    """One word of a text."""

    text: str
    start: int
    """Where it begins in the text."""
    end: int
    """Where it ends (exclusive)."""


def words(text: str) -> list[Word]:
    """The words of `text` with where each stands."""
    return [Word(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


def pieces(text: str) -> list[list[Word]]:
    """`text`'s words in pieces of at most `MAX_WORDS`, cut after a sentence's end where one
    falls (a long voice memo is read sentence by sentence, a short turn whole)."""
    found = words(text)
    out: list[list[Word]] = []
    start = 0
    while start < len(found):
        end = min(len(found), start + MAX_WORDS)
        if end < len(found):
            cuts = [i + 1 for i in range(start, end) if found[i].text in _SENTENCE_END]
            end = cuts[-1] if cuts and cuts[-1] > start else end
        out.append(found[start:end])
        start = end
    return out


CONTEXTS: Final = ("assistant", "user+assistant")
"""What a model reads beside a user's turn (its manifest's `context`): the assistant's turn
before it, or also the user's own turn before that ("I live in Leiden." / "Nice." /
"Sorry, I meant Delft.")."""


def context(asked: str, said_before: str = "", kind: str = "assistant") -> list[str]:
    """The words the model reads beside a user's turn: the last ones of the assistant's turn
    before it, after the last ones of the user's previous turn when `kind` says so."""
    beside = [w.text for w in words(asked)][-CONTEXT_WORDS:]
    if kind == "user+assistant":
        beside = [w.text for w in words(said_before)][-CONTEXT_WORDS:] + beside
    return beside


def fold(word: str) -> str:
    """A word as labels are matched to it: lower case, accents off, a final 's and plural s
    off ("Düsseldorf's" / "dusseldorf", "peanuts" / "peanut")."""
    plain = unicodedata.normalize("NFKD", word.casefold())
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch))
    plain = plain.removesuffix("'s").removesuffix("’s")
    return plain[:-1] if len(plain) > 3 and plain.endswith("s") else plain


@dataclass(frozen=True)
class StatedFact:
    """One value the user states about themselves."""

    attribute: str
    """One of `ATTRIBUTES`."""
    value: str
    """Their words for it, as said ("mechanical engineer", "standup is at 9:15")."""
    positive: bool
    """False when they say it does not hold (a dislike, a food they avoid, a tool dropped)."""
    confidence: float
    """The model's mean likelihood that the value's words are part of a value."""


def decode(
    text: str,
    said: Sequence[Word],
    probabilities: npt.NDArray[np.float64],
    labels: Sequence[str] = LABELS,
) -> list[StatedFact]:
    """The facts of one piece, read from each word's likelihoods over `labels`.

    A word belongs to a value when `O` is less likely than not; a run of such words is one
    value, cut again only where a word of another attribute or polarity more likely begins a
    value than goes on with one ("Pro Tools" is one value even when "Tools" reads as a
    beginning). The run takes the attribute and polarity most likely over its words (`B-` and
    `I-` together), so one word read otherwise does not break a value in two ("true crime",
    "red meat"). The runs of one activity a few words apart are one value ("standup is at
    9:15")."""
    kinds = sorted({label[2:] for label in labels if label != "O"})
    outside = probabilities[:, labels.index("O")]
    begins = probabilities[:, [labels.index(f"B-{k}") for k in kinds]]
    goes_on = probabilities[:, [labels.index(f"I-{k}") for k in kinds]]
    either = begins + goes_on
    runs: list[list[int]] = []
    for index in range(len(said)):
        if outside[index] >= 0.5:
            continue
        if runs and runs[-1][-1] == index - 1:
            run = runs[-1]
            other = either[index].argmax() != either[run].sum(axis=0).argmax()
            if not (other and begins[index].sum() > goes_on[index].sum()):
                run.append(index)
                continue
        runs.append([index])
    read: list[tuple[str, int, int]] = []
    for run in runs:
        kind = kinds[int(either[run].sum(axis=0).argmax())]
        first, last = run[0], run[-1]
        if (
            read
            and kind[:-1] in ACTIVITIES
            and read[-1][0] == kind
            and first - read[-1][2] - 1 <= ACTIVITY_GAP
        ):
            first = read.pop()[1]
        read.append((kind, first, last))
    facts = []
    for kind, (first, last), model_read in _with_times(read, said):
        value = text[said[first].start : said[last].end].strip()
        if not any(ch.isalnum() for ch in value):
            continue
        confidence = float(1.0 - outside[model_read].mean())
        facts.append(StatedFact(kind[:-1], value, kind[-1] == "+", confidence))
    return facts


_TIME_WORDS: Final = frozenset(
    (
        *("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
        *("weekday", "weekend", "morning", "afternoon", "evening", "night", "noon"),
        *("midnight", "tonight", "today", "tomorrow", "daily", "weekly", "monthly"),
        *("january", "february", "april", "june", "july", "august", "september"),
        *("october", "november", "december"),
    )
)
"""Words of a time expression (a weekday, a month, a part of the day, a frequency)."""
_MONTHS_ALSO_VERBS: Final = frozenset({"may", "march"})
"""Months that are also verbs ("I may run"): a time only beside a number ("May 2")."""
_CLOCK: Final = re.compile(
    r"\d{1,2}([:.]\d{2})?(am|pm|h)|\d{1,2}[:.]\d{2}|\d{1,2}(st|nd|rd|th)", re.I
)
"""A time of day or a day of the month ("9:15", "6am", "2nd"); a bare number is a time only
beside a month ("May 2")."""
_NUMBER: Final = re.compile(r"\d{1,2}")
_CLAUSE_END: Final = frozenset(".!?;,")


def _leads_time(word: Word) -> bool:
    """A word that opens a time expression ("every morning", "on Friday")."""
    return word.text.casefold() in ("every", "each", "on", "at", "by")


def _is_time(said: Sequence[Word], i: int) -> bool:
    """Whether the `i`-th word is part of a time expression."""
    folded = said[i].text.casefold()
    if folded.removesuffix("s") in _TIME_WORDS or _CLOCK.fullmatch(folded):
        return True
    beside = [said[j].text.casefold() for j in (i - 1, i + 1) if 0 <= j < len(said)]
    if folded in _MONTHS_ALSO_VERBS:
        return any(_NUMBER.fullmatch(w) for w in beside)
    if _NUMBER.fullmatch(folded):
        return any(w in _TIME_WORDS or w in _MONTHS_ALSO_VERBS for w in beside)
    return False


def _with_times(
    read: list[tuple[str, int, int]], said: Sequence[Word]
) -> list[tuple[str, tuple[int, int], list[int]]]:
    """An activity's value with its time: the tagger sometimes marks the activity and its
    time apart ("the migration has to be done by Friday") or the activity alone ("a run
    every morning"). Two values of one activity in one clause are one when either holds a
    time expression, and a value with none reaches to the time expression nearest it in its
    clause (a general guard on temporal expressions: a time attaches to its event). Each
    value comes with its first and last word and the words the model read of it (its
    confidence is theirs)."""
    clause = [0] * len(said)
    for i in range(1, len(said)):
        clause[i] = clause[i - 1] + (said[i - 1].text in _CLAUSE_END)

    def timed(first: int, last: int) -> bool:
        return any(_is_time(said, i) for i in range(first, last + 1))

    joined: list[tuple[str, int, int, list[int]]] = []
    for kind, first, last in read:
        words = list(range(first, last + 1))
        if (
            joined
            and kind[:-1] in ACTIVITIES
            and joined[-1][0] == kind
            and clause[joined[-1][2]] == clause[first]
            and (timed(*joined[-1][1:3]) or timed(first, last))
        ):
            _, first, _, before_words = joined.pop()
            words = before_words + words
        joined.append((kind, first, last, words))
    out = []
    for kind, first, last, words in joined:
        if kind[:-1] in ACTIVITIES and not timed(first, last):
            after = [
                i
                for i in range(last + 1, len(said))
                if clause[i] == clause[last] and _is_time(said, i)
            ]
            before = [i for i in range(first) if clause[i] == clause[first] and _is_time(said, i)]
            if after:
                last = after[0]
                while last + 1 < len(said) and _is_time(said, last + 1):
                    last += 1
            elif before:
                first = before[-1]
                while (
                    first > 0
                    and clause[first - 1] == clause[first]
                    and (_is_time(said, first - 1) or _leads_time(said[first - 1]))
                ):
                    first -= 1
        out.append((kind, (first, last), words))
    return out
