"""Kinds of statement the offline extractor reads by their form, not by a listed sentence
(issue 15): notes in fragments, lists and forms, towns by the shipped gazetteer, corrections,
suppositions, schedules without a verb. Every sentence here is new: none is from a labelled
set, so a rule fitted to one example fails them."""

from __future__ import annotations

import pytest

from mnemoledger.commands.llm.rules.extract import extract
from mnemoledger.commands.llm.rules.user_facts import known_place, list_items, stated_facts
from mnemoledger.commands.llm.schemas import ConversationTurn, ExtractInput


def _facts(sentence: str, earlier: tuple[str, ...] = ()) -> set[tuple[str, str]]:
    return {(f.attribute, f.value) for f in stated_facts(sentence, earlier)}


def _extracted(*turns: str) -> dict[str, str]:
    out = extract(
        ExtractInput(conversation=[ConversationTurn(role="user", content=t) for t in turns])
    )
    return {f.key: f.value for f in [*out.preferences, *out.styles]}


def test_the_gazetteer_knows_towns_not_words() -> None:
    """GeoNames' towns (shipped in commands/data/extractor.json), accents and case aside;
    ordinary words that are also towns are left out."""
    assert known_place("Kraków") and known_place("krakow") and known_place("Ouagadougou")
    assert not known_place("Reading") and not known_place("marketing")
    assert not known_place("Acme")


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a town in a place's slot, in any voice, and a town is no employer
        (
            "I'm a welder for a shipyard in Gdańsk",
            {("occupation", "welder"), ("location", "Gdańsk")},
        ),
        ("yo im a barber in lagos", {("occupation", "barber"), ("location", "Lagos")}),
        ("I'm in Valparaíso btw", {("location", "Valparaíso")}),
        ("I was in Kyoto last spring.", set()),
        ("She's in Nairobi most weeks.", set()),
        # notes in fragments: a bare job, a known town, software from the lexicon
        ("hi, florist, leeds", {("occupation", "florist"), ("location", "Leeds")}),
        ("kotlin and gradle all day", {("tool", "kotlin"), ("tool", "gradle")}),
        (
            "Bio: data engineer at Wise, Tallinn",
            {("occupation", "data engineer"), ("employer", "Wise"), ("location", "Tallinn")},
        ),
        # forms with other separators
        ("Employer = Siemens Energy", {("employer", "Siemens Energy")}),
        ("Position - nurse at Charité", {("occupation", "nurse"), ("employer", "Charité")}),
        # schedules written as notes
        ("choir tues 7:30pm", {("schedule", "choir tues 7:30pm")}),
        ("Fri: pottery class", {("schedule", "pottery class Fri")}),
        ("good evening", set()),
        # suppositions and other people state nothing
        ("If I took the job in Oslo, would I need Norwegian?", set()),
        ("my flatmate is a chef in Turin", set()),
        # non-native and casual forms
        (
            "I have since two years a job as cook by Hilton",
            {("occupation", "cook"), ("employer", "Hilton")},
        ),
        ("myself Ananya, working as nurse", {("name", "Ananya"), ("occupation", "nurse")}),
        ("I speak yoruba and a bit of french", {("language", "Yoruba"), ("language", "French")}),
        (
            "payroll report has to go out by the end of May",
            {("deadline", "payroll report due the end of May")},
        ),
    ],
)
def test_kinds_by_their_form(sentence: str, expected: set[tuple[str, str]]) -> None:
    assert _facts(sentence) == expected


def test_a_correction_replaces_the_value_said_before() -> None:
    earlier = ("I'm a pharmacist in Leeds",)
    assert _facts("sorry, Bradford, not Leeds", earlier) == {("location", "Bradford")}
    assert _facts("it's optician actually, not pharmacist", earlier) == {("occupation", "optician")}


def test_list_items_each_stand_alone() -> None:
    assert list_items("About me:\n- Plumber\n- Vegan") == "About me:\nPlumber\nVegan"
    assert list_items("job: vet / city: york") == "job: vet\ncity: york"


def test_a_signature_names_the_writer_and_a_header_lists_likes() -> None:
    found = _extracted("Kind regards,\nTomás Ruiz\nSolicitor | Garrigues | Madrid")
    assert found["user/name"] == "Tomás Ruiz"
    assert found["user/occupation"] == "Solicitor"
    assert found["user/employer"] == "Garrigues"
    assert found["user/location"] == "Madrid"
    liked = _extracted("Things I hate:\n- Traffic\n- Loud bars")
    assert liked == {"traffic": "User dislikes Traffic", "loud-bars": "User dislikes Loud bars"}


def test_a_short_answer_to_the_assistants_question_states_the_fact() -> None:
    """A fact spread over two turns: the assistant asks, the user answers in a word or two."""
    turns = [
        ConversationTurn(role="assistant", content="Where do you live these days?"),
        ConversationTurn(role="user", content="Bilbao"),
        ConversationTurn(role="assistant", content="And what do you do?"),
        ConversationTurn(role="user", content="an optometrist"),
        ConversationTurn(role="assistant", content="Nice! Anything else?"),
        ConversationTurn(role="user", content="Paris"),
    ]
    found = {f.key: f.value for f in extract(ExtractInput(conversation=turns)).preferences}
    assert found == {"user/location": "Bilbao", "user/occupation": "optometrist"}


