"""The facts model (`mnemoledger.commands.judge.facts`): how a user's turn is read in words
and pieces, how labelled words become facts, and what `ingest` keeps of them, written as what
a user says and sees. The model's accuracy is measured by `scripts/eval_extraction.py` on
sets it was never fitted on (docs/benchmarks.md), not asserted here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.judge import ModelMissing, default_judge
from mnemoledger.commands.judge.facts import (
    LABELS,
    MAX_WORDS,
    StatedFact,
    context,
    decode,
    pieces,
    words,
)
from mnemoledger.commands.judge.learned import MODELS
from mnemoledger.ledger import Settings


def _likelihoods(said: str, marks: dict[int, str]) -> np.ndarray:
    """Each word of `said` certain of its label: `marks` names the labelled ones."""
    rows = np.zeros((len(words(said)), len(LABELS)))
    for index in range(len(rows)):
        rows[index, LABELS.index(marks.get(index, "O"))] = 1.0
    return rows


def _read(said: str, marks: dict[int, str]) -> list[tuple[str, str, bool]]:
    found = decode(said, words(said), _likelihoods(said, marks))
    return [(f.attribute, f.value, f.positive) for f in found]


def test_words_keep_times_names_and_contractions_whole() -> None:
    said = [w.text for w in words("Standup's at 9:15, J.P. Morgan; don't ask!")]
    assert said == ["Standup's", "at", "9:15", ",", "J.P", ".", "Morgan", ";", "don't", "ask", "!"]


def test_a_long_turn_is_read_in_pieces_cut_at_sentences() -> None:
    sentence = "I walk the dog every morning before work. "
    text = sentence * 40  # 360 words
    cut = pieces(text)
    assert len(cut) > 1
    assert all(len(piece) <= MAX_WORDS for piece in cut)
    assert all(piece[-1].text == "." for piece in cut)
    assert sum(len(piece) for piece in cut) == len(words(text))


def test_only_the_last_words_of_the_assistants_turn_are_read_beside() -> None:
    asked = "Thanks for all of that. " * 20 + "Where are you based these days?"
    beside = context(asked)
    assert beside[-3:] == ["these", "days", "?"]
    assert len(beside) < len(words(asked))


def test_a_model_fitted_so_also_reads_the_users_previous_turn() -> None:
    beside = context("Nice.", "I live in Leiden.", "user+assistant")
    assert beside == ["I", "live", "in", "Leiden", ".", "Nice", "."]
    assert context("Nice.", "I live in Leiden.") == ["Nice", "."]


def test_a_value_read_as_two_beginnings_of_one_kind_stays_one_value() -> None:
    said = "I mix in Pro Tools mostly"
    assert _read(said, {3: "B-tool+", 4: "B-tool+"}) == [("tool", "Pro Tools", True)]


def test_two_values_of_other_kinds_side_by_side_stay_apart() -> None:
    said = "I am Kenji Tanaka engineer"
    marks = {2: "B-name+", 3: "I-name+", 4: "B-occupation+"}
    assert _read(said, marks) == [("name", "Kenji Tanaka", True), ("occupation", "engineer", True)]


def test_an_activity_and_its_time_a_few_words_apart_are_one_value() -> None:
    said = "our standup is at 9:15 every day, and I hate Mondays"
    marks = {1: "B-schedule+", 4: "B-schedule+", 11: "B-preference-"}
    assert _read(said, marks) == [
        ("schedule", "standup is at 9:15", True),
        ("preference", "Mondays", False),
    ]


def test_an_activity_read_apart_from_its_time_in_one_clause_is_one_value() -> None:
    said = "the migration has to be done by Friday"
    assert _read(said, {1: "B-deadline+", 7: "B-deadline+"}) == [
        ("deadline", "migration has to be done by Friday", True)
    ]


def test_an_activity_read_without_its_time_reaches_to_the_time_of_its_clause() -> None:
    after = "I go for a run every morning before breakfast, and I hate Mondays"
    marks = {4: "B-schedule+", 13: "B-preference-"}
    assert _read(after, marks) == [
        ("schedule", "run every morning", True),
        ("preference", "Mondays", False),
    ]
    assert _read("Every Monday morning I go running", {5: "B-schedule+"}) == [
        ("schedule", "Every Monday morning I go running", True)
    ]


def test_a_time_in_another_clause_stays_out_of_an_activity() -> None:
    assert _read("I run, and on Friday I rest", {1: "B-schedule+"}) == [("schedule", "run", True)]


def test_a_verb_or_a_bare_number_is_no_time() -> None:
    assert _read("I may go running with 2 friends", {3: "B-schedule+"}) == [
        ("schedule", "running", True)
    ]
    assert _read("the thesis is due May 2", {1: "B-deadline+"}) == [
        ("deadline", "thesis is due May 2", True)
    ]


def test_a_value_of_punctuation_alone_is_no_fact() -> None:
    assert _read("well ... ok", {1: "B-tool+"}) == []


def test_the_shipped_model_reads_a_plain_introduction() -> None:
    """A plain self-introduction, in words none of the labelled sets use."""
    (found,) = default_judge().facts(
        [("Hi, I'm Oluwaseun, I work as a radiographer at St Mary's and I live in Leeds.", "")]
    )
    read = {(f.attribute, f.value) for f in found}
    assert ("location", "Leeds") in read
    assert all(isinstance(f, StatedFact) and 0.0 <= f.confidence <= 1.0 for f in found)


def test_the_answer_to_the_assistants_question_is_read_with_it() -> None:
    (found,) = default_judge().facts([("glasgow, for now", "Where are you based these days?")])
    assert [(f.attribute, f.value) for f in found] == [("location", "glasgow")]


def test_ingest_keeps_a_town_and_a_dislike_with_their_sides(home: Path, tmp_path: Path) -> None:
    turns = tmp_path / "chat.jsonl"
    turns.write_text(
        json.dumps(
            {"role": "user", "content": "I live in Leeds now. I really cannot stand olives."}
        )
        + "\n"
    )
    memory = MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")
    try:
        result = memory.ingest(turns, user="ade", agent="helper")
    finally:
        memory.close()
    written = {m.key: (m.namespace, m.content) for m in result.memories}
    assert written["location"] == ("tacit/user", "Leeds")
    assert ("tacit/preferences", "User dislikes olives") in written.values()


def test_without_the_facts_model_ingest_says_which_file_is_missing(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the facts model file, ingest says which file is missing and how to refit it."""
    models = tmp_path / "models"
    shutil.copytree(MODELS, models, ignore=shutil.ignore_patterns("facts.*"))
    monkeypatch.setenv("MNEMOLEDGER_JUDGE_MODELS", str(models))
    turns = tmp_path / "chat.jsonl"
    turns.write_text(json.dumps({"role": "user", "content": "I live in Leeds."}) + "\n")
    memory = MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")
    try:
        with pytest.raises(ModelMissing, match=r"facts.onnx.*scripts/fit_facts.py"):
            memory.ingest(turns, user="ade")
    finally:
        memory.close()


