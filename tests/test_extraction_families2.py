"""The families of the misses of holdout7 (scored blind once, then opened), each checked on
sentences of neither holdout7 nor dev12: a rule that fits only the listed sentence fails them
(issue 15)."""

from __future__ import annotations

import pytest

from mnemoledger.commands.llm.rules.extract import answered
from tests.extraction_reading import extracted as _extracted
from tests.extraction_reading import facts_of as _facts


def _said(*texts: str) -> dict[str, str]:
    return _extracted(*(("user", text) for text in texts))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # what the user does in their own time is what they like
        (
            "In my spare time I knit and listen to a lot of audiobooks.",
            {"knitting": "User enjoys knitting", "audiobooks": "User enjoys audiobooks"},
        ),
        (
            "outside of work I do judo and watch old westerns",
            {"judo": "User enjoys judo", "old-westerns": "User enjoys old westerns"},
        ),
        (
            "Saturdays are for gardening and long lunches",
            {"gardening": "User enjoys gardening", "long-lunches": "User enjoys long lunches"},
        ),
        (
            "I love cooking, mostly curries",
            {"cooking": "User loves cooking", "curries": "User likes curries"},
        ),
        ("I really can't bear musicals", {"musicals": "User dislikes musicals"}),
        ("the weekend is usually for rugby", {"rugby": "User enjoys rugby"}),
    ],
)
def test_pastimes_and_likes(sentence: str, expected: dict[str, str]) -> None:
    found = _said(sentence)
    for key, value in expected.items():
        assert found.get(key) == value


def test_set_aside_time_is_no_schedule_and_work_is_no_pastime() -> None:
    found = _said("evenings are for reading and chess")
    assert not any(key.startswith("user/schedule") for key in found)
    assert not _said("in my spare time I need to work on my thesis").keys() & {"working"}
    assert not any(k.startswith("laundry") for k in _said("sundays are for laundry and admin"))


