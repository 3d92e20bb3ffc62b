"""A schedule or deadline said in words no rule reads is kept in the user's own words.

The sentences here are new (in no labelled set): the word rules read none of them, and the
clause classifier (commands/data/extractor.json) tells a schedule or a deadline from the rest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm.rules.extract import extract
from mnemoledger.commands.llm.rules.learned import scores
from mnemoledger.commands.llm.rules.text import OWN_WORDS_TAG
from mnemoledger.commands.llm.schemas import ConversationTurn, ExtractInput
from mnemoledger.ledger import Settings


def _user_facts(text: str) -> dict[str, tuple[str, list[str]]]:
    out = extract(ExtractInput(conversation=[ConversationTurn(role="user", content=text)]))
    return {f.key: (f.value, f.tags) for f in out.preferences if f.key.startswith("user/")}


@pytest.fixture
def memory(tmp_path: Path) -> MnemoLedger:
    with MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing"), actor="t") as m:
        yield m


def test_the_classifier_loads() -> None:
    assert set(scores("the report is due on Friday")) >= {"schedule", "deadline"}


@pytest.mark.parametrize(
    ("text", "attribute", "words"),
    [
        ("I'm on lates all next fortnight, 2 till 10", "schedule", "lates 2 till 10"),
        ("the visa paperwork has to reach the embassy before 3 June", "deadline", "visa June"),
        (
            "The boiler inspection must be booked before the end of the month",
            "deadline",
            "boiler inspection month",
        ),
    ],
)
def test_a_schedule_or_deadline_no_rule_reads_is_kept(
    text: str, attribute: str, words: str
) -> None:
    facts = _user_facts(text)
    kept = [(k, v) for k, (v, tags) in facts.items() if OWN_WORDS_TAG in tags]
    assert len(kept) == 1, facts
    key, value = kept[0]
    assert key.startswith(f"user/{attribute}/")
    assert set(words.lower().split()) <= set(value.lower().replace(",", "").split())


@pytest.mark.parametrize(
    "text",
    [
        "my brother has swimming on tuesdays",  # someone else's
        "would you check the weather for thursday?",  # a question
        "I have a dentist appointment at 4 today",  # once, no schedule
    ],
)
def test_nothing_is_kept_from_others_questions_or_one_offs(text: str) -> None:
    assert not [k for k, (_, tags) in _user_facts(text).items() if OWN_WORDS_TAG in tags]


def test_a_kept_deadline_said_again_in_other_words_is_one_memory(memory: MnemoLedger) -> None:
    said = [
        "the visa paperwork has to reach the embassy before 3 June",
        *[f"filler message number {n} about nothing much" for n in range(8)],
        "3 June is when the visa paperwork has to reach the embassy",
    ]
    memory.ingest([{"role": "user", "content": text} for text in said], user="u")
    visa = [m for m in memory.list(user="u", state="active") if "visa" in m.content.lower()]
    assert len(visa) == 1, [(m.key, m.content) for m in visa]
    assert visa[0].namespace == "tacit/user" and (visa[0].key or "").startswith("deadline/")


def test_a_kept_clause_another_memory_already_says_is_not_written(memory: MnemoLedger) -> None:
    """'I drink oolong every afternoon' alone is kept as a schedule; after 'I love oolong tea',
    even many turns earlier (another extraction window), ingest holds it already."""
    assert [
        k
        for k, (_, t) in _user_facts("I drink oolong every afternoon").items()
        if OWN_WORDS_TAG in t
    ]
    said = [
        "I love oolong tea",
        *[f"filler message number {n} about nothing much" for n in range(8)],
        "I drink oolong every afternoon",
    ]
    memory.ingest([{"role": "user", "content": text} for text in said], user="u")
    oolong = [m for m in memory.list(user="u", state="active") if "oolong" in m.content.lower()]
    assert [m.namespace for m in oolong] == ["tacit/preferences"], [
        (m.key, m.content) for m in oolong
    ]
