"""`mnemoledger export` and `mnemoledger import`: a user's events out, and back in.

mnemoledger export --user maya --format jsonl -o maya.jsonl     # faithful, importable
mnemoledger export --user maya --format parquet -o maya.parquet # timeline table (DuckDB)
mnemoledger --home /tmp/copy import maya.jsonl                  # identical read models
"""

from __future__ import annotations

from pathlib import Path

import click

from mnemoledger.commands import output
from mnemoledger.commands.audit.export import FORMATS
from mnemoledger.commands.options import CliState, global_options, pass_state


@click.command()
@click.option("--user", required=True, help="Whose events to export.")
@click.option("--format", "format_", type=click.Choice(FORMATS), default="jsonl", show_default=True)
@click.option(
    "-o", "--output", "path", required=True, type=click.Path(dir_okay=False, path_type=Path)
)
@global_options
@pass_state
def export(state: CliState, user: str, format_: str, path: Path) -> None:
    """Export a user's events: JSONL (the event stream, importable) or Parquet/CSV (the
    timeline table, one row per event)."""
    result = state.ledger().export(user=user, format=format_, path=path)
    output.emit(
        state.as_json,
        result,
        lambda: output.stdout.print(
            f"exported {result.events} events of {result.user} to {result.path} ({result.format})"
        ),
    )


@click.command(name="import")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@global_options
@pass_state
def import_(state: CliState, path: Path) -> None:
    """Import an exported JSONL event stream (same ids, times and provenance) and bring the
    read models up to date."""
    with output.progress_bar(not state.as_json, "importing") as progress:
        result = state.ledger().import_events(path, progress)
    output.emit(
        state.as_json,
        result,
        lambda: output.stdout.print(
            f"imported {result.events} events ({', '.join(result.users) or 'no users'})"
        ),
    )
