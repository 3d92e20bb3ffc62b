"""Offline split (seed 000, pre-memory split): one content per sentence or `;` clause,
without the pieces that state no fact (greetings, thanks, questions).

Seed 000 wants each split memory to stand on its own. A model would rewrite "I went there
yesterday" into a self-contained fact; rules cannot, but they can keep the attribution a
content opens with (a bracketed time and/or a speaker label, as in "[8 May 2023] Caroline:
I went to a support group. It was powerful.") on every piece, so that the second sentence
still says who said it and when. Measured on LoCoMo conversation 1 (one `add` per turn):
any@10 0.58 when only the first piece kept it.
"""

from __future__ import annotations

from typing import Final

from mnemoledger.commands.llm.rules.text import sentences, single_line, words
from mnemoledger.commands.llm.schemas import SplitInput, SplitOutput
from mnemoledger.commands.write.attribution import ATTRIBUTION

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
    """Sentences in order, each keeping the content's opening attribution; a single fact
    stays a single content."""
    text = inputs.raw_input.strip()
    attribution = ATTRIBUTION.match(text)
    prefix = attribution.group(0) if attribution else ""
    body = text[len(prefix) :]
    pieces = (single_line(s) for s in sentences(body))
    return SplitOutput(contents=[prefix + p for p in pieces if states_a_fact(p)])
