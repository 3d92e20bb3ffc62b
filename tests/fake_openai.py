"""A small OpenAI-compatible server on 127.0.0.1 for tests of the real `openai` client path.

Chat completions answer from per-stage queues of canned JSON (the stage is the
`response_format.json_schema.name` the client sends); embeddings come from the hashing
embedder. Every request body is kept, so tests can compare it with what the ledger recorded.
The judge's stages answer "nothing to say" when no answer is queued (every turn kept and no
instruction, every pair unrelated), so a test of another stage need not script them.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mnemoledger.projections.embeddings.hashing import HashingEmbedder

JUDGE_DEFAULTS = {"read_turns": '{"readings": []}', "relate": '{"relations": []}'}
"""What the judge's stages answer when nothing is queued for them."""


@dataclass
class FakeOpenAI:
    """The server's state: canned answers in, received requests out."""

    url: str = ""
    answers: dict[str, deque[str]] = field(default_factory=lambda: defaultdict(deque))
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    chat_responses: list[str] = field(default_factory=list)
    embedding_requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, stage: str, *outputs: dict[str, Any] | str) -> None:
        for output in outputs:
            text = output if isinstance(output, str) else json.dumps(output)
            self.answers[stage].append(text)


@contextmanager
def fake_openai_server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    embedder = HashingEmbedder(64)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path.endswith("/embeddings"):
                fake.embedding_requests.append(body)
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = embedder.passages([str(text) for text in inputs])
                payload: dict[str, Any] = {
                    "object": "list",
                    "model": body["model"],
                    "data": [
                        {"object": "embedding", "index": i, "embedding": v.tolist()}
                        for i, v in enumerate(vectors)
                    ],
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            else:
                fake.chat_requests.append(body)
                stage = body["response_format"]["json_schema"]["name"]
                queued = fake.answers[stage]
                content = (
                    queued.popleft()
                    if queued or stage not in JUDGE_DEFAULTS
                    else (JUDGE_DEFAULTS[stage])
                )
                fake.chat_responses.append(content)
                payload = {
                    "id": f"chatcmpl-{len(fake.chat_requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                }
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
