"""Turning a cycle's plan into events on the memories it touches, and the core.md version
that follows them (`commands.core_sync`), saved by the caller in one transaction with the
command, the user stream and the epoch."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.lifecycle.consolidation.plan import Operation, Plan
from mnemoledger.commands.write.constraints import conform
from mnemoledger.commands.write.replaying import recorded_ids
from mnemoledger.ledger import Ledger, Memory, NewMemory, Provenance, validation
from mnemoledger.ledger.core import CoreDocument
from mnemoledger.ledger.epoch import ConsolidationCommand
from mnemoledger.ledger.policy import DEFAULT_IMPORTANCE, SEMANTIC, WORKING
from mnemoledger.ledger.provenance import acting_as

CONSOLIDATION_SOURCE = "consolidation"
"""`source` of the memories a cycle writes (distillations)."""
INSIGHT_SOURCE = "insight"
"""`source` of theory-of-mind insights (seed 003 §3)."""


@dataclass
class Applied:
    """The aggregates a plan changed, and what it added and superseded."""

    memories: dict[str, Memory] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    insights: list[str] = field(default_factory=list)
    core: CoreDocument | None = None
    """The user's core document with the version that follows the changes, if any."""

    def aggregates(self) -> list[Memory | CoreDocument]:
        """Everything to save: the changed memories, then the core document."""
        return [*self.memories.values(), *([self.core] if self.core is not None else [])]


def apply_plan(
    ledger: Ledger, plan: Plan, command: ConsolidationCommand, provenance: Provenance
) -> Applied:
    applied = Applied()

    def memory(memory_id: str) -> Memory:
        if memory_id not in applied.memories:
            applied.memories[memory_id] = ledger.memory(memory_id)
        return applied.memories[memory_id]

    for operation in plan.operations:
        decided = replace(provenance, prompt_version=operation.prompt_version)
        with acting_as(decided):
            _apply(ledger, operation, plan.epoch, memory, applied, decided)
    if plan.audit is not None:
        with acting_as(provenance):
            command.audit_proposed(plan.audit["operations"], plan.audit["score"])
            for verdict in plan.audit["verdicts"]:
                command.audit_op_checked(
                    verdict["index"], verdict["verdict"], verdict["rule"], verdict["executed"]
                )
    applied.core = core_sync.follow(
        ledger, provenance, provenance.user_id, applied.memories.values()
    )
    return applied


def _apply(
    ledger: Ledger,
    op: Operation,
    epoch: int,
    memory: Any,
    applied: Applied,
    provenance: Provenance,
) -> None:
    d = op.data
    if op.op == "promote":
        memory(op.memory).promote(d["to"], d["via"], epoch)
    elif op.op == "demote":
        memory(op.memory).demote(d["to"], d["via"], epoch)
    elif op.op == "evict":
        memory(op.memory).evict(d["reason"], epoch)
    elif op.op == "gate":
        memory(op.memory).gate_decided(
            d["decision"],
            d["attempt"],
            d["category"],
            d["reason"],
            d["retry_epoch"],
            d["final"],
            epoch,
        )
    elif op.op == "triage":
        memory(op.memory).triage_decided(d["decision"], d["kind"], d["reason"], epoch)
    elif op.op == "reconcile":
        memory(op.memory).reconcile_decided(d["decision"], d["other"], d["similarity"], epoch)
    elif op.op == "merge":
        winner = memory(op.memory)
        # seed 003 §9: a merged text that breaks the format is refused; the winner keeps
        # its own text (trimming a merge would drop what was merged in)
        content = _written(op, d["content"], winner.kind, trim=False) or winner.content
        winner.absorb(
            absorbed=d["absorbed"],
            content=validation.content(content),
            tags=validation.tags(d["tags"]),
            importance=d["importance"],
            access_added=d["access_added"],
            repetition_added=d["repetition_added"],
            evidence=d["evidence"],
            layer=d["layer"],
            namespace=d["namespace"],
            via=op.rule,
            epoch=epoch,
        )
        for loser_id in d["absorbed"]:
            memory(loser_id).supersede(winner.id.hex, op.rule)
            applied.superseded.append(loser_id)
    elif op.op == "update":
        if content := _written(op, d["content"], memory(op.memory).kind, trim=False):
            memory(op.memory).update(validation.content(content), None)
    elif op.op == "distill":
        if (content := _written(op, d["content"], SEMANTIC)) is None:
            return
        draft = _new_memory(
            NewMemory(
                content=content,
                kind=SEMANTIC,
                tags=tuple(d["tags"]),
                source=CONSOLIDATION_SOURCE,
                namespace=d["namespace"],
                importance=DEFAULT_IMPORTANCE,
                evidence=d["evidence"] or None,
            ),
            ledger,
            provenance,
            applied,
            op,
        )
        draft.promote(WORKING, "distillation", epoch)
    elif op.op == "insight":
        if (content := _written(op, d["content"], SEMANTIC)) is None:
            return
        draft = _new_memory(
            NewMemory(
                content=content,
                kind=SEMANTIC,
                tags=tuple(d["tags"]),
                source=INSIGHT_SOURCE,
                importance=d["importance"],
                category=d["category"],
            ),
            ledger,
            provenance,
            applied,
            op,
        )
        applied.insights.append(draft.id.hex)
    elif op.op == "tag":
        memory(op.memory).retag(validation.tags(d["tags"]), d["reason"])
    elif op.op == "adjust":
        memory(op.memory).adjust_importance(d["importance"], d["via"], epoch)
    elif op.op == "expire":
        memory(op.memory).expire(d["expired_at"])
    elif op.op == "lapse":
        memory(op.memory).lapse(d["purge_at"], op.rule)
    elif op.op == "purge":
        memory(op.memory).purge(d["reason"])
    # overlap, same-fact and audit records change no memory: epoch / command events


WRITING_RECORD = "writing"
"""The key under which an operation records what the writing constraints did with its text."""


def _written(op: Operation, text: str, kind: str, *, trim: bool = True) -> str | None:
    """The operation's text as the writing constraints let it be stored (seed 003 §9): kept,
    trimmed, or None when refused; anything but a first-pass pass is recorded on the
    operation, which the command's outcome keeps."""
    written = conform(text, kind, op.rule, trim=trim)
    if not written.passed:
        op.data[WRITING_RECORD] = written.as_record()
    return written.text


def _new_memory(
    item: NewMemory, ledger: Ledger, provenance: Provenance, applied: Applied, op: Operation
) -> Memory:
    """A memory the cycle writes (distillation, insight), with the recorded id on a replay;
    the operation now names it."""
    [draft] = recorded_ids(ledger.draft(provenance, [item]))
    applied.memories[draft.id.hex] = draft
    applied.added.append(draft.id.hex)
    op.memory = draft.id.hex
    return draft
