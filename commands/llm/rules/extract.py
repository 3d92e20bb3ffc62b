"""Offline extraction from a conversation (seed 004 §3) by the judge's facts model: Nebo's
five arrays, read over the user's turns.

The model (`commands.judge.facts`) finds the words by which the user states something about
themselves: profile fields (name, job, employer, town, diet, schedules, deadlines, tools) go
out as `user/<attribute>` keys, the seed's auto-extraction format of the user profile (§5);
likes and dislikes are preferences; how the user wants replies written are styles; the people
and animals of their life are entities. A fact said not to hold keeps its side ("I'm not
vegetarian": `user/diet/vegetarian`, "not vegetarian").

A decision and an artifact are read by their announcing words (`speech_acts`); emoji in the
user's own messages is the one style inferred from behaviour (`explicit: false`).
"""

from __future__ import annotations

import re
from typing import Final

from mnemoledger.commands.judge import default_judge
from mnemoledger.commands.judge.facts import ATTRIBUTES, SINGLE_VALUED, StatedFact
from mnemoledger.commands.llm.render import conversation_excerpt
from mnemoledger.commands.llm.rules.speech_acts import ARTIFACT, DECISION, EMOJI
from mnemoledger.commands.llm.rules.text import single_line, slug
from mnemoledger.commands.llm.schemas import ExtractInput, ExtractOutput, Fact

_SENTENCE: Final = re.compile(r"[^.!?\n]+[.!?]?")
MAX_ENTITY_CHARS: Final = 200
"""An entity's memory is the sentence that names it, cut to this length."""

_ENTITIES: Final = frozenset({"person", "pet"})
_PROFILE: Final = frozenset(ATTRIBUTES) - _ENTITIES - {"preference", "style"}
"""What goes out as `user/<attribute>`: the user profile's fields."""


def _fact(key: str, value: str, category: str, explicit: bool) -> Fact:
    return Fact(key=key, value=value, category=category, tags=[category], explicit=explicit)


def _key_words(text: str) -> str:
    """An item's key words, so that "peanut" and "peanuts" are one item."""
    words = slug(text.replace("-", ""), max_words=4).split("-")
    return "-".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words) or "x"


def _profile_fact(stated: StatedFact) -> Fact:
    attribute, value = stated.attribute, single_line(stated.value)
    if not stated.positive:
        key, value = f"user/{attribute}/{_key_words(value)}", f"not {value}"
    elif attribute in SINGLE_VALUED or attribute == "diet":
        key = f"user/{attribute}"
    else:
        key = f"user/{attribute}/{_key_words(value)}"
    return Fact(
        key=key, value=value, category="preference", tags=["user", attribute], explicit=True
    )


def _sentence_of(text: str, value: str) -> str:
    """The sentence of `text` that says `value` (or `text` itself)."""
    for match in _SENTENCE.finditer(text):
        if value in match.group():
            return single_line(match.group())
    return single_line(text)


def _read(stated: StatedFact, text: str) -> tuple[str, Fact]:
    value = single_line(stated.value)
    if stated.attribute in _PROFILE:
        return "preferences", _profile_fact(stated)
    item = _key_words(value)  # "emoji" and "emojis" are one item
    if stated.attribute == "preference":
        verb = "likes" if stated.positive else "dislikes"
        return "preferences", _fact(item, f"User {verb} {value}", "preference", True)
    if stated.attribute == "style":
        if stated.positive:
            return "styles", _fact(f"style/{item}", f"Wants {value} in replies", "style", True)
        return "styles", _fact(
            f"style/no-{item}", f"Prefers replies without {value}", "style", True
        )
    said = _sentence_of(text, stated.value)[:MAX_ENTITY_CHARS]
    return "entities", _fact(f"{stated.attribute}/{slug(value)}", said, "entity", True)


def extract(inputs: ExtractInput) -> ExtractOutput:
    found: dict[str, dict[str, Fact]] = {
        name: {} for name in ("preferences", "entities", "decisions", "styles", "artifacts")
    }
    turns = conversation_excerpt(inputs.conversation)
    user_turns = [
        (t.content, turns[i - 1].content if i and turns[i - 1].role == "assistant" else "")
        for i, t in enumerate(turns)
        if t.role == "user"
    ]
    read = default_judge().facts(user_turns)
    for (text, _), stated_facts in zip(user_turns, read, strict=True):
        artifact = ARTIFACT.search(text)
        if artifact:
            body = single_line(artifact.group("body") or text)
            key = f"artifact/{slug(artifact.group('what'))}"
            found["artifacts"][key] = _fact(key, body, "artifact", True)
        for match in DECISION.finditer(text):
            key = f"decision/{slug(match.group('what'))}"
            found["decisions"][key] = _fact(
                key, _sentence_of(text, match.group()), "decision", True
            )
        for stated in stated_facts:
            category, fact = _read(stated, text)
            found[category][fact.key] = fact  # the last value said: a correction, a move
    if any(EMOJI.search(text) for text, _ in user_turns):
        fact = _fact("style/uses-emojis", "Uses emoji when writing", "style", False)
        found["styles"].setdefault(fact.key, fact)
    return ExtractOutput(**{name: list(facts.values()) for name, facts in found.items()})
