"""The OpenAI-compatible provider, through the real `openai` client, against a local fake
chat-completions server that records what it receives."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mnemoledger.commands.llm import LLMError, StageOutputInvalid
from mnemoledger.commands.llm.openai_provider import OpenAIProvider
from mnemoledger.commands.llm.parsing import first_json_object, strip_code_fences
from mnemoledger.commands.llm.prompts import EXTRACT, RECONSTRUCT
from mnemoledger.commands.llm.schemas import (
    ConversationTurn,
    ExtractInput,
    ReconstructedMemory,
    ReconstructOutput,
)
from mnemoledger.ledger import InvalidInput
from tests.fake_openai import ANSWER, INPUTS, send_json
from tests.openai_retries import assert_seed_backoff, record_client_pauses


@dataclass
class Reply:
    status: int = 200
    content: str | None = json.dumps(ANSWER)
    delay: float = 0.0
    refusal: str | None = None


@dataclass
class FakeChatServer:
    """`POST /v1/chat/completions` on 127.0.0.1; answers with the queued replies in turn,
    then with the default one."""

    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        reply = self.replies.popleft() if self.replies else Reply()
        if reply.status != 200:
            error = {"message": f"fake failure {reply.status}", "type": "fake", "code": None}
            return reply.status, {"error": error}, reply.delay
        message = {"role": "assistant", "content": reply.content, "refusal": reply.refusal}
        completion = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 321, "completion_tokens": 54, "total_tokens": 375},
        }
        return 200, completion, reply.delay


@pytest.fixture
def fake() -> Iterator[FakeChatServer]:
    fake = FakeChatServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            fake.requests.append(body)
            fake.headers.append({k.lower(): v for k, v in self.headers.items()})
            status, payload, delay = fake.answer(body)
            time.sleep(delay)
            send_json(self, status, payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    fake.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=fake.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
    thread.join()


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses the openai client takes between attempts, recorded instead of slept."""
    return record_client_pauses(monkeypatch)


def provider_for(fake: FakeChatServer, pauses: list[float], **options: Any) -> OpenAIProvider:
    return OpenAIProvider("fake-chat-model", base_url=fake.base_url, api_key="sk-test", **options)


def test_a_call_records_exactly_the_request_the_server_received(
    fake: FakeChatServer, pauses: list[float]
) -> None:
    wrapped = f"Sure! Here it is:\n```json\n{json.dumps(ANSWER, indent=2)}\n```\nAnything {{else}}?"
    fake.replies.append(Reply(content=wrapped))
    call = provider_for(fake, pauses).complete(RECONSTRUCT, INPUTS)

    assert fake.requests == [call.request]
    sent = fake.requests[0]
    assert sent["model"] == "fake-chat-model"
    assert sent["messages"] == [
        {"role": "system", "content": RECONSTRUCT.system},
        {"role": "user", "content": RECONSTRUCT.render(INPUTS)},
    ]
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "reconstruct",
            "schema": ReconstructOutput.model_json_schema(),
            "strict": False,
        },
    }
    assert sent["temperature"] == 0
    assert fake.headers[0]["authorization"] == "Bearer sk-test"

    assert call.output.memories == [
        ReconstructedMemory(content="Maya moved to Berlin.", sources=["new:0", "m1"])
    ]
    assert call.response == wrapped
    assert (call.prompt_tokens, call.completion_tokens) == (321, 54)
    assert (call.provider, call.model) == ("openai", "fake-chat-model")
    assert (call.stage, call.prompt_id, call.prompt_version) == (
        "reconstruct",
        "haema.reconstruct",
        RECONSTRUCT.version,
    )
    assert call.latency_ms > 0
    assert pauses == []


@pytest.mark.parametrize("transient", [500, 503, 429, 408])
def test_a_transient_failure_is_retried(
    fake: FakeChatServer, pauses: list[float], transient: int
) -> None:
    fake.replies.append(Reply(status=transient))
    call = provider_for(fake, pauses).complete(RECONSTRUCT, INPUTS)
    assert call.output == ReconstructOutput.model_validate(ANSWER)
    assert len(fake.requests) == 2
    assert fake.requests[0] == fake.requests[1] == call.request
    assert_seed_backoff(pauses, 1)


def test_three_failed_attempts_give_up_with_an_llm_error(
    fake: FakeChatServer, pauses: list[float]
) -> None:
    fake.replies.extend([Reply(status=500)] * 4)
    with pytest.raises(LLMError, match=r"gave up after 3 attempts: HTTP 500"):
        provider_for(fake, pauses).complete(RECONSTRUCT, INPUTS)
    assert len(fake.requests) == 3
    assert_seed_backoff(pauses, 2)


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_a_refused_request_fails_at_once(
    fake: FakeChatServer, pauses: list[float], status: int
) -> None:
    fake.replies.append(Reply(status=status))
    with pytest.raises(LLMError, match=rf"request refused: HTTP {status}") as refused:
        provider_for(fake, pauses).complete(RECONSTRUCT, INPUTS)
    assert not isinstance(refused.value, StageOutputInvalid)
    assert len(fake.requests) == 1
    assert pauses == []
    if status == 401:
        assert "MNEMOLEDGER_OPENAI_API_KEY" in str(refused.value)


