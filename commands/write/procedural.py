"""Procedural memory (seed 003 §12): "how to" steps, kept apart from facts and events.

A procedural memory's content is 1-N numbered steps in the imperative mood, one per line:

    1. Open the billing dashboard.
    2. Export last month's invoices as CSV.

A line that starts with whitespace continues the step above it. Procedural memories never
enter the default conversational context: only agents that need execution hints (executor,
planner) fetch them, by asking for the `procedural` category explicitly. The context and
query commands decide with `in_context` / `excluded_from_default_context`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mnemoledger.ledger.policy import PROCEDURAL

PROCEDURAL_CATEGORY = PROCEDURAL
"""The category a query names to receive procedural memories (seed 003 §12:
`memory.query(categories: ["procedural"])`)."""

_STEP_LINE = re.compile(r"^(\d{1,3})[.)]\s+(\S.*)$")
"""`1. Do this` or `1) Do this`."""


@dataclass(frozen=True)
class ParsedSteps:
    """The numbered steps of a text, and whatever else it holds."""

    numbers: list[int]
    """The number written before each step, in order."""
    steps: list[str]
    """Each step's text, without its number; continuation lines joined with a space."""
    stray: list[str]
    """Lines that are neither a numbered step nor the continuation of one."""


def parse_steps(text: str) -> ParsedSteps:
    """Split `text` into numbered steps, keeping the lines that are not steps apart."""
    numbers: list[int] = []
    steps: list[str] = []
    stray: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _STEP_LINE.match(line.strip())
        if match:
            numbers.append(int(match.group(1)))
            steps.append(" ".join(match.group(2).split()))
        elif steps and line[0].isspace():
            steps[-1] = f"{steps[-1]} {' '.join(line.split())}"
        else:
            stray.append(line.strip())
    return ParsedSteps(numbers, steps, stray)


def procedural_steps(text: str) -> list[str]:
    """The texts of the numbered steps in `text`, in order (empty when it has none)."""
    return parse_steps(text).steps


def excluded_from_default_context(kind: str) -> bool:
    """Seed 003 §12: procedural memories stay out of the default conversational context."""
    return kind == PROCEDURAL


def in_context(kind: str, categories: Sequence[str] | None = None) -> bool:
    """Seed 003 §12's rule for a query over `categories`: may a memory of `kind` be served?

    `None` is the default conversational context, which excludes procedural memories; a
    query that names the `procedural` category receives them. Other kinds are never
    excluded here (category filters of seed 003 §5 are the query's business)."""
    if not excluded_from_default_context(kind):
        return True
    return categories is not None and PROCEDURAL_CATEGORY in categories
