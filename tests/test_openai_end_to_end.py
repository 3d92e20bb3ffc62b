"""add and core update through the real `openai` client against a local fake server; the
recorded LLM calls hold the exact request and response."""

from __future__ import annotations

import json
from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from tests.fake_openai import fake_openai_server, settings_for

CORE = "## SOUL\n\n## TOOLS\n\n## RULE\n\n## USER\n- {}\n"


def test_add_and_core_update_through_an_openai_compatible_server(home: Path) -> None:
    with fake_openai_server() as fake:
        settings = Settings(
            home=home,
            llm_provider="openai",
            llm_model="fake-chat",
            embedder="openai",
            embedding_model="fake-embed",
            openai_base_url=fake.url,
            openai_api_key="test-key",
            llm_add_calls="staged",  # a call per stage (the one-call add: test_llm_one_call)
        )
        fake.answer("split", {"contents": ["I'm allergic to peanuts"]})
        fake.answer(
            "reconstruct",
            "Here you go:\n```json\n"
            + json.dumps(
                {
                    "memories": [
                        {"content": "The user is allergic to peanuts.", "sources": ["new:0"]}
                    ],
                    "coverage": [{"new_content": 0, "memories": [0]}],
                }
            )
            + "\n```",
        )
        fake.answer(
            "core_update",
            {
                "should_update": True,
                "core_markdown": CORE.format("The user is allergic to peanuts."),
            },
        )
        with MnemoLedger(settings=settings, actor="tester") as memory:
            result = memory.add(["I'm allergic to peanuts"], user="u", agent="planner")
            assert [m.content for m in result.memories] == ["The user is allergic to peanuts."]
            assert memory.core(user="u").markdown == CORE.format("The user is allergic to peanuts.")
            assert memory.search("peanuts", user="u")[0].id == result.memories[0].id

            calls = [
                e for e in memory.ledger.stream(result.command_id) if e.type == "LLMCallRecorded"
            ]
            assert [c.data["stage"] for c in calls] == [
                "split",
                "read_turns",
                "reconstruct",
                "core_update",
                "read_facts",
            ]
            for call, sent, answered in zip(
                calls, fake.chat_requests, fake.chat_responses, strict=True
            ):
                assert call.data["request"] == sent
                assert call.data["response"] == answered
                assert call.data["provider"] == "openai" and call.data["model"] == "fake-chat"
                assert call.data["prompt_tokens"] == 11 and call.data["completion_tokens"] == 7
                assert call.agent_id == "planner"
            assert "<turns>" in fake.chat_requests[1]["messages"][1]["content"]
            assert "<new_contents>" in fake.chat_requests[2]["messages"][1]["content"]
            assert fake.embedding_requests and fake.embedding_requests[0]["model"] == "fake-embed"
            assert memory.stats().embedder == "openai/fake-embed"


def test_extraction_through_an_openai_compatible_server(home: Path) -> None:
    with fake_openai_server() as fake:
        settings = settings_for(fake, home)
        fake.answer(
            "extract",
            {
                "preferences": [
                    {
                        "key": "Code_Style",
                        "value": "Prefers tabs over spaces",
                        "category": "preference",
                        "tags": ["code"],
                        "explicit": True,
                    }
                ],
                "entities": [],
                "decisions": [],
                "styles": [],
                "artifacts": [],
            },
        )
        turns = [
            {"id": "m1", "role": "user", "content": "I always indent with tabs, never spaces."},
            {"id": "m2", "role": "assistant", "content": "Noted: tabs."},
        ]
        with MnemoLedger(settings=settings, actor="tester") as memory:
            result = memory.ingest(turns, user="u")
            [stored] = result.memories
            assert stored.content == "Prefers tabs over spaces"
            assert stored.key == "code-style" and stored.confidence == 0.9
            assert stored.namespace == "tacit/preferences" and stored.evidence == ["m1", "m2"]
            calls = [
                e for e in memory.ledger.stream(result.command_id) if e.type == "LLMCallRecorded"
            ]
            assert [c.data["stage"] for c in calls] == ["extract"]
            assert calls[0].data["request"] == fake.chat_requests[0]
            assert calls[0].data["response"] == fake.chat_responses[0]
            assert "<conversation>" in fake.chat_requests[0]["messages"][1]["content"]
