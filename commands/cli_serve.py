"""`mnemoledger serve`, `mnemoledger mcp` and `mnemoledger keys` (issue 8).

mnemoledger keys create --agent researcher --user maya --json   # {"key": "mlk_...", ...}
mnemoledger serve --port 8765                                   # HTTP API + /docs
MNEMOLEDGER_API_KEY=mlk_... mnemoledger mcp                     # MCP tools over stdio
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import click

from commands import output
from commands.facade import MnemoLedger
from commands.keys import API_KEY_ENV, IssuedKey, KeyInfo
from commands.options import CliState, global_options, pass_state


def _open(state: CliState) -> Callable[[], MnemoLedger]:
    """A factory, not a facade: servers open the facade in their own thread."""
    return lambda: MnemoLedger(state.home, actor=state.actor)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
)
@global_options
@pass_state
def serve(state: CliState, host: str, port: int, log_level: str) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json, docs at /docs) until interrupted.
    Every route but /health needs a key from `mnemoledger keys create`."""
    import uvicorn

    from commands.http import create_app

    app = create_app(_open(state))
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=log_level == "debug")


@click.command()
@click.option(
    "--key",
    envvar=API_KEY_ENV,
    required=True,
    help=f"The API key the tools act with (default: ${API_KEY_ENV}).",
)
@global_options
@pass_state
def mcp(state: CliState, key: str) -> None:
    """Serve the memory as MCP tools on stdin/stdout: memory.query, store, recall, history,
    delta. The key fixes the agent, its users and its categories."""
    from commands.mcp_server import serve_stdio

    serve_stdio(_open(state), key)


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
