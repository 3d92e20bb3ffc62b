"""The consent gate reads with the judge of the home: with an LLM provider, the model's
reading of which facts a text states (`read_facts`), recorded on the add's command;
offline, the fine-tuned facts model."""

from __future__ import annotations

from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.commands.judge.llm import LLMJudge
from mnemoledger.commands.llm.judge_prompts import ReadFactsOutput, TextFact
from mnemoledger.commands.write.consent_fields import fields_of
from tests.fake_openai import fake_openai_server, plain_answer, settings_for, tagged
from tests.test_judge_read_facts import Scripted


def test_the_gate_maps_the_models_reading_to_fields() -> None:
    text = "I relocated to Nairobi and mostly chat in Polish."
    judge = LLMJudge(
        Scripted(
            ReadFactsOutput(
                facts=[
                    TextFact(text=0, attribute="location", value="Nairobi", positive=True),
                    TextFact(text=0, attribute="language", value="Polish", positive=True),
                ]
            )
        )
    )
    assert fields_of(text, judge=judge) == {"city": "Nairobi", "language": "Polish"}


def test_with_a_provider_the_add_asks_the_model_which_fields_a_piece_states(
    home: Path,
) -> None:
    with fake_openai_server() as fake:
        fake.answering = plain_answer
        fake.answer(
            "read_facts",
            {"facts": [{"text": 0, "attribute": "location", "value": "Nairobi", "positive": True}]},
        )
        settings = settings_for(fake, home, llm_add_calls="staged")
        with MnemoLedger(settings=settings, actor="tester") as memory:
            result = memory.add(["I relocated to Nairobi last year."], user="u")
            asked = [r for r in fake.chat_requests if "<texts>" in str(r)]
            assert [t["text"] for t in tagged(asked[0], "texts")] == [
                "I relocated to Nairobi last year."
            ]
            requests = memory.consents(user="u")
            assert [(r.field, r.proposed_value) for r in requests] == [("city", "Nairobi")]
            calls = [
                e for e in memory.ledger.stream(result.command_id) if e.type == "LLMCallRecorded"
            ]
            assert calls[-1].data["stage"] == "read_facts"
            assert result.llm_calls == len(calls)

            # the model reads nothing in the next piece: nothing is asked, and core.md still
            # holds back what the offline reading finds in what the model's core stage wrote
            core = "## SOUL\n\n## TOOLS\n\n## RULE\n\n## USER\n- {}\n"
            written = core.format("User lives in Porto.\n- User likes green tea.")
            fake.answer("core_update", {"should_update": True, "core_markdown": written})
            memory.add(["I live in Porto. I like green tea."], user="u")
            assert [r.proposed_value for r in memory.consents(user="u")] == ["Nairobi"]
            assert memory.core(user="u").markdown == core.format("User likes green tea.")
