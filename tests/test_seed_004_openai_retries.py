"""Seed 004 §7 Embedding Flow (and the LLM calls): a batch is tried 3 times, transient
errors backed off exponentially from 500 ms (capped at 8 s), and 400/401/403 fail at once.
Both the embedder and the LLM provider run through the real openai client against a fake
OpenAI-compatible server on localhost that fails as told, then answers."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import openai
import pytest

from mnemoledger.commands.llm import LLMError
from mnemoledger.commands.llm.openai_provider import OpenAIProvider
from mnemoledger.commands.llm.prompts import RECONSTRUCT
from mnemoledger.projections.embeddings.hashing import HashingEmbedder
from mnemoledger.projections.embeddings.openai_embedder import OpenAIEmbedder
from tests.fake_openai import ANSWER, INPUTS
from tests.openai_retries import assert_seed_backoff, record_client_pauses

DIMENSIONS = 16


@dataclass
class FlakyOpenAIServer:
    """`/v1/embeddings` and `/v1/chat/completions` on 127.0.0.1: each request first takes
    the next queued failure status, if any, else gets a real answer."""

    failures: deque[int] = field(default_factory=deque)
    paths: list[str] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.paths.append(path)
        if self.failures:
            status = self.failures.popleft()
            return status, {"error": {"message": f"fake {status}", "type": "fake", "code": None}}
        if path.endswith("/embeddings"):
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = HashingEmbedder(DIMENSIONS).passages(inputs)
            data = [
                {"object": "embedding", "index": i, "embedding": v.tolist()}
                for i, v in enumerate(vectors)
            ]
            return 200, {"object": "list", "data": data, "model": body["model"], "usage": {}}
        message = {"role": "assistant", "content": json.dumps(ANSWER), "refusal": None}
        return 200, {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }


@pytest.fixture
def flaky() -> Iterator[FlakyOpenAIServer]:
    fake = FlakyOpenAIServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, payload = fake.answer(self.path, body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    fake.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
    thread.join()


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    return record_client_pauses(monkeypatch)


def embedder_for(flaky: FlakyOpenAIServer) -> OpenAIEmbedder:
    return OpenAIEmbedder("fake-embed", base_url=flaky.base_url, api_key="k", dimensions=DIMENSIONS)


@pytest.mark.parametrize("transient", [[503], [500, 429]])
def test_s7_embedding_flow_retries_a_transient_failure_with_backoff(
    flaky: FlakyOpenAIServer, pauses: list[float], transient: list[int]
) -> None:
    flaky.failures.extend(transient)
    vectors = embedder_for(flaky).passages(["Maya lives in Paris", "Maya likes tea"])
    expected = HashingEmbedder(DIMENSIONS).passages(["Maya lives in Paris", "Maya likes tea"])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    assert flaky.paths == ["/v1/embeddings"] * (len(transient) + 1)
    assert_seed_backoff(pauses, len(transient))


def test_s7_embedding_flow_gives_up_after_three_attempts(
    flaky: FlakyOpenAIServer, pauses: list[float]
) -> None:
    flaky.failures.extend([500, 502, 503, 504])
    with pytest.raises(openai.InternalServerError):
        embedder_for(flaky).passages(["Maya lives in Paris"])
    assert len(flaky.paths) == 3 and list(flaky.failures) == [504]
    assert_seed_backoff(pauses, 2)


@pytest.mark.parametrize("refused", [400, 401, 403])
def test_s7_embedding_flow_fails_at_once_on_a_refusal(
    flaky: FlakyOpenAIServer, pauses: list[float], refused: int
) -> None:
    flaky.failures.append(refused)
    with pytest.raises(openai.APIStatusError) as error:
        embedder_for(flaky).passages(["Maya lives in Paris"])
    assert error.value.status_code == refused
    assert len(flaky.paths) == 1 and pauses == []
    assert embedder_for(flaky).passages(["Maya lives in Paris"]).shape == (1, DIMENSIONS)


def test_s7_llm_call_retries_a_transient_failure_with_backoff(
    flaky: FlakyOpenAIServer, pauses: list[float]
) -> None:
    flaky.failures.extend([503, 500])
    provider = OpenAIProvider("fake-chat", base_url=flaky.base_url, api_key="k")
    call = provider.complete(RECONSTRUCT, INPUTS)
    assert call.output.model_dump() == ANSWER
    assert flaky.paths == ["/v1/chat/completions"] * 3
    assert_seed_backoff(pauses, 2)


def test_s7_llm_call_fails_at_once_on_401(flaky: FlakyOpenAIServer, pauses: list[float]) -> None:
    flaky.failures.append(401)
    provider = OpenAIProvider("fake-chat", base_url=flaky.base_url, api_key="k")
    with pytest.raises(LLMError, match=r"request refused: HTTP 401.*MNEMOLEDGER_OPENAI_API_KEY"):
        provider.complete(RECONSTRUCT, INPUTS)
    assert len(flaky.paths) == 1 and pauses == []
    assert provider.complete(RECONSTRUCT, INPUTS).output.model_dump() == ANSWER  # the next call
