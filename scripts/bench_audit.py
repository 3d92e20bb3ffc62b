"""Figures for history, time travel, replay, diff, export/import and report.

    python scripts/bench_audit.py [--operations 220]

Builds the scripted session of tests/test_replay.py (hashing embedder, offline LLM) in a
temporary home and times each audit command over it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_replay import STRICT_CORE_PROMPT, open_home, run_session


def timed(label: str, work: object) -> object:
    started = time.perf_counter()
    result = work() if callable(work) else work
    print(f"{label:<44} {time.perf_counter() - started:8.3f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--operations", type=int, default=220)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    home = base / "home"
    with open_home(home) as memory:
        done = timed(
            f"session of {args.operations} operations", lambda: run_session(memory, args.operations)
        )
        events = memory.ledger.last_position()
        print(f"  {done} -> {events} events")
        recorded = timed("replay --mode recorded", lambda: memory.replay(base / "recorded"))
        print(f"  {recorded}")
        report = timed(
            "diff (original, recorded replay)", lambda: memory.diff(home, base / "recorded")
        )
        print(f"  identical: {report.identical}")  # type: ignore[attr-defined]
        prompt = base / "strict.txt"
        prompt.write_text(STRICT_CORE_PROMPT)
        timed(
            "replay --mode live (stricter core prompt)",
            lambda: memory.replay(base / "live", mode="live", prompts={"core_update": prompt}),
        )
        live = timed("diff (original, live replay)", lambda: memory.diff(home, base / "live"))
        print(f"  core.md changed for: {sorted(live.core)}")  # type: ignore[attr-defined]
        first = memory.list()[0].id
        timed("history ID", lambda: memory.memory_history(first))
        timed(
            "log --user maya --type MemoryUpdated",
            lambda: memory.timeline(user="maya", types=["MemoryUpdated"]),
        )

        def as_of() -> int:
            with memory.as_of(events // 2) as past:
                return len(past.list())

        timed(f"list --as-of {events // 2} (scratch rebuild)", as_of)
        for fmt in ("jsonl", "parquet", "csv"):
            timed(
                f"export --user maya --format {fmt}",
                lambda fmt=fmt: memory.export(user="maya", format=fmt, path=base / f"maya.{fmt}"),
            )
        timed("report", lambda: memory.report())
    with open_home(base / "imported") as copy:
        timed(
            "import maya.jsonl (into an empty home)",
            lambda: copy.import_events(base / "maya.jsonl"),
        )
    print(f"(work directory {base})")


if __name__ == "__main__":
    main()
