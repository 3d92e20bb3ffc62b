"""Extraction that keeps what was said (issue 15, item 2), with the offline provider.

How well the facts model reads new authors' conversations is measured by
`scripts/eval_extraction.py` (docs/benchmarks.md), never asserted here on data it was fitted
on; the 150-turn repro (15 statements, each said 10 times in other words) must give one memory per
statement, reinforced rather than copied, with its polarity.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.write.ingest import user_profile
from mnemoledger.ledger import Settings

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "extraction_set.jsonl"


def _eval_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "eval_extraction", ROOT / "scripts" / "eval_extraction.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


EVAL = _eval_module()


@pytest.fixture
def memory(home: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        yield m


# --- the labelled set ------------------------------------------------------------------------


def test_the_labelled_set_is_large_and_split() -> None:
    conversations = EVAL.load(DATA)
    assert len(conversations) >= 30
    assert {c["split"] for c in conversations} == {"dev", "heldout"}
    assert sum(c["split"] == "heldout" for c in conversations) * 3 >= len(conversations) - 2
    assert all(sum(t["role"] == "user" for t in c["turns"]) >= 3 for c in conversations)


# --- the 150-turn repro ------------------------------------------------------------------------

STATEMENTS: dict[tuple[str, str, str], list[str]] = {
    ("name", "Jordan", "+"): [
        "My name is Jordan.",
        "I'm Jordan, by the way.",
        "Call me Jordan.",
        "Hi, Jordan here again.",
        "Just a reminder that my name's Jordan.",
        "It's Jordan, in case you forgot.",
        "You can call me Jordan.",
        "Hey, it's Jordan.",
        "This is Jordan writing again.",
        "People call me Jordan.",
    ],
    ("occupation", "backend engineer", "+"): [
        "I'm a backend engineer.",
        "I work as a backend engineer.",
        "As you know, I am a backend engineer.",
        "My job is backend engineer.",
        "I've been a backend engineer for six years.",
        "Remember I'm a backend engineer, so skip the basics.",
        "I'm currently a backend engineer.",
        "Being a backend engineer, I think in APIs.",
        "I work as a backend engineer on payments.",
        "I'm still a backend engineer, nothing changed.",
    ],
    ("employer", "Northwind", "+"): [
        "I work at Northwind.",
        "I'm employed by Northwind.",
        "I work for Northwind these days.",
        "My employer is Northwind.",
        "I've been working at Northwind since 2021.",
        "I'm a backend engineer at Northwind.",
        "We at Northwind ship every week.",
        "I still work for Northwind.",
        "Northwind is my employer.",
        "I'm at Northwind, on the payments team.",
    ],
    ("location", "Lisbon", "+"): [
        "I live in Lisbon.",
        "I'm based in Lisbon.",
        "I moved to Lisbon two years ago.",
        "Home for me is Lisbon.",
        "I'm living in Lisbon now.",
        "Here in Lisbon it's sunny today.",
        "I currently live in Lisbon.",
        "Lisbon is where I live.",
        "We live in Lisbon, near the river.",
        "I reside in Lisbon.",
    ],
    ("diet", "vegetarian", "+"): [
        "I'm vegetarian.",
        "I am a vegetarian.",
        "As a vegetarian, I skip the meat dishes.",
        "I don't eat meat.",
        "I've been vegetarian for ten years.",
        "Remember, I'm vegetarian, so no chicken.",
        "I eat vegetarian.",
        "Vegetarian here, so no steak please.",
        "I follow a vegetarian diet.",
        "I never eat meat, I'm vegetarian.",
    ],
    ("tool", "pytest", "+"): [
        "I use pytest for testing.",
        "We use pytest for all our tests.",
        "My test runner is pytest.",
        "I write my tests with pytest.",
        "I always use pytest.",
        "Our test suite runs on pytest.",
        "I rely on pytest for everything.",
        "pytest is my testing framework.",
        "I test with pytest.",
        "I mostly use pytest fixtures.",
    ],
    ("schedule", "standup 9:30", "+"): [
        "Our standup is at 9:30.",
        "The daily standup is at 9:30 every morning.",
        "We have standup at 9:30.",
        "Standup starts at 9:30.",
        "My standup is every day at 9:30.",
        "I have standup at 9:30 each day.",
        "Team standup happens at 9:30.",
        "We do standup at 9:30 sharp.",
        "Our daily standup starts at 9:30.",
        "The standup meeting is at 9:30.",
    ],
    ("deadline", "migration Friday", "+"): [
        "The migration is due Friday.",
        "The deadline for the migration is Friday.",
        "I have to finish the migration by Friday.",
        "The migration deadline is Friday.",
        "Our migration is due on Friday.",
        "The migration has to be done by Friday.",
        "I need to ship the migration by Friday.",
        "The migration's due Friday.",
        "Friday is the deadline for the migration.",
        "We must deliver the migration by Friday.",
    ],
    ("schedule", "running morning", "+"): [
        "I go running every morning.",
        "I run every morning.",
        "I go for a run every morning.",
        "Every morning I go running.",
        "I usually go running in the morning.",
        "I jog every morning before work.",
        "Running every morning keeps me sane.",
        "I go running each morning.",
        "Every morning, I'm out for a run.",
        "I run every morning before work.",
    ],
    ("style", "casual", "+"): [
        "I like a casual tone, not formal.",
        "Please keep it casual, not formal.",
        "Be casual with me, no formal language.",
        "I prefer a casual tone over a formal one.",
        "Casual is better for me, not formal.",
        "Keep the tone casual, don't be formal.",
        "A casual tone please, nothing formal.",
        "I like it casual, not formal.",
        "Talk to me casually, not formally.",
        "Go casual, not formal.",
    ],
    ("tool", "Neovim", "+"): [
        "I use Neovim.",
        "My editor is Neovim.",
        "I code in Neovim.",
        "I'm a Neovim user.",
        "Neovim is my editor.",
        "I do all my editing in Neovim.",
        "I write code in Neovim.",
        "My main editor is Neovim.",
        "I always use Neovim.",
        "I mostly use Neovim.",
    ],
    ("preference", "green tea", "+"): [
        "I love green tea.",
        "I like green tea.",
        "I really enjoy green tea.",
        "Green tea is my favourite drink.",
        "I prefer green tea.",
        "I'm a big fan of green tea.",
        "I adore green tea.",
        "I drink green tea every day.",
        "I really like green tea.",
        "I love a cup of green tea.",
    ],
    ("style", "emoji", "-"): [
        "Please don't use emojis.",
        "No emojis, please.",
        "I don't like emojis.",
        "Skip the emojis.",
        "Avoid emojis in your replies.",
        "I hate emojis.",
        "Don't put emojis in answers.",
        "No emoji please.",
        "I dislike emojis.",
        "Never use emojis with me.",
    ],
    ("preference", "long meetings", "-"): [
        "I hate long meetings.",
        "I dislike long meetings.",
        "I can't stand long meetings.",
        "I really don't like long meetings.",
        "Long meetings drive me crazy.",
        "I'm not a fan of long meetings.",
        "I do not like long meetings.",
        "I hate long meetings so much.",
        "Honestly I hate long meetings.",
        "I really dislike long meetings.",
    ],
    ("allergy", "peanuts", "+"): [
        "I'm allergic to peanuts.",
        "I have a peanut allergy.",
        "I am allergic to peanuts.",
        "Peanuts make me sick, I'm allergic.",
        "I'm severely allergic to peanuts.",
        "Remember my peanut allergy.",
        "I'm allergic to peanuts, so no satay.",
        "No peanuts for me, I'm allergic to peanuts.",
        "I've got a peanut allergy.",
        "I am very allergic to peanuts.",
    ],
}


def repro_turns() -> list[dict[str, Any]]:
    """150 user turns: the 15 statements' 10 wordings each, shuffled (a fixed seed)."""
    said = [text for wordings in STATEMENTS.values() for text in wordings]
    random.Random(15).shuffle(said)
    return [{"role": "user", "content": text} for text in said]


