"""What every rule of a cycle gets: the user's state, the plan being built, the clock value
of the cycle, the recorded LLM, the embedder and the LLM level (seed 001 §7)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.lifecycle.consolidation.plan import Plan
from mnemoledger.commands.lifecycle.consolidation.state import MemoryState, UserState
from mnemoledger.commands.llm.consolidation_schemas import CandidateMemory
from mnemoledger.commands.llm.rules import RULES
from mnemoledger.commands.llm.stage import Stage
from mnemoledger.commands.write.recorded_llm import RecordedLLM, prompt_version
from mnemoledger.ledger.policy import (
    BUFFER_CAP,
    FORGETTING_DEFAULT,
    LAYER_RANK,
    LLM_HEURISTIC_STAGES,
    LLM_LEVEL_AUTO,
    LLM_LEVEL_OFF,
    MAX_EVIDENCE_ITEMS,
    MAX_MERGED_TAGS,
    SUPERSEDED,
    Forgetting,
)
from mnemoledger.projections.embeddings.embedder import Embedder


@dataclass
class Cycle:
    """One cycle in progress."""

    state: UserState
    plan: Plan
    now: datetime
    llm: RecordedLLM
    embedder: Embedder
    buffer_cap: int = BUFFER_CAP
    llm_level: str = LLM_LEVEL_AUTO
    forgetting: Forgetting = FORGETTING_DEFAULT
    """Who the idle rules may forget and how they count days (`ledger.policy`)."""
    """Seed 001 §7: `auto` asks the LLM stages; `off` decides triage and the gate by their
    heuristics and runs no other LLM stage (`run_rules` skips them)."""

    @property
    def epoch(self) -> int:
        return self.plan.epoch

    @property
    def llm_on(self) -> bool:
        """Whether this cycle may call an LLM (the level is not `off`)."""
        return self.llm_level != LLM_LEVEL_OFF

    def ask(self, stage: Stage[Any, Any], inputs: BaseModel) -> Any:
        """The stage's answer: the recorded LLM's, or with the level `off` the heuristic
        rule's (triage and gate only; nothing is called or recorded)."""
        if self.llm_on:
            return self.llm.run(stage, inputs)
        if stage.name not in LLM_HEURISTIC_STAGES:
            raise AssertionError(f"stage {stage.name!r} must not run with the LLM level off")
        return RULES[stage.name](inputs)

    def prompt_of(self, stage: Stage[Any, Any]) -> str | None:
        """The prompt version a decision names: None when a heuristic took it."""
        return prompt_version(stage) if self.llm_on else None

    def absorb(
        self,
        winner: MemoryState,
        losers: list[MemoryState],
        content: str,
        rule: str,
        stage: Stage[Any, Any] | None,
        similarity: float | None = None,
        layer: str | None = None,
    ) -> None:
        """`winner` takes in `losers` (seed 001 §3.1): the given content, tags union (cap
        20), importance max, counts summed, the evidence of all, the highest layer, and
        `default` when namespaces differ; the losers are superseded by it."""
        everyone = [winner, *losers]
        winner.tags = list(dict.fromkeys(t for m in everyone for t in m.tags))[:MAX_MERGED_TAGS]
        winner.importance = max(m.importance for m in everyone)
        access_added = sum(m.access_count for m in losers)
        repetition_added = sum(m.repetition_count for m in losers)
        winner.access_count += access_added
        winner.repetition_count += repetition_added
        evidence = [e for m in everyone for e in m.evidence or []]
        winner.evidence = list(dict.fromkeys(evidence))[:MAX_EVIDENCE_ITEMS] if evidence else None
        top = max(everyone, key=lambda m: m.rank).layer
        winner.layer = layer if layer is not None and LAYER_RANK[layer] >= LAYER_RANK[top] else top
        if any(m.namespace != winner.namespace for m in losers):
            winner.namespace = "default"
        winner.content = content
        for loser in losers:
            loser.state = SUPERSEDED
        self.plan.add(
            "merge",
            winner.id,
            rule,
            prompt_version(stage) if stage is not None else None,
            absorbed=[m.id for m in losers],
            content=winner.content,
            tags=winner.tags,
            importance=winner.importance,
            access_added=access_added,
            repetition_added=repetition_added,
            evidence=winner.evidence,
            layer=winner.layer,
            namespace=winner.namespace,
            similarity=None if similarity is None else round(similarity, 4),
        )


def candidate(memory: MemoryState) -> CandidateMemory:
    return CandidateMemory(
        id=memory.id,
        content=memory.content,
        kind=memory.kind,
        tags=memory.tags,
        importance=round(memory.importance, 4),
        access_count=memory.access_count,
        repetition_count=memory.repetition_count,
    )


def winner_of(a: MemoryState, b: MemoryState) -> tuple[MemoryState, MemoryState]:
    """Seed 001 §3.1: the more important (then more accessed, higher layer, older) wins."""
    ranked = sorted(
        (a, b),
        key=lambda m: (-m.importance, -m.access_count, -m.rank, m.created_at, m.id),
    )
    return ranked[0], ranked[1]
