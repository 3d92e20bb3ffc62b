"""The audit trail on the command line: `history ID` rendering, `--as-of`, and `report`.

mnemoledger history ID                  # every event of a memory and who decided it
mnemoledger log --user maya --type MemoryUpdated --since 2026-05-01 --by-actor cli:me
mnemoledger list --user maya --as-of 2026-05-01T12:00   # as it stood then
mnemoledger report --json               # operations and LLM usage (DuckDB)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.audit.history_api import HistoryEntry
from mnemoledger.commands.audit.report import BUCKETS, Report
from mnemoledger.commands.options import (
    LIMIT,
    MEMORY_ID,
    CliState,
    global_options,
    pass_state,
)

F = TypeVar("F", bound=Callable[..., Any])


def history_table(entries: Sequence[HistoryEntry]) -> None:
    table = Table()
    for column in ("pos", "at", "event", "actor", "agent", "change", "decided by"):
        table.add_column(column, overflow="fold")
    for e in entries:
        change = e.new_ref if e.old_ref is None else f"{e.old_ref} -> {e.new_ref}"
        if change is None:
            change = json.dumps(e.data, ensure_ascii=False)[:120]
        decided = (
            f"{e.llm.stage} {e.llm.prompt} {e.llm.model} "
            f"({e.llm.prompt_tokens}+{e.llm.completion_tokens} tokens)"
            if e.llm is not None
            else "-"
        )
        table.add_row(
            str(e.position),
            e.at[:19] if e.said_at is None else f"{e.at[:19]} (said {e.said_at[:19]})",
            e.event,
            e.actor or "-",
            e.agent_id or "-",
            change or "-",
            decided,
        )
    output.stdout.print(table)


@click.command()
@click.option("--user", help="Only this user's events.")
@click.option("--bucket", type=click.Choice(BUCKETS), default="day", show_default=True)
@global_options
@pass_state
def report(state: CliState, user: str | None, bucket: str) -> None:
    """Operations by node, op and status over time, and LLM calls, tokens and latency by
    stage and model (DuckDB over the event log)."""
    result = state.ledger().report(user=user, bucket=bucket)
    output.emit(state.as_json, result, lambda: _report_tables(result))


def _report_tables(result: Report) -> None:
    operations = Table(title=f"operations per {result.bucket}")
    for column in ("bucket", "node", "op", "status", "count"):
        operations.add_column(column)
    for o in result.operations:
        operations.add_row(o.bucket, o.node, o.op, o.status, str(o.count))
    output.stdout.print(operations)
    llm = Table(title="LLM usage")
    for column in ("stage", "model", "calls", "prompt tok", "completion tok", "avg ms", "p95 ms"):
        llm.add_column(column)
    for u in result.llm:
        llm.add_row(
            u.stage,
            u.model,
            str(u.calls),
            str(u.prompt_tokens),
            str(u.completion_tokens),
            f"{u.avg_latency_ms:.1f}",
            f"{u.p95_latency_ms:.1f}",
        )
    output.stdout.print(llm)


@click.command()
@click.argument("memory_id", type=MEMORY_ID)
@global_options
@pass_state
def history(state: CliState, memory_id: str) -> None:
    """Every event of one memory, oldest first, with who did it, when, on whose behalf,
    which command caused it and the LLM call (stage, prompt, model, tokens) that decided it."""
    entries = state.ledger().memory_history(memory_id)
    output.emit(state.as_json, entries, lambda: history_table(entries))


@click.command()
@click.option("--user", help="Only events of this user.")
@click.option("--since", help="Only after this log POSITION, or from this TIME (ISO-8601).")
@click.option("--until", help="Only up to this log POSITION or TIME (ISO-8601).")
@click.option(
    "--type", "event_types", multiple=True, help="Only events of this type, e.g. MemoryAdded."
)
@click.option(
    "--by-actor",
    "by_actor",
    metavar="ACTOR",
    help="Only events recorded by this actor, as the log shows it (e.g. cli:maya, key:<id>).",
)
@click.option("--limit", type=LIMIT, help="At most this many events.")
@global_options
@pass_state
def log(
    state: CliState,
    user: str | None,
    since: str | None,
    until: str | None,
    event_types: tuple[str, ...],
    by_actor: str | None,
    limit: int | None,
) -> None:
    """The event log (a user's timeline with --user), oldest first; `--by-actor A` keeps
    only the events actor A recorded."""
    events = state.ledger().timeline(
        user=user, types=event_types, since=since, until=until, actor=by_actor, limit=limit
    )
    output.emit(state.as_json, events, lambda: output.events_table(events))