def test_the_repro_has_150_turns_of_15_statements() -> None:
    assert len(STATEMENTS) == 15 and all(len(w) == 10 for w in STATEMENTS.values())
    assert len(repro_turns()) == 150


def _holders(memories: list[MemoryOut], attribute: str, value: str, polarity: str) -> list[str]:
    """The memories that state one labelled fact, as the evaluation reads them."""
    fact = EVAL.Labelled(attribute, value, polarity)
    return [m.id for m in memories if EVAL.matches(fact, EVAL.reading(m))]


def test_150_turns_give_one_memory_per_statement_reinforced_not_copied(
    memory: MnemoLedger,
) -> None:
    result = memory.ingest(repro_turns(), user="jordan")
    memories = [m for m in memory.list(user="jordan", state="active") if m.key != "directive"]
    by_id = {m.id: m for m in memories}
    for attribute, value, polarity in STATEMENTS:
        holders = _holders(memories, attribute, value, polarity)
        assert len(holders) == 1, (attribute, value, [by_id[i].content for i in holders])
        [held] = [by_id[i] for i in holders]
        # said ten times: one memory, reinforced as the wordings came
        assert held.metadata is not None and held.metadata["reinforced_count"] >= 2, held
        assert held.confidence is not None and held.confidence > 0.9, held
    # never a copy of a statement (each has one holder above, none twice in one text); a
    # stray reading of a wording ("Our test suite runs on pytest" read as a schedule) is the
    # facts model's precision, measured by scripts/eval_extraction.py, not asserted here
    assert len({m.content.casefold() for m in memories}) == len(memories)
    assert not result.reinforced  # all new: the repetitions reinforced them as they came


