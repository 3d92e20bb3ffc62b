"""The attribution a content may open with: when and by whom it was said.

LoCoMo-style turns ("[8 May 2023] Caroline: I went to a support group.") carry one; the
offline split keeps it on every sentence it cuts. What is *said* is the rest: the offline
rules judge whether one statement is an older version of another on the bodies, because a
shared "[date] Speaker:" makes any two short sentences of one speaker look alike in words
and vectors.
"""

from __future__ import annotations

import re
from typing import Final

ATTRIBUTION: Final = re.compile(
    r"^(?:\[[^\]\n]{1,80}\]\s*)?(?:([A-Z][\w.'-]{0,30}(?: [A-Z][\w.'-]{0,30}){0,2}):\s+)?"
)
"""`[time] `, `Speaker: `, or both (the speaker is group 1)."""


def speaker_and_body(text: str) -> tuple[str | None, str]:
    """Who an attributed content quotes ("[8 May 2023] Caroline: I paint." -> "Caroline"),
    None if nobody, and what is said, without the attribution."""
    attribution = ATTRIBUTION.match(text)
    assert attribution is not None  # every part of the pattern is optional
    return attribution.group(1), text[attribution.end() :]


def different_speakers(a: str | None, b: str | None) -> bool:
    """Both attributed, to two different speakers."""
    return a is not None and b is not None and a != b