def test_the_extraction_reads_the_users_turns_only() -> None:
    """The five arrays from a conversation: what the assistant and a tool said is never read
    as the user's; a decision, a piece of work handed over and the user's emoji are kept."""
    from mnemoledger.commands.llm.rules.extract import extract
    from mnemoledger.commands.llm.schemas import ConversationTurn, ExtractInput

    said = [
        ("user", "My sister Anna lives in Rome. We decided to use Postgres for the ledger 🙂"),
        ("assistant", "I love helping. My friend Bob lives in Oslo and hates olives."),
        ("tool", "I hate tool output"),
        ("user", "Here is the final Landing_Page copy: Remember everything."),
    ]
    output = extract(
        ExtractInput(conversation=[ConversationTurn(role=r, content=c) for r, c in said])
    )
    everything = [f for name in type(output).model_fields for f in getattr(output, name)]
    assert [f.key for f in output.decisions] == ["decision/use-postgres-for-the-ledger"]
    assert [(f.key, f.value) for f in output.artifacts] == [
        ("artifact/landing-page-copy", "Remember everything.")
    ]
    assert "style/uses-emojis" in {f.key for f in output.styles}
    assert not any(
        word in f"{f.key} {f.value}".casefold()
        for f in everything
        for word in ("bob", "oslo", "olive", "helping", "tool output")
    )