def _related(sentence: str) -> set[str]:
    out = extract(ExtractInput(conversation=[ConversationTurn(role="user", content=sentence)]))
    return {f.key for f in out.entities if f.key.split("/")[0] in ("person", "pet")}


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a liking of three or more things in a row is one liking each
        (
            "I adore sailing, crosswords and salted caramel.",
            {"sailing", "crosswords", "salted-caramel"},
        ),
        ("I love my mum, my dad and my job", {"mum"}),
        # a form's header for tastes, written on one line
        ("things i can't stand: queues, slow wifi", {"queues", "slow-wifi"}),
        ("Hobbies: pottery, chess, my cat Ziggy", {"pottery", "chess"}),
        # "a <thing> person" is a taste; a time of day is not
        ("Honestly not a big beer person", {"beer"}),
        ("I'm definitely more of a cat person", {"cat"}),
        ("not really an early person tbh", set()),
    ],
)
def test_tastes_in_series_headers_and_persons(sentence: str, expected: set[str]) -> None:
    found = _extracted(sentence)
    assert {k for k in found if "/" not in k} == expected


def test_a_person_taste_keeps_its_side() -> None:
    assert _extracted("Honestly not a big beer person")["beer"] == "User dislikes beer"
    assert _extracted("I'm definitely more of a cat person")["cat"] == "User likes cat"


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # each allergen of a list, and "allergic" after another clause of the user's
        (
            "I'm allergic to latex and bee stings, just so you know",
            {("allergy", "latex"), ("allergy", "bee stings")},
        ),
        (
            "I'm gluten intolerant and allergic to sulphites",
            {("allergy", "gluten"), ("allergy", "sulphites")},
        ),
        ("My son is allergic to peanuts and eggs", set()),
        # an adverb before the negated verb, a subject left out, "don't do <food>"
        ("I generally don't eat pork.", {("diet", "no pork")}),
        ("also dont do gluten", {("diet", "no gluten")}),
        ("I don't do Mondays", set()),
        # the days the user works
        ("I work wed thu fri", {("schedule", "work wed thu fri")}),
        (
            "I'm mostly in the office Tuesday to Thursday",
            {("schedule", "in the office Tuesday to Thursday")},
        ),
        ("I don't work weekends", set()),
        # where the user writes from is where they are; "coming from" a town is a hometown
        ("writing to you from Tbilisi", {("location", "Tbilisi")}),
        (
            "I am coming from Lima but I live in Quito",
            {("hometown", "Lima"), ("location", "Quito")},
        ),
        ("I'm coming from the dentist", set()),
        # the employer the user is at now, named by "called"
        ("These days I'm at a fintech called Ramp", {("employer", "Ramp")}),
    ],
)
def test_lists_adverbs_working_days_and_where_from(
    sentence: str, expected: set[tuple[str, str]]
) -> None:
    assert _facts(sentence) == expected


def test_reply_language_in_lower_case_and_plain_words() -> None:
    assert _extracted("reply in german pls") == {"style/reply-language": "Wants replies in German"}
    assert "style/plain-language" in _extracted("could you talk to me plainly")


def test_several_relatives_or_pets_named_at_once() -> None:
    assert _related("our dogs, Rex and Luna, need a walk at 7") == {"pet/rex", "pet/luna"}
    assert _related("My grandchildren Ada, Noor and Eli visit on Sundays") == {
        "person/ada",
        "person/noor",
        "person/eli",
    }
    assert _related("I've been married to Ahmed for 20 years") == {"person/ahmed"}
    assert _related("I read Tolstoy and Chekhov") == set()


def test_an_aside_is_no_liking_and_an_ended_past_no_current_fact() -> None:
    assert _extracted("I don't drink coffee, only rooibos") == {
        "coffee": "User does not drink coffee",
        "rooibos": "User likes rooibos",
    }
    assert _extracted("I can't stand musicals, just saying") == {
        "musicals": "User dislikes musicals"
    }
    assert _facts("I worked at Siemens until March") == set()
    assert _facts("spent six years at Ikea before this") == set()
    assert _facts("I've worked at Ikea for six years") == {("employer", "Ikea")}


def test_two_scheduled_things_in_one_sentence() -> None:
    assert _facts("Choir is on Mondays and the book club meets every other Thursday") == {
        ("schedule", "choir on Mondays"),
        ("schedule", "book club every other Thursday"),
    }


def test_where_the_user_grew_up_is_no_town_they_live_in() -> None:
    found = _extracted("I was born in Tartu but grew up in Riga.")
    assert found.get("user/hometown") == "Tartu"
    assert "user/location" not in found
    moved = _extracted("I grew up in Kumasi and moved to Ottawa for work and stayed.")
    assert moved.get("user/location") == "Ottawa"
