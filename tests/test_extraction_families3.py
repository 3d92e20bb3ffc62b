"""The families of the misses of session 13's five new sets (dev13-dev17, five authors) and of
holdout8 (scored blind twice, then opened), each checked on sentences of none of those sets:
a rule that fits only the listed sentence fails them (issue 15)."""

from __future__ import annotations

import pytest

from tests.extraction_reading import extracted as _extracted
from tests.extraction_reading import facts_of as _facts


def _said(*texts: str) -> dict[str, str]:
    return _extracted(*(("user", text) for text in texts))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a language the user is learning is one of their languages, said as learning
        ("I'm learning Greek for my wife's family.", {("language", "learning Greek")}),
        ("studying japanese on the train every day", {("language", "learning Japanese")}),
        ("I have Hindi lessons on Tuesday evenings.", {("language", "learning Hindi")}),
        # other ways of saying a language is one's own
        ("Polish is my first language.", {("language", "Polish")}),
        ("We speak Urdu at home.", {("language", "Urdu")}),
        ("my Italian is a bit rusty", {("language", "Italian")}),
        ("native welsh speaker btw", {("language", "Welsh")}),
        ("I grew up speaking Greek and Turkish", {("language", "Greek"), ("language", "Turkish")}),
        # "I teach X" is a teacher's job: the noun is kept with what they teach
        (
            "I teach chemistry at a sixth form college.",
            {("occupation", "teacher, teaches chemistry")},
        ),
    ],
)
def test_facts_of_the_new_families(sentence: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= _facts(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "My daughter is learning Greek at school.",  # someone else's
        "I love Korean food.",  # a cuisine, not a language
        "my English is not so good, please use easy words",  # the chat's own language
        "I'm learning to drive.",
    ],
)
def test_no_language_is_read_from(sentence: str) -> None:
    assert not {fact for fact in _facts(sentence) if fact[0] == "language"}


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        # dislikes in stronger words
        (("I despise PowerPoint.",), {"powerpoint": "User dislikes PowerPoint"}),
        (("Honestly I abhor reality TV.",), {"reality-tv": "User dislikes reality TV"}),
        # "them" is the plural thing named earlier in the sentence
        (
            ("I'm terrible with houseplants and honestly I hate them.",),
            {"houseplants": "User dislikes houseplants"},
        ),
        (
            ("I'll watch anything except musicals, can't stand them.",),
            {"musicals": "User dislikes musicals"},
        ),
        # the thing first, the liking after
        (("Olives I can't do, too salty.",), {"olives": "User dislikes Olives"}),
        (("Jazz I'm pretty meh about.",), {"jazz": "User dislikes Jazz"}),
        (("Crime novels I love, though.",), {"crime-novels": "User loves Crime novels"}),
        # a liking said as a diet of one thing, or a new interest
        (("At this point I basically live on ramen.",), {"ramen": "User loves ramen"}),
        (("I'm getting really into birdwatching.",), {"birdwatching": "User likes birdwatching"}),
        (("I'm a bit meh about opera.",), {"opera": "User dislikes opera"}),
    ],
)
def test_likings_of_the_new_families(texts: tuple[str, ...], expected: dict[str, str]) -> None:
    said = _said(*texts)
    assert {key: said.get(key) for key in expected} == expected


@pytest.mark.parametrize(
    "text",
    ["I live on the fourth floor.", "We live on a narrowboat.", "I live on Elm Street."],
)
def test_where_one_lives_is_no_liking(text: str) -> None:
    assert not [value for value in _said(text).values() if value.startswith("User loves")]


def test_a_loathed_tool_is_not_a_tool_the_user_uses() -> None:
    said = _said("I loathe Trello, for the record.")
    assert "user/tool/trello" not in said
    assert said.get("trello") == "User dislikes Trello"


def test_an_employer_with_a_dot_in_its_name_is_kept_whole() -> None:
    said = _extracted(
        ("assistant", "What do you do?"),
        ("user", "Product designer at Monday.com. I'm Tomás, by the way."),
    )
    assert said.get("user/employer") == "Monday.com"


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # the date said after a correction is the one that holds
        ("The audit is due Monday, no wait, Wednesday.", "audit due Wednesday"),
        ("my dissertation is due on the fifth, sorry, the sixth", "dissertation due the sixth"),
        # "it is due": what is due was named earlier in the sentence
        (
            "I have to finish the budget forecast, it is due on Thursday.",
            "budget forecast due Thursday",
        ),
        # the day after "end of day", and a day's number written with a full stop
        ("The press release is due end of day Tuesday.", "press release due end of day Tuesday"),
        ("Die Abgabe: the thesis is due 3. March.", "thesis due 3. March"),
    ],
)
def test_deadlines_of_the_new_families(sentence: str, expected: str) -> None:
    assert ("deadline", expected) in _facts(sentence)


