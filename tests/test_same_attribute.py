"""A change no update rule reads, found from what the two statements mean
(`commands/llm/rules/same_attribute.py`): through the public API, the replaced fact leaves
and the others stay; a change word alone replaces nothing; the weights are rebuilt byte for
byte by their script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm.rules import same_attribute
from mnemoledger.commands.llm.rules.updates import supersedes

ROOT = Path(__file__).resolve().parent.parent
POOL = "I swim laps at the Hillside leisure centre"
NEW_POOL = "These days I do my lengths at the new Aquadrome pool instead"
OTHERS = ["My sister Noor teaches maths", "I drive a grey Skoda Octavia"]


def active(memory: MnemoLedger, user: str) -> list[str]:
    return [m.content for m in memory.list(user=user) if m.state == "active"]


def test_the_rules_do_not_read_this_change() -> None:
    assert not any(supersedes(older, NEW_POOL) for older in [POOL, *OTHERS])


def test_a_change_in_other_words_replaces_the_fact_it_is_about(memory: MnemoLedger) -> None:
    for text in [POOL, *OTHERS, NEW_POOL]:
        memory.add([text], user="ines")
    kept = active(memory, "ines")
    assert POOL not in kept
    assert set(OTHERS) <= set(kept) and NEW_POOL in kept
    hits = [h.content for h in memory.search("which pool does the user swim at", user="ines", k=3)]
    assert any("Aquadrome" in h for h in hits) and not any("Hillside" in h for h in hits)


def test_a_change_word_alone_replaces_nothing(memory: MnemoLedger) -> None:
    facts = ["My favourite band is The Specials", "I work nights at a bakery"]
    for text in [*facts, "I've got a rescue greyhound called Dash"]:
        memory.add([text], user="omar")
    assert set(facts) <= set(active(memory, "omar"))


def test_without_a_word_of_change_the_classifier_is_not_asked() -> None:
    assert same_attribute.replaced([POOL], "I do my lengths at the Aquadrome pool") is None
    assert same_attribute.replaced([POOL, *OTHERS], NEW_POOL) == 0


@pytest.mark.slow
def test_the_weights_are_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "update_pairs.json"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fit_update_pairs.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == same_attribute.WEIGHTS.read_bytes()


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # whom a line speaks to is no value of it
        ("Glad it helped ya, Melanie!", "These days I mentor LGBTQ youth at Outreach"),
        # a thing that happened once holds no standing value
        ("Last Friday I went to a counseling workshop in Leeds", "Now I volunteer at Outreach"),
        # two lines alike in what they talk about, naming no value
        ("Lately I've been looking into counseling", "I started looking into counseling careers"),
        # no word of change
        (POOL, "I do my lengths at the Aquadrome pool"),
        # another thing of the kind
        ("Our older dog Bella is a black labrador", "Our new puppy Nugget is a dachshund"),
        # another person's fact
        ("My sister lives in Paris", "My brother moved to Berlin"),
        # what may happen
        ("I work at Halden Bank", "I'm thinking of moving to Corvid Labs next year"),
    ],
)
def test_the_classifier_is_not_asked_of_pairs_that_state_no_new_value(
    older: str, newer: str
) -> None:
    assert not same_attribute.asked(older, newer)
    assert same_attribute.replaced([older], newer) is None


def test_a_new_value_said_as_a_change_is_asked() -> None:
    assert same_attribute.asked(POOL, NEW_POOL)
