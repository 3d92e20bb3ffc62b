"""Seed 004 §7 Caching: entries unused for 30 days are evicted when the cache opens
(EMBEDDING_CACHE_MAX_UNUSED_DAYS); a read records its use cheaply, at most once a day per
vector, so most reads write nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from mnemoledger.ledger.policy import EMBEDDING_CACHE_MAX_UNUSED_DAYS
from mnemoledger.projections.embeddings.cache import EmbeddingCache, text_key

DAY = 86_400.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def last_used(path: Path, text: str) -> int:
    with sqlite3.connect(path) as db:
        [(value,)] = db.execute(
            "SELECT last_used FROM embeddings WHERE text_sha256 = ?", (text_key(text),)
        )
    return int(value)


def test_s7_caching_a_read_records_last_use_at_most_once_a_day(tmp_path: Path) -> None:
    path, clock = tmp_path / "embeddings.sqlite3", Clock()
    stored_at = int(clock.now)
    cache = EmbeddingCache(path, clock=clock)
    cache.put_many("m", [(text_key("tea"), np.ones(4, dtype=np.float32).tobytes())])
    clock.now += 0.5 * DAY
    assert cache.get_many("m", [text_key("tea")])
    assert last_used(path, "tea") == stored_at  # read within the day: nothing written
    clock.now += 1.0 * DAY
    assert cache.get_many("m", [text_key("tea")])
    assert last_used(path, "tea") == int(clock.now)
    cache.close()


def test_s7_caching_evicts_at_the_policy_constant(tmp_path: Path) -> None:
    assert EMBEDDING_CACHE_MAX_UNUSED_DAYS == 30
    path, clock = tmp_path / "embeddings.sqlite3", Clock()
    cache = EmbeddingCache(path, clock=clock)
    cache.put_many("m", [(text_key("tea"), np.ones(4, dtype=np.float32).tobytes())])
    cache.close()
    clock.now += EMBEDDING_CACHE_MAX_UNUSED_DAYS * DAY  # exactly 30 days: kept
    cache = EmbeddingCache(path, clock=clock)
    assert cache.evicted == 0
    cache.close()
    clock.now += 1.0  # one second past 30 days unused (the open above read nothing)
    cache = EmbeddingCache(path, clock=clock)
    assert cache.evicted == 1 and cache.count() == 0
    cache.close()
