"""Stages run on any OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM,
llama.cpp, ...), through the official client, with structured outputs."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any, Final

import openai
from openai.types.chat import ChatCompletion

from mnemoledger.commands.llm.errors import LLMError
from mnemoledger.commands.llm.parsing import parse_stage_output
from mnemoledger.commands.llm.stage import InT, LLMCall, OutT, Stage
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import OPENAI_MAX_ATTEMPTS

TRANSIENT_STATUS_CODES: Final = frozenset({408, 409, 429})
"""Retried by the openai client, together with every 5xx; any other status fails at once."""


def is_transient(error: openai.OpenAIError) -> bool:
    """Connection errors, timeouts, 408/409/429 and 5xx: the errors the client retries."""
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code in TRANSIENT_STATUS_CODES or error.status_code >= 500
    return False


class OpenAIProvider:
    """`client.chat.completions.create` with the stage's JSON schema as `response_format`.

    A call is tried up to `max_attempts` times (OPENAI_MAX_ATTEMPTS, seed 004 §7) by the
    openai client's own retries, on transient errors only (`is_transient`), 0.5 s then 1 s,
    ... apart (capped at 8 s); 400/401/403 and every other refusal fail at once.

    `model` is the general model; `models` names a model per component (seed 001 §7:
    `gate`, `merge`, ...), which every stage of that component is sent with instead.
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_attempts: int = OPENAI_MAX_ATTEMPTS,
        models: Mapping[str, str] | None = None,
    ) -> None:
        if not model:
            raise InvalidInput("the openai LLM provider needs a model name")
        if max_attempts < 1:
            raise InvalidInput("max_attempts must be at least 1")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if key is None and base_url is None:
            raise InvalidInput(
                "the openai LLM provider needs an API key: set MNEMOLEDGER_OPENAI_API_KEY "
                "(or MNEMOLEDGER_OPENAI_BASE_URL for a local server)"
            )
        self.model = model
        self.models = dict(models or {})
        self.base_url = base_url
        self.max_attempts = max_attempts
        # Local servers take any key, but the client refuses to start without one.
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=key or "unused",
            timeout=timeout,
            max_retries=max_attempts - 1,
        )

    def model_for(self, stage: Stage[Any, Any]) -> str:
        """The model `stage` is sent with: its component's, else the general one."""
        component = stage.component
        return self.models.get(component, self.model) if component else self.model

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        """One call of `stage`, with its component's model; `latency_ms` covers every
        attempt and pause."""
        model = self.model_for(stage)
        request = stage.chat_request(inputs, model)
        started = time.perf_counter()
        completion = self._create(stage.name, request)
        latency_ms = (time.perf_counter() - started) * 1000
        text = self._answer_text(stage.name, model, completion)
        output = parse_stage_output(stage, text)
        usage = completion.usage  # some local servers leave it out: estimate then
        return LLMCall.of(
            stage,
            self.name,
            model,
            request,
            text,
            output,
            latency_ms=latency_ms,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )

    def _create(self, stage: str, request: dict[str, Any]) -> ChatCompletion:
        model = str(request["model"])
        try:
            completion: ChatCompletion = self._client.chat.completions.create(**request)
        except openai.OpenAIError as error:
            if not is_transient(error):
                raise LLMError(self._refusal_message(stage, model, error)) from error
            raise LLMError(
                f"{self._where(stage, model)}: gave up after {self.max_attempts} attempts: "
                f"{_describe(error)}"
            ) from error
        return completion

    def _answer_text(self, stage: str, model: str, completion: ChatCompletion) -> str:
        if not completion.choices:
            raise LLMError(f"{self._where(stage, model)}: the server returned no choices")
        message = completion.choices[0].message
        if message.content is None and message.refusal:
            raise LLMError(f"{self._where(stage, model)}: the model refused: {message.refusal}")
        return message.content or ""

    def _where(self, stage: str, model: str) -> str:
        server = self.base_url or "api.openai.com"
        return f"stage {stage!r} on {self.name}:{model} at {server}"

    def _refusal_message(self, stage: str, model: str, error: openai.OpenAIError) -> str:
        hint = ""
        if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
            hint = " (check MNEMOLEDGER_OPENAI_API_KEY)"
        elif isinstance(error, openai.NotFoundError):
            hint = (
                " (check MNEMOLEDGER_LLM_MODEL, the stage's component model and "
                "MNEMOLEDGER_OPENAI_BASE_URL)"
            )
        return f"{self._where(stage, model)}: request refused: {_describe(error)}{hint}"


def _describe(error: openai.OpenAIError) -> str:
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {error.message}"
    return f"{type(error).__name__}: {error}"
