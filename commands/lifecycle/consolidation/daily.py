"""The daily pass (seed 003 §4) and theory-of-mind insights (§3), run by a cycle once a day
per user, never on the hot path.

Daily consolidation: a candidate pool (created/updated in the last 72 h, importance >= 0.6,
or access count in the top decile), pairs from the vector index's neighbours of the pool,
pre-filtered without an LLM (cosine in [0.55, 0.78), both within 90 days, sharing a word or
differing by a number), skipped when their fingerprint `(id_a, id_b, round(score, 2))` was
checked in the last 14 days; at most 50 pairs a day, 10 per LLM prompt, within a token
budget; a same fact folds the older into the newer (keeping every detail and the evidence).

Insights: 1-3 third-person insights (<= 280 chars, importance 2 of 5, kind semantic with
category `relationship_dynamic` and tag `insight`), from the latest 5 activity items, 3 new
facts and a 1k-character snippet; skipped within 24 h of the last.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta

from mnemoledger.commands.lifecycle.consolidation.context import Cycle
from mnemoledger.commands.lifecycle.consolidation.state import MemoryState, namespaces_compatible
from mnemoledger.commands.llm.consolidation_prompts import INSIGHT, SAME_FACT
from mnemoledger.commands.llm.consolidation_schemas import FactPair, InsightInput, SameFactInput
from mnemoledger.commands.write.recorded_llm import prompt_version
from mnemoledger.commands.write.similarity import tokens
from mnemoledger.ledger import validation
from mnemoledger.ledger.policy import (
    DAILY_CANDIDATE_MIN_IMPORTANCE,
    DAILY_CANDIDATE_RECENT_HOURS,
    DAILY_INTERVAL_HOURS,
    DAILY_MAX_AGE_DAYS,
    DAILY_MAX_PAIRS,
    DAILY_PAIR_BATCH,
    DAILY_TOKEN_BUDGET,
    EPISODIC,
    INSIGHT_CATEGORY,
    INSIGHT_MAX_ACTIVITY,
    INSIGHT_MAX_CHARS,
    INSIGHT_MAX_COUNT,
    INSIGHT_MAX_NEW_FACTS,
    INSIGHT_MAX_SNIPPET_CHARS,
    INSIGHT_MIN_HOURS_BETWEEN,
    INSIGHT_SCALE_MAX,
    INSIGHT_TAG,
    MERGE_SIM,
    PAIR_SCAN_NEIGHBOURS,
    RECONCILE_MIN_SIM,
    SEMANTIC,
)

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def due(last_at: str | None, now: datetime, requested: bool | None) -> bool:
    """Asked for, or (unasked) 24 h after the last daily pass."""
    if requested is not None:
        return requested
    return last_at is None or now - datetime.fromisoformat(last_at) >= timedelta(
        hours=DAILY_INTERVAL_HOURS
    )


def candidate_pool(cycle: Cycle) -> list[MemoryState]:
    recent = cycle.now - timedelta(hours=DAILY_CANDIDATE_RECENT_HOURS)
    active = cycle.state.active()
    counts = sorted((m.access_count for m in active), reverse=True)
    decile = counts[max(math.ceil(len(counts) / 10) - 1, 0)] if counts else 0
    return [
        m
        for m in active
        if m.created_at >= recent
        or m.importance >= DAILY_CANDIDATE_MIN_IMPORTANCE
        or (decile > 0 and m.access_count >= decile)
    ]


def fingerprint(a: str, b: str, score: float) -> str:
    """Seed 003 §4: `(id_a, id_b, round(score, 2))`, ids in order."""
    first, second = sorted((a, b))
    return f"{first}:{second}:{round(score, 2):.2f}"


def consolidate_daily(cycle: Cycle) -> int:
    """The daily pass; returns how many pairs went to the LLM."""
    horizon = cycle.now - timedelta(days=DAILY_MAX_AGE_DAYS)
    seen = cycle.state.pairs["daily"]
    pairs: dict[str, tuple[float, MemoryState, MemoryState]] = {}
    for memory in sorted(candidate_pool(cycle), key=lambda m: m.id):
        for other, score in cycle.state.neighbours(memory, PAIR_SCAN_NEIGHBOURS):
            key = fingerprint(memory.id, other.id, score)
            if (
                RECONCILE_MIN_SIM <= score < MERGE_SIM
                and key not in seen
                and key not in pairs
                and min(memory.created_at, other.created_at) >= horizon
                and namespaces_compatible(memory, other)
                and EPISODIC not in (memory.kind, other.kind)  # an event is no fact's version
                and _related_text(memory.content, other.content)
            ):
                older, newer = sorted((memory, other), key=lambda m: (m.created_at, m.id))
                pairs[key] = (score, older, newer)
    chosen = sorted(pairs.items(), key=lambda item: (-item[1][0], item[0]))[:DAILY_MAX_PAIRS]
    checked = 0
    version = prompt_version(SAME_FACT)
    for start in range(0, len(chosen), DAILY_PAIR_BATCH):
        if cycle.llm.tokens >= DAILY_TOKEN_BUDGET:
            break
        batch = [(k, p) for k, p in chosen[start : start + DAILY_PAIR_BATCH] if _alive(p)]
        if not batch:
            continue
        output = cycle.ask(
            SAME_FACT,
            SameFactInput(
                pairs=[
                    FactPair(
                        pair_id=str(n), older=o.content, newer=w.content, similarity=round(s, 4)
                    )
                    for n, (_, (s, o, w)) in enumerate(batch)
                ]
            ),
        )
        checked += len(batch)
        for key, _ in batch:
            seen.add(key)
            cycle.plan.pairs.append(["daily", key])
        verdicts = {v.pair_id: v for v in output.verdicts}
        for n, (key, (score, older, newer)) in enumerate(batch):
            verdict = verdicts.get(str(n))
            same = verdict is not None and verdict.same_fact
            cycle.plan.add(
                "same-fact",
                newer.id,
                "daily",
                version,
                other=older.id,
                same_fact=same,
                fingerprint=key,
            )
            if same and verdict is not None and _alive((score, older, newer)):
                content = _clean(verdict.merged_content) or newer.content
                cycle.absorb(newer, [older], content, "daily", SAME_FACT, score)
    return checked


def write_insights(cycle: Cycle, last_at: str | None) -> bool:
    """§3; True when insights were planned."""
    if last_at is not None and cycle.now - datetime.fromisoformat(last_at) < timedelta(
        hours=INSIGHT_MIN_HOURS_BETWEEN
    ):
        return False
    newest = sorted(cycle.state.active(), key=lambda m: (m.created_at, m.id), reverse=True)
    newest = [m for m in newest if INSIGHT_TAG not in m.tags]
    activity = [m.content for m in newest if m.kind == EPISODIC][:INSIGHT_MAX_ACTIVITY]
    facts = [m.content for m in newest if m.kind == SEMANTIC][:INSIGHT_MAX_NEW_FACTS]
    snippet = " / ".join(m.content for m in newest[:INSIGHT_MAX_ACTIVITY])
    if not activity and not facts:
        return False
    output = cycle.ask(
        INSIGHT,
        InsightInput(
            activity=activity, new_facts=facts, snippet=snippet[:INSIGHT_MAX_SNIPPET_CHARS]
        ),
    )
    written = False
    for found in output.insights[:INSIGHT_MAX_COUNT]:
        summary = _clean(found.summary)[:INSIGHT_MAX_CHARS]
        if not summary:
            continue
        importance = min(max(found.importance, 1), INSIGHT_SCALE_MAX) / INSIGHT_SCALE_MAX
        cycle.plan.add(
            "insight",
            None,
            "insight",
            prompt_version(INSIGHT),
            content=summary,
            tags=[INSIGHT_TAG, *found.tags][:5],
            importance=importance,
            category=INSIGHT_CATEGORY,
        )
        written = True
    return written


def _related_text(a: str, b: str) -> bool:
    """§4 pre-filter: lexical overlap, or a numeric step (numbers that differ)."""
    if tokens(a) & tokens(b):
        return True
    return set(_NUMBER.findall(a)) != set(_NUMBER.findall(b))


def _alive(pair: tuple[float, MemoryState, MemoryState]) -> bool:
    return pair[1].active and pair[2].active


def _clean(text: str) -> str:
    try:
        return validation.content(validation.normalize_text(text))
    except ValueError:
        return ""
