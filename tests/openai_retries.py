"""What the tests of the OpenAI-compatible embedder and LLM provider share: the pauses the
openai client takes between attempts, recorded instead of slept, and the seed's schedule
(seed 004 §7: 3 attempts, backed off from 0.5 s, doubling, capped at 8 s)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import openai._base_client
import pytest

from mnemoledger.ledger.policy import (
    OPENAI_MAX_ATTEMPTS,
    OPENAI_RETRY_FIRST_PAUSE_SECONDS,
    OPENAI_RETRY_MAX_PAUSE_SECONDS,
)

CLIENT_JITTER: float = 0.25
"""The openai client takes up to this share off each pause."""


def record_client_pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The openai client's pauses between attempts, appended here instead of slept (only
    the client's own module sees the change: servers in the test still sleep)."""
    pauses: list[float] = []
    monkeypatch.setattr(
        openai._base_client, "time", SimpleNamespace(sleep=pauses.append, time=time.time)
    )
    return pauses


def assert_seed_backoff(pauses: list[float], retries: int) -> None:
    """`retries` pauses, the n-th 0.5 s x 2^n (at most 8 s), less the client's jitter."""
    assert retries <= OPENAI_MAX_ATTEMPTS - 1
    assert len(pauses) == retries, pauses
    for number, pause in enumerate(pauses):
        full = min(OPENAI_RETRY_FIRST_PAUSE_SECONDS * 2**number, OPENAI_RETRY_MAX_PAUSE_SECONDS)
        assert full * (1 - CLIENT_JITTER) <= pause <= full, (number, pause)
