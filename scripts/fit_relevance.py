#!/usr/bin/env python3
"""Fit the relevance model that reorders a search's candidates: a cross-encoder that reads
(question, memory) and says whether the memory answers the question.

    pip install -e ".[train]"
    python scripts/fit_relevance.py [--base minilm|e5] [--leave-out memory_cases_blind4.jsonl ...]
        [--out DIR]

Examples, each (question, memory, answers or not):
- `commands/judge/training/questions_*.jsonl`: memory stores written by hand by authors who
  never saw the code (casual chat; chat logs and terse notes), each with questions and the
  memories that answer them. A memory that does not answer is a negative: the store's
  others, hardest first (those sharing most words with the question), and one memory of
  another store;
- our labelled memory cases (`tests/data/memory_cases*.jsonl`, one author a file; the
  sets `fit_judge.NEVER` names and every set named by `--leave-out` left out): for each
  `top` / `top3` question, the statements holding the expected text answer, the others of
  the case do not; a statement holding a value the case expects gone (an older value,
  something forgotten) is left out: it answered once, so it is neither.

Base weights, export, int8 and the manifest are `fit_judge.py`'s (`fit`): the shipped model
is fitted from all-MiniLM-L6-v2; `--base e5` fits it from multilingual-e5-small (tried, not
shipped: docs/benchmarks.md), writing that base's tokenizer beside it. The files written are
`relevance.onnx` and `relevance.json` beside the judge's other models.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from fit_judge import (
    BASES,
    DATA,
    DEFAULT_BASE,
    MODELS,
    NEVER,
    TRAINING,
    fit,
    manifest_of,
    rows_of,
)

from mnemoledger.commands.judge.text import passage
from mnemoledger.commands.llm.rules.stopwords import stop_words
from mnemoledger.commands.recall.search import QUERY_STOPWORDS

HARD_NEGATIVES = 4
"""Negatives of a question's own store that share most words with it."""
OTHER_NEGATIVES = 2
"""Further negatives of its own store, at random."""
_WORD = re.compile(r"[a-z0-9]+")

Example = tuple[str, str, float]


def _words(text: str) -> set[str]:
    """The words of `text` that tell it apart (not function words, not "user")."""
    return set(_WORD.findall(text.lower())) - stop_words() - QUERY_STOPWORDS


def _negatives(
    query: str, others: list[str], elsewhere: list[str], rng: random.Random
) -> list[str]:
    """The store's memories sharing most words with the question, a few more at random, and
    one memory of another store."""
    asked = _words(query)
    ranked = sorted(others, key=lambda m: (-len(asked & _words(m)), rng.random()))
    chosen = ranked[:HARD_NEGATIVES]
    rest = ranked[HARD_NEGATIVES:]
    chosen += rng.sample(rest, min(OTHER_NEGATIVES, len(rest)))
    if elsewhere:
        chosen.append(rng.choice(elsewhere))
    return chosen


def store_examples(
    stores: list[tuple[list[str], list[tuple[str, list[int]]]]], rng: random.Random
) -> list[Example]:
    """(question, memory, 1.0 or 0.0) of memory stores: each store's memories and its
    questions with the indices of the memories that answer them."""
    every = [m for memories, _ in stores for m in memories]
    examples: list[Example] = []
    for memories, questions in stores:
        mine = set(memories)
        elsewhere = [m for m in rng.sample(every, min(50, len(every))) if m not in mine]
        for query, answers in questions:
            if not answers:
                continue
            examples += [(query, passage(memories[i]), 1.0) for i in answers]
            others = [m for i, m in enumerate(memories) if i not in answers]
            chosen = _negatives(query, others, elsewhere, rng)
            examples += [(query, passage(m), 0.0) for m in chosen]
    return examples


def written_stores(path: Path) -> list[tuple[list[str], list[tuple[str, list[int]]]]]:
    return [
        (row["memories"], [(q["query"], list(q["answers"])) for q in row["questions"]])
        for row in rows_of(path)
    ]


def case_stores(path: Path) -> list[tuple[list[str], list[tuple[str, list[int]]]]]:
    """Each labelled memory case as a store: its statements (less those holding a value it
    expects gone or forgets) and its `top` / `top3` questions."""
    stores = []
    for case in rows_of(path):
        said: list[str] = []
        forgotten: list[str] = []
        for step in case["steps"]:
            if "add" in step:
                said += [step["add"]] if isinstance(step["add"], str) else step["add"]
            if "forget" in step:
                forgotten.append(step["forget"].lower())
        expect = case["expect"]
        gone = [w.lower() for w in expect.get("active_lacks", [])] + forgotten
        memories = list(dict.fromkeys(s for s in said if not any(w in s.lower() for w in gone)))
        questions = []
        for asked in expect.get("top", []) + expect.get("top3", []):
            has, lacks = asked["has"].lower(), (asked.get("lacks") or "").lower()
            answers = [
                i
                for i, m in enumerate(memories)
                if has in m.lower() and not (lacks and lacks in m.lower())
            ]
            questions.append((asked["query"], answers))
        stores.append((memories, questions))
    return stores


def relevance_data(leave_out: set[str], seed: int) -> tuple[list[Example], list[Path]]:
    rng = random.Random(seed)
    sources: list[Path] = []
    examples: list[Example] = []
    for path in sorted(TRAINING.glob("questions_*.jsonl")):
        if path.name in leave_out:
            continue
        sources.append(path)
        examples += store_examples(written_stores(path), rng)
    for path in sorted(DATA.glob("memory_cases*.jsonl")):
        if path.name in NEVER or path.name in leave_out:
            continue
        sources.append(path)
        examples += store_examples(case_stores(path), rng)
    return examples, sources


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=MODELS, help="folder of the fitted files")
    parser.add_argument(
        "--leave-out",
        nargs="*",
        default=[],
        help="case sets or question files (file names) not fitted on",
    )
    parser.add_argument(
        "--base",
        choices=sorted(BASES),
        help=f"pretrained encoder to fit from (default: {DEFAULT_BASE.get('relevance', 'minilm')})",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, help="passes over the data (default: 2)")
    parser.add_argument("--limit", type=int, help="fit on the first N examples only (a smoke run)")
    args = parser.parse_args()
    leave_out = set(args.leave_out)
    examples, sources = relevance_data(leave_out, args.seed)
    if args.limit:
        random.Random(args.seed).shuffle(examples)
        examples = examples[: args.limit]
    if args.epochs:
        from fit_judge import SETTINGS

        SETTINGS["relevance"]["epochs"] = args.epochs
    counts = Counter("answers" if e[2] else "does not answer" for e in examples)
    print(f"relevance: {len(examples)} examples {dict(counts)}", flush=True)
    base = args.base or DEFAULT_BASE.get("relevance", "minilm")
    report: dict[str, Any] = fit("relevance", examples, args.out, args.seed, base)
    command = "python scripts/fit_relevance.py"
    if base != "minilm":
        command += f" --base {base}"
    if leave_out:
        command += " --leave-out " + " ".join(sorted(leave_out))
    manifest = manifest_of(
        command, args.seed, len(examples), counts, sources, leave_out, report, base
    )
    (args.out / "relevance.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps({k: v for k, v in manifest.items() if k != "data"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
