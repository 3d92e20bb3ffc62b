"""The audit sandbox (seed 001 §5.3): every proposed operation is checked by seven rules,
and the two guards of §8 (new < 48 h, modified < 24 h), before anything runs; only Good
operations run, and only when the share of Good ones (the safety score) reaches 0.70. The
audit can never delete."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from mnemoledger.commands.lifecycle.consolidation.state import MemoryState
from mnemoledger.commands.llm.consolidation_schemas import AuditOperation
from mnemoledger.ledger.policy import (
    LAYER_RANK,
    MAX_IMPORTANCE,
    MIN_IMPORTANCE,
    SANDBOX_NEW_AGE_HOURS,
    SANDBOX_RECENT_MOD_HOURS,
    SANDBOX_SAFETY_THRESHOLD,
)

GOOD = "good"
BAD = "bad"


@dataclass(frozen=True)
class Verdict:
    verdict: str
    """good or bad."""
    rule: str | None
    """The rule a bad operation failed."""


def check(
    operation: AuditOperation, targets: list[MemoryState | None], now: datetime | None = None
) -> Verdict:
    """The seven rules, in the seed's order, with the two guards of §8 after the target
    check when the cycle's clock `now` is given; the first that fails names the verdict."""
    if operation.op == "delete":
        return Verdict(BAD, "delete-blocked")
    if not targets or any(t is None or not t.active for t in targets):
        return Verdict(BAD, "target-exists")
    memories = [t for t in targets if t is not None]
    if now is not None:
        # §8 SANDBOX_NEW_AGE_HOURS / SANDBOX_RECENT_MOD_HOURS: the audit leaves alone what
        # was just written or just changed (by the writer or another rule)
        if any(m.age_seconds(now) < SANDBOX_NEW_AGE_HOURS * 3600 for m in memories):
            return Verdict(BAD, "new-memory")
        if any(m.modified_seconds(now) < SANDBOX_RECENT_MOD_HOURS * 3600 for m in memories):
            return Verdict(BAD, "recently-modified")
    if operation.op == "demote":
        target = operation.target_layer
        current = LAYER_RANK[memories[0].layer]
        # "No same-layer demote" (current <= target) and one layer at a time (§10.3)
        if target is None or current <= LAYER_RANK[target] or current - LAYER_RANK[target] != 1:
            return Verdict(BAD, "no-same-layer-demote")
    if operation.op == "promote":
        target = operation.target_layer
        if target is None or LAYER_RANK[target] - LAYER_RANK[memories[0].layer] != 1:
            return Verdict(BAD, "no-same-layer-demote")  # the same rule, upwards
    if operation.op == "adjust" and (
        operation.importance is None or not MIN_IMPORTANCE <= operation.importance <= MAX_IMPORTANCE
    ):
        return Verdict(BAD, "importance-bounds")
    if operation.op == "merge":
        if len(memories) < 2:
            return Verdict(BAD, "merge-minimum")
        highest = max(LAYER_RANK[m.layer] for m in memories)
        target = operation.target_layer
        if target is not None and LAYER_RANK[target] < highest:
            return Verdict(BAD, "merge-direction")
        shortest = min(len(m.content) for m in memories)
        if len(operation.content or "") < shortest / 2:
            return Verdict(BAD, "merge-content-length")
    if operation.op in ("demote", "promote", "adjust") and len(memories) != 1:
        return Verdict(BAD, "target-exists")
    return Verdict(GOOD, None)


def safety_score(verdicts: list[Verdict]) -> float:
    """Good operations / all operations (1.0 when nothing was proposed)."""
    if not verdicts:
        return 1.0
    return sum(v.verdict == GOOD for v in verdicts) / len(verdicts)


def runs(verdicts: list[Verdict]) -> bool:
    return safety_score(verdicts) >= SANDBOX_SAFETY_THRESHOLD
