"""The judge's stages answered offline by the fine-tuned models (`commands.judge`), so a
provider that falls back to the offline one answers them too."""

from __future__ import annotations

from typing import cast

from mnemoledger.commands.judge import Relation, Turn, default_judge
from mnemoledger.commands.llm.judge_prompts import (
    AttributeName,
    PairRelation,
    ReadFactsInput,
    ReadFactsOutput,
    ReadTurnsInput,
    ReadTurnsOutput,
    RelateInput,
    RelateOutput,
    RelationName,
    TextFact,
    TurnReading,
)
from mnemoledger.ledger.policy import INJECTION_CUT, WORTH_KEEPING_CUT


def relate(inputs: RelateInput) -> RelateOutput:
    answers = default_judge().relations([(p.older, p.newer) for p in inputs.pairs])
    return RelateOutput(
        relations=[PairRelation(pair=i, relation=_decided(a)) for i, a in enumerate(answers)]
    )


def read_turns(inputs: ReadTurnsInput) -> ReadTurnsOutput:
    turns = [Turn(t.text, t.role) for t in inputs.turns]
    judge = default_judge()
    keep, instruction = judge.worth_keeping(turns), judge.instructions(turns)
    return ReadTurnsOutput(
        readings=[
            TurnReading(turn=i, keep=k >= WORTH_KEEPING_CUT, instruction=n >= INJECTION_CUT)
            for i, (k, n) in enumerate(zip(keep, instruction, strict=True))
        ]
    )


def read_facts(inputs: ReadFactsInput) -> ReadFactsOutput:
    """The facts model's reading of each text on its own, beside the turn before it."""
    judge = default_judge()
    read = [judge.facts([(t.text, t.asked)])[0] for t in inputs.texts]
    return ReadFactsOutput(
        facts=[
            TextFact(
                text=i,
                attribute=cast(AttributeName, f.attribute),
                value=f.value,
                positive=f.positive,
            )
            for i, facts in enumerate(read)
            for f in facts
        ]
    )


def _decided(relation: Relation) -> RelationName:
    """The relation the pipelines act on: "replaces" only from the cut, else side by side."""
    label = relation.label if relation.replacing or relation.label != "replaces" else "adds"
    return cast(RelationName, label)
