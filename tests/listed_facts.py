"""An extraction that reads exactly the facts a test lists for each user turn.

A test of the ingest's mechanics (namespaces, confidences, evidence, dedup, reinforcement,
the directive, retries) must not depend on how the fitted facts model reads one sentence:
`ListedFacts` answers the `extract` stage with the facts listed for the user turns of the
window it is asked about (as the model does, a turn still in view is read again), and hands
every other stage to the offline provider. How well the model reads is measured by
`scripts/eval_extraction.py`, not here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mnemoledger.commands.llm import OfflineProvider
from mnemoledger.commands.llm.schemas import ExtractInput, ExtractOutput, Fact
from mnemoledger.commands.llm.stage import InT, LLMCall, OutT, Stage

CATEGORIES = ("preferences", "entities", "decisions", "styles", "artifacts")


def preference(key: str, value: str) -> tuple[str, Fact]:
    fact = Fact(key=key, value=value, category="preference", tags=["preference"], explicit=True)
    return "preferences", fact


def entity(key: str, value: str, *, explicit: bool | None = True) -> tuple[str, Fact]:
    return "entities", Fact(key=key, value=value, category="entity", explicit=explicit)


def style(key: str, value: str, *, explicit: bool = True) -> tuple[str, Fact]:
    return "styles", Fact(key=key, value=value, category="style", explicit=explicit)


def decision(key: str, value: str) -> tuple[str, Fact]:
    return "decisions", Fact(key=key, value=value, category="decision", explicit=True)


def artifact(key: str, value: str) -> tuple[str, Fact]:
    return "artifacts", Fact(key=key, value=value, category="artifact", explicit=True)


class ListedFacts:
    """The `extract` stage answered from `facts` (a user turn's text -> what it states)."""

    name = "listed"
    model = "listed-1"

    def __init__(self, facts: Mapping[str, Sequence[tuple[str, Fact]]]) -> None:
        self.facts = facts
        self.inner = OfflineProvider()

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        if stage.name != "extract":
            return self.inner.complete(stage, inputs)
        assert isinstance(inputs, ExtractInput)
        found: dict[str, list[Fact]] = {name: [] for name in CATEGORIES}
        for turn in inputs.conversation:
            if turn.role == "user":
                for category, fact in self.facts.get(turn.content, ()):
                    found[category].append(fact)
        output: Any = ExtractOutput(**found)
        request = stage.chat_request(inputs, self.model)
        return LLMCall.of(
            stage, self.name, self.model, request, output.model_dump_json(), output, 0.0
        )
