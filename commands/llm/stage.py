"""A stage (one versioned prompt with typed input and output), one recorded call of it,
and the protocol every provider implements."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

from mnemoledger.commands.llm.errors import LLMError, StageOutputInvalid
from mnemoledger.commands.llm.tokens import estimate_prompt_tokens, estimate_tokens
from mnemoledger.ledger.policy import (
    LLM_DEFAULT_MAX_TOKENS,
    LLM_STAGE_COMPONENT,
    LLM_STAGE_MAX_TOKENS,
)

__all__ = [
    "OUTPUT_MODES",
    "InT",
    "LLMCall",
    "LLMError",
    "LLMProvider",
    "OutT",
    "OutputMode",
    "Stage",
    "StageOutputInvalid",
]

InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT", bound=BaseModel)

OutputMode = Literal["json_schema", "json_object", "prompted"]
"""How a request asks for JSON: the output schema as `response_format` (`json_schema`), any
JSON object as `response_format` with the schema in the prompt (`json_object`), or the
schema in the prompt and no `response_format` (`prompted`)."""
OUTPUT_MODES: Final[tuple[OutputMode, ...]] = ("json_schema", "json_object", "prompted")
"""Best first: a server that refuses one mode is asked in the next."""


@dataclass(frozen=True)
class Stage(Generic[InT, OutT]):
    """One LLM stage: its prompt (id + version), system text, models and user message.

    `renderer` turns the inputs into the user message of boundary-tagged blocks; it is part
    of the prompt, so changing it means a new `version`.
    """

    name: str
    prompt_id: str
    version: str
    system: str
    input_model: type[InT]
    output_model: type[OutT]
    renderer: Callable[[InT], str]
    max_tokens: int | None = None
    """A bound on the answer's tokens, sent with the request; None: the stage's entry in
    `ledger.policy.LLM_STAGE_MAX_TOKENS` (`max_answer_tokens`)."""
    check: Callable[[InT, OutT], list[str]] | None = None
    """What is wrong with an answer that fits the schema, read against the inputs (an id
    the inputs do not have, a new content left out); a problem makes the answer invalid,
    like a schema error (asked once more, then the offline rules decide)."""

    def problems(self, inputs: InT, output: OutT) -> list[str]:
        """What `check` finds wrong with `output` for `inputs` (nothing without a check)."""
        return [] if self.check is None else self.check(inputs, output)

    @property
    def max_answer_tokens(self) -> int:
        """The `max_tokens` every request of this stage sends, unless a provider's setting
        gives it another (`MNEMOLEDGER_LLM_MAX_TOKENS`)."""
        if self.max_tokens is not None:
            return self.max_tokens
        return LLM_STAGE_MAX_TOKENS.get(self.name, LLM_DEFAULT_MAX_TOKENS)

    def render(self, inputs: InT) -> str:
        """The user message for these inputs."""
        if not isinstance(inputs, self.input_model):
            raise TypeError(
                f"stage {self.name!r} takes {self.input_model.__name__}, "
                f"not {type(inputs).__name__}"
            )
        return self.renderer(inputs)

    @property
    def component(self) -> str | None:
        """Seed 001 §7: the model tier this stage asks for (`gate`, `merge`, ...); None:
        the general model."""
        return LLM_STAGE_COMPONENT.get(self.name)

    def messages(self, inputs: InT, mode: OutputMode = "json_schema") -> list[dict[str, str]]:
        """The chat messages of one call: the system prompt (followed by the output schema
        unless `response_format` carries it), then the rendered inputs."""
        system = self.system
        if mode != "json_schema":
            system = f"{system.rstrip()}\n\n{self.schema_instruction()}"
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": self.render(inputs)},
        ]

    def schema_instruction(self) -> str:
        """The output schema, stated in the prompt for servers that cannot take it as
        `response_format`."""
        schema = json.dumps(_json_schema(self.output_model), ensure_ascii=False)
        return (
            "Answer with one JSON object and nothing else: no prose, no code fence. It must "
            f'follow the JSON schema "{self.name}":\n{schema}'
        )

    def response_format(self) -> dict[str, Any]:
        """Structured-output request: the output model's JSON schema (not strict, so that
        servers with partial JSON-schema support accept it; the answer is validated here)."""
        return {
            "type": "json_schema",
            "json_schema": {
                "name": self.name,
                "schema": copy.deepcopy(_json_schema(self.output_model)),
                "strict": False,
            },
        }

    def chat_request(
        self,
        inputs: InT,
        model: str,
        *,
        mode: OutputMode = "json_schema",
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The exact body of a chat-completions request for these inputs; `max_tokens`
        None: the stage's own bound (`max_answer_tokens`)."""
        request: dict[str, Any] = {"model": model, "messages": self.messages(inputs, mode)}
        if mode == "json_schema":
            request["response_format"] = self.response_format()
        elif mode == "json_object":
            request["response_format"] = {"type": "json_object"}
        request["temperature"] = 0
        request["max_tokens"] = self.max_answer_tokens if max_tokens is None else max_tokens
        return request


@cache
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema, built once per model (pydantic rebuilds it on every call)."""
    return model.model_json_schema()


@dataclass(frozen=True)
class LLMCall(Generic[OutT]):
    """One completed call of a stage, with everything needed to record and replay it."""

    stage: str
    prompt_id: str
    prompt_version: str
    provider: str
    model: str
    request: dict[str, Any]
    """The exact request sent: model, messages, response_format, temperature, max_tokens.
    After an answer that did not validate, the request asking again (the answer and what
    was wrong with it added to the messages)."""
    response: str
    """The raw text the model returned; when `fallback` is set, the JSON of the output the
    fallback decided."""
    output: OutT
    """The response, parsed and validated by the stage's output model."""
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    fallback: dict[str, Any] | None = None
    """None: the model's answer decided. Else the model's answers failed validation twice
    and another provider decided: `{"provider": "offline", "model": "rules-v1",
    "invalid": [{"response": ..., "error": ...}, ...]}`."""

    @classmethod
    def of(
        cls,
        stage: Stage[Any, OutT],
        provider: str,
        model: str,
        request: dict[str, Any],
        response: str,
        output: OutT,
        latency_ms: float,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        fallback: dict[str, Any] | None = None,
    ) -> LLMCall[OutT]:
        """A call of `stage`; token counts are estimated where the provider gave none."""
        return cls(
            stage=stage.name,
            prompt_id=stage.prompt_id,
            prompt_version=stage.version,
            provider=provider,
            model=model,
            request=request,
            response=response,
            output=output,
            prompt_tokens=(
                prompt_tokens
                if prompt_tokens is not None
                else estimate_prompt_tokens(request["messages"])
            ),
            completion_tokens=(
                completion_tokens if completion_tokens is not None else estimate_tokens(response)
            ),
            latency_ms=latency_ms,
            fallback=fallback,
        )


class LLMProvider(Protocol):
    """Runs stages. Implementations: `OpenAIProvider`, `OfflineProvider`, `ScriptedProvider`."""

    name: str
    model: str

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        """Run `stage` on `inputs`; raise `LLMError` (or `StageOutputInvalid`) on failure."""
        ...
