"""Text similarity used by the insert path: engram's Jaccard prefilter (seed 001 §2.1)."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    """|A ∩ B| / |A ∪ B| over lowercase word tokens (0 when both are empty)."""
    left, right = tokens(a), tokens(b)
    union = left | right
    return len(left & right) / len(union) if union else 0.0
