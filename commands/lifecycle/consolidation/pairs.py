"""Merge (seed 001 §3.1) and reconcile (§3.2): LLM-judged pairs of similar memories.

Pairs come from the vector index's nearest neighbours of the memories changed since the
last epoch (a pair of unchanged memories was examined when one of them last changed), so a
cycle costs O(changed x k-NN search), not O(n²). Every pair is examined once (its key is
kept on the epoch event); within a namespace, or across namespaces only when one side is
`default` (§7), the result then staying in `default`. At most 50 LLM pair checks per cycle.
"""

from __future__ import annotations

from mnemoledger.commands.judge.decisions import replaces, says_the_same
from mnemoledger.commands.lifecycle.consolidation.context import Cycle, candidate, winner_of
from mnemoledger.commands.lifecycle.consolidation.state import (
    MemoryState,
    namespaces_compatible,
    pair_key,
)
from mnemoledger.commands.llm.consolidation_prompts import MERGE, RECONCILE
from mnemoledger.commands.llm.consolidation_schemas import PairInput
from mnemoledger.commands.write.recorded_llm import prompt_version
from mnemoledger.ledger import validation
from mnemoledger.ledger.policy import (
    BUFFER,
    MAX_PAIRS_PER_CYCLE,
    MERGE_SIM,
    PAIR_SCAN_NEIGHBOURS,
    RECONCILE_MAX_SIM,
    RECONCILE_MIN_GAP_SECS,
    RECONCILE_MIN_SIM,
)

Pair = tuple[float, MemoryState, MemoryState]


def candidate_pairs(cycle: Cycle, low: float, high: float | None, kind: str) -> list[Pair]:
    """Pairs with low < similarity (< high), most similar first, each once, not yet
    examined for `kind`, namespaces compatible; the older memory first."""
    seen = cycle.state.pairs[kind]
    found: dict[str, Pair] = {}
    for memory in sorted(cycle.state.changed_since_last_epoch(), key=lambda m: m.id):
        if not memory.active:
            continue
        for other, score in cycle.state.neighbours(memory, PAIR_SCAN_NEIGHBOURS):
            inside = score >= low if high is None else low < score < high
            key = pair_key(memory.id, other.id)
            if (
                inside
                and key not in seen
                and key not in found
                and namespaces_compatible(memory, other)
            ):
                older, newer = sorted((memory, other), key=lambda m: (m.created_at, m.id))
                found[key] = (score, older, newer)
    return sorted(found.values(), key=lambda p: (-p[0], p[1].id, p[2].id))


def reconcile(cycle: Cycle) -> None:
    """§3.2: Working + Core pairs with 0.55 < sim < 0.78, the newer >= 1 h newer: one LLM
    call decides update / absorb (the newer takes the merged content, the older is
    superseded) or keep_both. The decision is a `ReconcileDecided` on the newer memory."""
    version = prompt_version(RECONCILE)
    for score, older, newer in candidate_pairs(
        cycle, RECONCILE_MIN_SIM, RECONCILE_MAX_SIM, "reconcile"
    ):
        if cycle.plan.llm_pairs >= MAX_PAIRS_PER_CYCLE:
            cut_short(cycle)
            return
        if BUFFER in (older.layer, newer.layer) or not (older.active and newer.active):
            continue
        if (newer.created_at - older.created_at).total_seconds() < RECONCILE_MIN_GAP_SECS:
            continue
        key = pair_key(older.id, newer.id)
        cycle.state.pairs["reconcile"].add(key)
        cycle.plan.pairs.append(["reconcile", key])
        cycle.plan.llm_pairs += 1
        output = cycle.ask(
            RECONCILE,
            PairInput(older=candidate(older), newer=candidate(newer), similarity=round(score, 4)),
        )
        cycle.plan.add(
            "reconcile",
            newer.id,
            "reconcile",
            version,
            decision=output.decision,
            other=older.id,
            similarity=round(score, 4),
        )
        if output.decision == "keep_both":
            continue
        content = _clean(output.merged_content) or newer.content
        cycle.absorb(newer, [older], content, "reconcile", RECONCILE, score)


def merge(cycle: Cycle) -> None:
    """§3.1: pairs with sim >= 0.78: one LLM merge each; the more important (then more
    accessed) memory absorbs the other; the result goes to the higher layer."""
    for score, older, newer in candidate_pairs(cycle, MERGE_SIM, None, "merge"):
        if cycle.plan.llm_pairs >= MAX_PAIRS_PER_CYCLE:
            cut_short(cycle)
            return
        if not (older.active and newer.active):
            continue
        key = pair_key(older.id, newer.id)
        if not _mergeable(older, newer):
            cycle.state.pairs["merge"].add(key)
            continue
        cycle.state.pairs["merge"].add(key)
        cycle.plan.pairs.append(["merge", key])
        cycle.plan.llm_pairs += 1
        output = cycle.ask(
            MERGE,
            PairInput(older=candidate(older), newer=candidate(newer), similarity=round(score, 4)),
        )
        winner, loser = winner_of(older, newer)
        content = _clean(output.content) or winner.content
        cycle.absorb(winner, [loser], content, "merge", MERGE, score)


def _mergeable(older: MemoryState, newer: MemoryState) -> bool:
    """Only a restatement is merged: two values of one attribute ("my number is ...0142" /
    "...0199") are an update for reconcile, and two distinct facts stay apart, however
    close their vectors."""
    return says_the_same(older.content, newer.content) and not replaces(
        older.content, newer.content
    )


def cut_short(cycle: Cycle) -> None:
    """The pair budget ran out: the next cycle scans the same changed memories again (the
    pairs examined now are skipped by their keys), so no pair is starved by the cap."""
    cycle.plan.decided_at = cycle.state.last_epoch_position


def _clean(text: str) -> str:
    try:
        return validation.content(validation.normalize_text(text))
    except ValueError:
        return ""
