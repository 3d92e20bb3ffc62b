"""A model per LLM component (seed 001 §7, `AiConfig::model_for`): each component's own
model, `audit` falling back to `gate`, everything to the general `llm_model`; the `openai`
provider sends each stage with its component's model (against a local fake server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm import make_provider
from mnemoledger.commands.llm.components import component_models, component_of, model_for
from mnemoledger.commands.llm.consolidation_prompts import AUDIT, GATE, MERGE, TRIAGE
from mnemoledger.commands.llm.consolidation_schemas import (
    AuditInput,
    CandidateMemory,
    GateInput,
    PairInput,
    TriageInput,
)
from mnemoledger.commands.llm.openai_provider import OpenAIProvider
from mnemoledger.commands.llm.prompts import RECONSTRUCT
from mnemoledger.commands.llm.schemas import ReconstructInput
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import LLM_COMPONENTS
from tests.fake_openai import fake_openai_server
from tests.test_consolidation_helpers import USER, Clock, clock, events, remember

__all__ = ["clock"]


def test_each_component_falls_back_to_the_general_model() -> None:
    general = Settings(llm_model="general")
    assert {c: model_for(general, c) for c in LLM_COMPONENTS} == dict.fromkeys(
        LLM_COMPONENTS, "general"
    )
    assert model_for(general, None) == "general" and component_models(general) == {}
    assert model_for(Settings(), "gate") is None  # nothing set at all

    tiered = Settings(llm_model="general", gate_model="g", merge_model="m", naming_model="n")
    assert model_for(tiered, "gate") == "g"
    assert model_for(tiered, "audit") == "g"  # audit -> gate
    assert model_for(tiered, "merge") == "m" and model_for(tiered, "naming") == "n"
    assert model_for(tiered, "extract") == "general"
    assert component_models(tiered) == {"gate": "g", "audit": "g", "merge": "m", "naming": "n"}
    assert model_for(tiered.model_copy(update={"audit_model": "a"}), "audit") == "a"
    with pytest.raises(InvalidInput):
        model_for(tiered, "poetry")


def test_component_models_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOLEDGER_LLM_MODEL", "general")
    for component in LLM_COMPONENTS:
        monkeypatch.setenv(f"MNEMOLEDGER_{component.upper()}_MODEL", f"{component}-model")
    settings = Settings()
    assert {c: model_for(settings, c) for c in LLM_COMPONENTS} == {
        c: f"{c}-model" for c in LLM_COMPONENTS
    }


def test_stages_belong_to_the_seed_tiers() -> None:
    assert [component_of(s) for s in ("triage", "gate", "distill")] == ["gate"] * 3
    assert [component_of(s) for s in ("merge", "reconcile", "insert_merge")] == ["merge"] * 3
    assert component_of("audit") == "audit" and component_of("extract") == "extract"
    assert component_of("name_topics") == "naming"
    assert TRIAGE.component == "gate" and RECONSTRUCT.component is None


def candidate(memory_id: str, content: str) -> CandidateMemory:
    return CandidateMemory(id=memory_id, content=content, kind="semantic", importance=0.7)


def test_the_openai_provider_sends_each_stage_with_its_component_model() -> None:
    with fake_openai_server() as fake:
        settings = Settings(
            llm_provider="openai",
            llm_model="general",
            gate_model="gate-model",
            merge_model="merge-model",
            openai_base_url=fake.url,
            openai_api_key="test-key",
        )
        provider = make_provider(settings)
        assert isinstance(provider, OpenAIProvider)
        fake.answer("triage", {"decisions": [{"id": "a", "decision": "keep"}]})
        fake.answer("gate", {"decisions": [{"id": "a", "decision": "reject"}]})
        fake.answer("merge", {"content": "Maya drinks tea."})
        fake.answer("audit", {"operations": []})
        fake.answer("reconstruct", {"memories": [], "coverage": []})
        a = candidate("a", "Maya drinks tea")
        calls = [
            provider.complete(TRIAGE, TriageInput(namespace="default", memories=[a])),
            provider.complete(GATE, GateInput(candidates=[a])),
            provider.complete(MERGE, PairInput(older=a, newer=a, similarity=0.9)),
            provider.complete(AUDIT, AuditInput(memories=[])),
            provider.complete(RECONSTRUCT, ReconstructInput(related=[], new_contents=[])),
        ]
        expected = ["gate-model", "gate-model", "merge-model", "gate-model", "general"]
        assert [r["model"] for r in fake.chat_requests] == expected
        assert [c.model for c in calls] == expected
        assert [c.request for c in calls] == fake.chat_requests


def test_a_cycle_records_the_gate_model_for_triage(home: Path, clock: Clock) -> None:
    with fake_openai_server() as fake:
        settings = Settings(
            home=home,
            embedder="hashing",
            llm_provider="openai",
            llm_model="general",
            gate_model="gate-model",
            openai_base_url=fake.url,
            openai_api_key="test-key",
        )
        with MnemoLedger(settings=settings, actor="tester") as memory:
            memory.clock = clock.now
            memory_id = remember(memory, "Maya is allergic to peanuts")
            clock.advance(minutes=11)
            fake.answer("triage", {"decisions": [{"id": memory_id, "decision": "promote"}]})
            before = memory.ledger.last_position()
            result = memory.consolidate(user=USER)
            assert result.users[0].llm_calls == 1
            [call] = events(memory, "LLMCallRecorded", before)
            assert call.data["stage"] == "triage" and call.data["model"] == "gate-model"
            assert call.data["request"] == fake.chat_requests[0]
            assert memory.get(memory_id).layer == "working"
