"""Small text helpers shared by the offline rules: sentences, words, comparison keys."""

from __future__ import annotations

import re
from typing import Final

_HARD_BREAKS = re.compile(r";|\n+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DAY_NUMBER = re.compile(r"\d{1,2}\.")
_MONTH_FIRST = re.compile(
    r"(?:jan(?:uary)?|feb(?:ruary)?|march|april|may|june|july|aug(?:ust)?|sept?(?:ember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b",
    re.I,
)
"""A day's number with a full stop before its month ("1. February") ends no sentence."""
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SPACES = re.compile(r"\s+")
_ONLY_PUNCTUATION = re.compile(r"^[\W_]*$")
_INITIAL = re.compile(r"(?:[a-z]\.)+")
"""A name's initial ("Ursula K. Le Guin") or initials ("J.P. Morgan"): no sentence ends after
them."""

OWN_WORDS_TAG: Final = "own-words"
"""The tag of a fact kept in the user's own words (a clause the extraction's classifier read as
a schedule or a deadline): ingest keeps it only when no other memory already says it."""
ABBREVIATIONS: Final = frozenset(
    {"dr.", "mr.", "mrs.", "ms.", "prof.", "st.", "e.g.", "i.e.", "vs.", "approx.", "no."}
)
"""A sentence does not end after these, although they end with a full stop."""


def sentences(text: str) -> list[str]:
    """Sentences and `;`-separated clauses of `text`, in order, without empty pieces."""
    pieces: list[str] = []
    for segment in _HARD_BREAKS.split(text):
        pending = ""
        parts = _SENTENCE_END.split(segment.strip())
        for index, part in enumerate(parts):
            pending = f"{pending} {part}" if pending else part
            last_word = pending.rsplit(maxsplit=1)[-1].lower() if pending.strip() else ""
            if last_word in ABBREVIATIONS or _INITIAL.fullmatch(last_word):
                continue
            following = parts[index + 1] if index + 1 < len(parts) else ""
            if not (_DAY_NUMBER.fullmatch(last_word) and _MONTH_FIRST.match(following)):
                pieces.append(pending)
                pending = ""
        if pending:
            pieces.append(pending)
    return [p.strip() for p in pieces if not _ONLY_PUNCTUATION.match(p)]


def single_line(text: str) -> str:
    """Runs of whitespace (newlines included) become one space."""
    return _SPACES.sub(" ", text).strip()


def comparison_key(text: str) -> str:
    """What two texts share when they say the same thing: case, spacing and final
    punctuation aside."""
    return single_line(text).casefold().rstrip(" .!?;")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def overlap(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' word sets."""
    words_a, words_b = set(words(a)), set(words(b))
    if not words_a or not words_b:
        return 0.0
    return len(words_a & words_b) / len(words_a | words_b)


def with_final_stop(sentence: str) -> str:
    sentence = sentence.strip()
    return sentence if sentence.endswith((".", "!", "?")) else f"{sentence}."


def slug(text: str, max_words: int = 5) -> str:
    """The first words of `text`, lowercased and joined by hyphens."""
    return "-".join(words(text)[:max_words])
