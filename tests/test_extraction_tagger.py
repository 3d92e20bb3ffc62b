"""The learned value tagger of the offline extractor (issue 15): what it reads where the rules
read nothing, what it never reads, that it only fills what the rules left empty, and that its
shipped weights are what `scripts/fit_extractor.py` builds. Every sentence here is new: none
is from a labelled set."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mnemoledger.commands.llm.rules import tagger
from mnemoledger.commands.llm.rules.extract import _fallbacks, extract
from mnemoledger.commands.llm.schemas import ConversationTurn, ExtractInput, Fact

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.fit_extractor import TAGGER_TRAIN, fit_tagger, read_rows, tagged_sentences  # noqa: E402


def _extracted(*turns: str) -> dict[str, str]:
    out = extract(
        ExtractInput(conversation=[ConversationTurn(role="user", content=t) for t in turns])
    )
    return {f.key: f.value for f in out.preferences}


def _user_fact(key: str, value: str) -> Fact:
    return Fact(key=key, value=value, category="preference", tags=["user"], explicit=True)


def test_the_tagger_reads_an_employer_no_rule_knows() -> None:
    """'repairing bikes at Halfords': no rule reads a job's employer after a gerund."""
    facts = _extracted("Been repairing bikes at Halfords in Exeter for a decade now.")
    assert facts.get("user/employer") == "Halfords"
    assert facts.get("user/location") == "Exeter"


def test_the_tagger_adds_a_language_after_the_rules_list() -> None:
    """'decent French' after a list the rules read; 'Kikuyu', which is also a Kenyan town, is
    not read again as where the user lives."""
    facts = _extracted("Fluent in Swahili and Kikuyu, decent French.")
    assert {k for k in facts if k.startswith("user/language/")} == {
        "user/language/swahili",
        "user/language/kikuyu",
        "user/language/french",
    }
    assert "user/location" not in facts


def test_the_tagger_reads_nothing_of_someone_else_a_plan_or_the_past() -> None:
    for said in (
        "My brother is a pilot at Ryanair in Dublin.",
        "If I moved to Lisbon I would learn Portuguese.",
        "I stopped using Trello years ago.",
        "Would a vet in Leeds see a rabbit?",
    ):
        assert tagger.tagged_facts(said) == [], said
        if "stopped" in said:  # the rules read a tool given up, never a tool in use
            assert _extracted(said) == {"user/tool/trello": "no longer uses Trello"}
        else:
            assert _extracted(said) == {}, said


def test_the_tagger_only_fills_what_the_rules_left_empty() -> None:
    found = {
        "user/location": _user_fact("user/location", "Leeds"),
        "user/tool/git": _user_fact("user/tool/git", "git"),
    }
    tagged = [
        _user_fact("user/location", "York"),  # the rules' town stays
        _user_fact("user/tool/git", "Git"),  # already there
        _user_fact("user/employer", "Leeds"),  # words another fact holds
        _user_fact("user/tool/figma", "Figma"),
        _user_fact("user/tool/figma", "Figma"),  # a copy
        _user_fact("user/occupation", "nurse"),
        _user_fact("user/occupation", "midwife"),  # one value of a single-valued attribute
    ]
    assert [f.value for f in _fallbacks(tagged, found)] == ["Figma", "nurse"]


def test_the_shipped_tagger_is_rebuilt_byte_for_byte() -> None:
    examples = tagged_sentences(read_rows(TAGGER_TRAIN))
    built = json.dumps(tagger.to_json(fit_tagger(examples), TAGGER_TRAIN, len(examples)))
    assert built + "\n" == tagger.WEIGHTS.read_text(encoding="utf-8")
    assert "tests/data/extraction_holdout9.jsonl" not in TAGGER_TRAIN  # the blind set
    assert "tests/data/extraction_holdout7.jsonl" in TAGGER_TRAIN  # scored once, then opened
