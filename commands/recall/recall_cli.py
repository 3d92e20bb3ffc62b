"""`mnemoledger resume`, `mnemoledger context` and `mnemoledger transcripts`.

Registered on the main group in `commands/cli.py`:

    from mnemoledger.commands.recall.recall_cli import context, resume, transcripts
    cli.add_command(resume)
    cli.add_command(context)
    cli.add_command(transcripts)

All three are reads: they write nothing to the log.
"""

from __future__ import annotations

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.commands.recall.recall_api import TranscriptHit
from mnemoledger.ledger.policy import RESUME_RECENT_HOURS, SEARCH_DEFAULT_K


@click.command()
@click.option("--user", required=True, help="Whose session to resume.")
@click.option("--namespace", help="Project namespace; `default` is always read with it.")
@click.option(
    "--hours",
    type=float,
    default=RESUME_RECENT_HOURS,
    show_default=True,
    help="How far back the Recent section looks.",
)
@global_options
@pass_state
def resume(state: CliState, user: str, namespace: str | None, hours: float) -> None:
    """engram's resume: Core, Recent, Topics and Triggers, within their budgets."""
    result = state.ledger().resume(user, namespace, hours=hours)
    output.emit(state.as_json, result, lambda: output.stdout.out(result.text, end=""))


@click.command()
@click.option("--user", required=True, help="Whose context to assemble.")
@click.option("--message", help="The current message: rules and summaries near it come first.")
@global_options
@pass_state
def context(state: CliState, user: str, message: str | None) -> None:
    """The agent's system-prompt context: agent, soul, environment, user, rules,
    summaries and what it knows."""
    result = state.ledger().context(user, message)
    output.emit(state.as_json, result, lambda: output.stdout.out(result.text))


@click.command()
@click.argument("query")
@click.option("--user", required=True, help="Whose conversations to search.")
@click.option("--k", default=SEARCH_DEFAULT_K, show_default=True, help="How many chunks.")
@global_options
@pass_state
def transcripts(state: CliState, query: str, user: str, k: int) -> None:
    """Search the user's ingested conversations (session chunks, scores x 0.6)."""
    hits = state.ledger().transcripts(query, user, k)
    output.emit(state.as_json, hits, lambda: _hits_table(hits))


def _hits_table(hits: list[TranscriptHit]) -> None:
    if not hits:
        output.stdout.print("no matches")
        return
    table = Table()
    for column in ("score", "chunk", "turns", "text"):
        table.add_column(column, overflow="fold")
    for hit in hits:
        table.add_row(
            f"{hit.score:.4f}", hit.id, f"{hit.first_turn}-{hit.last_turn}", hit.content.strip()
        )
    output.stdout.print(table)