def test_the_repro_keeps_polarity(memory: MnemoLedger) -> None:
    memory.ingest(repro_turns(), user="jordan")
    memories = [m for m in memory.list(user="jordan", state="active") if m.key != "directive"]
    for attribute, value, polarity in [
        ("style", "casual", "+"),
        ("style", "emoji", "-"),
        ("preference", "long meetings", "-"),
        ("preference", "green tea", "+"),
    ]:
        assert len(_holders(memories, attribute, value, polarity)) == 1, (attribute, value)
        flipped = "-" if polarity == "+" else "+"
        assert _holders(memories, attribute, value, flipped) == [], (attribute, value)


def test_the_repro_lands_in_the_profile(memory: MnemoLedger) -> None:
    memory.ingest(repro_turns(), user="jordan")
    profile = memory.profile("jordan")  # catches the read models up
    derived = user_profile(memory.layers.list("jordan", state="active"))
    # name and city are sensitive fields (seed 003 §10): `profile` may hold them back until
    # a consent is granted, so they are checked on the profile as derived from the memories
    assert derived["display_name"] == "Jordan" and derived["location"] == "Lisbon"
    assert profile["occupation"] == "backend engineer"
    assert profile["employer"] == "Northwind"
    assert profile["diet"].casefold().startswith("vegetarian")
    assert "pytest" in profile["tools"] and "Neovim" in profile["tools"]
    schedules = profile["schedules"].casefold()
    assert "standup" in schedules and "run" in schedules and "morning" in schedules
    assert "migration" in profile["deadlines"] and "Friday" in profile["deadlines"]
    assert profile["allergies"].startswith("peanut")
    assert {k: v for k, v in derived.items() if k in profile} == profile


