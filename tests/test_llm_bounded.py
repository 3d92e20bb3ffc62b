"""Issue 31, item 3: the OpenAI-compatible path is bounded and recoverable.

Every request sends the stage's `max_tokens` (a looping answer is cut), one attempt waits
`MNEMOLEDGER_LLM_TIMEOUT` seconds, an answer that fails validation is asked for once more
with the error and then the offline rules decide (the recorded call says so), and a server
without JSON-schema output is asked for a JSON object or for JSON in the prompt. Everything
runs through the real `openai` client against `tests.fake_openai`, a server on 127.0.0.1
that honours `max_tokens` by cutting its answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm import LLMError, OfflineProvider, make_provider
from mnemoledger.commands.llm.openai_provider import OpenAIProvider
from mnemoledger.commands.llm.prompts import RECONSTRUCT
from mnemoledger.commands.llm.schemas import ReconstructInput, ReconstructOutput
from mnemoledger.ledger import EventRecord, InvalidInput, Settings
from mnemoledger.ledger.command import AddCommand
from mnemoledger.ledger.errors import InvalidSetting
from mnemoledger.ledger.policy import LLM_STAGE_MAX_TOKENS
from mnemoledger.ledger.provenance import Provenance, acting_as
from tests.fake_openai import (
    ANSWER,
    CHARS_PER_TOKEN,
    INPUTS,
    FakeOpenAI,
    Looping,
    fake_openai_server,
    settings_for,
)
from tests.openai_retries import record_client_pauses

LOOP = Looping('{"memories": [{"content": "Maya moved to Berlin', ", and then to Berlin")
"""A small model stuck repeating itself inside a JSON string."""
CORE = "## SOUL\n\n## TOOLS\n\n## RULE\n\n## USER\n- {}\n"
CONTENT = "I'm allergic to peanuts"
MEMORY = "The user is allergic to peanuts."


def provider_of(fake: FakeOpenAI, home: Path, **values: Any) -> OpenAIProvider:
    provider = make_provider(settings_for(fake, home, **values))
    assert isinstance(provider, OpenAIProvider)
    return provider


def script_add(fake: FakeOpenAI, *reconstruct: dict[str, Any] | str | Looping) -> None:
    """The answers of one add of CONTENT: split, the reconstructions given, core update."""
    fake.answer("split", {"contents": [CONTENT]})
    fake.answer("reconstruct", *reconstruct)
    fake.answer("core_update", {"should_update": True, "core_markdown": CORE.format(MEMORY)})


def llm_calls(memory: MnemoLedger, command_id: str) -> list[EventRecord]:
    return [e for e in memory.ledger.stream(command_id) if e.type == "LLMCallRecorded"]


def reconstruction(text: str) -> str:
    return json.dumps(
        {
            "memories": [{"content": text, "sources": ["new:0"]}],
            "coverage": [{"new_content": 0, "memories": [0]}],
        }
    )


# --- max_tokens ------------------------------------------------------------------------------


def test_every_request_of_an_add_sends_its_stage_bound_and_a_looping_answer_is_cut(
    home: Path,
) -> None:
    with fake_openai_server() as fake:
        script_add(fake, LOOP, LOOP)
        with MnemoLedger(
            settings=settings_for(fake, home, llm_add_calls="staged"), actor="tester"
        ) as memory:
            result = memory.add([CONTENT], user="u")
            calls = llm_calls(memory, result.command_id)

        stages = ["split", "read_turns", "reconstruct", "reconstruct", "core_update", "read_facts"]
        assert [r["response_format"]["json_schema"]["name"] for r in fake.chat_requests] == stages
        for request, stage in zip(fake.chat_requests, stages, strict=True):
            assert request["max_tokens"] == LLM_STAGE_MAX_TOKENS[stage]
        # the loop was cut where the server stopped it, twice: the offline rules decided
        bound = LLM_STAGE_MAX_TOKENS["reconstruct"] * CHARS_PER_TOKEN
        assert [len(r) for r in fake.chat_responses[2:4]] == [bound, bound]
        retry = fake.chat_requests[3]["messages"][-1]["content"]
        assert "cut off at its limit of 4096 tokens" in retry
        [reconstructed] = [c for c in calls if c.data["stage"] == "reconstruct"]
        assert reconstructed.data["fallback"]["provider"] == "offline"
        assert [m.content for m in result.memories] == [CONTENT]  # the rules' memory


def test_the_max_tokens_setting_replaces_a_stage_bound(home: Path) -> None:
    with fake_openai_server() as fake:
        fake.answer("reconstruct", LOOP, json.dumps(ANSWER))
        provider = provider_of(fake, home, llm_max_tokens="reconstruct=64,*=512")
        call = provider.complete(RECONSTRUCT, INPUTS)
        assert [r["max_tokens"] for r in fake.chat_requests] == [64, 64]
        assert len(fake.chat_responses[0]) == 64 * CHARS_PER_TOKEN
        assert call.output == ReconstructOutput.model_validate(ANSWER)
        assert call.fallback is None
        assert provider.max_tokens_for(RECONSTRUCT) == 64


def test_max_tokens_settings_are_checked(home: Path) -> None:
    assert Settings(home=home, llm_max_tokens="split=100, *=900").llm_max_tokens == {
        "split": 100,
        "*": 900,
    }
    assert Settings(home=home, llm_max_tokens="700").llm_max_tokens == {"*": 700}
    assert Settings(home=home, llm_max_tokens='{"audit": 8}').llm_max_tokens == {"audit": 8}
    for wrong in ("split=0", "split=many", "split", "{oops"):
        with pytest.raises(InvalidSetting, match="llm_max_tokens"):
            Settings(home=home, llm_max_tokens=wrong)
    with pytest.raises(InvalidInput, match="names no stage: splti"):
        make_provider(
            Settings(
                home=home,
                llm_provider="openai",
                llm_model="m",
                openai_base_url="http://127.0.0.1:9/v1",
                llm_max_tokens="splti=10",
            )
        )


# --- an answer that fails validation ---------------------------------------------------------


def test_an_invalid_answer_is_asked_for_again_with_the_error(home: Path) -> None:
    with fake_openai_server() as fake:
        script_add(fake, '{"memories": []}', reconstruction(MEMORY))
        with MnemoLedger(
            settings=settings_for(fake, home, llm_add_calls="staged"), actor="tester"
        ) as memory:
            result = memory.add([CONTENT], user="u")
            [call] = [
                c
                for c in llm_calls(memory, result.command_id)
                if c.data["stage"] == ("reconstruct")
            ]

        first, second = (r for r in fake.chat_requests if "<new_contents>" in str(r))
        assert second["messages"][:2] == first["messages"]
        assert second["messages"][2] == {"role": "assistant", "content": '{"memories": []}'}
        told = second["messages"][3]
        assert told["role"] == "user" and "coverage: Field required" in told["content"]
        assert call.data["request"] == second
        assert call.data["response"] == reconstruction(MEMORY)
        assert call.data["fallback"] is None
        assert [m.content for m in result.memories] == [MEMORY]


def test_after_two_invalid_answers_the_offline_rules_decide_and_the_event_says_so(
    home: Path,
) -> None:
    with fake_openai_server() as fake:
        script_add(fake, "I cannot answer in JSON, sorry.", '{"memories": [{"content": 1}]}')
        with MnemoLedger(
            settings=settings_for(fake, home, llm_add_calls="staged"), actor="tester"
        ) as memory:
            result = memory.add([CONTENT], user="u")
            calls = llm_calls(memory, result.command_id)
            stages = [c.data["stage"] for c in calls]
            assert stages == ["split", "read_turns", "reconstruct", "core_update", "read_facts"]
            [call] = [c for c in calls if c.data["stage"] == "reconstruct"]
            # the command completed: the rules' reconstruction was written, core updated
            assert [m.content for m in result.memories] == [CONTENT]
            assert memory.core(user="u").markdown == CORE.format(MEMORY)

        retry = [r for r in fake.chat_requests if "<new_contents>" in str(r)][1]
        assert "no JSON object in the answer" in retry["messages"][-1]["content"]
        fallback = call.data["fallback"]
        assert (fallback["provider"], fallback["model"]) == ("offline", "rules-v1")
        assert [i["response"] for i in fallback["invalid"]] == [
            "I cannot answer in JSON, sorry.",
            '{"memories": [{"content": 1}]}',
        ]
        assert fallback["invalid"][0]["error"] == "no JSON object in the answer"
        assert "memories.0.content" in fallback["invalid"][1]["error"]
        assert (call.data["provider"], call.data["model"]) == ("openai", "fake-chat")
        assert call.data["request"] == retry
        offline = OfflineProvider().complete(
            RECONSTRUCT, ReconstructInput(related=[], new_contents=[CONTENT])
        )
        assert call.data["response"] == offline.response
        assert call.data["prompt_tokens"] == 2 * 11  # both answers, as the server counted


def test_llm_call_events_written_before_the_fallback_field_still_load(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing")) as memory:
        with acting_as(Provenance(user_id="u", actor="tester")):
            command = AddCommand(input={"contents": ["x"]})
            command.record_llm_call(
                stage="split",
                prompt_id="haema.split",
                version="1",
                provider="openai",
                model="m",
                request={"model": "m"},
                response="{}",
                prompt_tokens=1,
                completion_tokens=1,
                latency_ms=1.0,
            )
        written = command.pending_events[-1]
        del written.__dict__["fallback"]  # as an event of an earlier version was written
        memory.ledger.save(command)

        assert memory.ledger.command(command.id).llm_calls == 1
        [call] = [e for e in memory.ledger.stream(command.id) if e.type == "LLMCallRecorded"]
        assert "fallback" not in call.data and call.data["stage"] == "split"
        memory.parts.refresh()  # the history read model folds it as any other call
        assert [c.stage for c in memory.history_model.llm_calls(command.id.hex)] == ["split"]


# --- servers without JSON-schema output ------------------------------------------------------


def test_a_server_without_json_schema_output_is_asked_for_a_json_object(home: Path) -> None:
    with fake_openai_server() as fake:
        fake.refused_formats = {"json_schema"}
        fake.answer("reconstruct", json.dumps(ANSWER), json.dumps(ANSWER))
        provider = provider_of(fake, home)
        first = provider.complete(RECONSTRUCT, INPUTS)
        second = provider.complete(RECONSTRUCT, INPUTS)

        kinds = [r["response_format"]["type"] for r in fake.chat_requests]
        assert kinds == ["json_schema", "json_object", "json_object"]  # refused once only
        assert provider.output_mode == "json_object"
        sent = fake.chat_requests[1]
        assert sent["messages"][0]["content"].startswith(RECONSTRUCT.system.rstrip())
        schema = json.dumps(ReconstructOutput.model_json_schema(), ensure_ascii=False)
        assert sent["messages"][0]["content"].endswith(f'JSON schema "reconstruct":\n{schema}')
        assert sent["max_tokens"] == LLM_STAGE_MAX_TOKENS["reconstruct"]
        assert first.request == sent and second.request == fake.chat_requests[2]
        assert first.output == second.output == ReconstructOutput.model_validate(ANSWER)


def test_an_add_works_on_a_server_with_neither_json_schema_nor_json_object(home: Path) -> None:
    with fake_openai_server() as fake:
        fake.refused_formats = {"json_schema", "json_object"}
        script_add(fake, "Sure:\n```json\n" + reconstruction(MEMORY) + "\n```")
        with MnemoLedger(
            settings=settings_for(fake, home, llm_add_calls="staged"), actor="tester"
        ) as memory:
            result = memory.add([CONTENT], user="u")
            calls = llm_calls(memory, result.command_id)
            assert [m.content for m in result.memories] == [MEMORY]
            assert memory.core(user="u").markdown == CORE.format(MEMORY)

        formats = [(r.get("response_format") or {}).get("type") for r in fake.chat_requests]
        assert formats == ["json_schema", "json_object", None, None, None, None, None]
        assert [c.data["request"] for c in calls] == fake.chat_requests[2:]
        assert all(c.data["fallback"] is None for c in calls)


# --- the timeout -----------------------------------------------------------------------------


def test_the_timeout_setting_reaches_the_client(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pauses = record_client_pauses(monkeypatch)  # the client's pauses between attempts
    with fake_openai_server() as fake:
        fake.delay = 30.0  # longer than the timeout; cut short when the server stops
        fake.answer("reconstruct", json.dumps(ANSWER))
        provider = provider_of(fake, home, llm_timeout=0.5)
        assert provider.timeout == 0.5
        with pytest.raises(LLMError, match="gave up after 3 attempts: APITimeoutError"):
            provider.complete(RECONSTRUCT, INPUTS)
        assert len(fake.chat_requests) == 3 and len(pauses) == 2


def test_the_timeout_setting_is_checked(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(home=home).llm_timeout == 60.0
    monkeypatch.setenv("MNEMOLEDGER_LLM_TIMEOUT", "2.5")
    assert Settings(home=home).llm_timeout == 2.5
    monkeypatch.setenv("MNEMOLEDGER_LLM_TIMEOUT", "0")
    with pytest.raises(InvalidSetting, match="MNEMOLEDGER_LLM_TIMEOUT='0'"):
        Settings(home=home)
