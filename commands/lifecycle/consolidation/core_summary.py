"""Seed 001 §3 step 19, the Core summary update: when a resume view's Core memories do not
all fit resume's Core budget, the cycle has those past it compressed by the
`resume_compress` stage (§7's call site, the `resume` model tier) and keeps the summary
(`ledger.core_summary`), which resume shows in their place. It runs last, over what the
cycle's other rules left (a promotion to Core this cycle counts), and only when the
memories past the budget changed since the summary was written (their ids and texts), so
an unchanged Core costs no call. A view whose memories fit again loses its summary."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from mnemoledger.commands.lifecycle.consolidation.context import Cycle
from mnemoledger.commands.llm.consolidation_prompts import RESUME_COMPRESS
from mnemoledger.commands.llm.consolidation_schemas import ResumeCompressInput
from mnemoledger.commands.llm.rules.resume import cut_at_word
from mnemoledger.commands.recall.resume import core_overflow, load_core_summary
from mnemoledger.commands.write.recorded_llm import prompt_version
from mnemoledger.ledger import Ledger, Provenance
from mnemoledger.ledger.core_summary import CoreSummary
from mnemoledger.ledger.policy import (
    ACTIVE,
    CHARS_PER_TOKEN,
    CORE,
    RESUME_CORE_SUMMARY_BUDGET_TOKENS,
    SHARED_NAMESPACE,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.layers import LayersProjection, MemoryRow

SUMMARY_RULE = "core-summary"
SUMMARY_LINE_RESERVE = 30
"""Characters of the summary's budget kept for its line's label ("Summary of N more: ")."""
SUMMARY_MAX_CHARS = RESUME_CORE_SUMMARY_BUDGET_TOKENS * CHARS_PER_TOKEN - SUMMARY_LINE_RESERVE


def update_core_summary(
    cycle: Cycle, ledger: Ledger, layers: LayersProjection, provenance: Provenance
) -> CoreSummary | None:
    """Step 19 for every resume view with Core memories: the summary aggregate with the
    new summaries as pending events (None when no view changed)."""
    user_id = cycle.state.user_id
    rows = _as_left_by_the_cycle(layers.list(user_id, state=ACTIVE), cycle)
    document = ledger.core_document(provenance, user_id).markdown or ""
    stored = load_core_summary(ledger, user_id)
    core_namespaces = {row.namespace for row in rows if row.layer == CORE and row.state == ACTIVE}
    views = sorted({SHARED_NAMESPACE, *core_namespaces, *(stored.views if stored else {})})
    summary = stored
    decided = replace(provenance, prompt_version=prompt_version(RESUME_COMPRESS))
    for view in views:
        overflow = core_overflow(rows, view, document, cycle.now)
        kept = summary.views.get(view) if summary is not None else None
        if not overflow:
            if kept is not None and summary is not None:
                with acting_as(decided):
                    summary.update(view, "", [], "", cycle.epoch)
                cycle.plan.add("summarize", None, SUMMARY_RULE, view=view, memories=0)
            continue
        fingerprint = _fingerprint(overflow)
        if kept is not None and kept.get("fingerprint") == fingerprint:
            continue
        output = cycle.ask(
            RESUME_COMPRESS,
            ResumeCompressInput(
                namespace=view,
                memories=[row.content for row in overflow],
                max_chars=SUMMARY_MAX_CHARS,
            ),
        )
        text = cut_at_word(" ".join(output.summary.split()), SUMMARY_MAX_CHARS)
        with acting_as(decided):
            if summary is None:
                summary = CoreSummary(user_id=user_id)
            summary.update(view, text, [row.id for row in overflow], fingerprint, cycle.epoch)
        cycle.plan.add(
            "summarize",
            None,
            SUMMARY_RULE,
            decided.prompt_version,
            view=view,
            memories=len(overflow),
        )
    if summary is None or not summary.pending_events:
        return None
    return summary


def _as_left_by_the_cycle(rows: Sequence[MemoryRow], cycle: Cycle) -> list[MemoryRow]:
    """The read model's rows with what this cycle changed (layer, state, text, repetitions)."""
    changed = []
    for row in rows:
        memory = cycle.state.memories.get(row.id)
        if memory is not None:
            row = replace(
                row,
                layer=memory.layer,
                state=memory.state,
                content=memory.content,
                repetition_count=memory.repetition_count,
            )
        changed.append(row)
    return changed


def _fingerprint(rows: Sequence[MemoryRow]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(f"{row.id}\t{row.content}\n".encode())
    return digest.hexdigest()
