"""Deterministic rules that honour each stage's contract: the offline provider's "model".

Each stage's rules are imported when `RULES` is first asked for that stage, not with this
package: the extraction catalogue (thousands of patterns, ~1 s of CPU to compile) loads only
for a stage that reads with it, so a command that asks no stage (`stats`, `search`) or an
add (`split`) does not pay for it, nor a module that only needs `rules.text`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from importlib import import_module
from typing import Any, Final

from pydantic import BaseModel

_WHERE: Final[dict[str, str]] = {
    "split": "split:split",
    "reconstruct": "reconstruct:reconstruct",
    "refine": "reconstruct:refine",
    "remember": "remember:remember",
    "core_update": "core:core_update",
    "insert_merge": "merge:insert_merge",
    "extract": "extract:extract",
    "synthesize": "synthesize:synthesize",
    "multi_fact": "multi_fact:multi_fact",
    "merge_notes": "merge:merge_notes",
    # consolidation (seed 001 §7)
    "triage": "consolidation:triage",
    "gate": "consolidation:gate",
    "merge": "consolidation:merge",
    "reconcile": "consolidation:reconcile",
    "distill": "consolidation:distill",
    "audit": "consolidation:audit",
    "name_topics": "consolidation:name_topics",
    "same_fact": "consolidation:same_fact",
    "insight": "consolidation:insight",
    # search (seed 001 §4.4-4.5)
    "expand": "search:expand",
    "rerank": "search:rerank",
    "resume_compress": "resume:resume_compress",
    "fact_extract": "facts:fact_extract",
    # the judge's stages (commands.judge): the fine-tuned models answer
    "relate": "judge:relate",
    "read_turns": "judge:read_turns",
    "read_facts": "judge:read_facts",
}
"""Where the rule of each stage lives: `module:function` in this package."""


class _Catalogue(Mapping[str, Callable[[Any], BaseModel]]):
    """The rule of each stage, its module imported when the stage is first looked up (an
    add's `split` does not load the extraction catalogue)."""

    def __getitem__(self, stage: str) -> Callable[[Any], BaseModel]:
        module, name = _WHERE[stage].split(":")
        rule: Callable[[Any], BaseModel] = getattr(import_module(f"{__name__}.{module}"), name)
        return rule

    def __contains__(self, stage: object) -> bool:
        return stage in _WHERE

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


RULES: Final[Mapping[str, Callable[[Any], BaseModel]]] = _Catalogue()
"""The rule of each stage, by stage name."""

__all__ = ["RULES"]
