"""Deterministic rules that honour each stage's contract: the offline provider's "model".

The catalogue (thousands of patterns, compiled when their modules load) is imported on the
first look-up in `RULES`, not with this package: a command that asks no stage (`stats`,
`search`, `mcp --help`) and a module that only needs `rules.text` do not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from typing import Any, Final

from pydantic import BaseModel


class _Catalogue(Mapping[str, Callable[[Any], BaseModel]]):
    """The rule of each stage, loaded on first use."""

    @cached_property
    def _rules(self) -> dict[str, Callable[[Any], BaseModel]]:
        from mnemoledger.commands.llm.rules import consolidation, judge, search
        from mnemoledger.commands.llm.rules.core import core_update
        from mnemoledger.commands.llm.rules.extract import extract
        from mnemoledger.commands.llm.rules.facts import fact_extract
        from mnemoledger.commands.llm.rules.merge import insert_merge, merge_notes
        from mnemoledger.commands.llm.rules.multi_fact import multi_fact
        from mnemoledger.commands.llm.rules.reconstruct import reconstruct, refine
        from mnemoledger.commands.llm.rules.resume import resume_compress
        from mnemoledger.commands.llm.rules.split import split
        from mnemoledger.commands.llm.rules.synthesize import synthesize

        return {
            "split": split,
            "reconstruct": reconstruct,
            "refine": refine,
            "core_update": core_update,
            "insert_merge": insert_merge,
            "extract": extract,
            "synthesize": synthesize,
            "multi_fact": multi_fact,
            "merge_notes": merge_notes,
            # consolidation (seed 001 §7)
            "triage": consolidation.triage,
            "gate": consolidation.gate,
            "merge": consolidation.merge,
            "reconcile": consolidation.reconcile,
            "distill": consolidation.distill,
            "audit": consolidation.audit,
            "name_topics": consolidation.name_topics,
            "same_fact": consolidation.same_fact,
            "insight": consolidation.insight,
            # search (seed 001 §4.4-4.5)
            "expand": search.expand,
            "rerank": search.rerank,
            "resume_compress": resume_compress,
            "fact_extract": fact_extract,
            # the judge's stages (commands.judge): the fine-tuned models answer
            "relate": judge.relate,
            "read_turns": judge.read_turns,
        }

    def __getitem__(self, stage: str) -> Callable[[Any], BaseModel]:
        return self._rules[stage]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)


RULES: Final[Mapping[str, Callable[[Any], BaseModel]]] = _Catalogue()
"""The rule of each stage, by stage name."""

__all__ = ["RULES"]