def test_a_timeout_is_retried(fake: FakeChatServer, pauses: list[float]) -> None:
    fake.replies.append(Reply(delay=1.0))
    call = provider_for(fake, pauses, timeout=0.25).complete(RECONSTRUCT, INPUTS)
    assert call.output == ReconstructOutput.model_validate(ANSWER)
    assert len(fake.requests) == 2
    assert_seed_backoff(pauses, 1)


def test_an_unreachable_server_gives_up_after_three_attempts(pauses: list[float]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k")
    with pytest.raises(LLMError, match="gave up after 3 attempts: APIConnectionError"):
        provider.complete(RECONSTRUCT, INPUTS)
    assert_seed_backoff(pauses, 2)


@pytest.mark.parametrize(
    "content",
    [
        "I could not do that.",  # no JSON at all
        '{"memories": [{"content": "x", "sources": []}]',  # cut off
        '{"memories": [], "coverage": [], "notes": "extra"}',  # key outside the schema
        '```json\n{"memories": [{"content": "x"}], "coverage": []}\n```',  # sources missing
    ],
)
def test_output_that_does_not_validate_is_asked_for_again(
    fake: FakeChatServer, pauses: list[float], content: str
) -> None:
    """Issue 31: the model is told what was wrong once (tests/test_llm_bounded.py has the
    second invalid answer, which leaves the decision to the offline rules)."""
    fake.replies.append(Reply(content=content))
    call = provider_for(fake, pauses).complete(RECONSTRUCT, INPUTS)
    assert call.output == ReconstructOutput.model_validate(ANSWER)
    assert call.fallback is None
    first, second = fake.requests
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][2] == {"role": "assistant", "content": content}
    assert second["messages"][3]["role"] == "user"
    assert second["messages"][3]["content"].startswith("Your answer could not be used: ")
    assert call.request == second and call.response == json.dumps(ANSWER)
    assert (call.prompt_tokens, call.completion_tokens) == (2 * 321, 2 * 54)


def test_extraction_with_nothing_to_remember_is_empty_not_an_error(
    fake: FakeChatServer, pauses: list[float]
) -> None:
    fake.replies.append(Reply(content="Nothing here is worth remembering."))
    inputs = ExtractInput(conversation=[ConversationTurn(role="user", content="hi")])
    call = provider_for(fake, pauses).complete(EXTRACT, inputs)
    assert call.output.preferences == call.output.styles == []


def test_extraction_output_is_normalised(fake: FakeChatServer, pauses: list[float]) -> None:
    answer = {
        "preferences": [
            {"key": "Code_Style", "value": 4, "category": "preference", "explicit": True}
        ],
        "styles": [{"key": "Style/Humor  Dry", "value": "dry", "category": "style", "tags": None}],
    }
    fake.replies.append(Reply(content=json.dumps(answer)))
    inputs = ExtractInput(conversation=[ConversationTurn(role="user", content="4 spaces")])
    output = provider_for(fake, pauses).complete(EXTRACT, inputs).output
    assert (output.preferences[0].key, output.preferences[0].value) == ("code-style", "4")
    assert output.preferences[0].confidence == 0.9
    assert (output.styles[0].key, output.styles[0].confidence) == ("style/humor-dry", 0.75)


def test_a_refusal_is_an_llm_error(fake: FakeChatServer, pauses: list[float]) -> None:
    fake.replies.append(Reply(content=None, refusal="I can't help with that."))
    with pytest.raises(LLMError, match="refused: I can't help"):
        provider_for(fake, pauses).complete(RECONSTRUCT, INPUTS)


def test_configuration_errors_are_invalid_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InvalidInput, match="model"):
        OpenAIProvider("", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(InvalidInput, match="API key"):
        OpenAIProvider("gpt-4o-mini")
    assert OpenAIProvider("llama3.1", base_url="http://127.0.0.1:1/v1").model == "llama3.1"


def test_json_is_found_in_prose_and_fences() -> None:
    assert strip_code_fences("a\n```json\n{}\n```\nb") == "a\n{}\n\nb"
    assert first_json_object('Note {this}: {"a": "}{", "b": {"c": 1}} and {"d": 2}') == {
        "a": "}{",
        "b": {"c": 1},
    }
    assert first_json_object('{"text": "a \\" } quote"}') == {"text": 'a " } quote'}
    assert first_json_object("no json [1, 2]") is None
