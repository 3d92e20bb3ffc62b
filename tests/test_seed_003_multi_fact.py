"""Seed 003 §13, Optional Multi-Fact Extraction Pass: "each fact runs through existing merge
bands (auto/update/recreate/fallback)" and "global per-user/day cap"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.write.ingest import (
    AUTO,
    FALLBACK,
    MAX_MULTI_FACT_WRITES_PER_TURN,
    MULTI_FACT_DAY_KEY,
    RECREATE,
    SKIP,
    UPDATE,
    band_act,
    merge_band,
)
from mnemoledger.ledger.policy import (
    DEDUP_COSINE_SIM,
    INSERT_MERGE_SIM,
    MULTI_FACT_AUTO_SIM,
    MULTI_FACT_MAX_WRITES_PER_DAY,
    MULTI_FACT_RECREATE_SIM,
    MULTI_FACT_UPDATE_SIM,
    RECONCILE_MIN_SIM,
)

DAY = datetime(2031, 3, 4, 10, 0, tzinfo=UTC)


def test_seed003_s13_merge_bands_are_the_ledger_insert_thresholds() -> None:
    assert (MULTI_FACT_AUTO_SIM, MULTI_FACT_UPDATE_SIM, MULTI_FACT_RECREATE_SIM) == (
        DEDUP_COSINE_SIM,
        INSERT_MERGE_SIM,
        RECONCILE_MIN_SIM,
    )
    assert [merge_band(s) for s in (0.97, 0.85, 0.84, 0.80, 0.79, 0.55, 0.54, 0.1)] == [
        AUTO,
        AUTO,
        UPDATE,
        UPDATE,
        RECREATE,
        RECREATE,
        FALLBACK,
        FALLBACK,
    ]


@pytest.mark.parametrize(
    ("band", "held", "fact", "act"),
    [
        # auto: the same fact is held
        (AUTO, "I play the cello in an orchestra", "I play the cello in an orchestra", SKIP),
        # update: the same fact with more words rewrites the held memory; with none, a skip
        (
            UPDATE,
            "I play the cello in a community orchestra",
            "I play the cello in the community orchestra of my town",
            UPDATE,
        ),
        (UPDATE, "I play the cello in an orchestra", "I play the cello in an orchestra", SKIP),
        # a newer value of the held fact, in any band down to recreate
        (RECREATE, "I work at Acme", "I work at Globex now", RECREATE),
        # a close vector alone never folds two facts
        (
            AUTO,
            "I use PostgreSQL 15 for new projects",
            "I use PostgreSQL 16 for new projects",
            FALLBACK,
        ),
        (RECREATE, "I have a cat named Miso", "I have a dog named Rex", FALLBACK),
        (FALLBACK, "I work at Acme", "I work at Globex now", FALLBACK),
    ],
)
def test_seed003_s13_band_acts(band: str, held: str, fact: str, act: str) -> None:
    assert band_act(band, held, fact) == act


def test_seed003_s13_a_keyed_memory_is_only_ever_a_duplicate() -> None:
    held, fact = "I work at Acme", "I work at Globex now"
    assert band_act(RECREATE, held, fact, keyed=True) == FALLBACK
    assert band_act(AUTO, held, held, keyed=True) == SKIP


TURN = (
    "I work as a backend engineer at Globex now, after five years elsewhere. I have two "
    "cats named Miso and Tofu. I play the cello in the community orchestra of my town. "
    "I always deploy on Fridays after lunch."
)


def test_seed003_s13_each_fact_runs_through_the_merge_bands(memory: MnemoLedger) -> None:
    [job] = memory.add(["I work as a backend engineer at Acme"], user="u").memories
    [cats] = memory.add(["I have two cats named Miso and Tofu"], user="u").memories
    [cello] = memory.add(["I play the cello in a community orchestra"], user="u").memories
    assert len(TURN) > 200

    result = memory.ingest([{"role": "user", "content": TURN}], user="u", multi_fact=True, now=DAY)

    written = {m.content: m for m in result.memories if m.namespace == "default"}
    assert set(written) == {  # fallback + recreate: new memories
        "I work as a backend engineer at Globex now, after five years elsewhere.",
        "I always deploy on Fridays after lunch.",
    }
    globex = written["I work as a backend engineer at Globex now, after five years elsewhere."]
    # recreate: the newer value supersedes the held memory
    assert result.superseded == [job.id]
    assert memory.get(job.id).state == "superseded"
    assert memory.get(job.id).superseded_by == globex.id
    # update: the held memory takes the fuller text, under its own id
    [rewritten] = [m for m in result.updated if m.id == cello.id]
    assert rewritten.content == "I play the cello in the community orchestra of my town."
    # auto: the cats are held already; nothing written, the reason names the band
    [skip] = [s for s in result.skipped if s.namespace == "default"]
    assert cats.id in skip.reason and "auto band" in skip.reason
    assert memory.get(cats.id).state == "active"
    assert all(
        m.metadata and m.metadata[MULTI_FACT_DAY_KEY] == "2031-03-04" for m in written.values()
    )


def _long_turn(n: int) -> dict[str, str]:
    return {
        "role": "user",
        "content": (
            f"My friend Person{n}a lives in Town{n}a near the old harbour of that place. My "
            f"cousin Person{n}b studies subject{n} at the university of Town{n}b. My neighbour "
            f"Person{n}c repairs gadget{n} in a workshop behind our building. I think about "
            f"all of them often."
        ),
    }


def _multi_fact_calls(memory: MnemoLedger, command_id: str | None) -> int:
    assert command_id is not None
    stream = memory.ledger.stream(command_id)
    return sum(e.type == "LLMCallRecorded" and e.data["stage"] == "multi_fact" for e in stream)


def test_seed003_s13_a_daily_cap_per_user(memory: MnemoLedger) -> None:
    turns = MULTI_FACT_MAX_WRITES_PER_DAY // MAX_MULTI_FACT_WRITES_PER_TURN + 1
    first = memory.ingest([_long_turn(n) for n in range(turns)], user="u", multi_fact=True, now=DAY)
    facts = [m for m in first.memories if m.namespace == "default"]
    assert len(facts) == MULTI_FACT_MAX_WRITES_PER_DAY == 30
    # past the cap a long turn is not sent to the LLM at all (the cost the cap controls)
    assert _multi_fact_calls(memory, first.command_id) == turns - 1
    [completed] = [
        e for e in memory.ledger.stream(first.command_id or "") if e.type == "CommandCompleted"
    ]
    assert completed.data["outcome"]["multi_fact_capped"] == 1

    later = memory.ingest([_long_turn(99)], user="u", multi_fact=True, now=DAY + timedelta(hours=3))
    assert not [m for m in later.memories if m.namespace == "default"]
    assert _multi_fact_calls(memory, later.command_id) == 0
    other = memory.ingest([_long_turn(99)], user="v", multi_fact=True, now=DAY)
    assert len([m for m in other.memories if m.namespace == "default"]) == 3, "per user"
    tomorrow = memory.ingest(
        [_long_turn(100)], user="u", multi_fact=True, now=DAY + timedelta(days=1)
    )
    assert len([m for m in tomorrow.memories if m.namespace == "default"]) == 3
