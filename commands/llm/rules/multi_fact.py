"""Offline multi-fact extraction from one turn (seed 003 §13): up to five first-person
statements that look durable, each with a category and an importance."""

from __future__ import annotations

import re
from typing import Final

from mnemoledger.commands.llm.rules.text import sentences, single_line, words
from mnemoledger.commands.llm.schemas import (
    MAX_CANDIDATE_FACTS,
    CandidateFact,
    MultiFactInput,
    MultiFactOutput,
)

_I = re.IGNORECASE

FIRST_PERSON: Final = re.compile(r"\b(I|I'm|I've|I'll|I'd|my|me|we|we're|we've|our)\b", _I)
NOT_A_FACT: Final = re.compile(r"^(thanks|thank you|hi|hello|hey|ok|okay|sure|please)\b", _I)
PROCEDURAL: Final = re.compile(
    r"\b(first|then|step|steps|how to|in order to|workflow|to deploy|run the|before you"
    r"|after that)\b",
    _I,
)
EPISODIC: Final = re.compile(
    r"\b(yesterday|last (week|month|year|night)|ago|today|this morning|went|met|visited"
    r"|did|was|were|had|finished|started|attended)\b",
    _I,
)
DURABLE: Final = re.compile(
    r"\b(always|never|allergic|name|live|lives|moved|work|works|prefer|prefers|hate|love"
    r"|use|uses)\b",
    _I,
)
SPECIFIC: Final = re.compile(r"\b[A-Z][a-z]|\d")
"""A name or a number (the first word aside): specific facts matter more."""

MIN_FACT_WORDS: Final = 3
BASE_IMPORTANCE: Final = 0.5  # neutral, as ledger.policy.DEFAULT_IMPORTANCE
DURABLE_BONUS: Final = 0.2
SPECIFIC_BONUS: Final = 0.1
MAX_OFFLINE_IMPORTANCE: Final = 0.8


def category_of(sentence: str) -> str:
    if PROCEDURAL.search(sentence):
        return "procedural"
    if EPISODIC.search(sentence):
        return "episodic"
    return "semantic"


def importance_of(sentence: str) -> float:
    score = BASE_IMPORTANCE
    if DURABLE.search(sentence):
        score += DURABLE_BONUS
    if SPECIFIC.search(sentence, 1):
        score += SPECIFIC_BONUS
    return round(min(score, MAX_OFFLINE_IMPORTANCE), 2)


def looks_like_fact(sentence: str) -> bool:
    return (
        not sentence.endswith("?")
        and len(words(sentence)) >= MIN_FACT_WORDS
        and NOT_A_FACT.search(sentence) is None
        and FIRST_PERSON.search(sentence) is not None
    )


def multi_fact(inputs: MultiFactInput) -> MultiFactOutput:
    facts = [
        CandidateFact(content=s, category=category_of(s), importance=importance_of(s))
        for s in map(single_line, sentences(inputs.turn))
        if looks_like_fact(s)
    ]
    return MultiFactOutput(facts=facts[:MAX_CANDIDATE_FACTS])
