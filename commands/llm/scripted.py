"""A provider for tests: scripted answers for chosen stages, the wrapped provider for the rest."""

from __future__ import annotations

from collections import deque
from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.llm.parsing import parse_stage_output
from mnemoledger.commands.llm.stage import InT, LLMCall, LLMProvider, OutT, Stage

Outcome = BaseModel | str | Exception
"""An output to return, a raw model answer to parse (may be invalid), or an error to raise."""


class ScriptedProvider:
    """Each call of a scripted stage takes its next outcome; once they are used up, and for
    every other stage, the wrapped provider answers. `calls` keeps every completed call."""

    name = "scripted"

    def __init__(self, inner: LLMProvider) -> None:
        self.inner = inner
        self.model = inner.model
        self.calls: list[LLMCall[Any]] = []
        self._outcomes: dict[str, deque[Outcome]] = {}

    def script(self, stage: str, *outcomes: Outcome) -> None:
        """Queue outcomes for the next calls of the stage named `stage`."""
        self._outcomes.setdefault(stage, deque()).extend(outcomes)

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        queued = self._outcomes.get(stage.name)
        call = self._scripted(stage, inputs, queued.popleft()) if queued else None
        if call is None:
            call = self.inner.complete(stage, inputs)
        self.calls.append(call)
        return call

    def _scripted(self, stage: Stage[InT, OutT], inputs: InT, outcome: Outcome) -> LLMCall[OutT]:
        if isinstance(outcome, Exception):
            raise outcome
        if isinstance(outcome, str):
            response, output = outcome, parse_stage_output(stage, outcome)
        elif isinstance(outcome, stage.output_model):
            response, output = outcome.model_dump_json(), outcome
        else:
            raise TypeError(f"stage {stage.name!r} outputs {stage.output_model.__name__}")
        request = stage.chat_request(inputs, self.model)
        return LLMCall.of(stage, self.name, self.model, request, response, output, 0.0)
