"""A small OpenAI-compatible server on 127.0.0.1 for tests of the real `openai` client path.

Chat completions answer from per-stage queues of canned JSON (the stage is the
`response_format.json_schema.name` the client sends, or the schema's name in the prompt when
the request states it there); embeddings come from the hashing embedder. Every request body
is kept, so tests can compare it with what the ledger recorded. The judge's stages answer
"nothing to say" when no answer is queued (every turn kept and no instruction, every pair
unrelated, no fact stated), so a test of another stage need not script them.

Like a real server, it honours `max_tokens` (a token is 4 characters here): a longer answer
is cut there with `finish_reason: length` (a `Looping` answer goes on until cut, or up to a
full context without `max_tokens`). It can also refuse output modes (`refused_formats`: a
400 naming `response_format`, as servers without JSON-schema output answer) and take
`delay` seconds per chat call (cut short when the server stops). `answering` answers a
stage whose queue is empty (`plain_answer`: every content kept as written, core.md left as
it is; `rule_answer`: the same, obeying `fake-rewrite:` lines of the system prompt, and
every core-update candidate written into core.md), and `usage="counted"` reports tokens
counted from the characters sent and answered instead of the fixed 11 + 7.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from mnemoledger.commands.llm.schemas import ReconstructInput, RelatedMemory
from mnemoledger.ledger import Settings
from mnemoledger.projections.embeddings.hashing import HashingEmbedder

JUDGE_DEFAULTS = {
    "read_turns": '{"readings": []}',
    "relate": '{"relations": []}',
    "read_facts": '{"facts": []}',
}
"""What the judge's stages answer when nothing is queued for them."""

CHARS_PER_TOKEN = 4
CONTEXT_TOKENS = 32_768
"""Where a looping answer ends when the request sets no `max_tokens`: the context is full."""
_SCHEMA_IN_PROMPT = re.compile(r'JSON schema "(\w+)"')


@dataclass(frozen=True)
class Looping:
    """An answer that starts with `start` and repeats `again` until the server stops it."""

    start: str
    again: str

    def text(self, max_tokens: int | None) -> str:
        limit = (max_tokens or CONTEXT_TOKENS) * CHARS_PER_TOKEN
        repeats = (limit - len(self.start)) // len(self.again) + 2  # past the limit
        return self.start + self.again * repeats


@dataclass
class FakeOpenAI:
    """The server's state: canned answers in, received requests out."""

    url: str = ""
    answers: dict[str, deque[str | Looping]] = field(default_factory=lambda: defaultdict(deque))
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    chat_responses: list[str] = field(default_factory=list)
    """The answers sent, as sent (cut at `max_tokens`); not the refused requests'."""
    embedding_requests: list[dict[str, Any]] = field(default_factory=list)
    refused_formats: set[str] = field(default_factory=set)
    """`response_format` types answered with a 400 (`json_schema`, `json_object`)."""
    delay: float = 0.0
    """Seconds each chat call takes before it is answered."""
    stopped: threading.Event = field(default_factory=threading.Event)
    answering: Callable[[str, dict[str, Any]], str] | None = None
    """Answers a request of a stage with nothing queued (None: only the judge's stages)."""
    usage: Literal["fixed", "counted"] = "fixed"
    """`fixed`: 11 prompt and 7 completion tokens per call; `counted`: a token per 4
    characters of the messages sent and of the answer."""

    def answer(self, stage: str, *outputs: dict[str, Any] | str | Looping) -> None:
        for output in outputs:
            text = output if isinstance(output, str | Looping) else json.dumps(output)
            self.answers[stage].append(text)

    def chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and body of the answer to a chat-completions request."""
        self.chat_requests.append(body)
        if self.delay and self.stopped.wait(self.delay):  # stopping: the client is gone
            return 503, {"error": {"message": "the server is stopping", "type": "server_error"}}
        kind = (body.get("response_format") or {}).get("type")
        if kind in self.refused_formats:
            message = f"response_format type '{kind}' is not supported by this server"
            error = {"message": message, "type": "invalid_request_error"}
            return 400, {"error": error | {"param": "response_format", "code": None}}
        stage = stage_of(body)
        queued = self.answers[stage]
        answer: str | Looping
        if queued:
            answer = queued.popleft()
        elif self.answering is not None:
            answer = self.answering(stage, body)
        else:
            answer = JUDGE_DEFAULTS[stage]
        max_tokens = body.get("max_tokens")
        content = answer.text(max_tokens) if isinstance(answer, Looping) else answer
        finish = "stop"
        if max_tokens is not None and len(content) > max_tokens * CHARS_PER_TOKEN:
            content, finish = content[: max_tokens * CHARS_PER_TOKEN], "length"
        self.chat_responses.append(content)
        return 200, {
            "id": f"chatcmpl-{len(self.chat_requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": self._usage(body, content),
        }

    def _usage(self, body: dict[str, Any], content: str) -> dict[str, int]:
        if self.usage == "fixed":
            return {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
        sent = sum(len(str(m.get("content", ""))) for m in body["messages"])
        prompt = math.ceil(sent / CHARS_PER_TOKEN)
        completion = math.ceil(len(content) / CHARS_PER_TOKEN)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }


def tagged(body: dict[str, Any], tag: str) -> Any:
    """The JSON in the `<tag>` block of a request's user message."""
    text = str(body["messages"][1]["content"])
    return json.loads(text.split(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0])