# a second repro, in another voice: 15 other statements, 10 wordings each
OTHER_WORDS: list[list[str]] = [
    [
        "Hi, I'm Alex.",
        "My name is Alex.",
        "Alex here.",
        "It's Alex again.",
        "Call me Alex.",
        "I'm Alex, remember?",
        "You're talking to Alex.",
        "Alex is my name.",
        "Hey, Alex again!",
        "As I said, I'm Alex.",
    ],
    [
        "I'm a data scientist.",
        "I work as a data scientist.",
        "My job is data scientist.",
        "I'm a data scientist by profession.",
        "Data scientist here.",
        "I've been a data scientist for years.",
        "Being a data scientist, I love stats.",
        "I'm employed as a data scientist.",
        "As a data scientist I use notebooks a lot.",
        "I'm still a data scientist.",
    ],
    [
        "I'm a vegetarian.",
        "I don't eat meat.",
        "Vegetarian, remember.",
        "No meat for me, I'm vegetarian.",
        "I've been vegetarian since 2015.",
        "As a vegetarian, I need meatless recipes.",
        "I'm vegetarian so skip the bacon.",
        "Being vegetarian matters to me.",
        "I eat a vegetarian diet.",
        "I'm strictly vegetarian.",
    ],
    [
        "We use pytest for tests.",
        "I test everything with pytest.",
        "pytest is our test framework.",
        "Our tests run on pytest.",
        "I write tests in pytest.",
        "I use pytest.",
        "My testing tool is pytest.",
        "I prefer pytest for testing.",
        "We've standardised on pytest.",
        "pytest is what I use for testing.",
    ],
    [
        "Our standup is at 9:30 every weekday.",
        "Daily standup at 9:30.",
        "Standup's at 9:30.",
        "We have standup every morning at 9:30.",
        "The standup happens at 9:30.",
        "I have a standup at 9:30 each weekday.",
        "Remember standup is at 9:30.",
        "Standup is at 9:30 sharp.",
        "Our team standup is at 9:30.",
        "The daily standup starts at 9:30.",
    ],
    [
        "The Q3 report is due October 15.",
        "The deadline for the Q3 report is October 15.",
        "Q3 report due October 15.",
        "I need to finish the Q3 report by October 15.",
        "The Q3 report deadline is October 15.",
        "October 15 is when the Q3 report is due.",
        "The Q3 report must be done by October 15.",
        "I have to submit the Q3 report by October 15.",
        "Q3 report: due October 15.",
        "Our Q3 report is due on October 15.",
    ],
    [
        "I go running every morning.",
        "I run every morning.",
        "Every morning I go for a run.",
        "I jog each morning.",
        "Morning runs are my routine.",
        "I go running in the morning.",
        "I run before work every morning.",
        "I'm a morning runner.",
        "I go for a run every morning before breakfast.",
        "I run each morning.",
    ],
    [
        "I like a casual tone, not formal.",
        "Keep it casual, not formal.",
        "Please be casual, not formal.",
        "Casual tone please, not formal.",
        "I prefer casual over formal.",
        "No formal tone, keep it casual.",
        "Don't be formal, be casual.",
        "Casual, not formal, please.",
        "I want a casual tone, not a formal one.",
        "Talk casually, not formally.",
    ],
    [
        "I live in Berlin.",
        "I'm based in Berlin.",
        "Berlin is home.",
        "I moved to Berlin in 2019.",
        "I'm living in Berlin.",
        "Home is Berlin.",
        "I reside in Berlin.",
        "We live in Berlin.",
        "I currently live in Berlin.",
        "Berlin is where I live.",
    ],
    [
        "I work at Zalando.",
        "I'm at Zalando.",
        "My employer is Zalando.",
        "I work for Zalando.",
        "I've been at Zalando for 3 years.",
        "I'm employed by Zalando.",
        "Zalando is my employer.",
        "I'm a data scientist at Zalando.",
        "I joined Zalando in 2020.",
        "I still work at Zalando.",
    ],
    [
        "I don't like coffee.",
        "I hate coffee.",
        "Coffee isn't for me.",
        "I can't stand coffee.",
        "I dislike coffee.",
        "No coffee for me, I don't like it.",
        "I'm not a coffee person.",
        "I never drink coffee.",
        "I really don't like coffee.",
        "Coffee is not my thing.",
    ],
    [
        "I use VS Code.",
        "My editor is VS Code.",
        "I code in VS Code.",
        "VS Code is my editor.",
        "I write code in VS Code.",
        "I'm a VS Code user.",
        "I always use VS Code.",
        "My IDE is VS Code.",
        "I mostly use VS Code.",
        "I do all my coding in VS Code.",
    ],
    [
        "Please keep answers short.",
        "Short answers please.",
        "Keep it brief.",
        "I prefer short answers.",
        "Be concise.",
        "Keep your replies short.",
        "Brief answers, please.",
        "I like concise answers.",
        "Please be brief.",
        "Make your answers short.",
    ],
    [
        "I have a dog named Biscuit.",
        "My dog Biscuit is a beagle.",
        "Biscuit, my dog, is sleeping.",
        "My dog is called Biscuit.",
        "I walk my dog Biscuit every day.",
        "Biscuit is my dog.",
        "My beagle Biscuit is cute.",
        "I've got a dog called Biscuit.",
        "My dog's name is Biscuit.",
        "Biscuit the dog says hi.",
    ],
    [
        "I speak Spanish.",
        "I'm fluent in Spanish.",
        "I speak Spanish fluently.",
        "Spanish is my native language.",
        "I can speak Spanish.",
        "I speak Spanish at home.",
        "My first language is Spanish.",
        "I speak fluent Spanish.",
        "I also speak Spanish.",
        "I'm a Spanish speaker.",
    ],
]
OTHER_FACTS = [
    ("name", "Alex", "+"),
    ("occupation", "data scientist", "+"),
    ("diet", "vegetarian", "+"),
    ("tool", "pytest", "+"),
    ("schedule", "standup 9:30", "+"),
    ("deadline", "Q3 report October 15", "+"),
    ("schedule", "running morning", "+"),
    ("style", "casual", "+"),
    ("style", "formal", "-"),
    ("location", "Berlin", "+"),
    ("employer", "Zalando", "+"),
    ("preference", "coffee", "-"),
    ("tool", "VS Code", "+"),
    ("style", "short", "+"),
    ("pet", "Biscuit", "+"),
    ("language", "Spanish", "+"),
]


