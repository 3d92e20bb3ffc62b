"""The seed table (issue 19): docs/seed-coverage.md's summary is the count of its rows. The
README links the page and names no seed (issue 30, tests/test_docs.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script() -> object:
    spec = importlib.util.spec_from_file_location(
        "seed_coverage_summary", ROOT / "scripts" / "seed_coverage_summary.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_summary_is_the_count_of_the_rows_and_the_readme_links_it() -> None:
    script = _script()
    doc = (ROOT / "docs" / "seed-coverage.md").read_text(encoding="utf-8")
    counted = script.summary(script.count(doc))  # type: ignore[attr-defined]
    rows = [line for line in counted.splitlines() if line.startswith("| 00") or "**all**" in line]
    assert len(rows) == 6
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/seed-coverage.md)" in readme
    for row in rows:
        assert row in doc, row
    total = sum(script.count(doc)[seed].total() for seed in script.SEEDS)  # type: ignore[attr-defined]
    assert total == 206  # every heading of the five seeds has a row
