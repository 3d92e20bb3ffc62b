"""`mnemoledger query` and `mnemoledger delta`: seed 003 §6 and §1 on the command line.

    mnemoledger query "deployment plan" --agent planner --user maya --categories tasks \\
        --top-k 3 --return bullets --budget-tokens 512 --thread t1 --json
    {"header": "Memory updates since rev 0:\\n- +created: ...", "results": [...], "rev": 2, ...}
    mnemoledger delta --thread t1 --since 1 --json
    {"rev": 2, "header": "Memory updates since rev 1:\\n- ↑updated: ..."}

A disallowed category or an unknown agent is bad input (exit 2) and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from mnemoledger.commands import output
from mnemoledger.commands.options import POSITION, CliState, global_options, pass_state
from mnemoledger.commands.recall.query import BulletResult, QueryResult
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    QUERY_DEFAULT_RETURN,
    QUERY_DEFAULT_TOP_K,
    RETURN_MODES,
    SEARCH_FUSION_CHOICES,
    SEARCH_MAX_K,
)

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger


def _api(state: CliState) -> MnemoLedger:
    return state.ledger()


def _names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    return names or None


def _moment(name: str, text: str | None) -> str | None:
    if text is None:
        return None
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{name} must be an ISO-8601 date or time; got {text!r}") from None
    return text


def _show(result: QueryResult) -> None:
    if result.header:
        output.stdout.print(result.header, markup=False)
        output.stdout.print()
    if not result.results:
        output.stdout.print(result.message or "no results", markup=False)
        return
    if all(isinstance(r, BulletResult) for r in result.results):
        for r in result.results:
            assert isinstance(r, BulletResult)
            output.stdout.print(f"- {r.text}", markup=False)
        _show_related(result)
        return
    table = output.id_table()
    for column in ("id", "category", "context", "score", "importance", "content"):
        table.add_column(column, overflow="fold")
    for r in result.results:
        assert not isinstance(r, BulletResult)
        score = "-" if r.score is None else f"{r.score:.4f}"
        table.add_row(
            output.short_id(r.id),
            r.category or "",
            r.context,
            score,
            f"{r.importance:g}",
            r.content,
        )
    output.stdout.print(table)
    _show_related(result)


def _show_related(result: QueryResult) -> None:
    for line in result.related:
        output.stdout.print(f"  {line}", markup=False)


def search_switches(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--fusion`, `--expand/--no-expand` and `--rerank`: how `query` and `search` search."""
    for option in reversed(
        (
            click.option(
                "--fusion",
                type=click.Choice(SEARCH_FUSION_CHOICES),
                help="How vector and keyword matches combine (default: the setting, rrf).",
            ),
            click.option(
                "--expand/--no-expand",
                default=None,
                help="Also search alternative phrasings from the LLM: always / never "
                "(default: only when nothing matches well).",
            ),
            click.option("--rerank", is_flag=True, help="Let the LLM reorder the results."),
        )
    ):
        command = option(command)
    return command


@click.command()
@click.argument("query_text", metavar="QUERY")
@click.option("--agent", required=True, help="The agent asking (its allowlist applies).")
@click.option("--user", required=True, help="Whose memories to read.")
@click.option("--categories", help="Comma-separated categories (default: the allowlist).")
@click.option(
    "--top-k",
    type=click.IntRange(1, SEARCH_MAX_K),
    default=QUERY_DEFAULT_TOP_K,
    show_default=True,
)
@click.option(
    "--return",
    "return_mode",
    type=click.Choice(RETURN_MODES),
    default=QUERY_DEFAULT_RETURN,
    show_default=True,
)
@click.option("--budget-tokens", type=click.IntRange(min=1), help="Token budget of the answer.")
@click.option("--threshold", type=float, help="Drop results less similar than this (cosine).")
@click.option("--thread", help="Conversation thread: start with its delta header.")
@click.option("--since-rev", type=POSITION, help="Header base revision.")
@click.option("--agent-id", help="Filter: memories written by this agent.")
@click.option("--run-id", help="Filter: memories written in this thread or command run.")
@click.option("--actor-id", help="Filter: memories written by this actor.")
@click.option("--role", help="Filter: memories with this `role` metadata.")
@click.option("--category", "category_filter", help="Filter: comma-separated categories to keep.")
@click.option("--pinned/--not-pinned", default=None, help="Filter: with the `pinned` tag or not.")
@click.option(
    "--importance-min",
    type=float,
    help="Filter: importance >= this (1-5 if a bound is above 1, else 0-1).",
)
@click.option("--importance-max", type=float, help="Filter: importance <= this (same scale).")
@click.option(
    "--importance-scale",
    type=click.Choice(("0-1", "1-5")),
    help="The scale of the importance bounds (default: 1-5 if a bound is above 1).",
)
@click.option("--updated-after", help="Filter: updated at or after this ISO date/time.")
@click.option("--updated-before", help="Filter: updated before this ISO date/time.")
@search_switches
@click.option("--dry", is_flag=True, help="Serve without counting an access to the results.")
@global_options
@pass_state
def query(
    state: CliState,
    query_text: str,
    agent: str,
    user: str,
    categories: str | None,
    top_k: int,
    return_mode: str,
    budget_tokens: int | None,
    threshold: float | None,
    thread: str | None,
    since_rev: int | None,
    agent_id: str | None,
    run_id: str | None,
    actor_id: str | None,
    role: str | None,
    category_filter: str | None,
    pinned: bool | None,
    importance_min: float | None,
    importance_max: float | None,
    importance_scale: str | None,
    updated_after: str | None,
    updated_before: str | None,
    fusion: str | None,
    expand: bool | None,
    rerank: bool,
    dry: bool,
) -> None:
    """An agent's scoped recall: the thread's recent memory changes first, then the best
    matches in the categories the agent may read, within a token budget."""
    filters = {
        "agent_id": agent_id,
        "run_id": run_id,
        "actor_id": actor_id,
        "role": role,
        "category": _names(category_filter),
        "pinned": pinned,
        "importance_min": importance_min,
        "importance_max": importance_max,
        "importance_scale": importance_scale,
        "updated_after": _moment("--updated-after", updated_after),
        "updated_before": _moment("--updated-before", updated_before),
    }
    result = _api(state).query(
        query_text,
        agent=agent,
        user=user,
        categories=_names(categories),
        filters={key: value for key, value in filters.items() if value is not None},
        top_k=top_k,
        return_mode=return_mode,
        budget_tokens=budget_tokens,
        threshold=threshold,
        thread=thread,
        since_rev=since_rev,
        fusion=fusion,
        expand=expand,
        rerank=rerank,
        dry=dry,
    )
    output.emit(state.as_json, result, lambda: _show(result))


@click.command()
@click.option("--thread", required=True, help="The conversation thread.")
@click.option("--since", type=POSITION, help="Changes after this revision.")
@click.option("--agent", help="Since this agent's last served revision; its allowlist applies.")
@click.option("--user", help="Only this user's memories.")
@global_options
@pass_state
def delta(
    state: CliState, thread: str, since: int | None, agent: str | None, user: str | None
) -> None:
    """The delta header: a thread's revision and the memory changes made in it lately."""
    result = _api(state).delta(thread, since, agent=agent, user=user)
    output.emit(
        state.as_json,
        result,
        lambda: output.stdout.print(
            f"rev {result.rev}\n" + (result.header or f"no changes since rev {result.since}"),
            markup=False,
        ),
    )
