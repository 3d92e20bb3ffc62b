"""A cycle's decisions as a list of operations: printed by `--dry-run`, turned into events
by `apply` otherwise. Each operation names the rule that decided it and, where an LLM
decided, the prompt version."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Operation:
    """One planned change (or decision record) of one consolidation rule."""

    op: str
    """promote, demote, evict, gate, triage, overlap, merge, reconcile, distill, tag, adjust,
    audit, expire, lapse, purge, summarize, core (the waiting core candidates read)."""
    memory: str | None
    """The memory it changes (the winner of a merge), if one."""
    rule: str
    """The seed rule that decided it, e.g. `buffer-promotion`, `gate`, `ttl`."""
    data: dict[str, Any] = field(default_factory=dict)
    prompt_version: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "rule": self.rule}
        if self.memory is not None:
            out["memory"] = self.memory
        out.update(self.data)
        if self.prompt_version is not None:
            out["prompt_version"] = self.prompt_version
        return out


@dataclass
class Plan:
    """Everything one cycle decided."""

    epoch: int
    decided_at: int = 0
    """The log position (of the read models) the decisions read."""
    operations: list[Operation] = field(default_factory=list)
    pairs: list[list[str]] = field(default_factory=list)
    """[kind, key] of every pair examined, recorded on the epoch event."""
    audit: dict[str, Any] | None = None
    """The audit's resolved proposals, safety score and verdicts, when the audit ran."""
    llm_pairs: int = 0
    """Merge/reconcile LLM calls spent from the cycle's budget."""
    daily_pairs: int | None = None
    """Pairs the daily pass (seed 003 §4) sent to the LLM; None when it did not run."""

    def add(
        self,
        op: str,
        memory: str | None,
        rule: str,
        prompt_version: str | None = None,
        **data: Any,
    ) -> Operation:
        operation = Operation(op, memory, rule, data, prompt_version)
        self.operations.append(operation)
        return operation
