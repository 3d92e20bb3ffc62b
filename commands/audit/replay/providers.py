"""The LLM providers of a replay.

`RecordedAnswers` answers each call of a re-run command with the call the original run
recorded at the same place (the command, the call's order, its stage). `PromptedProvider`
runs the stages live, with prompts replaced from files; the offline provider honours a
replaced prompt through `offline:` directives in the file (see `PromptOverride`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from mnemoledger.commands.llm import OfflineProvider
from mnemoledger.commands.llm.errors import LLMError
from mnemoledger.commands.llm.parsing import parse_stage_output
from mnemoledger.commands.llm.rules import RULES
from mnemoledger.commands.llm.rules.core import section_of
from mnemoledger.commands.llm.schemas import CoreUpdateInput
from mnemoledger.commands.llm.stage import InT, LLMCall, LLMProvider, OutT, Stage
from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.errors import InvalidInput


class ReplayDiverged(LLMError):
    """A re-run asked for a call the original run did not make."""


@dataclass
class RecordedAnswers:
    """Answers from the recorded `LLMCallRecorded` events of the command being re-run."""

    name: str = "replay"
    model: str = "recorded"
    calls: list[EventRecord] = field(default_factory=list)
    diverged: int = 0
    """Calls whose stage or request differed from the recorded one (answered anyway when
    the stage matches)."""
    fallback: LLMProvider | None = None
    """Answers calls the record does not have (none: such a call fails the command)."""

    def start(self, calls: list[EventRecord]) -> None:
        """Answer the next command's calls from `calls`, in order."""
        self.calls = list(calls)

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        recorded = self.calls.pop(0) if self.calls else None
        if recorded is None or recorded.data.get("stage") != stage.name:
            self.diverged += 1
            if self.fallback is None:
                raise ReplayDiverged(f"the original run made no {stage.name!r} call here")
            return self.fallback.complete(stage, inputs)
        data = recorded.data
        request = dict(data.get("request") or {})
        if _first_ask(request) != _asked(stage.chat_request(inputs, str(data.get("model", "")))):
            self.diverged += 1
        response = str(data.get("response", ""))
        return LLMCall(
            stage=stage.name,
            prompt_id=str(data.get("prompt_id", stage.prompt_id)),
            prompt_version=str(data.get("version", stage.version)),
            provider=str(data.get("provider", "")),
            model=str(data.get("model", "")),
            request=request,
            response=response,
            output=parse_stage_output(stage, response),
            prompt_tokens=int(data.get("prompt_tokens") or 0),
            completion_tokens=int(data.get("completion_tokens") or 0),
            latency_ms=float(data.get("latency_ms") or 0.0),
            fallback=data.get("fallback"),  # the response is then the fallback's output
        )


ANSWER_BOUNDS = frozenset({"max_tokens", "max_completion_tokens"})
"""Request fields that bound an answer's length, not what is asked: a log recorded before
every stage sent `max_tokens`, or with other bounds, still replays its calls as asked."""


def _asked(request: Mapping[str, Any]) -> dict[str, Any]:
    """What a request asks: itself without the bounds of its answer."""
    return {key: value for key, value in request.items() if key not in ANSWER_BOUNDS}


RETRY_MESSAGES = 2
"""What asking again adds to a request: the answer that did not validate, and what was wrong."""


def _first_ask(request: Mapping[str, Any]) -> dict[str, Any]:
    """What a recorded request asked at first: a call asked again (`fallback` or not)
    recorded its second request, the first one's messages followed by the invalid answer
    and the correction."""
    asked = _asked(request)
    messages = list(asked.get("messages") or [])
    tail = messages[-RETRY_MESSAGES:]
    if len(messages) > RETRY_MESSAGES and [m.get("role") for m in tail] == ["assistant", "user"]:
        asked["messages"] = messages[:-RETRY_MESSAGES]
    return asked


DIRECTIVE = re.compile(r"^\s*offline:\s*(?P<name>[\w.]+)\s*(?P<value>.*?)\s*$", re.MULTILINE)
"""`offline: core_update.sections USER, SOUL` / `offline: core_update.exclude REGEX`."""


@dataclass(frozen=True)
class PromptOverride:
    """A stage's prompt replaced by a file's text.

    The whole file is the new system prompt (a model reads it as it is). The offline
    provider cannot read prose, so a file may also state its rule as directives, one a
    line, which the offline rules then honour:

        offline: core_update.sections USER, SOUL   # only these core.md sections admit
        offline: core_update.exclude \\b(editor|vim|uses)\\b   # candidates never admitted
    """

    stage: str
    system: str
    directives: Mapping[str, str]

    @classmethod
    def load(cls, stage: str, path: str | Path) -> PromptOverride:
        if stage not in RULES:
            raise InvalidInput(f"unknown stage {stage!r}; choose from {', '.join(sorted(RULES))}")
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise InvalidInput(f"cannot read prompt file {path}: {error}") from None
        directives = {m["name"]: m["value"] for m in DIRECTIVE.finditer(text)}
        for name, value in directives.items():
            if name not in OFFLINE_DIRECTIVES.get(stage, ()):
                raise InvalidInput(f"{path}: unknown offline directive {name!r} for {stage}")
            if name.endswith(".exclude"):
                try:
                    re.compile(value)
                except re.error as error:
                    raise InvalidInput(f"{path}: bad pattern in {name}: {error}") from None
        return cls(stage, text, directives)

    @property
    def version(self) -> str:
        return "file-" + hashlib.sha256(self.system.encode()).hexdigest()[:10]

    def applied_to(self, stage: Stage[InT, OutT]) -> Stage[InT, OutT]:
        return replace(stage, system=self.system, version=self.version)

    def offline_inputs(self, inputs: InT) -> InT:
        """The inputs the offline rule sees under this prompt's directives."""
        if not isinstance(inputs, CoreUpdateInput):
            return inputs
        sections = self.directives.get("core_update.sections")
        allowed = {s.strip().upper() for s in sections.split(",")} if sections else None
        exclude = self.directives.get("core_update.exclude")
        pattern = re.compile(exclude, re.IGNORECASE) if exclude else None
        kept = [
            c
            for c in inputs.candidate_new_memories
            if (allowed is None or section_of(c) in allowed)
            and (pattern is None or not pattern.search(c))
        ]
        return cast(InT, inputs.model_copy(update={"candidate_new_memories": kept}))


OFFLINE_DIRECTIVES: Mapping[str, tuple[str, ...]] = {
    "core_update": ("core_update.sections", "core_update.exclude"),
}
"""The directives the offline rules honour, by stage."""


class PromptedProvider:
    """Runs stages through `inner`, with some prompts replaced (and a model chosen)."""

    def __init__(self, inner: LLMProvider, overrides: Mapping[str, PromptOverride]) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.overrides = dict(overrides)

    def complete(self, stage: Stage[InT, OutT], inputs: InT) -> LLMCall[OutT]:
        override = self.overrides.get(stage.name)
        if override is None:
            return self.inner.complete(stage, inputs)
        changed = override.applied_to(stage)
        if not isinstance(self.inner, OfflineProvider) or not override.directives:
            return self.inner.complete(changed, inputs)
        call = self.inner.complete(changed, override.offline_inputs(inputs))
        # the request is the one the stage was asked, not the rule's filtered view
        return replace(call, request=changed.chat_request(inputs, self.model))
