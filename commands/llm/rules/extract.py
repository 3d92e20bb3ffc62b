"""Offline extraction from a conversation (seed 004 §3): Nebo's five arrays, by cue words
over the user's turns.

Explicit statements ("I prefer ...", "my sister Anna ...") are `explicit: true`; what is
inferred from behaviour (emoji in the user's own messages) is `explicit: false`; names
picked up without a stated relation leave `explicit` unset.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from commands.llm.render import conversation_excerpt
from commands.llm.rules.text import sentences, single_line, slug
from commands.llm.schemas import ExtractInput, ExtractOutput, Fact

_I = re.IGNORECASE

PREFERENCE: Final = re.compile(
    r"\bI (?:really |strongly |also |much |kind of |absolutely )?"
    r"(?P<verb>prefer|like|love|enjoy|hate|dislike|don't like|do not like|can't stand"
    r"|cannot stand)\s+(?P<object>[^.!?;]+)",
    _I,
)
_VERB_AS_STATED: Final = {
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "hate": "hates",
}


def _each(words: str) -> list[str]:
    return words.split()


_RELATION_TYPES: Final = {
    **dict.fromkeys(
        _each(
            "wife husband partner girlfriend boyfriend fiance fiancee son daughter sister "
            "brother mother mom mum father dad friend boss manager colleague coworker cousin "
            "aunt uncle grandmother grandma grandfather grandpa kid child"
        ),
        "person",
    ),
    **dict.fromkeys(_each("dog cat pet puppy kitten parrot rabbit hamster horse"), "pet"),
    **dict.fromkeys(_each("project app startup"), "project"),
    **dict.fromkeys(_each("company employer team"), "organization"),
    **dict.fromkeys(_each("city hometown"), "place"),
}
"""What "my <relation> <Name>" names: `person/anna`, `pet/rex`, `project/nebo`, ..."""
RELATION_ENTITY: Final = re.compile(
    r"\b[Mm]y (?P<relation>(?i:" + "|".join(sorted(_RELATION_TYPES, key=len, reverse=True)) + r"))"
    r"(?:'s name is|\s+is called|\s+is named|\s+called|\s+named|,)?\s+"
    r"(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
)
CAPITALISED_NAME: Final = re.compile(r"\b[A-Z][a-z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
"""A run of capitalised words; the first word of a sentence does not count."""
_NOT_NAMES: Final = frozenset(
    _each(
        "I I'm I've I'll I'd OK Okay Thanks Hi Hello Hey Monday Tuesday Wednesday Thursday "
        "Friday Saturday Sunday January February March April May June July August September "
        "October November December"
    )
)
_PLACE_BEFORE: Final = frozenset({"in", "to", "from", "at", "near", "visit", "visiting", "visited"})
_PERSON_BEFORE: Final = frozenset({"with", "meet", "met", "call", "called", "named", "told", "ask"})

DECISION: Final = re.compile(
    r"\b(?:we(?:'ve| have)? decided (?:to |on )?|let's go with |let us go with |we'll use "
    r"|we will use |we're going with |we are going with |we'll go with |we will go with "
    r"|I(?:'ve| have)? decided (?:to |on )?|the decision is (?:to )?)(?P<what>[^.!?;]+)",
    _I,
)
ARTIFACT: Final = re.compile(
    r"\bhere(?:'s| is| are)\s+(?:the |my |our |a |an )?"
    r"(?P<kind>final|draft|updated|revised|latest|new)\s+(?P<what>[^:.!?\n]+)"
    r"(?::\s*(?P<body>.+))?",
    _I | re.DOTALL,
)

NEGATION: Final = re.compile(r"\b(no|not|don't|do not|never|without|stop|skip|less)\b", _I)
EMOJI: Final = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")
STYLE_CUES: Final = (
    (
        re.compile(
            r"\b(short|brief|concise|terse|succinct)\b.*\b(answers?|responses?|replies"
            r"|explanations?)\b|\b(answers?|responses?|replies)\b.*\b(short|brief|concise|terse)\b"
            r"|\bkeep it (short|brief)\b|\bget to the point\b|\btl;?dr\b",
            _I,
        ),
        "style/prefers-terse-responses",
        "Prefers short, concise responses",
    ),
    (
        re.compile(
            r"\b(detailed|thorough|in-depth|step-by-step)\b.*\b(answers?|responses?|replies"
            r"|explanations?)\b",
            _I,
        ),
        "style/prefers-detailed-responses",
        "Prefers detailed, thorough explanations",
    ),
    (
        re.compile(r"\bdry\b.*\b(humou?r|wit|jokes?)\b", _I),
        "style/humor-dry",
        "Prefers dry wit over overt humor",
    ),
    (
        re.compile(r"\b(humou?r|jokes?|funny|witty|puns?)\b", _I),
        "style/humor",
        "Enjoys some humor in replies",
    ),
    (re.compile(r"(?<!in)\bformal\b", _I), "style/formal-tone", "Prefers a formal tone"),
    (
        re.compile(r"\b(casual|informal|relaxed)\b", _I),
        "style/casual-tone",
        "Prefers a casual, relaxed tone",
    ),
)
NEGATED_STYLES: Final = {
    "style/humor": ("style/no-humor", "Prefers replies without jokes"),
    "style/humor-dry": ("style/no-humor", "Prefers replies without jokes"),
}
EMOJI_MENTION: Final = re.compile(r"\bemojis?\b", _I)


def extract(inputs: ExtractInput) -> ExtractOutput:
    found: dict[str, dict[str, Fact]] = {
        name: {} for name in ("preferences", "entities", "decisions", "styles", "artifacts")
    }
    user_texts = [t.content for t in conversation_excerpt(inputs.conversation) if t.role == "user"]
    for text in user_texts:
        for category, fact in _facts_of_turn(text):
            found[category].setdefault(fact.key, fact)
    if any(EMOJI.search(text) for text in user_texts):
        fact = _fact("style/uses-emojis", "Uses emoji when writing", "style", False)
        found["styles"].setdefault(fact.key, fact)
    return ExtractOutput(**{name: list(facts.values()) for name, facts in found.items()})


def _fact(key: str, value: str, category: str, explicit: bool | None) -> Fact:
    return Fact(key=key, value=value, category=category, tags=[category], explicit=explicit)


def _facts_of_turn(text: str) -> Iterator[tuple[str, Fact]]:
    artifact = ARTIFACT.search(text)
    if artifact:
        body = single_line(artifact.group("body") or text)
        key = f"artifact/{slug(artifact.group('what'))}"
        yield "artifacts", _fact(key, body, "artifact", True)
        text = text[: artifact.start()]
    for sentence in sentences(text):
        yield from _facts_of_sentence(single_line(sentence))


def _facts_of_sentence(sentence: str) -> Iterator[tuple[str, Fact]]:
    style = _style_of(sentence)
    if style is not None:
        yield "styles", style
    elif match := PREFERENCE.search(sentence):
        verb = match.group("verb").lower()
        stated = _VERB_AS_STATED.get(verb, "dislikes")
        what = match.group("object").strip()
        yield "preferences", _fact(slug(what), f"User {stated} {what}", "preference", True)
    for match in DECISION.finditer(sentence):
        key = f"decision/{slug(match.group('what'))}"
        yield "decisions", _fact(key, sentence, "decision", True)
    yield from _entities_of_sentence(sentence)


def _style_of(sentence: str) -> Fact | None:
    negated = NEGATION.search(sentence) is not None
    if EMOJI_MENTION.search(sentence):
        if negated:
            return _fact("style/no-emojis", "Prefers replies without emoji", "style", True)
        return _fact("style/likes-emojis", "Likes emoji in replies", "style", True)
    for cue, key, value in STYLE_CUES:
        if cue.search(sentence):
            if negated and key in NEGATED_STYLES:
                key, value = NEGATED_STYLES[key]
            return _fact(key, value, "style", True)
    return None


def _entities_of_sentence(sentence: str) -> Iterator[tuple[str, Fact]]:
    related_names: set[str] = set()
    for match in RELATION_ENTITY.finditer(sentence):
        name = match.group("name")
        related_names.add(name)
        kind = _RELATION_TYPES[match.group("relation").lower()]
        yield "entities", _fact(f"{kind}/{name}", sentence, "entity", True)
    for match in CAPITALISED_NAME.finditer(sentence):
        name = match.group(0)
        if match.start() == 0 or name in related_names or name.split()[0] in _NOT_NAMES:
            continue
        before = sentence[: match.start()].split()
        previous = before[-1].lower() if before else ""
        kind = (
            "place"
            if previous in _PLACE_BEFORE
            else "person"
            if previous in _PERSON_BEFORE
            else "thing"
        )
        yield "entities", _fact(f"{kind}/{name}", sentence, "entity", None)
