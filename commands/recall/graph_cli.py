"""`mnemoledger graph`: the relation edges of a user or of one memory (seed 003 §2).

    mnemoledger graph --user maya                          # every relation, strongest first
    mnemoledger graph --user maya --memory ID --min-strength 0.9
    mnemoledger graph --user maya --all --json             # also edges to replaced memories

`--json` prints a list of {"from", "to", "type", "strength"}. Errors follow the CLI
contract: an unknown memory, or one of another user, is bad input (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.models import EdgeOut
from mnemoledger.commands.options import MEMORY_ID, CliState, global_options, pass_state

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger


def _api(state: CliState) -> MnemoLedger:
    return state.ledger()


def _edges_table(edges: Sequence[EdgeOut]) -> None:
    if not edges:
        output.stdout.print("no edges")
        return
    table = Table()
    for column in ("from", "to", "type"):
        table.add_column(column, overflow="fold")
    table.add_column("strength", justify="right")
    for edge in edges:
        table.add_row(
            output.short_id(edge.from_id),
            output.short_id(edge.to),
            edge.type,
            f"{edge.strength:.3f}",
        )
    output.stdout.print(table)


@click.command()
@click.option("--user", required=True, help="Whose relations to show.")
@click.option(
    "--memory", "memory_id", type=MEMORY_ID, help="Only the edges of this memory (or id prefix)."
)
@click.option(
    "--min-strength",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Only edges at least this strong.",
)
@click.option(
    "--all",
    "include_inactive",
    is_flag=True,
    help="Also edges to superseded or forgotten memories.",
)
@global_options
@pass_state
def graph(
    state: CliState,
    user: str,
    memory_id: str | None,
    min_strength: float,
    include_inactive: bool,
) -> None:
    """Relation edges between a user's memories, strongest first (each pair once)."""
    edges = _api(state).graph_edges(
        user=user, memory=memory_id, min_strength=min_strength, active_only=not include_inactive
    )
    output.emit(state.as_json, edges, lambda: _edges_table(edges))
