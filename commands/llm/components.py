"""Which model each LLM call site asks for (seed 001 §7, `AiConfig::model_for`).

    component_models(settings)      # {"gate": "gpt-4o", "merge": "gpt-4o-mini", ...}
    model_for(settings, "audit")    # audit_model, else gate_model, else llm_model

A stage belongs to the component `ledger.policy.LLM_STAGE_COMPONENT` names (triage, gate
and distill to `gate`, merge and reconcile to `merge`, ...); the `openai` provider sends
each stage's request with its component's model, and every other stage with `llm_model`.
"""

from __future__ import annotations

from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import LLM_COMPONENT_FALLBACK, LLM_COMPONENTS, LLM_STAGE_COMPONENT
from mnemoledger.ledger.settings import Settings


def component_of(stage: str) -> str | None:
    """The component (model tier) a stage belongs to; None: the general model."""
    return LLM_STAGE_COMPONENT.get(stage)


def own_model(settings: Settings, component: str) -> str | None:
    """The model the settings name for `component` itself (`<component>_model`)."""
    if component not in LLM_COMPONENTS:
        raise InvalidInput(
            f"unknown LLM component {component!r}: choose one of {', '.join(LLM_COMPONENTS)}"
        )
    value = getattr(settings, f"{component}_model", None)
    return value if isinstance(value, str) and value else None


def model_for(settings: Settings, component: str | None) -> str | None:
    """The component's model, else its fallback component's (audit -> gate), else the
    general `llm_model` (None when that is unset too)."""
    if component is not None:
        seen = component
        while True:
            found = own_model(settings, seen)
            if found is not None:
                return found
            fallback = LLM_COMPONENT_FALLBACK.get(seen)
            if fallback is None:
                break
            seen = fallback
    return settings.llm_model or None


def component_models(settings: Settings) -> dict[str, str]:
    """Every component whose resolved model differs from the general one, with it."""
    general = settings.llm_model
    resolved = {c: model_for(settings, c) for c in LLM_COMPONENTS}
    return {c: m for c, m in resolved.items() if m is not None and m != general}
