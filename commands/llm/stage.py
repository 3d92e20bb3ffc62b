"""A stage (one versioned prompt with typed input and output), one recorded call of it,
and the protocol every provider implements."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from mnemoledger.commands.llm.errors import LLMError, StageOutputInvalid
from mnemoledger.commands.llm.tokens import estimate_prompt_tokens, estimate_tokens
from mnemoledger.ledger.policy import LLM_STAGE_COMPONENT

__all__ = [
    "InT",
    "LLMCall",
    "LLMError",
    "LLMProvider",
    "OutT",
    "Stage",
    "StageOutputInvalid",
]

InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT", bound=BaseModel)


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
    """A bound on the answer's tokens, sent with the request; None: the server's default."""

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

    def messages(self, inputs: InT) -> list[dict[str, str]]:
        """The chat messages of one call: the system prompt, then the rendered inputs."""
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.render(inputs)},
        ]

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

    def chat_request(self, inputs: InT, model: str) -> dict[str, Any]:
        """The exact body of a chat-completions request for these inputs."""
        request: dict[str, Any] = {
            "model": model,
            "messages": self.messages(inputs),
            "response_format": self.response_format(),
            "temperature": 0,
        }
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
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
    """The exact request sent: model, messages, response_format, temperature."""
    response: str
    """The raw text the model returned."""
    output: OutT
    """The response, parsed and validated by the stage's output model."""
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float

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
        )


class LLMProvider(Protocol):
    """Runs stages. Implementations: `OpenAIProvider`, `OfflineProvider`, `ScriptedProvider`."""

    name: str
    model: str

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        """Run `stage` on `inputs`; raise `LLMError` (or `StageOutputInvalid`) on failure."""
        ...
