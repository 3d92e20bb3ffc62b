"""Recount docs/seed-coverage.md's summary from its table: the status column per seed.

python scripts/seed_coverage_summary.py          # print the summary table
python scripts/seed_coverage_summary.py --check  # exit 1 when the doc's summary differs
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "seed-coverage.md"
STATUSES = ("as specified", "option", "partial", "missing", "not applicable")
SEEDS = {
    "000": "000 HAEMA",
    "001": "001 engram",
    "002": "002 Luminary",
    "003": "003 memory spec",
    "004": "004 Nebo",
}


def count(text: str) -> dict[str, Counter[str]]:
    """Status counts per seed, from the rows of the `## Table` section."""
    counts: dict[str, Counter[str]] = {seed: Counter() for seed in SEEDS}
    for line in text[text.index("## Table") :].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or cells[0][:3] not in SEEDS:
            continue
        if cells[1] not in STATUSES:
            raise SystemExit(f"unknown status {cells[1]!r} in: {line}")
        counts[cells[0][:3]][cells[1]] += 1
    return counts


def summary(counts: dict[str, Counter[str]]) -> str:
    """The summary table as markdown."""
    lines = [
        "| seed | " + " | ".join(STATUSES) + " | rows |",
        "|---" * (len(STATUSES) + 2) + "|",
    ]
    total: Counter[str] = Counter()
    for seed, name in SEEDS.items():
        total.update(counts[seed])
        row = [str(counts[seed][status]) for status in STATUSES]
        lines.append(f"| {name} | " + " | ".join(row) + f" | {sum(counts[seed].values())} |")
    row = [f"**{total[status]}**" for status in STATUSES]
    lines.append("| **all** | " + " | ".join(row) + f" | **{sum(total.values())}** |")
    return "\n".join(lines)


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    table = summary(count(text))
    if "--check" in sys.argv[1:]:
        if table not in text:
            print("docs/seed-coverage.md: the summary differs from its table; it should be:")
            print(table)
            return 1
        return 0
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
