"""`mnemoledger resume`, `mnemoledger context` and `mnemoledger transcripts`.

Registered on the main group in `commands/cli.py`:

    from mnemoledger.commands.recall.recall_cli import context, resume, transcripts
    cli.add_command(resume)
    cli.add_command(context)
    cli.add_command(transcripts)

All three are reads: they write nothing to the log.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.commands.recall.recall_api import TranscriptHit
from mnemoledger.commands.write.ingest import load_turns, parse_turns
from mnemoledger.ledger.policy import MAX_INGEST_BYTES, RESUME_RECENT_HOURS, SEARCH_DEFAULT_K

STDIN = "-"


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
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    help="Recent shows the changes of the last N consolidation cycles instead of --hours.",
)
@click.option(
    "--compact",
    is_flag=True,
    help="Keep only Core and Working memories related to what the user did lately.",
)
@global_options
@pass_state
def resume(
    state: CliState,
    user: str,
    namespace: str | None,
    hours: float,
    epochs: int | None,
    compact: bool,
) -> None:
    """What a new session resumes from: Core, Recent, Topics and Triggers, within their
    budgets."""
    result = state.ledger().resume(user, namespace, hours=hours, epochs=epochs, compact=compact)
    output.emit(state.as_json, result, lambda: output.stdout.out(result.text, end=""))


@click.command()
@click.option("--user", required=True, help="Whose context to assemble.")
@click.option("--message", help="The current message: rules and summaries near it come first.")
@click.option(
    "--files",
    "files_dir",
    type=click.Path(path_type=Path),
    help="Directory with SOUL.md / AGENTS.md / MEMORY.md, used when the ledger has no "
    "context for the user.",
)
@click.option(
    "--turns",
    type=click.Path(path_type=Path, allow_dash=True),
    help='The thread\'s recent turns (JSONL {"role", "content", "memory_stored"?}; - for '
    "stdin): adds a reminder to store what the user shared, after 10 turns without a store.",
)
@click.option(
    "--tools",
    "tool_instructions",
    is_flag=True,
    help="End with how to use the memory tools (for an agent connected to `mnemoledger mcp`).",
)
@global_options
@pass_state
def context(
    state: CliState,
    user: str,
    message: str | None,
    files_dir: Path | None,
    turns: Path | None,
    tool_instructions: bool,
) -> None:
    """The agent's system-prompt context: agent, soul, environment, user, rules,
    summaries and what it knows."""
    thread_turns = None
    if turns is not None:
        if str(turns) == STDIN:
            thread_turns = parse_turns(sys.stdin.read(MAX_INGEST_BYTES + 1), source="<stdin>")
        else:
            thread_turns = load_turns(turns)
    result = state.ledger().context(
        user, message, files_dir=files_dir, turns=thread_turns, tool_instructions=tool_instructions
    )

    def human() -> None:
        output.stdout.out(result.text)
        for steering in result.steering:
            output.stdout.out("\n" + steering)

    output.emit(state.as_json, result, human)


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
