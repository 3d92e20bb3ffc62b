"""Writing constraints (seed 003 §9) and procedural memories (§12)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm import OfflineProvider, ScriptedProvider
from mnemoledger.commands.llm.consolidation_schemas import ReconcileOutput
from mnemoledger.commands.llm.prompts import EPISODIC_STYLE, SEMANTIC_STYLE
from mnemoledger.commands.llm.schemas import ExtractOutput, Fact, MergeOutput, ReconstructOutput
from mnemoledger.commands.write.constraints import (
    check,
    check_episodic,
    check_procedural,
    check_semantic,
    conform,
    count_sentences,
    enforce,
    meets_first_pass_target,
    pass_rate,
)
from mnemoledger.commands.write.procedural import (
    excluded_from_default_context,
    in_context,
    procedural_steps,
)
from mnemoledger.commands.write.writing_acceptance import acceptance
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import (
    EPISODIC,
    KINDS,
    MAX_WRITTEN_MEMORY_CHARS,
    PROCEDURAL,
    SEMANTIC,
    WRITING_FIRST_PASS_TARGET,
)
from tests.test_consolidation_helpers import USER, Clock, clock, engram, place, remember

__all__ = ["clock", "engram"]


@pytest.mark.parametrize(
    "text",
    [
        "Maya lives in Paris.",
        "Maya moved to Lisbon in May. She works remotely for a bakery.",
        "Dr. Silva treats Maya's asthma, e.g. with an inhaler.",
        "Maya moved to the US in 2020.",
        "Maya's team uses Neovim and tmux",
        "J. R. R. Tolkien is Maya's favourite author.",
        "Maya asked: what is 3.5 times 2? The answer was 7.",
    ],
)
def test_third_person_statements_pass(text: str) -> None:
    assert check_semantic(text) == []


@pytest.mark.parametrize(
    ("text", "pronoun"),
    [
        ("I live in Paris", "'I'"),
        ("Maya told me she likes tea.", "'me'"),
        ("My sister is a nurse.", "'My'"),
        ("We moved to Porto.", "'We'"),
        ("You prefer short answers.", "'You'"),
        ("Your flight leaves at 9.", "'Your'"),
        ("I'm allergic to peanuts.", "'I'"),
        ("The dog is ours.", "'ours'"),
    ],
)
def test_first_and_second_person_are_flagged(text: str, pronoun: str) -> None:
    [violation] = check_semantic(text)
    assert violation.startswith("not third person") and pronoun in violation


def test_third_person_pronouns_are_allowed() -> None:
    assert check_semantic("Maya adopted a dog; she walks it daily. They go to the park.") == []


def test_length_limit_is_280_characters() -> None:
    exact = "Maya " + "x" * (MAX_WRITTEN_MEMORY_CHARS - 5)
    assert len(exact) == MAX_WRITTEN_MEMORY_CHARS
    assert check_semantic(exact) == []
    assert check_episodic(exact) == []
    [violation] = check_semantic(exact + "y")
    assert violation == "281 characters; the limit is 280"
    assert check_episodic(exact + "y") == [violation]


def test_more_than_two_sentences_are_flagged() -> None:
    text = "Maya moved to Lisbon. She works remotely. She likes tea."
    assert count_sentences(text) == 3
    assert check_semantic(text) == ["3 sentences; the limit is 2"]
    assert check_episodic("Maya asked about refunds. The agent explained. She agreed!") == [
        "3 sentences; the limit is 2"
    ]
    assert count_sentences("Done! Really? Yes...") == 3
    assert count_sentences("Ms. Lee met Mr. Park at St. Mary's.") == 1


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", "\x00\x01"])
def test_empty_after_normalization(text: str) -> None:
    for kind in KINDS:
        assert check(text, kind) == ["empty after normalization"]


def test_episodic_guard_does_not_require_third_person() -> None:
    assert check_episodic("I asked about the refund and the agent approved it.") == []


def test_enforce_normalizes_or_names_every_violation() -> None:
    assert enforce("  Maya   likes\t tea.\n ", SEMANTIC) == "Maya likes tea."
    assert enforce("Maya  asked about refunds.  ", EPISODIC) == "Maya asked about refunds."
    with pytest.raises(InvalidInput) as refused:
        enforce("I like tea. I like coffee. I like water.", SEMANTIC)
    message = str(refused.value)
    assert "seed 003 §9" in message and "3 sentences" in message and "'I'" in message
    with pytest.raises(InvalidInput, match="empty after normalization"):
        enforce("   ", EPISODIC)
    with pytest.raises(InvalidInput, match="kind must be one of"):
        enforce("Maya likes tea.", "dream")


def test_pass_rate_is_the_first_pass_acceptance_metric() -> None:
    good = [f"Maya visited city number {n}." for n in range(19)]
    assert pass_rate([*good, "I visited Rome."], SEMANTIC) == pytest.approx(0.95)
    assert meets_first_pass_target([*good, "I visited Rome."], SEMANTIC)
    assert not meets_first_pass_target([*good[:18], "I left.", "You left."], SEMANTIC)
    assert pass_rate([], SEMANTIC) == 1.0
    assert WRITING_FIRST_PASS_TARGET == 0.95


def test_prompts_ask_for_what_the_checks_verify() -> None:
    assert str(MAX_WRITTEN_MEMORY_CHARS) in SEMANTIC_STYLE
    assert "third-person" in SEMANTIC_STYLE and "1-2 sentences" in SEMANTIC_STYLE
    assert "1-2 sentences" in EPISODIC_STYLE


# --- procedural memories (seed 003 §12) ---------------------------------------------------

STEPS = """1. Open the billing dashboard.
2. Export last month's invoices
   as CSV.
