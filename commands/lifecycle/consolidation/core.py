"""The Core rules (seed 001 §2.5-§2.6, §3 steps 4-6, 12): hygiene, the overlap scan,
Working -> Core candidates and the LLM gate with escalating cooldowns."""

from __future__ import annotations

import numpy as np

from mnemoledger.commands.lifecycle.consolidation.buffer import promote
from mnemoledger.commands.lifecycle.consolidation.context import Cycle, candidate
from mnemoledger.commands.lifecycle.consolidation.state import MemoryState, pair_key
from mnemoledger.commands.llm.consolidation_prompts import GATE
from mnemoledger.commands.llm.consolidation_schemas import CandidateMemory, GateInput
from mnemoledger.commands.write.consent_fields import mentions
from mnemoledger.ledger.policy import (
    CORE,
    CORE_BLOCKING_TAGS,
    CORE_OVERLAP_SIM,
    EPHEMERAL_TAG,
    GATE_BATCH,
    GATE_COOLDOWN_EPOCHS,
    GATE_HIGH_ACCESS,
    GATE_HIGH_REPETITION,
    GATE_MAX_REJECTIONS,
    GATE_REJECTED_TAGS,
    MAX_TAGS,
    PROMOTE_MIN_IMPORTANCE,
    PROMOTE_THRESHOLD,
    WORKING,
    WORKING_AGE_PROMOTE_SECS,
)


def core_hygiene(cycle: Cycle) -> None:
    """§2.6: session notes and `ephemeral` memories in Core go back to Working."""
    for memory in cycle.state.active(CORE):
        if memory.is_session_note or EPHEMERAL_TAG in memory.tags:
            reason = "session note" if memory.is_session_note else "ephemeral"
            cycle.plan.add(
                "demote",
                memory.id,
                "core-hygiene",
                via="hygiene",
                reason=reason,
                **{"from": CORE, "to": WORKING},
            )
            memory.layer = WORKING
            memory.entered_epoch = cycle.epoch


def core_overlap(cycle: Cycle) -> None:
    """§3 step 5: pairwise cosine over Core (the seed's one O(n²), bounded by Core's
    size, one matrix product); pairs above 0.70 are flagged once (the key is kept on the
    epoch event, never flagged again)."""
    core = [
        m
        for m in sorted(cycle.state.active(CORE), key=lambda m: m.id)
        if cycle.state.vector(m.id) is not None
    ]
    if len(core) < 2:
        return
    matrix = np.stack([cycle.state.vector(m.id) for m in core])  # type: ignore[misc]
    scores = cycle.state.vectors.calibration.to_reference_array(matrix @ matrix.T)
    seen = cycle.state.pairs["overlap"]
    rows, columns = np.nonzero(np.triu(scores > CORE_OVERLAP_SIM, k=1))
    for i, j in zip(rows.tolist(), columns.tolist(), strict=True):
        a, b = core[i], core[j]
        key = pair_key(a.id, b.id)
        if key not in seen:
            seen.add(key)
            cycle.plan.pairs.append(["overlap", key])
            cycle.plan.add(
                "overlap",
                None,
                "core-overlap",
                memories=[a.id, b.id],
                similarity=round(float(scores[i, j]), 4),
            )


def gate_candidates(cycle: Cycle) -> list[MemoryState]:
    """§2.5: Working memories with (score >= 3 and importance >= 0.6), or (older than 7
    days, score > 0 and importance >= 0.6); never session notes, ephemeral, distilled or
    auto-distilled ones; a rejected one only after its cooldown, never after the third.
    Never one stating the user's preferred name, pronouns, city or language (seed 003
    §10): those reach the profile only through consent, as core.md's field bullets."""
    found = []
    for memory in cycle.state.active(WORKING):
        if memory.importance < PROMOTE_MIN_IMPORTANCE:
            continue
        old = memory.age_seconds(cycle.now) > WORKING_AGE_PROMOTE_SECS
        if not (memory.reinforcement >= PROMOTE_THRESHOLD or (old and memory.reinforcement > 0)):
            continue
        if memory.is_session_note or any(t in memory.tags for t in CORE_BLOCKING_TAGS):
            continue
        if memory.gate_rejections >= GATE_MAX_REJECTIONS:
            continue
        if memory.gate_retry_epoch is not None and cycle.epoch < memory.gate_retry_epoch:
            continue
        if mentions(memory.content):
            continue
        found.append(memory)
    return found


def gate(cycle: Cycle, candidates: list[MemoryState]) -> None:
    """§2.5: the whitelist gate, in batches; each verdict is a `GateDecided`; approval
    promotes to Core; rejections escalate gate-rejected -> -2 -> -final (48, 144, never)."""
    version = cycle.prompt_of(GATE)
    for start in range(0, len(candidates), GATE_BATCH):
        batch = {m.id: m for m in candidates[start : start + GATE_BATCH] if m.active}
        if not batch:
            continue
        output = cycle.ask(GATE, GateInput(candidates=[_noted(m) for m in batch.values()]))
        for verdict in output.decisions:
            memory = batch.pop(verdict.id, None)
            if memory is None or memory.layer != WORKING:
                continue
            attempt = memory.gate_rejections + 1
            if verdict.decision == "approve":
                cycle.plan.add(
                    "gate",
                    memory.id,
                    "gate",
                    version,
                    decision="approve",
                    attempt=attempt,
                    category=verdict.category,
                    reason=verdict.reason[:200],
                    retry_epoch=None,
                    final=False,
                )
                promote(cycle, memory, "gate", "gate", version)
                continue
            final = attempt >= GATE_MAX_REJECTIONS
            retry = None if final else cycle.epoch + GATE_COOLDOWN_EPOCHS[attempt - 1]
            cycle.plan.add(
                "gate",
                memory.id,
                "gate",
                version,
                decision="reject",
                attempt=attempt,
                category=None,
                reason=verdict.reason[:200],
                retry_epoch=retry,
                final=final,
                tag=GATE_REJECTED_TAGS[attempt - 1],
            )
            memory.gate_rejections = attempt
            memory.gate_retry_epoch = retry
            tag_rejection(cycle, memory, GATE_REJECTED_TAGS[attempt - 1], version)


def tag_rejection(cycle: Cycle, memory: MemoryState, tag: str, version: str | None) -> None:
    """§2.5: the memory itself carries its rejection (`MemoryTagged`): the earlier rejection
    tag gives way to the escalated one (gate-rejected -> -2 -> -final); a memory with a full
    set of tags drops its last one to make room."""
    kept = [t for t in memory.tags if t not in GATE_REJECTED_TAGS][: MAX_TAGS - 1]
    tags = [*kept, tag]
    if tags == memory.tags:
        return
    cycle.plan.add("tag", memory.id, "gate", version, tags=tags, reason=tag)
    memory.tags = tags


def _noted(memory: MemoryState) -> CandidateMemory:
    """The gate's context notes high access (>= 30) and repetition (>= 2) as tags."""
    seen = candidate(memory)
    notes = []
    if memory.access_count >= GATE_HIGH_ACCESS:
        notes.append("high_access")
    if memory.repetition_count >= GATE_HIGH_REPETITION:
        notes.append("high_repetition")
    return seen.model_copy(update={"tags": [*seen.tags, *notes]}) if notes else seen
