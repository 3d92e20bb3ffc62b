"""`mnemoledger ingest FILE --user U` and `mnemoledger profile --user U` (../shared/CLI.md).

Registered on the main group in `commands/cli.py`:

    from mnemoledger.commands.write.ingest_cli import ingest, profile
    cli.add_command(ingest)
    cli.add_command(profile)
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state, writer_options
from mnemoledger.commands.write.ingest import Turn, load_turns, parse_turns
from mnemoledger.commands.write.ingest_api import IngestResult
from mnemoledger.ledger.policy import MAX_INGEST_BYTES

STDIN = "-"


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--user", required=True, help="User the memories belong to.")
@writer_options
@click.option(
    "--multi-fact",
    is_flag=True,
    help="Also run the multi-fact pass over long user turns (at most 3 writes per turn).",
)
@global_options
@pass_state
def ingest(
    state: CliState,
    file: Path,
    user: str,
    agent: str | None,
    thread: str | None,
    multi_fact: bool,
) -> None:
    """Extract durable facts from a conversation (JSONL turns: {"role", "content", "ts"?,
    "id"?}; FILE may be - for stdin) and store them for a user, in one atomic write."""
    # stdin is read no further than one ingest may be: parse_turns refuses what is over
    if str(file) == STDIN:
        source: Path | list[Turn] = parse_turns(
            sys.stdin.read(MAX_INGEST_BYTES + 1), source="<stdin>"
        )
    else:
        load_turns(file)  # refused input fails here, before the progress bar draws a line
        source = file
    memory = state.ledger()
    with output.progress_bar(not state.as_json, "extracting") as progress:
        result = memory.ingest(
            source,
            user=user,
            agent=agent,
            thread=thread,
            multi_fact=multi_fact,
            progress=progress,
        )
    output.emit(state.as_json, result, lambda: ingest_summary(result))


@click.command()
@click.option("--user", required=True, help="Whose profile to show.")
@global_options
@pass_state
def profile(state: CliState, user: str) -> None:
    """Show a user's profile, from what they said about themselves (tacit/user memories)."""
    fields = state.ledger().profile(user)

    def human() -> None:
        if not fields:
            output.stdout.print(f"(no profile for {user} yet)")
            return
        table = Table(show_header=False, box=None)
        table.add_column(style="bold")
        table.add_column(overflow="fold")
        for name, value in fields.items():
            table.add_row(name, value)
        output.stdout.print(table)

    output.emit(state.as_json, fields, human)


def ingest_summary(result: IngestResult) -> None:
    """What an ingest did, for people."""
    if result.memories:
        output.memories_table(result.memories, "added")
    if result.updated:
        output.memories_table(result.updated, "updated (new value for a known key)")
    if result.reinforced:
        output.memories_table(result.reinforced, "reinforced (style seen again)")
    if result.skipped:
        table = Table(title="skipped")
        for column in ("namespace", "key", "value", "reason"):
            table.add_column(column, overflow="fold")
        for s in result.skipped:
            table.add_row(s.namespace, s.key or "-", s.value, s.reason)
        output.stdout.print(table)
    notes = [
        f"command {result.command_id}",
        f"{result.turns} turns",
        f"{result.extractions} extractions",
        f"{result.llm_calls} LLM calls",
    ]
    if result.directive_updated:
        notes.append("personality directive updated")
    if result.profile_updated:
        notes.append(f"profile: {', '.join(result.profile_updated)}")
    output.stdout.print("; ".join(notes))
