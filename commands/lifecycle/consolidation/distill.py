"""Session distillation (seed 001 §3.3): 3+ undistilled session notes of a namespace become
one project-status memory in Working; the notes are tagged `distilled`."""

from __future__ import annotations

from itertools import groupby

from mnemoledger.commands.lifecycle.consolidation.context import Cycle
from mnemoledger.commands.lifecycle.consolidation.state import MemoryState
from mnemoledger.commands.llm.consolidation_prompts import DISTILL
from mnemoledger.commands.llm.consolidation_schemas import DistillInput
from mnemoledger.commands.write.recorded_llm import prompt_version
from mnemoledger.ledger import validation
from mnemoledger.ledger.policy import (
    AUTO_DISTILLED_TAG,
    DISTILL_MAX_CHARS,
    DISTILL_MAX_NOTES,
    DISTILL_MIN_NOTES,
    DISTILLED_TAG,
    MAX_EVIDENCE_ITEMS,
    PROJECT_STATUS_TAG,
    TRIAGE_DEDUP_SIM,
)


def distill_sessions(cycle: Cycle) -> None:
    notes = sorted(
        (m for m in cycle.state.active() if m.is_session_note and DISTILLED_TAG not in m.tags),
        key=lambda m: (m.namespace, m.created_at, m.id),
    )
    version = prompt_version(DISTILL)
    for namespace, group in groupby(notes, key=lambda m: m.namespace):
        pending = list(group)
        if len(pending) < DISTILL_MIN_NOTES:
            continue
        latest = pending[-DISTILL_MAX_NOTES:]
        output = cycle.ask(
            DISTILL, DistillInput(namespace=namespace, notes=[m.content for m in latest])
        )
        summary = validation.normalize_text(output.summary)[:DISTILL_MAX_CHARS]
        if not summary:
            continue
        evidence = [e for m in latest for e in (m.evidence or [m.id])]
        evidence = list(dict.fromkeys(evidence))[:MAX_EVIDENCE_ITEMS]
        existing = _near_duplicate(cycle, namespace, summary)
        if existing is not None:
            cycle.plan.add(
                "update",
                existing.id,
                "distill",
                version,
                content=summary,
                sources=[m.id for m in latest],
            )
            existing.content = summary
        else:
            cycle.plan.add(
                "distill",
                None,
                "distill",
                version,
                content=summary,
                namespace=namespace,
                tags=[PROJECT_STATUS_TAG, AUTO_DISTILLED_TAG],
                evidence=evidence,
                sources=[m.id for m in latest],
            )
        for note in pending:
            note.tags = [*note.tags, DISTILLED_TAG][:20]
            cycle.plan.add("tag", note.id, "distill", tags=note.tags, reason=DISTILLED_TAG)


def _near_duplicate(cycle: Cycle, namespace: str, summary: str) -> MemoryState | None:
    """An existing distillation of the namespace within cosine 0.75 of the new summary."""
    existing = [
        m for m in cycle.state.active() if m.namespace == namespace and AUTO_DISTILLED_TAG in m.tags
    ]
    if not existing:
        return None
    vector = cycle.embedder.passages([summary])[0]
    best = max(
        existing, key=lambda m: (cycle.state.similarity(vector, cycle.state.vector(m.id)), m.id)
    )
    similar = cycle.state.similarity(vector, cycle.state.vector(best.id))
    return best if similar >= TRIAGE_DEDUP_SIM else None
