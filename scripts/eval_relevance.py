#!/usr/bin/env python3
"""How often the memory that answers a question comes first: question stores through the
product, the relevance model on and off in one run.

    python scripts/eval_relevance.py tests/data/questions_heldout.jsonl [more.jsonl ...]
        [--models DIR] [--json]

Each store (`{"memories": [...], "questions": [{"query", "answers": [indices]}]}`; a file of
labelled memory cases, `memory_cases*.jsonl`, is read as `fit_relevance.case_stores` reads
it: each case's statements, less those holding a value it expects gone) is added
to a fresh user of one ledger, one `add` per memory, through the real write path; then each
question is searched (k=5) with the setting `search_relevance` at `learned` and at `off`,
each also without reading the user's own name as "the user" (`search_user_names`, modes
`learned@n0`, `off@n0`); `--modes off@m0` adds `off` without the embedder's question map
(`search_question_map`). A
result answers when its text holds an answering memory's text or is held by it (an add may
merge or reword); a memory the add refuses (the injection screen) is not stored and is listed
under `refused`. Reported per file: top-1 (the first result answers), top-3, the
model alone (the store's memories ranked by `LearnedJudge.relevance` only, no retrievers),
and `answer_kept`: the share of questions an active memory still answers once the store is
added (what the write path lost, replacing or merging, no ranking can find).
`--models` reads the relevance model from another folder (a refit; a leave-one-author-out
fold).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "scripts"))

from fit_relevance import case_stores  # noqa: E402

from mnemoledger import MnemoLedger  # noqa: E402
from mnemoledger.ledger import Settings  # noqa: E402

K = 5
MODES = ("learned", "learned@n0", "off", "off@n0")
"""The relevance model on and off, each with and without the user's names (`@n0`: off);
`@m0`: without the embedder's question map."""


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def answers(hit: str, wanted: list[str]) -> bool:
    said = _norm(hit)
    return any(w and (w in said or said in w) for w in map(_norm, wanted))


