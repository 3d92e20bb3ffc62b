"""`mnemoledger command show|pending|process`: how a recorded command ended, and the adds
recorded without waiting that are not processed yet.

    mnemoledger add "I moved to Lisbon" --user maya --no-wait   # prints the command id
    mnemoledger command show 3f2a...                            # requested, then completed
    mnemoledger command pending [--user maya]                   # adds not processed yet
    mnemoledger command process [--user maya]                   # process them here, now

Registered lazily on the main group in `commands/cli.py`.
"""

from __future__ import annotations

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.models import CommandOut
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.commands.write.commands_api import PendingAddOut, ProcessedAdd


@click.group()
@global_options
def command() -> None:
    """Show a recorded command (an add, an ingest, ...): requested (not processed yet),
    completed with what it did, or failed with why."""


@command.command()
@click.argument("command_id")
@global_options
@pass_state
def show(state: CliState, command_id: str) -> None:
    """Show the command COMMAND_ID (an add's id as `add --no-wait` printed it)."""
    found = state.ledger().command(command_id)
    output.emit(state.as_json, found, lambda: _show(found))


@command.command()
@click.option("--user", help="Only this user's adds.")
@global_options
@pass_state
def pending(state: CliState, user: str | None) -> None:
    """List the adds recorded and not processed yet, oldest first."""
    found = state.ledger().pending_adds(user=user)
    output.emit(state.as_json, found, lambda: _pending(found))


@command.command()
@click.option("--user", help="Only this user's adds.")
@global_options
@pass_state
def process(state: CliState, user: str | None) -> None:
    """Process here, now, every add recorded and not processed yet (what `worker` and
    `serve` do on their own)."""
    done = state.ledger().process_pending_adds(user=user, older_than_seconds=0)
    output.emit(state.as_json, done, lambda: _processed(done))


def _show(found: CommandOut) -> None:
    output.stdout.print(
        f"{found.kind} {found.command_id} for {found.user_id}: {found.status}"
        f" (requested {found.requested_at}, {found.llm_calls} LLM call(s))"
    )
    for key, value in (found.outcome or {}).items():
        output.stdout.print(f"  {key}: {value}")


def _pending(found: list[PendingAddOut]) -> None:
    if not found:
        output.stdout.print("no adds waiting")
        return
    table = Table(title="adds not processed yet")
    for column in ("command", "user", "requested at"):
        table.add_column(column, overflow="fold")
    for add in found:
        table.add_row(add.command_id, add.user_id, add.requested_at.isoformat())
    output.stdout.print(table)


def _processed(done: list[ProcessedAdd]) -> None:
    if not done:
        output.stdout.print("no adds waiting")
    for add in done:
        if add.error is not None:
            output.stdout.print(f"{add.command_id} ({add.user_id}): failed: {add.error}")
        elif add.result is not None:
            added = len(add.result.memories)
            output.stdout.print(f"{add.command_id} ({add.user_id}): {added} memory(ies) added")
