"""The audit stage (seed 001 §5.2): the LLM reviews Core + Working and proposes
operations with 8-character short ids; they are resolved, checked by the sandbox, recorded
(`AuditProposed` + one `AuditOpChecked` each) and only the Good ones run."""

from __future__ import annotations

from typing import Any

from mnemoledger.commands.lifecycle.consolidation import sandbox
from mnemoledger.commands.lifecycle.consolidation.buffer import promote
from mnemoledger.commands.lifecycle.consolidation.context import Cycle, winner_of
from mnemoledger.commands.lifecycle.consolidation.state import MemoryState
from mnemoledger.commands.llm.consolidation_prompts import AUDIT
from mnemoledger.commands.llm.consolidation_schemas import AuditInput, AuditMemory, AuditOperation
from mnemoledger.commands.write.recorded_llm import prompt_version
from mnemoledger.ledger import validation
from mnemoledger.ledger.policy import (
    AUDIT_INTERVAL_EPOCHS,
    AUDIT_MAX_MEMORIES,
    AUDIT_MERGE_MAX_SIM,
    AUDIT_MERGE_MIN_SIM,
    AUDIT_SANDBOX_GUARDS,
    AUDIT_SHORT_ID_CHARS,
    CORE,
    PAIR_SCAN_NEIGHBOURS,
    WORKING,
)


def due(cycle: Cycle, requested: bool | None) -> bool:
    """Asked for, or (unasked) every 48 epochs."""
    return requested if requested is not None else cycle.epoch % AUDIT_INTERVAL_EPOCHS == 0


def audit(cycle: Cycle, guards: bool = AUDIT_SANDBOX_GUARDS) -> None:
    """Review Core + Working; with `guards` (seed 001 §8) the sandbox also refuses
    operations on memories created < 48 h or modified < 24 h before the cycle's clock."""
    now = cycle.now if guards else None
    reviewed = sorted(
        (m for m in cycle.state.active() if m.layer in (WORKING, CORE)),
        key=lambda m: (-m.importance, m.id),
    )[:AUDIT_MAX_MEMORIES]
    if not reviewed:
        return
    short = {m.id[:AUDIT_SHORT_ID_CHARS]: m for m in reviewed}
    output = cycle.ask(
        AUDIT,
        AuditInput(
            memories=[_shown(cycle, m) for m in reviewed], merge_hints=_hints(cycle, reviewed)
        ),
    )
    version = prompt_version(AUDIT)
    resolved: list[dict[str, Any]] = []
    verdicts: list[sandbox.Verdict] = []
    targets_of: list[list[MemoryState | None]] = []
    for operation in output.operations:
        targets = [_resolve(cycle, short, i) for i in operation.ids]
        targets_of.append(targets)
        verdicts.append(sandbox.check(operation, targets, now))
        resolved.append(
            {
                **operation.model_dump(mode="json"),
                "ids": [
                    t.id if t is not None else i
                    for t, i in zip(targets, operation.ids, strict=True)
                ],
            }
        )
    score = sandbox.safety_score(verdicts)
    runs = sandbox.runs(verdicts)
    summary = cycle.plan.add(
        "audit", None, "audit", version, proposed=len(resolved), score=round(score, 4)
    )
    executed = [False] * len(verdicts)
    if runs:
        for n, (operation, targets) in enumerate(zip(output.operations, targets_of, strict=True)):
            # checked again as it runs: an earlier operation may have merged or moved a target
            if (
                verdicts[n].verdict == sandbox.GOOD
                and sandbox.check(operation, targets, now).verdict == sandbox.GOOD
            ):
                _execute(cycle, operation, [t for t in targets if t is not None], version)
                executed[n] = True
    summary.data["executed"] = sum(executed)
    cycle.plan.audit = {
        "operations": resolved,
        "score": round(score, 4),
        "verdicts": [
            {"index": n, "verdict": v.verdict, "rule": v.rule, "executed": executed[n]}
            for n, v in enumerate(verdicts)
        ],
    }


def _execute(
    cycle: Cycle, operation: AuditOperation, targets: list[MemoryState], version: str
) -> None:
    first = targets[0]
    if operation.op == "promote":
        promote(cycle, first, "audit", "audit", version, reason=operation.reason[:200])
    elif operation.op == "demote" and operation.target_layer is not None:
        cycle.plan.add(
            "demote",
            first.id,
            "audit",
            version,
            via="audit",
            reason=operation.reason[:200],
            **{"from": first.layer, "to": operation.target_layer},
        )
        first.layer = operation.target_layer
        first.entered_epoch = cycle.epoch
    elif operation.op == "adjust" and operation.importance is not None:
        cycle.plan.add(
            "adjust", first.id, "audit", version, importance=operation.importance, via="audit"
        )
        first.importance = operation.importance
    elif operation.op == "merge":
        winner = targets[0]
        for other in targets[1:]:
            winner = winner_of(winner, other)[0]
        losers = [t for t in targets if t is not winner]
        content = validation.normalize_text(operation.content or "") or winner.content
        cycle.absorb(winner, losers, content, "audit", AUDIT, layer=operation.target_layer)


def _resolve(cycle: Cycle, short: dict[str, MemoryState], given: str) -> MemoryState | None:
    """A short id of a reviewed memory, or a full id of any memory of the user."""
    return (
        short.get(given[:AUDIT_SHORT_ID_CHARS])
        if len(given) <= AUDIT_SHORT_ID_CHARS
        else cycle.state.memories.get(given)
    )


def _shown(cycle: Cycle, memory: MemoryState) -> AuditMemory:
    return AuditMemory(
        short_id=memory.id[:AUDIT_SHORT_ID_CHARS],
        layer=memory.layer,
        importance=round(memory.importance, 4),
        access_count=memory.access_count,
        age_days=round(memory.age_seconds(cycle.now) / 86400, 1),
        modified_days=round(memory.modified_seconds(cycle.now) / 86400, 1),
        tags=memory.tags,
        kind=memory.kind,
        content=memory.content,
    )


def _hints(cycle: Cycle, reviewed: list[MemoryState]) -> list[list[str]]:
    """Groups of reviewed memories with cosine in [0.65, 0.78) (merge suggestions)."""
    inside = {m.id for m in reviewed}
    groups: list[list[str]] = []
    for memory in reviewed:
        near = [
            other.id[:AUDIT_SHORT_ID_CHARS]
            for other, score in cycle.state.neighbours(memory, PAIR_SCAN_NEIGHBOURS)
            if other.id in inside
            and other.id > memory.id
            and AUDIT_MERGE_MIN_SIM <= score < AUDIT_MERGE_MAX_SIM
        ]
        if near:
            groups.append([memory.id[:AUDIT_SHORT_ID_CHARS], *near])
    return groups
