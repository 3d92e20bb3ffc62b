"""What kind of memory a text is: the kinds model's labels, and what each decides.

    default_judge().kinds(["I'm allergic to penicillin", "dentist on Thursday at 3"])
    # ["health", "event"]

One label per text, the likeliest of `KINDS`. The core reads its section from it (a profile
or health fact of the user, a rule for the assistant, the assistant's persona, the user's
tools), consolidation what to promote and what its gate lets through (a lesson, a decision,
a rule, who the user is), and what holds only for a while (an event, a passing state) never
enters the core.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

Kind = Literal[
    "profile",
    "health",
    "preference",
    "rule",
    "agent",
    "tools",
    "lesson",
    "decision",
    "procedure",
    "event",
    "passing",
    "chatter",
]
KINDS: Final[tuple[Kind, ...]] = get_args(Kind)
"""The kinds model's outputs, in order."""
LASTING: Final[frozenset[Kind]] = frozenset(KINDS) - {"event", "passing", "chatter"}
"""Kinds that stay true: an event happened or is planned, a passing state holds for now,
chatter says nothing to keep."""
