"""Offline multi-fact extraction from one turn (seed 003 §13): up to five sentences that
state something lasting or worth keeping, as the judge reads them, each with a category and
an importance."""

from __future__ import annotations

import re
from typing import Final

from mnemoledger.commands.judge import Turn, default_judge
from mnemoledger.commands.judge.kinds import LASTING
from mnemoledger.commands.llm.rules.text import sentences, single_line
from mnemoledger.commands.llm.schemas import (
    MAX_CANDIDATE_FACTS,
    CandidateFact,
    MultiFactInput,
    MultiFactOutput,
)
from mnemoledger.ledger.policy import WORTH_KEEPING_CUT

CATEGORY: Final = {"procedure": "procedural", "event": "episodic"}
"""A sentence's category by its kind (`judge.kinds`); every other kind is semantic."""
DURABLE: Final = frozenset({"profile", "health", "rule", "agent", "tools"})
"""Kinds that matter more: what the core would hold."""
SPECIFIC: Final = re.compile(r"\b[A-Z][a-z]|\d")
"""A name or a number (the first word aside): specific facts matter more."""

BASE_IMPORTANCE: Final = 0.5  # neutral, as ledger.policy.DEFAULT_IMPORTANCE
DURABLE_BONUS: Final = 0.2
SPECIFIC_BONUS: Final = 0.1
MAX_OFFLINE_IMPORTANCE: Final = 0.8


def importance_of(sentence: str, kind: str) -> float:
    score = BASE_IMPORTANCE
    if kind in DURABLE:
        score += DURABLE_BONUS
    if SPECIFIC.search(sentence, 1):
        score += SPECIFIC_BONUS
    return round(min(score, MAX_OFFLINE_IMPORTANCE), 2)


def multi_fact(inputs: MultiFactInput) -> MultiFactOutput:
    said = [s for s in map(single_line, sentences(inputs.turn)) if not s.endswith("?")]
    judge = default_judge()
    kinds = judge.kinds(said)
    worth = judge.worth_keeping([Turn(s) for s in said])
    facts = [
        CandidateFact(
            content=s, category=CATEGORY.get(kind, "semantic"), importance=importance_of(s, kind)
        )
        for s, kind, keep in zip(said, kinds, worth, strict=True)
        if kind != "chatter" and (kind in LASTING or keep >= WORTH_KEEPING_CUT)
    ]
    return MultiFactOutput(facts=facts[:MAX_CANDIDATE_FACTS])
