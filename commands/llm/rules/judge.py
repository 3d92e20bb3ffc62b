"""The judge's stages answered offline by the fine-tuned models (`commands.judge`), so a
provider that falls back to the offline one answers them too."""

from __future__ import annotations

from mnemoledger.commands.judge import Turn, default_judge
from mnemoledger.commands.llm.judge_prompts import (
    PairRelation,
    ReadTurnsInput,
    ReadTurnsOutput,
    RelateInput,
    RelateOutput,
    TurnReading,
)
from mnemoledger.ledger.policy import INJECTION_CUT, WORTH_KEEPING_CUT


def relate(inputs: RelateInput) -> RelateOutput:
    answers = default_judge().relations([(p.older, p.newer) for p in inputs.pairs])
    return RelateOutput(
        relations=[PairRelation(pair=i, relation=a.label) for i, a in enumerate(answers)]  # type: ignore[arg-type]
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