def plain_answer(stage: str, body: dict[str, Any]) -> str:
    """A model that keeps what it is given: `remember` and `reconstruct` write every new
    content as it is (replacing nothing), `split` keeps each input whole, `core_update`
    leaves core.md as it is, the judge's stages say nothing; any other stage is not
    answered."""
    if stage == "split":
        text = str(body["messages"][1]["content"])
        raw = text.split("<raw_input>\n", 1)[1].rsplit("\n</raw_input>", 1)[0]
        return json.dumps({"contents": [raw]})
    if stage in ("reconstruct", "refine"):
        contents = tagged(body, "new_contents")
        return json.dumps(
            {
                "memories": [
                    {"content": c["content"], "sources": [f"new:{c['index']}"]} for c in contents
                ],
                "coverage": [
                    {"new_content": c["index"], "memories": [c["index"]]} for c in contents
                ],
            }
        )
    if stage == "remember":
        contents = tagged(body, "new_contents")
        return json.dumps(
            {
                "readings": [
                    {"new_content": c["index"], "keep": True, "instruction": False}
                    for c in contents
                ],
                "memories": [
                    {"content": c["content"], "sources": [f"new:{c['index']}"]} for c in contents
                ],
                "restates": [],
            }
        )
    if stage == "core_update":
        text = str(body["messages"][1]["content"])
        core = text.split("<current_core_markdown>\n", 1)[1].split("\n</current_core_markdown>")[0]
        return json.dumps({"should_update": False, "core_markdown": core})
    if stage in JUDGE_DEFAULTS:
        return JUDGE_DEFAULTS[stage]
    raise KeyError(f"nothing to answer for stage {stage!r}")


REWRITE_RULE = re.compile(r"^fake-rewrite: (?P<old>.+?) => (?P<new>.*?)\s*$", re.MULTILINE)
"""A line of a system prompt the rule-following fake obeys (`rule_answer`)."""
USER_HEADING = "## USER"
NOTHING_FOUND = {"same_fact": '{"verdicts": []}', "insight": '{"insights": []}'}
"""What the rule-following fake answers the daily pass: no pair states the same fact, no
insight."""


def rule_answer(stage: str, body: dict[str, Any]) -> str:
    """A model that follows its system prompt's rules, and writes what it is given into
    core.md: as `plain_answer`, except that

    - each `fake-rewrite: OLD => NEW` line of the system prompt rewrites the memories
      `remember` and `reconstruct` write (OLD replaced by NEW), so a new prompt with such
      a line draws other answers, and the same answers without one;
    - `core_update` adds every candidate not yet in core.md as a USER bullet resting on it;
    - the daily pass finds nothing (`NOTHING_FOUND`).
    """
    if stage == "core_update":
        return _core_with_candidates(body)
    if stage in NOTHING_FOUND:
        return NOTHING_FOUND[stage]
    answer = plain_answer(stage, body)
    if stage not in ("remember", "reconstruct", "refine"):
        return answer
    rules = [
        (m["old"], m["new"]) for m in REWRITE_RULE.finditer(str(body["messages"][0]["content"]))
    ]
    output = json.loads(answer)
    for memory in output["memories"]:
        for old, new in rules:
            memory["content"] = memory["content"].replace(old, new)
    return json.dumps(output)


def _core_with_candidates(body: dict[str, Any]) -> str:
    text = str(body["messages"][1]["content"])
    core = text.split("<current_core_markdown>\n", 1)[1].split("\n</current_core_markdown>")[0]
    lines = core.rstrip("\n").splitlines()
    candidates = [
        c for c in tagged(body, "candidate_new_memories") if f"- {c['content']}" not in lines
    ]
    if not candidates:
        return json.dumps({"should_update": False, "core_markdown": core})
    if USER_HEADING not in lines:
        lines.append(USER_HEADING)
    start = lines.index(USER_HEADING) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    kept = [line for line in lines[start:end] if line.strip()]
    bullets = [f"- {c['content']}" for c in candidates]
    lines[start:end] = [*kept, *bullets]
    return json.dumps(
        {
            "should_update": True,
            "core_markdown": "\n".join(lines) + "\n",
            "sources": [{"bullet": c["content"], "memories": [c["id"]]} for c in candidates],
        }
    )


def stage_of(body: dict[str, Any]) -> str:
    """The stage a chat request is a call of: the JSON schema's name, sent as
    `response_format` or stated in the system prompt."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return str(response_format["json_schema"]["name"])
    found = _SCHEMA_IN_PROMPT.search(str(body["messages"][0]["content"]))
    assert found is not None, "the request names no schema"
    return found.group(1)


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    """Answer a request with `payload` as JSON; a client that timed out and left is let go."""
    data = json.dumps(payload).encode()
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


@contextmanager
def fake_openai_server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    embedder = HashingEmbedder(64)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status = 200
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
                status, payload = fake.chat(body)
            send_json(self, status, payload)

        def log_message(self, *_: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.stopped.set()  # a delayed answer ends now
        server.shutdown()
        server.server_close()
        thread.join()


INPUTS = ReconstructInput(
    related=[RelatedMemory(id="m1", content="Maya lives in Paris", similarity=0.87)],
    new_contents=["Maya moved to Berlin"],
)
"""A reconstruction's inputs: one related memory, one new content that moves it."""
ANSWER = {
    "memories": [{"content": "Maya moved to Berlin.", "sources": ["new:0", "m1"]}],
    "coverage": [{"new_content": 0, "memories": [0]}],
}
"""A careful model's answer to `INPUTS`."""


def settings_for(fake: FakeOpenAI, home: Path, **values: Any) -> Settings:
    """Settings of a home whose LLM is `fake`, hashing embeddings."""
    return Settings(
        home=home,
        llm_provider="openai",
        llm_model="fake-chat",
        openai_base_url=fake.url,
        openai_api_key="test-key",
        embedder="hashing",
        **values,
    )
