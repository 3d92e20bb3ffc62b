"""Offline split (seed 000, pre-memory split): one content per sentence or `;` clause."""

from __future__ import annotations

from commands.llm.rules.text import sentences, single_line
from commands.llm.schemas import SplitInput, SplitOutput


def split(inputs: SplitInput) -> SplitOutput:
    """Sentences in order; a single fact stays a single content."""
    return SplitOutput(contents=[single_line(s) for s in sentences(inputs.raw_input)])