def test_a_second_repro_in_other_words_loses_nothing(memory: MnemoLedger) -> None:
    """Each fact said ten ways is kept, none twice in the same words. Said in synonyms with
    no word in common ("short", "brief", "concise" replies) a style is still kept as one
    memory per word: the judge's models do not tell a synonym from an antonym of one word
    (docs/benchmarks.md, "Reading facts"), so that is measured, not asserted."""
    said = [text for wordings in OTHER_WORDS for text in wordings]
    random.Random(7).shuffle(said)
    memory.ingest([{"role": "user", "content": text} for text in said], user="alex")
    memories = [m for m in memory.list(user="alex", state="active") if m.key != "directive"]
    for attribute, value, polarity in OTHER_FACTS:
        assert _holders(memories, attribute, value, polarity), (attribute, value, polarity)
    assert len({m.content.casefold() for m in memories}) == len(memories)


def test_a_fact_stated_in_a_later_ingest_is_reinforced(memory: MnemoLedger) -> None:
    first = memory.ingest([{"role": "user", "content": "I'm vegetarian."}], user="u")
    [diet] = [m for m in first.memories if m.key == "diet"]
    assert (diet.namespace, diet.content, diet.confidence) == ("tacit/user", "vegetarian", 0.9)
    again = memory.ingest([{"role": "user", "content": "As a vegetarian, I skip meat."}], user="u")
    assert again.memories == [] and [m.id for m in again.reinforced] == [diet.id]
    assert again.reinforced[0].confidence == pytest.approx(0.92)
    assert again.reinforced[0].metadata is not None
    assert again.reinforced[0].metadata["reinforced_count"] == 2


# --- polarity and holders, sentence by sentence ---------------------------------------------------


def test_the_blind_sets_train_nothing() -> None:
    """The new authors' blind sets (holdout9 to holdout13, each committed before it was
    scored) and the sentences the retired rule tests pinned are only ever measured: the
    shipped facts model was not fitted on them."""
    shipped = json.loads(
        (ROOT / "commands" / "judge" / "models" / "facts.json").read_text(encoding="utf-8")
    )
    fitted = set(shipped["data"])
    assert "tests/data/extraction_dev17.jsonl" in fitted
    for blind in ("holdout9", "holdout10", "holdout11", "holdout12", "holdout13", "rule_tests"):
        assert f"tests/data/extraction_{blind}.jsonl" not in fitted
