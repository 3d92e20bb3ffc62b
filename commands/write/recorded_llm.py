"""LLM calls made on behalf of a command, each recorded as `LLMCallRecorded` on its stream."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from types import MappingProxyType
from typing import Any, TypeVar

from pydantic import BaseModel

from mnemoledger.commands.llm.stage import LLMCall, LLMProvider, Stage
from mnemoledger.ledger.command import Command
from mnemoledger.ledger.provenance import Provenance, acting_as

Out = TypeVar("Out", bound=BaseModel)


class RecordedLLM:
    """Runs stages through a provider and appends every call to the command's stream."""

    def __init__(self, provider: LLMProvider, command: Command, provenance: Provenance) -> None:
        self.provider = provider
        self.command = command
        self.provenance = provenance
        self.tokens = 0
        self.fell_back: set[str] = set()
        """The stages whose model answers failed validation twice: the offline rules decided."""

    def run(self, stage: Stage[Any, Out], inputs: BaseModel) -> Out:
        call = self.provider.complete(stage, inputs)
        with acting_as(replace(self.provenance, prompt_version=prompt_version(stage))):
            self._record(call)
        self.tokens += call.prompt_tokens + call.completion_tokens
        if call.fallback is not None:
            self.fell_back.add(call.stage)
        output: Out = call.output
        return output

    def _record(self, call: LLMCall[Any]) -> None:
        self.command.record_llm_call(
            stage=call.stage,
            prompt_id=call.prompt_id,
            version=call.prompt_version,
            provider=call.provider,
            model=call.model,
            request=call.request,
            response=call.response,
            prompt_tokens=call.prompt_tokens,
            completion_tokens=call.completion_tokens,
            latency_ms=round(call.latency_ms, 3),
            fallback=call.fallback,
        )


_REPLACED: ContextVar[Mapping[str, str]] = ContextVar(
    "replaced_prompts", default=MappingProxyType({})
)
"""The versions of the prompts a live replay replaced from files, by stage name."""


def prompt_version(stage: Stage[Any, Any]) -> str:
    """How decision events name the prompt that decided them: `prompt_id@version`, where a
    live replay that replaced the stage's prompt names the file's version."""
    return f"{stage.prompt_id}@{_REPLACED.get().get(stage.name, stage.version)}"


@contextmanager
def prompts_replaced(versions: Mapping[str, str]) -> Iterator[None]:
    """Decisions taken inside name these prompt versions (stage name -> version) for the
    stages they replace."""
    token = _REPLACED.set(MappingProxyType(dict(versions)))
    try:
        yield
    finally:
        _REPLACED.reset(token)
