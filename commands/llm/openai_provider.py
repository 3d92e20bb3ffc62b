"""Stages run on any OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM,
llama.cpp, ...), through the official client, with structured outputs.

Every call is bounded and recoverable: each request sends the stage's
`max_tokens`; one attempt waits at most `timeout` seconds; an answer that does not validate
is asked for once more with what was wrong, and if that answer fails too the offline rules
decide (the call records it, `LLMCall.fallback`); a server that refuses JSON-schema output
is asked for a JSON object, then for JSON by the prompt alone, and the mode that worked is
kept for the provider's later calls.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import openai
from openai.types.chat import ChatCompletion

from mnemoledger.commands.llm.errors import LLMError, StageOutputInvalid
from mnemoledger.commands.llm.offline import OfflineProvider
from mnemoledger.commands.llm.parsing import parse_answer
from mnemoledger.commands.llm.stage import (
    OUTPUT_MODES,
    InT,
    LLMCall,
    LLMProvider,
    OutputMode,
    OutT,
    Stage,
)
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import LLM_TIMEOUT_SECONDS, OPENAI_MAX_ATTEMPTS

TRANSIENT_STATUS_CODES: Final = frozenset({408, 409, 429})
"""Retried by the openai client, together with every 5xx; any other status fails at once."""


def is_transient(error: openai.OpenAIError) -> bool:
    """Connection errors, timeouts, 408/409/429 and 5xx: the errors the client retries."""
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code in TRANSIENT_STATUS_CODES or error.status_code >= 500
    return False


FORMAT_REFUSAL_STATUS_CODES: Final = frozenset({400, 422})
"""How servers refuse a `response_format` they do not support (with its name in the error)."""


def refuses_output_mode(error: openai.OpenAIError, mode: OutputMode) -> bool:
    """Whether `error` is the server refusing the way `mode` asks for JSON: a 400 (or 422)
    whose error names `response_format` or the mode."""
    if not isinstance(error, openai.APIStatusError):
        return False
    if error.status_code not in FORMAT_REFUSAL_STATUS_CODES or mode == "prompted":
        return False
    said = f"{error.message} {error.body!r}".lower()
    return any(name in said for name in ("response_format", "response format", mode))


def correction(error: str) -> str:
    """The user message that asks again after an answer that did not validate."""
    return (
        f"Your answer could not be used: {error}. Answer again with only the JSON object "
        "the instructions ask for, following its schema exactly."
    )


class OpenAIProvider:
    """`client.chat.completions.create` with the stage's JSON schema as `response_format`.

    A call is tried up to `max_attempts` times (OPENAI_MAX_ATTEMPTS, seed 004 §7) by the
    openai client's own retries, on transient errors only (`is_transient`), 0.5 s then 1 s,
    ... apart (capped at 8 s); 400/401/403 and every other refusal fail at once.

    `model` is the general model; `models` names a model per component (seed 001 §7:
    `gate`, `merge`, ...), which every stage of that component is sent with instead.

    Bounds: `timeout` seconds per attempt; each request's `max_tokens` is the
    stage's own (`Stage.max_answer_tokens`) unless `max_tokens` names another for the stage
    (or for every stage, `*`). An answer that does not validate is asked for once more,
    with the error; a second invalid answer leaves the decision to `fallback` (the offline
    rules). `output_mode` is how requests ask for JSON; it steps down (`OUTPUT_MODES`) when
    the server refuses it, once for the provider's life.
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = LLM_TIMEOUT_SECONDS,
        max_attempts: int = OPENAI_MAX_ATTEMPTS,
        models: Mapping[str, str] | None = None,
        max_tokens: Mapping[str, int] | None = None,
        fallback: LLMProvider | None = None,
    ) -> None:
        if not model:
            raise InvalidInput("the openai LLM provider needs a model name")
        if max_attempts < 1:
            raise InvalidInput("max_attempts must be at least 1")
        if timeout <= 0:
            raise InvalidInput("the LLM timeout must be more than 0 seconds")
        bounds = dict(max_tokens or {})
        if any(bound < 1 for bound in bounds.values()):
            raise InvalidInput(f"max_tokens must be at least 1: {bounds}")
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
        self.timeout = timeout
        self.max_tokens = bounds
        self.fallback: LLMProvider = fallback if fallback is not None else OfflineProvider()
        self.output_mode: OutputMode = "json_schema"
        """How requests ask for JSON; stepped down when the server refuses (kept after)."""
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

    def max_tokens_for(self, stage: Stage[Any, Any]) -> int:
        """The `max_tokens` `stage`'s requests send: the setting's for it, else the
        setting's for every stage (`*`), else the stage's own."""
        return self.max_tokens.get(stage.name, self.max_tokens.get("*", stage.max_answer_tokens))

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        """One call of `stage`, with its component's model; `latency_ms` covers every
        attempt and pause, the tokens every answer (a retried one's too)."""
        model = self.model_for(stage)
        started = time.perf_counter()
        answers = [self._ask(stage, inputs, model)]
        errors: list[str] = []
        output: OutT | None = None
        while output is None:
            answer = answers[-1]
            try:
                output = parse_answer(stage, inputs, answer.text)
            except StageOutputInvalid as invalid:
                errors.append(answer.error(invalid))
                if len(answers) == 2:  # asked twice: the fallback decides
                    return self._fall_back(stage, inputs, model, answers, errors, started)
                retry = dict(answer.request)
                retry["messages"] = [
                    *answer.request["messages"],
                    {"role": "assistant", "content": answer.text},
                    {"role": "user", "content": correction(errors[-1])},
                ]
                answers.append(self._answer(stage.name, model, retry))
        last = answers[-1]
        return LLMCall.of(
            stage,
            self.name,
            model,
            last.request,
            last.text,
            output,
            latency_ms=(time.perf_counter() - started) * 1000,
            prompt_tokens=_total(a.prompt_tokens for a in answers),
            completion_tokens=_total(a.completion_tokens for a in answers),
        )

    def _fall_back(
        self,
        stage: Stage[InT, OutT],
        inputs: InT,
        model: str,
        answers: list[_Answer],
        errors: list[str],
        started: float,
    ) -> LLMCall[OutT]:
        """The fallback's decision, recorded as this call: the last request sent, the
        fallback's output as the response, the model's answers and their errors beside."""
        try:
            decided = self.fallback.complete(stage, inputs)
        except LLMError as error:  # no fallback for this stage: the model's error stands
            raise StageOutputInvalid(stage.name, errors[-1], answers[-1].text) from error
        return LLMCall.of(
            stage,
            self.name,
            model,
            answers[-1].request,
            decided.response,
            decided.output,
            latency_ms=(time.perf_counter() - started) * 1000,
            prompt_tokens=_total(a.prompt_tokens for a in answers),
            completion_tokens=_total(a.completion_tokens for a in answers),
            fallback={
                "provider": decided.provider,
                "model": decided.model,
                "invalid": [
                    {"response": a.text, "error": e} for a, e in zip(answers, errors, strict=True)
                ],
            },
        )

    def _ask(self, stage: Stage[InT, OutT], inputs: InT, model: str) -> _Answer:
        """The first request of a call, in the provider's output mode; when the server
        refuses that mode, in the next one, which later calls then start from."""
        max_tokens = self.max_tokens_for(stage)
        mode = self.output_mode
        while True:
            request = stage.chat_request(inputs, model, mode=mode, max_tokens=max_tokens)
            try:
                return self._answer(stage.name, model, request, mode)
            except _ModeRefused:
                mode = OUTPUT_MODES[OUTPUT_MODES.index(mode) + 1]
                self.output_mode = mode

    def _answer(
        self,
        stage: str,
        model: str,
        request: dict[str, Any],
        mode: OutputMode | None = None,
    ) -> _Answer:
        """`request` sent and answered. `mode`: the output mode of a first request, whose
        refusal by the server raises `_ModeRefused` (None: any refusal is an `LLMError`)."""
        completion = self._create(stage, request, mode)
        text = self._answer_text(stage, model, completion)
        usage = completion.usage  # some local servers leave it out: estimate then
        return _Answer(
            request=request,
            text=text,
            cut=completion.choices[0].finish_reason == "length",
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )

    def _create(
        self, stage: str, request: dict[str, Any], mode: OutputMode | None = None
    ) -> ChatCompletion:
        model = str(request["model"])
        try:
            completion: ChatCompletion = self._client.chat.completions.create(**request)
        except openai.OpenAIError as error:
            if mode is not None and refuses_output_mode(error, mode):
                raise _ModeRefused(mode) from error
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


class _ModeRefused(Exception):
    """The server refused the output mode a request asked for JSON in."""


@dataclass(frozen=True)
class _Answer:
    """One request and the model's answer to it."""

    request: dict[str, Any]
    text: str
    cut: bool
    """The server stopped the answer at `max_tokens` (`finish_reason: length`)."""
    prompt_tokens: int | None
    completion_tokens: int | None

    def error(self, invalid: StageOutputInvalid) -> str:
        """What was wrong with the answer, as the model is told and the log records it."""
        if self.cut:
            return (
                f"the answer was cut off at its limit of {self.request.get('max_tokens')} "
                f"tokens before it was complete ({invalid.reason})"
            )
        return invalid.reason


def _total(counts: Iterable[int | None]) -> int | None:
    """The sum of token counts, or None (estimate) when the server gave none."""
    given = [count for count in counts if count is not None]
    return sum(given) if given else None


def _describe(error: openai.OpenAIError) -> str:
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {error.message}"
    return f"{type(error).__name__}: {error}"