@pytest.mark.parametrize(
    ("sentence", "employer"),
    [
        # initials, "St." and "&" belong to the name
        ("I'm an analyst at A.T. Kearney and I need slides.", "A.T. Kearney"),
        ("I work nights at St. Mungo's Hospital.", "St. Mungo's Hospital"),
        ("I'm a partner at Pike & Wren Architects, we do schools.", "Pike & Wren Architects"),
    ],
)
def test_employer_names_of_the_new_families(sentence: str, employer: str) -> None:
    said = _extracted(("user", sentence))
    assert said.get("user/employer") == employer


@pytest.mark.parametrize(
    "text",
    [
        "I don't drink, so no wine pairings please.",
        "I haven't touched alcohol in five years.",
        "for the record: 1. vegetarian 2. no alcohol",
        "I not drink alcohol, also I not eat pork.",
    ],
)
def test_not_drinking_alcohol_is_a_diet(text: str) -> None:
    said = _said(text)
    assert said.get("user/diet/no-alcohol") == "no alcohol"
    assert "alcohol" not in said  # not also a taste


@pytest.mark.parametrize(
    "text",
    ["I don't drink coffee after noon.", "My wife doesn't drink, so no wine for her."],
)
def test_no_alcohol_diet_from(text: str) -> None:
    assert "user/diet/no-alcohol" not in _said(text)


def test_a_reply_language_is_a_style_and_a_spoken_one_a_language() -> None:
    assert "user/language/italian" not in _said("answer in italian please")
    assert _said("We speak in Italian at home.").get("user/language/italian") == "Italian"


@pytest.mark.parametrize(
    ("sentence", "given_up", "kept"),
    [
        ("dropped asana in march, everything's in clickup now", "asana", None),
        ("I switched from Eclipse to IntelliJ last year.", "Eclipse", "IntelliJ"),
        ("photoshop kept freezing so I uninstalled it", "photoshop", None),
    ],
)
def test_software_given_up_is_no_longer_used(
    sentence: str, given_up: str, kept: str | None
) -> None:
    facts = _facts(sentence)
    assert ("tool", f"no longer uses {given_up}") in facts
    if kept is not None:
        assert ("tool", kept) in facts


def test_someone_elses_switch_is_not_the_users() -> None:
    assert not [f for f in _facts("My manager ditched Slack for Teams.") if f[0] == "tool"]


@pytest.mark.parametrize("greeting", ["Salam.", "Oi!", "Privet!", "Habari!"])
def test_a_greeting_is_no_town(greeting: str) -> None:
    said = _extracted(("user", greeting), ("user", "I'm Lina and I live in Amman."))
    assert said.get("user/location") == "Amman"


def test_a_known_town_one_lives_in_replaces_a_name_the_gazetteer_does_not_know() -> None:
    said = _extracted(
        ("user", "I work like cook in Restaurante Dona Flor."),
        ("user", "I live in Salvador with my family."),
    )
    assert said.get("user/location") == "Salvador"


def test_a_town_named_for_someone_else_replaces_nothing() -> None:
    said = _extracted(
        ("user", "I work like cook in Restaurante Dona Flor."),
        ("user", "My co-author in Porto still hasn't replied."),
    )
    assert said.get("user/location") != "Porto"


@pytest.mark.parametrize(
    "text", ["Brief pls.", "concise", "keep it tight please", "Short, thanks!"]
)
def test_a_bare_wish_for_short_replies(text: str) -> None:
    styles = _extracted(("user", "Can you draft a reply to my landlord?"), ("user", text))
    assert styles.get("style/prefers-terse-responses") == "Prefers short, concise responses"


def test_a_short_thing_is_no_wish() -> None:
    assert "style/prefers-terse-responses" not in _said("The walk was short but steep.")


@pytest.mark.parametrize(
    "text", ["Honestly I love it", "Yes I love them", "Oh I hate it", "This one I love"]
)
def test_an_interjection_before_a_liking_names_no_thing(text: str) -> None:
    assert not [v for v in _said(text).values() if v.startswith(("User loves", "User dislikes"))]
