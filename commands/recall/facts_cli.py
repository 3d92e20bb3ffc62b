"""`mnemoledger facts add|extract|end|list`: the fact graph (seed 001 §9) on the command line.

    mnemoledger facts add Maya lives_in Lisbon --memory ID
    mnemoledger facts add Maya lives_in Porto --memory ID2    # ends Maya lives_in Lisbon
    mnemoledger facts list --user maya --entity Porto --hops 2
    mnemoledger facts list --user maya --at 2026-05-01T00:00:00+00:00

`--json` prints the facts as a list (one object for add and end).
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from mnemoledger.commands import output
from mnemoledger.commands.options import MEMORY_ID, CliState, global_options, pass_state
from mnemoledger.commands.recall.facts_api import (
    DEFAULT_FACT_HOPS,
    DEFAULT_FACTS_LIMIT,
    MAX_FACT_HOPS,
    FactOut,
)


def _minute(moment: str) -> str:
    """An ISO 8601 UTC time to the minute, for a table (`--json` keeps it whole)."""
    return moment[:16].replace("T", " ")


def _facts_table(facts: Sequence[FactOut]) -> None:
    if not facts:
        output.stdout.print("no facts")
        return
    table = output.id_table()
    for column in ("id", "subject", "predicate", "object"):
        table.add_column(column, overflow="fold", min_width=len(column))
    for column in ("since", "until"):
        table.add_column(column, no_wrap=True)
    table.add_column("memory")
    for fact in facts:
        table.add_row(
            output.short_id(fact.id),
            fact.subject,
            fact.predicate,
            fact.object,
            _minute(fact.valid_from),
            "-" if fact.valid_until is None else _minute(fact.valid_until),
            output.short_id(fact.memory_id),
        )
    output.stdout.print(table)


@click.group()
@global_options
def facts() -> None:
    """Facts (subject, predicate, object) that a user's memories state, and when each held."""


@facts.command(name="add")
@click.argument("subject")
@click.argument("predicate")
@click.argument("object_", metavar="OBJECT")
@click.option(
    "--memory", "memory_id", type=MEMORY_ID, required=True, help="The memory that states it."
)
@click.option("--valid-from", help="Since when it holds (ISO 8601 with a zone; default: now).")
@click.option(
    "--keep-others",
    is_flag=True,
    help="Keep the subject's other objects for this predicate valid (e.g. likes).",
)
@global_options
@pass_state
def add(
    state: CliState,
    subject: str,
    predicate: str,
    object_: str,
    memory_id: str,
    valid_from: str | None,
    keep_others: bool,
) -> None:
    """Record a fact; the same subject's fact of the same predicate that held until now ends
    and is replaced by it (unless --keep-others)."""
    fact = state.ledger().state_fact(
        subject,
        predicate,
        object_,
        memory=memory_id,
        valid_from=valid_from,
        keep_others=keep_others,
    )
    output.emit(state.as_json, fact, lambda: _facts_table([fact]))


@facts.command(name="extract")
@click.argument("memory_id", type=MEMORY_ID)
@global_options
@pass_state
def extract(state: CliState, memory_id: str) -> None:
    """Read the facts one memory states (the LLM, or the offline rules) and record them; a
    fact of the user's that one object at a time holds (lives_in, works_at) replaces the
    earlier one."""
    found = state.ledger().extract_facts(memory_id)
    output.emit(state.as_json, found, lambda: _facts_table(found.facts))


@facts.command(name="end")
@click.argument("fact_id")
@click.option("--at", "valid_until", help="When it stopped holding (default: now).")
@global_options
@pass_state
def end(state: CliState, fact_id: str, valid_until: str | None) -> None:
    """Say a fact stopped holding; it stays in the history."""
    fact = state.ledger().end_fact(fact_id, valid_until=valid_until)
    output.emit(state.as_json, fact, lambda: _facts_table([fact]))


@facts.command(name="list")
@click.option("--user", required=True, help="Whose facts.")
@click.option("--entity", help="Only facts naming this entity (subject or object).")
@click.option("--predicate", help="Only facts with this predicate.")
@click.option(
    "--hops",
    type=click.IntRange(1, MAX_FACT_HOPS),
    default=DEFAULT_FACT_HOPS,
    show_default=True,
    help="With --entity, also the facts about what its facts lead to.",
)
@click.option("--at", help="The facts that held at this time (ISO 8601 with a zone).")
@click.option("--history", is_flag=True, help="Every fact ever stated, ended ones too.")
@click.option("--limit", type=click.IntRange(min=1), default=DEFAULT_FACTS_LIMIT, show_default=True)
@global_options
@pass_state
def list_command(
    state: CliState,
    user: str,
    entity: str | None,
    predicate: str | None,
    hops: int,
    at: str | None,
    history: bool,
    limit: int,
) -> None:
    """The user's facts that hold now (or --at a time), newest first."""
    found = state.ledger().facts(
        user=user,
        entity=entity,
        predicate=predicate,
        hops=hops,
        at=at,
        history=history,
        limit=limit,
    )
    output.emit(state.as_json, found, lambda: _facts_table(found))