@pytest.mark.parametrize(
    ("question", "answer", "statement"),
    [
        ("Any favourite painters?", "Hockney, definitely", "I love Hockney"),
        (
            "Who's your favourite band?",
            "Blur. I saw them in 1995",
            "I love Blur. I saw them in 1995",
        ),
        ("Which team do you support?", "Celtic", "I love Celtic"),
        ("What's your favourite film?", "hard to say", "hard to say"),
        ("What kind of films do you like?", "Mostly westerns", "I love westerns"),
        ("What do you do?", "Mostly remote stuff. I'm a dev", "Mostly remote stuff. I'm a dev"),
    ],
)
def test_a_short_answer_to_a_favourite_question(question: str, answer: str, statement: str) -> None:
    assert answered(question, answer) == statement


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # jobs said by what one studies or the field one works in; jobs one does not do
        ("I study geology part-time", {("occupation", "studies geology")}),
        ("I am study economics in college", {("occupation", "studies economics")}),
        ("I study with friends on Zoom", set()),
        ("I study better in the library", set()),
        ("I work in HR, mostly from home", {("occupation", "HR")}),
        ("I work in sales at Oracle", {("employer", "Oracle")}),
        (
            "I'm a nurse, not a doctor",
            {("occupation", "nurse"), ("occupation", "not a doctor")},
        ),
        (
            "I'm not an accountant, I'm a bookkeeper",
            {("occupation", "bookkeeper"), ("occupation", "not an accountant")},
        ),
        ("I'm not a lawyer anymore, I teach now", set()),
        ("my wife is a vet, not a doctor", set()),
        # three-part names, a country then its town
        ("Hi, I am Le Thi Mai, I work in a bakery", {("name", "Le Thi Mai")}),
        ("My name is Ana Paula Souza.", {("name", "Ana Paula Souza")}),
        ("I am NOT happy with this", set()),
        ("I am from Brazil, Recife city.", {("hometown", "Recife")}),
        ("I'm from Poland, Wrocław originally", {("hometown", "Wrocław")}),
        ("I come from Ghent", {("hometown", "Ghent")}),
        ("my husband comes from Ghent", set()),
        # a language the user works at
        ("I want to improve my Italian for my job", {("language", "Italian")}),
        ("I'm brushing up on my Greek", {("language", "Greek")}),
        ("I'm trying to improve my Dutch", {("language", "Dutch")}),
        ("I would like to improve my cooking", set()),
        ("I'm learning to code", set()),
        # what a diet leaves out, and the exception to a food left out
        (
            "I'm vegetarian, so no eggs or gelatine please",
            {("diet", "vegetarian"), ("diet", "no eggs"), ("diet", "no gelatine")},
        ),
        ("I'm vegan so no meat or fish obviously", {("diet", "vegan")}),
        ("I'm halal so no pub quizzes", {("diet", "halal")}),
        (
            "I don't eat pork but lamb is fine",
            {("diet", "no pork"), ("diet", "eats lamb")},
        ),
        ("I don't eat meat", {("diet", "vegetarian")}),
        ("I don't drink coffee, tea is fine", set()),
        # tools without a subject, by what they do, lived in, given up
        ("use notion and miro daily", {("tool", "notion"), ("tool", "miro")}),
        ("Obsidian has everything I need", {("tool", "Obsidian")}),
        ("Asana runs my whole week", {("tool", "Asana")}),
        ("my manager runs my whole life", set()),
        ("we live in Teams and Excel", {("tool", "Teams"), ("tool", "Excel")}),
        ("I don't use Evernote any more", {("tool", "does not use Evernote")}),
        ("we moved from Lyon to Nantes last year", {("location", "Nantes")}),
        ("I am study law in university", {("occupation", "studies law")}),
    ],
)
def test_stated_facts_of_the_families(sentence: str, expected: set[tuple[str, str]]) -> None:
    assert _facts(sentence) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # the day the user has free; a list whose parts are schedules of their own
        ("friday I'm off", {("schedule", "off on friday")}),
        ("the week is busy, only saturday I am free", {("schedule", "free on saturday")}),
        (
            "yoga at 7 every morning and book club thursday nights",
            {("schedule", "yoga at 7 every morning"), ("schedule", "book club thursday nights")},
        ),
        (
            "I swim on Tuesdays, Thursdays and Sundays",
            {("schedule", "swimming on Tuesdays, Thursdays and Sundays")},
        ),
        ("my daughter has ballet on mondays and swimming on fridays", set()),
        # in a note of fragments: the shift, the named place of work
        ("earlies.", {("schedule", "earlies")}),
        ("night shifts mostly", {("schedule", "night shifts")}),
        ("st mary's", {("employer", "st mary's")}),
        ("western general hospital", {("employer", "western general hospital")}),
        ("the hospital", set()),
        # what the work due is, said after its date
        (
            "deadline for the grant is the 3rd, a research proposal",
            {("deadline", "grant (research proposal) due the 3rd")},
        ),
        ("the essay is due Monday, a long one", {("deadline", "essay due Monday")}),
        # a form's field left empty
        ("Allergies: none", set()),
        ("Languages: n/a", set()),
        # a lower-case note of job, employer and town, typos and all
        (
            "im a nurce at the royal, abedeen",
            {("occupation", "nurce"), ("employer", "the royal"), ("location", "abedeen")},
        ),
        ("im a regular at joes, lol", set()),
    ],
)
def test_more_stated_facts_of_the_families(sentence: str, expected: set[tuple[str, str]]) -> None:
    assert _facts(sentence) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Use headings and go easy on the technical words", {"style/plain-language"}),
        ("keep the technical words to a minimum please", {"style/plain-language"}),
        ("I'm not a techie so keep it simple", {"style/plain-language"}),
        ("use numbered lists and no long intros", {"style/prefers-terse-responses"}),
    ],
)
def test_each_wish_of_a_clause_keeps_its_own_polarity(sentence: str, expected: set[str]) -> None:
    assert expected <= {k for k in _said(sentence) if k.startswith("style/")}


def test_a_request_is_no_schedule_and_an_employer_no_project() -> None:
    assert not any(k.startswith("user/schedule") for k in _said("need recipe ideas for after work"))
    found = _said("I quit Lidl in May, now I work at a bakery called Crumbs")
    assert found.get("user/employer") == "Crumbs"
    assert not any(k.startswith("project/") for k in found)