3) Send the file to finance."""


def test_numbered_steps_pass_and_parse() -> None:
    assert check_procedural(STEPS) == []
    assert enforce(STEPS, PROCEDURAL) == STEPS.replace("   as", " as")
    assert procedural_steps(STEPS) == [
        "Open the billing dashboard.",
        "Export last month's invoices as CSV.",
        "Send the file to finance.",
    ]
    assert check_procedural("1. Restart the worker.") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Open the dashboard and export invoices.", "no numbered steps"),
        ("2. Open the dashboard.\n3. Export invoices.", "steps are numbered 2, 3"),
        ("1. Open the dashboard.\n1. Export invoices.", "expected 1, 2"),
        ("How to export:\n1. Open the dashboard.", "is not a numbered step"),
        ("1. Open the dashboard.\n- export invoices", "is not a numbered step"),
        ("1. You open the dashboard.\n2. Export invoices.", "step 1 is not an instruction"),
        ("1. Open it.\n2. We export invoices.", "step 2 is not an instruction"),
    ],
)
def test_malformed_procedures_are_flagged(text: str, expected: str) -> None:
    violations = check_procedural(text)
    assert any(expected in v for v in violations), violations
    with pytest.raises(InvalidInput):
        enforce(text, PROCEDURAL)


def test_procedural_memories_stay_out_of_default_context() -> None:
    assert excluded_from_default_context(PROCEDURAL)
    assert not excluded_from_default_context(SEMANTIC)
    assert not excluded_from_default_context(EPISODIC)
    assert not in_context(PROCEDURAL)
    assert not in_context(PROCEDURAL, ["semantic"])
    assert in_context(PROCEDURAL, ["procedural"])
    assert in_context(SEMANTIC) and in_context(EPISODIC, ["semantic"])


# --- what the LLM stages write goes through the validator (issue 15 item 3) ---------------

THREE_SENTENCES = "Maya lives in Porto. Maya runs every morning. Maya keeps bees."
JOINED = "Maya lives in Porto. Maya runs every morning; Maya keeps bees."
LONG = "Maya " + "really " * 60 + "likes tea."


def test_conform_keeps_trims_or_refuses() -> None:
    kept = conform("  Maya   runs every morning. ", SEMANTIC, "extract")
    assert kept.action == "kept" and kept.passed and kept.text == "Maya runs every morning."
    repaired = conform(THREE_SENTENCES, SEMANTIC, "distill")
    assert repaired.action == "repaired"
    assert repaired.violations == ("3 sentences; the limit is 2",)
    assert repaired.text == JOINED and count_sentences(JOINED) == 2
    cut = conform(LONG, SEMANTIC, "distill")
    assert cut.action == "trimmed"
    assert cut.text is not None and len(cut.text) <= MAX_WRITTEN_MEMORY_CHARS
    assert cut.text.startswith("Maya really") and not cut.text.endswith(" ")
    assert conform(" \n ", SEMANTIC, "merge").action == "refused"
    assert conform(THREE_SENTENCES, SEMANTIC, "merge", trim=False).text is None
    assert conform("1. Run make.\n2. Check it.\n3. Post it.", PROCEDURAL, "x").passed


def scripted_memory(home: Path) -> tuple[MnemoLedger, ScriptedProvider]:
    memory = MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")
    scripted = ScriptedProvider(OfflineProvider())
    memory.add_pipeline.provider = scripted
    memory.llm = scripted
    return memory, scripted


def outcome_of(memory: MnemoLedger, command_id: str) -> dict[str, Any]:
    outcome = memory.ledger.command(command_id).outcome
    assert isinstance(outcome, dict)
    return outcome


def test_a_reconstruction_over_two_sentences_is_refined_and_recorded(home: Path) -> None:
    memory, scripted = scripted_memory(home)
    with memory:
        scripted.script(
            "reconstruct",
            ReconstructOutput.model_validate(
                {
                    "memories": [{"content": THREE_SENTENCES, "sources": ["new:0"]}],
                    "coverage": [{"new_content": 0, "memories": [0]}],
                }
            ),
        )
        result = memory.add(["Maya keeps bees"], user="u")
        assert [m.content for m in result.memories] == ["Maya keeps bees"]
        assert [c.stage for c in scripted.calls][:3] == ["split", "reconstruct", "refine"]
        [record] = outcome_of(memory, result.command_id)["writing"]
        assert record["stage"] == "reconstruct" and record["action"] == "refined"
        assert "3 sentences" in record["violations"][0]


def test_an_insert_merge_that_breaks_the_format_leaves_the_stored_text(home: Path) -> None:
    memory, scripted = scripted_memory(home)
    with memory:
        [first] = memory.add(["Maya is allergic to peanuts"], user="u").memories
        scripted.script("insert_merge", MergeOutput(content=THREE_SENTENCES))
        again = memory.add(["Maya is allergic to peanuts!"], user="u")
        assert "insert_merge" in [c.stage for c in scripted.calls]
        assert memory.get(first.id).content == "Maya is allergic to peanuts"
        [record] = outcome_of(memory, again.command_id)["writing"]
        assert record == {
            "stage": "insert_merge",
            "violations": ["3 sentences; the limit is 2"],
            "action": "refused",
        }


def test_an_extracted_value_too_long_is_trimmed_and_an_empty_one_skipped(home: Path) -> None:
    memory, scripted = scripted_memory(home)
    with memory:
        scripted.script(
            "extract",
            ExtractOutput(
                preferences=[
                    Fact(key="user/hobbies", value=THREE_SENTENCES, category="preference"),
                    Fact(key="user/nothing", value="\u200b", category="preference"),
                ]
            ),
        )
        result = memory.ingest([{"role": "user", "content": "About me."}], user="u")
        contents = {m.key: m.content for m in result.memories}
        assert contents["hobbies"] == JOINED
        assert "nothing" not in contents
        outcome = outcome_of(memory, result.command_id)
        assert outcome["writing"] == [
            {
                "stage": "extract",
                "violations": ["3 sentences; the limit is 2"],
                "action": "repaired",
            }
        ]
        assert any(s["reason"].startswith("writing constraints") for s in outcome["skipped"])


def test_a_consolidation_merge_that_breaks_the_format_keeps_the_winner(
    engram: MnemoLedger, clock: Clock
) -> None:
    older = remember(engram, "Maya works at Acme as a designer")
    clock.advance(hours=2)
    newer = remember(engram, "Maya works at Globex")
    for memory_id in (older, newer):
        place(engram, memory_id, "working")
    scripted = ScriptedProvider(OfflineProvider())
    scripted.script("reconcile", ReconcileOutput(decision="absorb", merged_content=LONG))
    engram.llm = scripted
    result = engram.consolidate(user=USER)
    assert engram.get(older).superseded_by == newer
    assert engram.get(newer).content == "Maya works at Globex"
    [merge] = [o for o in result.operations if o["op"] == "merge"]
    assert merge["writing"]["action"] == "refused"
    assert merge["writing"]["violations"][0].endswith("the limit is 280")


def test_the_acceptance_figure_counts_what_the_stages_wrote_as_first_written(
    home: Path,
) -> None:
    memory, scripted = scripted_memory(home)
    with memory:
        memory.add(["Maya keeps bees"], user="u")  # handed back as written: not counted
        scripted.script(
            "reconstruct",
            ReconstructOutput.model_validate(
                {
                    "memories": [{"content": THREE_SENTENCES, "sources": ["new:0"]}],
                    "coverage": [{"new_content": 0, "memories": [0]}],
                }
            ),
        )
        scripted.script(
            "refine",
            ReconstructOutput.model_validate(
                {
                    "memories": [{"content": "Maya tends her bees.", "sources": ["new:0"]}],
                    "coverage": [{"new_content": 0, "memories": [0]}],
                }
            ),
        )
        memory.add(["Maya has bees"], user="u")
        figure = acceptance(memory.ledger.read(0, 10**9))
    assert (figure.texts, figure.passed, figure.rate) == (2, 1, 0.5)
    assert not figure.meets_target
    [reconstruct, refine] = figure.stages
    assert (reconstruct.stage, reconstruct.failures) == ("reconstruct", {"sentences": 1})
    assert (refine.stage, refine.texts, refine.passed) == ("refine", 1, 1)
