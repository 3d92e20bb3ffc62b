"""The offline provider: every stage answered by deterministic rules, with no network, so
the whole system works with no key and tests are reproducible."""

from __future__ import annotations

import time

from mnemoledger.commands.llm.errors import LLMError
from mnemoledger.commands.llm.rules import RULES
from mnemoledger.commands.llm.stage import InT, LLMCall, OutT, Stage


class OfflineProvider:
    """Runs the rule of each stage (`commands.llm.rules`) and records the call as if a model
    had answered: the same request an OpenAI-compatible server would get, the output's
    JSON as the response, tokens estimated from characters."""

    name = "offline"
    model = "rules-v1"

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        started = time.perf_counter()
        rule = RULES.get(stage.name)
        if rule is None:
            raise LLMError(f"the offline provider has no rules for stage {stage.name!r}")
        request = stage.chat_request(inputs, self.model)
        output = rule(inputs)
        if not isinstance(output, stage.output_model):
            raise LLMError(
                f"offline rule of stage {stage.name!r} returned {type(output).__name__}, "
                f"not {stage.output_model.__name__}"
            )
        response = output.model_dump_json()
        return LLMCall.of(
            stage,
            self.name,
            self.model,
            request,
            response,
            output,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
