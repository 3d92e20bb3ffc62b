"""Offline split (seed 000, pre-memory split): one content per sentence or `;` clause,
without the pieces that state no fact (greetings, thanks, questions)."""

from __future__ import annotations

from typing import Final

from commands.llm.rules.text import sentences, single_line, words
from commands.llm.schemas import SplitInput, SplitOutput

FILLER_WORDS: Final = frozenset(
    {"hi", "hello", "hey", "thanks", "thank", "you", "ok", "okay", "sure", "great", "cool"}
    | {"yes", "no", "bye", "please", "there", "so", "much", "well", "oh", "ah", "wow", "nice"}
    | {"good", "morning", "evening", "all", "everyone"}
)
"""A piece made only of these words is a greeting or filler, not a fact."""


def states_a_fact(piece: str) -> bool:
    piece_words = words(piece)
    return not piece.endswith("?") and bool(piece_words) and not set(piece_words) <= FILLER_WORDS


def split(inputs: SplitInput) -> SplitOutput:
    """Sentences in order; a single fact stays a single content."""
    pieces = (single_line(s) for s in sentences(inputs.raw_input))
    return SplitOutput(contents=[p for p in pieces if states_a_fact(p)])
