"""Retrieval evaluation on LoCoMo (Maharana et al., 2024; CC BY-NC 4.0; never copied here).

Every conversation goes through the product's real write path: one `add` per turn (the
HAEMA pipeline: split, dedup, reconstruction, superseding), each memory carrying the
`dia_id` it came from as evidence and its session date in its text. Each question of
categories 1-4 is asked through `memory.query` (agent `supervisor`, full results), and
a question counts as found at k when the evidence of the top-k memories contains one
(`any@k`) or all (`full@k`) of its evidence turns. BM25-only and vector-only baselines
over the raw turns (one document per turn, date-prefixed) are computed in the same run.

`any@budget` counts what a reader can afford rather than a number of results: the results
of a deeper answer (top 50), in rank order, only while their cumulative text fits in the
characters of 10 average turns of that conversation (the mean length of its turn documents
x 10, what a turn-level retriever spends at k=10); the first result that would overflow
ends the count, so a memory glued from many turns costs what it holds. It is computed for
the baselines too.

The ledger records every turn at its session's time (a clock the script moves: the
session's date, one turn every 10 s), as a deployment writing the conversation live would.
With `--consolidate`, one consolidation cycle runs after every session, as the worker would
(`daily=None`, like `mnemoledger worker`), at the session's time + 30 minutes (the worker's
interval); the report counts the memories in each state afterwards and the operations.

Evidence ids are normalised (`D:11:26` -> `D11:26`, `D30:05` -> `D30:5`, `D8:6; D9:17` ->
two ids); ids that still do not name a turn are dropped, and questions left without
evidence are skipped and counted.

    python scripts/eval_locomo.py --data ../shared/data/locomo/dev.json [--json] [--limit N]
        [--consolidate]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mnemoledger import MnemoLedger
from mnemoledger.commands.lifecycle.worker import SimulatedClock
from mnemoledger.commands.models import AddResult
from mnemoledger.commands.write.sanitize import InjectionRefused
from mnemoledger.ledger import Settings
from mnemoledger.ledger.event import LedgerEvent

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
BUDGET_TURNS = 10
"""any@budget: the characters of this many average turns (a turn retriever at k=10)."""
DEEP_K = 50
"""Results asked for any@budget: deep enough that the budget, not k, ends the count."""
TURN_SPACING = timedelta(seconds=10)
"""The simulated time between two turns of a session."""
CYCLE_DELAY = timedelta(minutes=30)
"""A consolidation cycle runs this long after a session starts (the worker's interval)."""
_ID = re.compile(r"D(\d+):(\d+)")

Served = tuple[set[str], int]
"""One result: the evidence it carries and the characters it costs."""


def session_time(date: str) -> datetime:
    """LoCoMo's session date ("1:56 pm on 8 May, 2023") as an aware UTC datetime."""
    return datetime.strptime(date.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    date: str
    session: int = 0

    @property
    def document(self) -> str:
        return f"[{self.date}] {self.speaker}: {self.text}"


@dataclass
class Question:
    text: str
    category: int
    evidence: set[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    skipped: int = 0


@dataclass
class Scores:
    """Hits per category for one retriever."""

    hits: dict[str, dict[int, list[bool]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    in_budget: list[int] = field(default_factory=list)
    """Results counted under the budget, per question."""
    k_bound: int = 0
    """Questions where every deep result fit: k, not the budget, ended the count."""

    def record(
        self,
        category: int,
        evidence: set[str],
        ranked: Sequence[set[str]],
        deep: Sequence[Served] | None = None,
        budget: int | None = None,
    ) -> None:
        """Hits at k over `ranked`; with `deep` and `budget`, any@budget over `deep`."""
        for k in KS:
            found = set().union(*ranked[:k]) if ranked[:k] else set()
            self.hits[f"any@{k}"][category].append(bool(found & evidence))
        found10 = set().union(*ranked[:10]) if ranked[:10] else set()
        self.hits["full@10"][category].append(evidence <= found10)
        if deep is not None and budget is not None:
            affordable = within_budget(deep, budget)
            self.in_budget.append(len(affordable))
            self.k_bound += len(affordable) == len(deep)
            found = set().union(*affordable) if affordable else set()
            self.hits["any@budget"][category].append(bool(found & evidence))

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for metric, by_category in self.hits.items():
            every = [hit for hits in by_category.values() for hit in hits]
            out[metric] = round(sum(every) / len(every), 4) if every else 0.0
        if self.in_budget:
            out["results_in_budget_mean"] = round(float(np.mean(self.in_budget)), 2)
            out["k_bound_questions"] = self.k_bound
        out["by_category"] = {
            CATEGORIES[c]: {
                metric: round(sum(self.hits[metric][c]) / len(self.hits[metric][c]), 4)
                for metric in self.hits
            }
            | {"questions": len(self.hits["any@10"][c])}
            for c in sorted(CATEGORIES)
            if self.hits["any@10"][c]
        }
        return out


def within_budget(deep: Sequence[Served], budget: int) -> list[set[str]]:
    """The evidence of the results that fit, in rank order, in `budget` characters: the
    first result that would overflow it ends the count."""
    spent = 0
    affordable: list[set[str]] = []
    for evidence, chars in deep:
        spent += chars
        if spent > budget:
            break
        affordable.append(evidence)
    return affordable


def turn_budget(turns: Sequence[Turn]) -> int:
    """The characters of `BUDGET_TURNS` average turn documents of one conversation."""
    return round(BUDGET_TURNS * sum(len(t.document) for t in turns) / max(len(turns), 1))


def normalise_evidence(raw: Sequence[str], known: set[str]) -> set[str]:
    ids: set[str] = set()
    for item in raw:
        for part in re.split(r"[;,\s]+", item.replace("D:", "D")):
            match = _ID.fullmatch(part.strip())
            if match:
                dia_id = f"D{int(match[1])}:{int(match[2])}"
                if dia_id in known:
                    ids.add(dia_id)
    return ids


def load(path: Path) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text()):
        talk = sample["conversation"]
        turns: list[Turn] = []
        sessions = sorted(
            (int(key.split("_")[1]), key) for key in talk if re.fullmatch(r"session_\d+", key)
        )
        for _, key in sessions:
            date = talk.get(f"{key}_date_time", "")
            for turn in talk[key]:
                text = turn["text"]
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                turns.append(
                    Turn(turn["dia_id"], turn["speaker"], text, date, int(key.split("_")[1]))
                )
        known = {t.dia_id for t in turns}
        conversation = Conversation(sample["sample_id"], turns, [])
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = normalise_evidence(qa.get("evidence", []), known)
            if not evidence:
                conversation.skipped += 1
                continue
            conversation.questions.append(Question(qa["question"], qa["category"], evidence))
        conversations.append(conversation)
    return conversations


def bm25_ranker(turns: list[Turn]) -> Callable[[str, int], list[Served]]:
    import bm25s

    corpus = [t.document for t in turns]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
    )

    def rank(query: str, k: int) -> list[Served]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        indices, _ = retriever.retrieve(tokens, k=min(k, len(corpus)), show_progress=False)
        return [({turns[i].dia_id}, len(corpus[i])) for i in indices[0]]

    return rank


def vector_ranker(turns: list[Turn], memory: MnemoLedger) -> Callable[[str, int], list[Served]]:
    vectors = memory.embedder.passages([t.document for t in turns])

    def rank(query: str, k: int) -> list[Served]:
        scores = vectors @ memory.embedder.query(query)
        return [({turns[i].dia_id}, len(turns[i].document)) for i in np.argsort(-scores)[:k]]

    return rank


AGENT = "supervisor"
"""The agent that asks: conversation turns are episodic memories (category `event`), which
the shipped categories config lets the supervisor read."""


def add_turn(memory: MnemoLedger, user: str, turn: Turn) -> AddResult | None:
    """One turn through the product's write path: an episodic `add` in the conversation's
    thread, with the turn's `dia_id` as evidence and its session date in the text; None when
    the injection screen refuses the turn (counted as `refused`, the run goes on)."""
    try:
        return memory.add(
            [turn.document],
            user=user,
            agent="locomo",
            thread=user,
            kind="episodic",
            source="locomo",
            evidence=[turn.dia_id],
        )
    except InjectionRefused:
        return None


def served(memory: MnemoLedger, question: str, user: str, k: int) -> list[Served]:
    """The evidence and text length of the top `k` memories `memory.query` returns (full
    results)."""
    answer = memory.query(question, agent=AGENT, user=user, top_k=k, return_mode="full")
    return [
        (set(getattr(result, "evidence", None) or []), len(getattr(result, "content", "")))
        for result in answer.results
    ]


def retrieve(memory: MnemoLedger, question: str, user: str) -> list[set[str]]:
    """The evidence of the top 10 memories `memory.query` returns (full results)."""
    return [evidence for evidence, _ in served(memory, question, user, 10)]


@contextmanager
def ledger_clock(clock: SimulatedClock) -> Iterator[None]:
    """Every event the ledger records inside is stamped with `clock`'s time."""
    own = vars(LedgerEvent).get("create_timestamp")
    LedgerEvent.create_timestamp = staticmethod(clock.now)  # type: ignore[method-assign]
    try:
        yield
    finally:
        if own is None:
            del LedgerEvent.create_timestamp
        else:
            LedgerEvent.create_timestamp = own  # type: ignore[method-assign]


def sessions(turns: Sequence[Turn]) -> list[list[Turn]]:
    """The turns grouped by session, in order."""
    grouped: dict[int, list[Turn]] = {}
    for turn in turns:
        grouped.setdefault(turn.session, []).append(turn)
    return list(grouped.values())


def progress_line(
    console: Console,
    as_json: bool,
    user: str,
    results: dict[str, Scores],
    elapsed: float,
    extra: dict[str, Any],
) -> None:
    """The figures so far, after each conversation: a background run (`--json`, output to
    a file) shows how far it got and what it measured even if it is stopped."""
    line = (
        {"done": user, "elapsed_s": round(elapsed, 1)}
        | {
            name: {m: v for m, v in scores.summary().items() if m.startswith(("any", "full"))}
            for name, scores in results.items()
        }
        | extra
    )
    if as_json:
        print(json.dumps(line), file=sys.stderr, flush=True)
    else:
        console.log(line)


SEARCH_KEYS = ("fusion", "recency", "fts_operator", "bm25", "expand", "relevance")


def search_settings(parser: argparse.ArgumentParser, spec: str) -> dict[str, str]:
    """`fusion=engram,recency=exp` -> the settings it changes ({"search_fusion": ...})."""
    update: dict[str, str] = {}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        if key.strip() not in SEARCH_KEYS or not value.strip():
            parser.error(f"--search {spec!r}: use KEY=VALUE with KEY one of {SEARCH_KEYS}")
        update[f"search_{key.strip()}"] = value.strip()
    try:
        Settings.model_validate(update)
    except ValueError as error:
        parser.error(f"--search {spec!r}: {error}")
    return update


@contextmanager
def search_settings_of(memory: MnemoLedger, update: dict[str, str]) -> Iterator[None]:
    """The ledger's queries use these search settings inside."""
    settings = memory.parts.settings
    memory.parts.settings = settings.model_copy(update=update)
    try:
        yield
    finally:
        memory.parts.settings = settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (e.g. dev.json)")
    parser.add_argument("--json", action="store_true", help="print only a JSON report")
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument(
        "--only", help="only these conversations (sample ids, comma-separated: conv-30,conv-41)"
    )
    parser.add_argument("--home", type=Path, help="keep the ledger here (default: temp dir)")
    parser.add_argument(
        "--questions",
        type=Path,
        help="write one JSON line per question here (what mnemoledger found), to compare runs",
    )
    parser.add_argument(
        "--search",
        action="append",
        default=[],
        metavar="SETTING=VALUE,...",
        help=(
            "also ask every question with these search settings (e.g. fusion=engram or "
            "fusion=rrf,fts_operator=AND; keys: fusion, recency, fts_operator, bm25, expand, "
            "relevance), "
            "reported as mnemoledger[...]; repeatable"
        ),
    )
    parser.add_argument(
        "--consolidate",
        action="store_true",
        help="one consolidation cycle after every session (its time + 30 min), as the worker",
    )
    args = parser.parse_args(argv)
    variants = {spec: search_settings(parser, spec) for spec in args.search}
    conversations = load(args.data)[: args.limit]
    if args.only:
        wanted = set(args.only.split(","))
        conversations = [c for c in conversations if c.sample_id in wanted]
        if missing := wanted - {c.sample_id for c in conversations}:
            parser.error(f"no conversation {', '.join(sorted(missing))} in {args.data}")
    console = Console(stderr=True, quiet=args.json)
    home = args.home or Path(tempfile.mkdtemp(prefix="mnemoledger-locomo-"))
    results = {"mnemoledger": Scores(), "bm25": Scores(), "vector": Scores()}
    results |= {f"mnemoledger[{spec}]": Scores() for spec in variants}
    timings: dict[str, list[float]] = defaultdict(list)
    stats: dict[str, int] = defaultdict(int)
    states: Counter[str] = Counter()
    layers: Counter[str] = Counter()
    operations: Counter[str] = Counter()
    budgets: dict[str, int] = {}
    clock = SimulatedClock(datetime(2000, 1, 1, tzinfo=UTC))
    wall = time.perf_counter()
    per_question = args.questions.open("w") if args.questions else None
    with (
        ledger_clock(clock),
        MnemoLedger(settings=Settings(home=home), actor="eval") as memory,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar,
    ):
        memory.clock = clock.now
        for conversation in conversations:
            user = conversation.sample_id
            groups = sessions(conversation.turns)
            task = bar.add_task(f"{user}: add", total=len(conversation.turns))
            cycles = bar.add_task(f"{user}: consolidate", total=len(groups), visible=False)
            for group in groups:
                start = session_time(group[0].date)
                for index, turn in enumerate(group):
                    clock.current = start + index * TURN_SPACING
                    started = time.perf_counter()
                    result = add_turn(memory, user, turn)
                    timings["add"].append(time.perf_counter() - started)
                    bar.advance(task)
                    if result is None:
                        stats["refused"] += 1
                        continue
                    stats["memories"] += len(result.memories)
                    stats["superseded"] += len(result.superseded)
                    stats["reinforced"] += len(result.reinforced)
                if args.consolidate:
                    bar.update(cycles, visible=True)
                    clock.current = start + CYCLE_DELAY
                    started = time.perf_counter()
                    cycle = memory.consolidate(user=user, now=clock.current, daily=None)
                    timings["consolidate"].append(time.perf_counter() - started)
                    for operation in cycle.operations:
                        operations[operation["op"]] += 1
                        if operation["op"] == "merge":
                            stats["absorbed_by_merge"] += len(operation.get("absorbed") or [])
                    stats["llm_calls"] += sum(u.llm_calls for u in cycle.users)
                    bar.advance(cycles)
            clock.current = session_time(groups[-1][0].date) + timedelta(days=1)
            owned = memory.list(user=user)
            states.update(m.state for m in owned)
            layers.update(m.layer for m in owned if m.state == "active")
            kept = set().union(*(m.evidence or [] for m in owned if m.state == "active"))
            stats["turns_without_active_memory"] += sum(
                t.dia_id not in kept for t in conversation.turns
            )
            bm25 = bm25_ranker(conversation.turns)
            vector = vector_ranker(conversation.turns, memory)
            budget = budgets[user] = turn_budget(conversation.turns)
            task = bar.add_task(f"{user}: ask", total=len(conversation.questions))
            for question in conversation.questions:
                started = time.perf_counter()
                ranked = retrieve(memory, question.text, user)
                timings["search"].append(time.perf_counter() - started)
                deep = served(memory, question.text, user, DEEP_K)
                results["mnemoledger"].record(
                    question.category, question.evidence, ranked, deep, budget
                )
                if per_question:
                    found = set().union(*ranked) if ranked else set()
                    affordable = within_budget(deep, budget)
                    afforded = set().union(*affordable) if affordable else set()
                    line = {
                        "sample_id": user,
                        "question": question.text,
                        "category": CATEGORIES[question.category],
                        "evidence": sorted(question.evidence),
                        "any@10": bool(found & question.evidence),
                        "any@budget": bool(afforded & question.evidence),
                        "top10": [sorted(evidence) for evidence in ranked],
                    }
                    per_question.write(json.dumps(line) + "\n")
                for spec, update in variants.items():
                    with search_settings_of(memory, update):
                        ranked = retrieve(memory, question.text, user)
                        deep = served(memory, question.text, user, DEEP_K)
                    results[f"mnemoledger[{spec}]"].record(
                        question.category, question.evidence, ranked, deep, budget
                    )
                for name, ranker in (("bm25", bm25), ("vector", vector)):
                    deep = ranker(question.text, DEEP_K)
                    results[name].record(
                        question.category,
                        question.evidence,
                        [evidence for evidence, _ in deep[:10]],
                        deep,
                        budget,
                    )
                bar.advance(task)
            stats["questions"] += len(conversation.questions)
            stats["skipped_no_evidence"] += conversation.skipped
            progress_line(
                console,
                args.json,
                user,
                results,
                time.perf_counter() - wall,
                {"states": dict(states), "lost": stats["turns_without_active_memory"]},
            )
    if per_question:
        per_question.close()
    report: dict[str, Any] = {name: scores.summary() for name, scores in results.items()}
    report["run"] = {
        "mode": "consolidate" if args.consolidate else "add only",
        "conversations": len(conversations),
        **stats,
        "budget_chars": budgets,
        "states": dict(sorted(states.items())),
        "active_by_layer": dict(sorted(layers.items())),
        "add_p50_ms": round(float(np.median(timings["add"])) * 1000, 1),
        "search_p50_ms": round(float(np.median(timings["search"])) * 1000, 1),
        "wall_s": round(time.perf_counter() - wall, 1),
        "embedder": memory.settings.embedder,
        "llm_provider": memory.settings.llm_provider,
    }
    if args.consolidate:
        report["run"] |= {
            "cycles": len(timings["consolidate"]),
            "operations": dict(sorted(operations.items())),
            "consolidate_p50_ms": round(float(np.median(timings["consolidate"])) * 1000, 1),
            "consolidate_total_s": round(sum(timings["consolidate"]), 1),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    mode = "one cycle per session" if args.consolidate else "add only"
    table = Table(
        title=f"LoCoMo {args.data.name} ({mode}): {stats['questions']} questions (cat 1-4)"
    )
    metrics = ("any@1", "any@5", "any@10", "any@budget", "full@10")
    for column in ("retriever", *metrics, *CATEGORIES.values()):
        table.add_column(column)
    for name in results:
        summary = report[name]
        table.add_row(
            name,
            *(f"{summary[m]:.3f}" for m in metrics),
            *(
                "{any@10:.3f} / {any@budget:.3f}".format_map(summary["by_category"][c])
                if c in summary["by_category"]
                else "-"
                for c in CATEGORIES.values()
            ),
        )
    out = Console() if Console().is_terminal else Console(width=160)  # a file: no wrapping
    out.print(table)
    out.print("category columns: any@10 / any@budget")
    out.print(report["run"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
