"""Retrieval evaluation on LoCoMo (Maharana et al., 2024; CC BY-NC 4.0; never copied here).

Every conversation goes through the product's real write path: one `add` per turn (the
HAEMA pipeline: split, dedup, reconstruction, superseding), each memory carrying the
`dia_id` it came from as evidence and its session date in its text. Each question of
categories 1-4 is asked through `memory.query` (agent `supervisor`, full results), and
a question counts as found at k when the evidence of the top-k memories contains one
(`any@k`) or all (`full@k`) of its evidence turns. BM25-only and vector-only baselines
over the raw turns (one document per turn, date-prefixed) are computed in the same run.

Evidence ids are normalised (`D:11:26` -> `D11:26`, `D30:05` -> `D30:5`, `D8:6; D9:17` ->
two ids); ids that still do not name a turn are dropped, and questions left without
evidence are skipped and counted.

    python scripts/eval_locomo.py --data ../shared/data/locomo/dev.json [--json] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from commands import MnemoLedger
from commands.models import AddResult
from ledger import Settings

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)
_ID = re.compile(r"D(\d+):(\d+)")


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    date: str

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

    def record(self, category: int, evidence: set[str], ranked: Sequence[set[str]]) -> None:
        for k in KS:
            found = set().union(*ranked[:k]) if ranked[:k] else set()
            self.hits[f"any@{k}"][category].append(bool(found & evidence))
        found10 = set().union(*ranked[:10]) if ranked[:10] else set()
        self.hits["full@10"][category].append(evidence <= found10)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for metric, by_category in self.hits.items():
            every = [hit for hits in by_category.values() for hit in hits]
            out[metric] = round(sum(every) / len(every), 4) if every else 0.0
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
                turns.append(Turn(turn["dia_id"], turn["speaker"], text, date))
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


def bm25_ranker(turns: list[Turn]) -> Callable[[str, int], list[set[str]]]:
    import bm25s

    corpus = [t.document for t in turns]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
    )

    def rank(query: str, k: int) -> list[set[str]]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        indices, _ = retriever.retrieve(tokens, k=min(k, len(corpus)), show_progress=False)
        return [{turns[i].dia_id} for i in indices[0]]

    return rank


def vector_ranker(turns: list[Turn], memory: MnemoLedger) -> Callable[[str, int], list[set[str]]]:
    vectors = memory.embedder.passages([t.document for t in turns])

    def rank(query: str, k: int) -> list[set[str]]:
        scores = vectors @ memory.embedder.query(query)
        return [{turns[i].dia_id} for i in np.argsort(-scores)[:k]]

    return rank


AGENT = "supervisor"
"""The agent that asks: conversation turns are episodic memories (category `event`), which
the shipped categories config lets the supervisor read."""


def add_turn(memory: MnemoLedger, user: str, turn: Turn) -> AddResult:
    """One turn through the product's write path: an episodic `add` in the conversation's
    thread, with the turn's `dia_id` as evidence and its session date in the text."""
    return memory.add(
        [turn.document],
        user=user,
        agent="locomo",
        thread=user,
        kind="episodic",
        source="locomo",
        evidence=[turn.dia_id],
    )


def retrieve(memory: MnemoLedger, question: str, user: str) -> list[set[str]]:
    """The evidence of the top 10 memories `memory.query` returns (full results)."""
    answer = memory.query(question, agent=AGENT, user=user, top_k=10, return_mode="full")
    return [set(getattr(result, "evidence", None) or []) for result in answer.results]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (e.g. dev.json)")
    parser.add_argument("--json", action="store_true", help="print only a JSON report")
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument("--home", type=Path, help="keep the ledger here (default: temp dir)")
    args = parser.parse_args(argv)
    conversations = load(args.data)[: args.limit]
    console = Console(stderr=True, quiet=args.json)
    home = args.home or Path(tempfile.mkdtemp(prefix="mnemoledger-locomo-"))
    results = {"mnemoledger": Scores(), "bm25": Scores(), "vector": Scores()}
    timings: dict[str, list[float]] = defaultdict(list)
    stats: dict[str, int] = defaultdict(int)
    with (
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
        for conversation in conversations:
            user = conversation.sample_id
            task = bar.add_task(f"{user}: add", total=len(conversation.turns))
            for turn in conversation.turns:
                started = time.perf_counter()
                result = add_turn(memory, user, turn)
                timings["add"].append(time.perf_counter() - started)
                stats["memories"] += len(result.memories)
                stats["superseded"] += len(result.superseded)
                stats["reinforced"] += len(result.reinforced)
                bar.advance(task)
            memory.refresh()
            bm25 = bm25_ranker(conversation.turns)
            vector = vector_ranker(conversation.turns, memory)
            task = bar.add_task(f"{user}: ask", total=len(conversation.questions))
            for question in conversation.questions:
                started = time.perf_counter()
                ranked = retrieve(memory, question.text, user)
                timings["search"].append(time.perf_counter() - started)
                results["mnemoledger"].record(question.category, question.evidence, ranked)
                results["bm25"].record(
                    question.category, question.evidence, bm25(question.text, 10)
                )
                results["vector"].record(
                    question.category, question.evidence, vector(question.text, 10)
                )
                bar.advance(task)
            stats["questions"] += len(conversation.questions)
            stats["skipped_no_evidence"] += conversation.skipped
    report: dict[str, Any] = {name: scores.summary() for name, scores in results.items()}
    report["run"] = {
        "conversations": len(conversations),
        **stats,
        "add_p50_ms": round(float(np.median(timings["add"])) * 1000, 1),
        "search_p50_ms": round(float(np.median(timings["search"])) * 1000, 1),
        "embedder": memory.settings.embedder,
        "llm_provider": memory.settings.llm_provider,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    table = Table(title=f"LoCoMo {args.data.name}: {stats['questions']} questions (cat 1-4)")
    for column in ("retriever", "any@5", "any@10", "full@10", *CATEGORIES.values()):
        table.add_column(column)
    for name in results:
        summary = report[name]
        table.add_row(
            name,
            *(f"{summary[m]:.3f}" for m in ("any@5", "any@10", "full@10")),
            *(
                f"{summary['by_category'].get(c, {}).get('any@10', 0):.3f}"
                for c in CATEGORIES.values()
            ),
        )
    Console().print(table)
    Console().print(report["run"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
