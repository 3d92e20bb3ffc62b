"""The judge's facts reading with an LLM provider: the `read_facts` stage (`LLMJudge.facts`
for the turns of a conversation, `stated` for texts read on their own), one call for all
texts; offline, the stage is answered by the fine-tuned facts model."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.judge.facts import StatedFact
from mnemoledger.commands.judge.llm import LLMJudge
from mnemoledger.commands.llm import OfflineProvider
from mnemoledger.commands.llm.judge_prompts import (
    READ_FACTS,
    FactText,
    ReadFactsInput,
    ReadFactsOutput,
    TextFact,
    check_read_facts,
)
from mnemoledger.commands.llm.stage import Stage


class Scripted:
    """Runs a stage by answering `output`, and keeps what it was asked."""

    def __init__(self, output: ReadFactsOutput) -> None:
        self.output = output
        self.asked: list[tuple[str, BaseModel]] = []

    def run(self, stage: Stage[Any, Any], inputs: BaseModel) -> Any:
        self.asked.append((stage.name, inputs))
        return self.output


def test_the_llm_judge_reads_all_texts_in_one_call() -> None:
    runner = Scripted(
        ReadFactsOutput(
            facts=[
                TextFact(text=0, attribute="location", value="Nairobi", positive=True),
                TextFact(text=2, attribute="language", value="German", positive=False),
                TextFact(text=7, attribute="name", value="Nobody", positive=True),  # no text 7
            ]
        )
    )
    judge = LLMJudge(runner)
    texts = ["I relocated to Nairobi.", "My sister lives in Rome.", "I don't speak German."]
    assert judge.stated(texts) == [
        [StatedFact("location", "Nairobi", True, 1.0)],
        [],
        [StatedFact("language", "German", False, 1.0)],
    ]
    assert judge.stated(texts[:1]) == [[StatedFact("location", "Nairobi", True, 1.0)]]
    assert [name for name, _ in runner.asked] == ["read_facts"], "read once, then remembered"
    assert runner.asked[0][1] == ReadFactsInput(texts=[FactText(text=t) for t in texts])

    judge.facts([("glasgow, for now", "Where are you based?")])
    assert runner.asked[-1][1] == ReadFactsInput(
        texts=[FactText(text="glasgow, for now", asked="Where are you based?")]
    )
    assert judge.stated([]) == [] and judge.facts([]) == []


def test_an_answer_about_a_text_not_asked_is_a_problem() -> None:
    inputs = ReadFactsInput(texts=[FactText(text="I live in Porto")])
    wrong = ReadFactsOutput(
        facts=[
            TextFact(text=1, attribute="location", value="Porto", positive=True),
            TextFact(text=0, attribute="location", value=" ", positive=True),
        ]
    )
    assert READ_FACTS.problems(inputs, wrong) == check_read_facts(inputs, wrong)
    assert len(check_read_facts(inputs, wrong)) == 2


def test_offline_the_stage_is_answered_by_the_facts_model() -> None:
    call = OfflineProvider().complete(
        READ_FACTS, ReadFactsInput(texts=[FactText(text="I live in Porto and speak Portuguese.")])
    )
    read = {(f.attribute, f.value) for f in call.output.facts}
    assert read == {("location", "Porto"), ("language", "Portuguese")}
