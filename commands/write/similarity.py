"""Text similarity used by the insert path: engram's Jaccard prefilter and the threshold of
its API-level semantic dedup (seed 001 §2.1)."""

from __future__ import annotations

import re

from mnemoledger.ledger.policy import INSERT_DEDUP_SIM, PROXY_DEDUP_SIM, PROXY_SOURCES

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    """|A ∩ B| / |A ∪ B| over lowercase word tokens (0 when both are empty)."""
    left, right = tokens(a), tokens(b)
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def quick_dedup_threshold(source: str) -> float:
    """The similarity (reference scale) from which `quick_semantic_dup` takes a content for
    a repetition: the proxy's for an extraction, the insert threshold otherwise."""
    return PROXY_DEDUP_SIM if source in PROXY_SOURCES else INSERT_DEDUP_SIM