def score_file(
    path: Path,
    memory: MnemoLedger,
    progress: Progress,
    modes: tuple[str, ...] = MODES,
    dump: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    from mnemoledger.commands.judge import default_judge
    from mnemoledger.commands.recall import search
    from mnemoledger.commands.write.sanitize import InjectionRefused

    shipped = search.NEWER_VALUE_CUT
    judge = default_judge()
    if path.name.startswith("memory_cases"):  # labelled cases, read as stores
        rows = [
            {"memories": m, "questions": [{"query": q, "answers": a} for q, a in asked]}
            for m, asked in case_stores(path)
        ]
    else:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    counts = {f"{mode}@{n}": 0 for mode in (*modes, "model") for n in (1, 3)}
    asked = kept = 0
    misses: list[dict[str, Any]] = []
    refused: list[str] = []
    task = progress.add_task(path.name, total=len(rows))
    for n, row in enumerate(rows):
        user = f"{path.stem}-{n}"
        for text in row["memories"]:
            try:
                memory.add([text], user=user)
            except InjectionRefused:  # not stored, as for a user: its questions may miss
                refused.append(text)
        active = [m.content for m in memory.list(user=user, state="active")]
        for q in row["questions"]:
            if not q["answers"]:
                continue
            asked += 1
            wanted = [row["memories"][i] for i in q["answers"]]
            kept += any(answers(text, wanted) for text in active)
            likelihoods = judge.relevance(q["query"], row["memories"])
            order = sorted(range(len(likelihoods)), key=lambda i: -likelihoods[i])
            for cut in (1, 3):
                counts[f"model@{cut}"] += any(i in q["answers"] for i in order[:cut])
            for mode in modes:
                setting, *knobs = mode.split("@")
                tuned = {knob[0]: float(knob[1:]) for knob in knobs}
                settings = memory.parts.settings
                memory.parts.settings = settings.model_copy(
                    update={
                        "search_relevance": setting,
                        "search_question_map": tuned.get("m") != 0,
                        "search_user_names": tuned.get("n") != 0,
                    }
                )
                search.NEWER_VALUE_CUT = tuned.get("c", shipped)
                deep = dump is not None and mode == "learned"
                depth = search.RELEVANCE_DEPTH if deep else K
                try:
                    hits = memory.search(q["query"], user=user, k=depth)
                finally:
                    memory.parts.settings = settings
                    search.NEWER_VALUE_CUT = shipped
                found = [answers(h.content, wanted) for h in hits]
                if deep and dump is not None:
                    dump.extend(_features(path.name, n, q["query"], hits, found))
                    hits, found = hits[:K], found[:K]
                counts[f"{mode}@1"] += bool(found[:1] and found[0])
                counts[f"{mode}@3"] += any(found[:3])
                if mode == "learned" and not (found[:1] and found[0]):
                    misses.append(
                        {
                            "query": q["query"],
                            "wanted": wanted,
                            "first": hits[0].content if hits else None,
                        }
                    )
        progress.advance(task)
    return {
        "questions": asked,
        **{key: round(value / max(1, asked), 3) for key, value in counts.items()},
        "answer_kept": round(kept / max(1, asked), 3),
        "refused": refused,
        "misses": misses,
    }


def _features(
    name: str, store: int, query: str, hits: list[Any], found: list[bool]
) -> list[dict[str, Any]]:
    """Each hit the relevance model read, with what the search knew of it and whether it
    answers (`--dump`): the data a learned blend of the signals is fitted on."""
    rows = []
    for rank, (hit, answer) in enumerate(zip(hits, found, strict=True)):
        if hit.answer is None:
            continue
        rows.append(
            {
                "set": name,
                "store": store,
                "query": query,
                "rank": rank,
                "answer": hit.answer,
                "fused": hit.fused,
                "vector": hit.vector_score,
                "text": hit.text_score,
                "recency": hit.recency,
                "layer": hit.layer,
                "score": hit.score,
                "label": answer,
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--models", type=Path, help="a folder of fitted judge models")
    parser.add_argument("--json", action="store_true", help="print only a JSON report")
    parser.add_argument("--misses", action="store_true", help="list the learned order's misses")
    parser.add_argument(
        "--modes",
        help="also score these variants: learned@cC (C: NEWER_VALUE_CUT; above 1: newer "
        "values never moved), MODE@m0 (without the question map), MODE@n0 (without the "
        "user's names), e.g. learned@c2,learned@m0",
    )
    parser.add_argument(
        "--dump",
        type=Path,
        help="write each candidate the relevance model read (its signals, whether it answers) "
        "to this JSONL file",
    )
    args = parser.parse_args()
    if args.models:
        os.environ["MNEMOLEDGER_JUDGE_MODELS"] = str(args.models.resolve())
    console = Console(stderr=True, quiet=args.json)
    modes = (*MODES, *(m.strip() for m in (args.modes or "").split(",") if m.strip()))
    report: dict[str, Any] = {}
    dump: list[dict[str, Any]] | None = [] if args.dump else None
    with (
        tempfile.TemporaryDirectory(prefix="mnemoledger-relevance-") as home,
        MnemoLedger(settings=Settings(home=Path(home)), actor="eval") as memory,
        Progress(console=console) as progress,
    ):
        for path in args.files:
            report[path.name] = score_file(path, memory, progress, modes, dump)
    if args.dump and dump is not None:
        args.dump.write_text("".join(json.dumps(row) + "\n" for row in dump), encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    table = Table(
        "set",
        "questions",
        "answer kept",
        *(f"{m}@{n}" for m in (*modes, "model") for n in (1, 3)),
    )
    for name, scores in report.items():
        table.add_row(
            name,
            str(scores["questions"]),
            f"{scores['answer_kept']:.3f}",
            *(f"{scores[f'{m}@{n}']:.3f}" for m in (*modes, "model") for n in (1, 3)),
        )
    Console().print(table)
    if args.misses:
        for name, scores in report.items():
            for miss in scores["misses"]:
                print(f"{name}: {miss['query']!r} -> {miss['first']!r} (wanted {miss['wanted']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
