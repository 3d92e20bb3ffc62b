"""LLM stages and providers: versioned prompts with typed inputs and outputs, run by the
`openai` provider (any OpenAI-compatible server) or the `offline` one (deterministic rules).

Only commands decide, so this lives in `commands/`.
"""

from __future__ import annotations

from mnemoledger.commands.llm.components import component_models
from mnemoledger.commands.llm.errors import LLMError, StageOutputInvalid
from mnemoledger.commands.llm.offline import OfflineProvider
from mnemoledger.commands.llm.prompts import STAGES
from mnemoledger.commands.llm.scripted import ScriptedProvider
from mnemoledger.commands.llm.stage import LLMCall, LLMProvider, Stage
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import LLM_TIMEOUT_SECONDS
from mnemoledger.ledger.settings import Settings

PROVIDER_NAMES = ("offline", "openai")


def make_provider(settings: Settings) -> LLMProvider:
    """The provider the settings name (`llm_provider`, default `offline`); the `openai`
    one sends each stage with its component's model (seed 001 §7, `components`), waits
    `llm_timeout` seconds per attempt and bounds answers by `llm_max_tokens`."""
    name = getattr(settings, "llm_provider", "offline")
    if name == "offline":
        return OfflineProvider()
    if name == "openai":
        model = getattr(settings, "llm_model", None)
        if not model:
            raise InvalidInput(
                "the openai LLM provider needs a model: set MNEMOLEDGER_LLM_MODEL "
                "(e.g. gpt-4o-mini, or the name a local server gives its model)"
            )
        # Imported here: the offline default should not pay for loading the client.
        from mnemoledger.commands.llm.openai_provider import OpenAIProvider

        bounds = dict(getattr(settings, "llm_max_tokens", {}))
        unknown = sorted(set(bounds) - set(STAGES) - {"*"})
        if unknown:
            raise InvalidInput(
                f"MNEMOLEDGER_LLM_MAX_TOKENS names no stage: {', '.join(unknown)}; choose "
                f"from {', '.join(sorted(STAGES))} or * (every stage)"
            )
        return OpenAIProvider(
            model,
            base_url=getattr(settings, "openai_base_url", None),
            api_key=getattr(settings, "openai_api_key", None),
            timeout=getattr(settings, "llm_timeout", LLM_TIMEOUT_SECONDS),
            models=component_models(settings),
            max_tokens=bounds,
        )
    raise InvalidInput(f"unknown LLM provider {name!r}: choose one of {', '.join(PROVIDER_NAMES)}")


__all__ = [
    "STAGES",
    "LLMCall",
    "LLMError",
    "LLMProvider",
    "OfflineProvider",
    "ScriptedProvider",
    "Stage",
    "StageOutputInvalid",
    "make_provider",
]
