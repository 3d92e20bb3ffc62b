"""The judge of a deployment with an OpenAI-compatible provider: the model decides.

Each question is one call of a judge stage (`commands.llm.judge_prompts`), run through the
caller's recorder, so every call is an `LLMCallRecorded` event of the command that asked
and a replay sees the same answers. No rule and no fine-tuned model is consulted: a pair the
model leaves out relates in no way that changes anything (`unrelated`), a turn it leaves out
is kept and is not an instruction, a text it names no fact of states none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel

from mnemoledger.commands.judge.facts import StatedFact
from mnemoledger.commands.judge.judgement import RELATIONS, Relation, Role, Turn
from mnemoledger.commands.llm.judge_prompts import (
    READ_FACTS,
    READ_TURNS,
    RELATE,
    FactText,
    ReadFactsInput,
    ReadTurnsInput,
    RelateInput,
    StatementPair,
    TurnText,
)
from mnemoledger.commands.llm.stage import Stage


class StageRunner(Protocol):
    """Runs one stage and records the call (`commands.write.recorded_llm.RecordedLLM`)."""

    def run(self, stage: Stage[Any, Any], inputs: BaseModel) -> Any: ...


class LLMJudge:
    """Asks the configured model; each batch of pairs or turns is one call."""

    def __init__(self, llm: StageRunner) -> None:
        self._llm = llm
        self._readings: dict[tuple[str, Role], tuple[bool, bool]] = {}
        self._stated: dict[str, list[StatedFact]] = {}

    def relations(self, pairs: Sequence[tuple[str, str]]) -> list[Relation]:
        if not pairs:
            return []
        output = self._llm.run(
            RELATE, RelateInput(pairs=[StatementPair(older=o, newer=n) for o, n in pairs])
        )
        chosen = {r.pair: r.relation for r in output.relations}
        return [
            Relation(*(1.0 if name == chosen.get(i, "unrelated") else 0.0 for name in RELATIONS))
            for i in range(len(pairs))
        ]

    def _read(self, turns: Sequence[Turn]) -> list[tuple[bool, bool]]:
        missing = list(
            dict.fromkeys((t.text, t.role) for t in turns if (t.text, t.role) not in self._readings)
        )
        if missing:
            output = self._llm.run(
                READ_TURNS,
                ReadTurnsInput(turns=[TurnText(role=role, text=text) for text, role in missing]),
            )
            read = {r.turn: (r.keep, r.instruction) for r in output.readings}
            for i, key in enumerate(missing):
                self._readings[key] = read.get(i, (True, False))
        return [self._readings[(t.text, t.role)] for t in turns]

    def worth_keeping(self, turns: Sequence[Turn]) -> list[float]:
        return [1.0 if keep else 0.0 for keep, _ in self._read(turns)]

    def instructions(self, turns: Sequence[Turn]) -> list[float]:
        return [1.0 if instruction else 0.0 for _, instruction in self._read(turns)]

    def facts(self, turns: Sequence[tuple[str, str]]) -> list[list[StatedFact]]:
        return self._facts([FactText(text=text, asked=asked) for text, asked in turns])

    def stated(self, texts: Sequence[str]) -> list[list[StatedFact]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._stated))
        read = self._facts([FactText(text=text) for text in missing])
        self._stated.update(zip(missing, read, strict=True))
        return [self._stated[t] for t in texts]

    def _facts(self, texts: list[FactText]) -> list[list[StatedFact]]:
        """One call for all `texts`; the model's confidence is its answer: 1."""
        if not texts:
            return []
        output = self._llm.run(READ_FACTS, ReadFactsInput(texts=texts))
        found: list[list[StatedFact]] = [[] for _ in texts]
        for fact in output.facts:
            if 0 <= fact.text < len(texts) and fact.value.strip():
                found[fact.text].append(
                    StatedFact(fact.attribute, fact.value.strip(), fact.positive, 1.0)
                )
        return found
