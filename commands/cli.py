"""The `mnemoledger` command line: a thin skin over `MnemoLedger` (see ../shared/CLI.md).

Errors are one line on stderr starting with `error:`; exit status 2 for bad usage or bad
input, 1 for anything else. A refused command writes nothing to the log.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from typing import Any

import click

from mnemoledger.commands import output
from mnemoledger.commands.audit.export_cli import export, import_
from mnemoledger.commands.audit.history_cli import as_of_option, history_table, report
from mnemoledger.commands.audit.integrity_cli import erase, seal, verify
from mnemoledger.commands.audit.replay_cli import diff, replay
from mnemoledger.commands.demo import run_demo
from mnemoledger.commands.facade import AGENT_LIST_LIMIT, LIST_ORDERS, ListOrder
from mnemoledger.commands.lifecycle.consolidate_cli import consolidate, topics, worker
from mnemoledger.commands.options import (
    LIMIT,
    CliState,
    category_option,
    global_options,
    pass_state,
    writer_options,
)
from mnemoledger.commands.recall.graph_cli import graph
from mnemoledger.commands.recall.query_cli import delta, query
from mnemoledger.commands.recall.recall_cli import context, resume, transcripts
from mnemoledger.commands.service.project_cli import project
from mnemoledger.commands.service.serve_cli import keys, mcp, serve
from mnemoledger.commands.write.consent_cli import consent
from mnemoledger.commands.write.ingest_cli import ingest, profile
from mnemoledger.commands.write.notes_cli import note
from mnemoledger.ledger.errors import InvalidInput, InvalidTransition, LedgerError, MemoryNotFound
from mnemoledger.ledger.policy import (
    DEFAULT_IMPORTANCE,
    DEFAULT_KIND,
    DEFAULT_LINK_STRENGTH,
    DEFAULT_LINK_TYPE,
    KINDS,
    LATEST_DEFAULT_LIMIT,
    LATEST_MAX_LIMIT,
    LAYERS,
    LIFECYCLE_STATES,
    SEARCH_DEFAULT_K,
    STATES,
)

BAD_INPUT = (InvalidInput, MemoryNotFound, InvalidTransition)


class LedgerGroup(click.Group):
    """Turns every failure into one `error:` line and the contract's exit status."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["standalone_mode"] = False
        try:
            result = super().main(*args, **kwargs)
        except click.exceptions.Abort:
            _fail("aborted", 1)
        except click.UsageError as error:
            _fail(error.format_message(), 2)
        except click.ClickException as error:
            _fail(error.format_message(), error.exit_code)
        except BAD_INPUT as error:
            _fail(str(error), 2)
        except LedgerError as error:
            _fail(str(error), 1)
        except BrokenPipeError:
            sys.exit(1)
        except Exception as error:
            if os.environ.get("MNEMOLEDGER_DEBUG"):
                raise
            _fail(f"{type(error).__name__}: {error} (set MNEMOLEDGER_DEBUG=1 for a traceback)", 1)
        sys.exit(result if isinstance(result, int) else 0)


def _fail(message: str, status: int) -> None:
    first_line = message.strip().splitlines()[0] if message.strip() else "failed"
    click.echo(f"error: {first_line}", err=True)
    sys.exit(status)


def _tags(value: str | None) -> list[str]:
    return [] if not value else [tag.strip() for tag in value.split(",")]


@click.group(cls=LedgerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@global_options
@click.version_option(package_name="mnemoledger")
def cli() -> None:
    """An event-sourced memory ledger for AI agents.

    Every change is an immutable event in one log; the layers, the search indexes and the
    history are read models rebuilt from it. Start with `mnemoledger demo`.
    """


@cli.command()
@global_options
@pass_state
def demo(state: CliState) -> None:
    """Load a bundled sample conversation into a fresh home and show what the ledger keeps."""
    run_demo(state.home, as_json=state.as_json)


@cli.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--user", required=True, help="User the memories belong to.")
@writer_options
@click.option("--kind", type=click.Choice(KINDS), default=DEFAULT_KIND, show_default=True)
@click.option("--tags", help="Comma-separated tags (at most 20 of at most 32 characters).")
@click.option("--source", default="cli", show_default=True, help="Where the content came from.")
@click.option("--namespace", default="default", show_default=True)
@click.option("--importance", type=float, default=DEFAULT_IMPORTANCE, show_default=True)
@category_option
@global_options
@pass_state
def add(
    state: CliState,
    text: tuple[str, ...],
    user: str,
    agent: str | None,
    thread: str | None,
    kind: str,
    tags: str | None,
    source: str,
    namespace: str,
    importance: float,
    category: str | None,
) -> None:
    """Remember one or more TEXTs for a user, in one atomic write."""
    result = state.ledger().add(
        list(text),
        user=user,
        agent=agent,
        thread=thread,
        kind=kind,
        tags=_tags(tags),
        source=source,
        namespace=namespace,
        importance=importance,
        category=category,
    )
    output.emit(state.as_json, result, lambda: output.add_summary(result))


@cli.command()
@click.option("--user", required=True, help="Whose core.md to show.")
@as_of_option
@global_options
@pass_state
def core(state: CliState, user: str, as_of: str | None) -> None:
    """Show a user's core.md: the durable profile HAEMA's core stage maintains."""
    if as_of is not None:
        with state.ledger().as_of(as_of) as past:
            document = past.core(user=user).model_copy(update={"path": None})
    else:
        document = state.ledger().core(user=user)
    output.emit(
        state.as_json,
        document,
        lambda: output.stdout.print(document.markdown or f"(no core.md for {user} yet)"),
    )


@cli.command()
@click.argument("memory_id")
@as_of_option
@global_options
@pass_state
def get(state: CliState, memory_id: str, as_of: str | None) -> None:
    """Show one memory's current state (or its state at --as-of)."""
    if as_of is not None:
        with state.ledger().as_of(as_of) as past:
            memory = past.get(memory_id)
    else:
        memory = state.ledger().get(memory_id)
    output.emit(state.as_json, memory, lambda: output.memory_panel(memory))


@cli.command(name="list")
@click.option("--user", help="Only this user's memories.")
@click.option("--layer", type=click.Choice(LAYERS))
@click.option("--state", "memory_state", type=click.Choice((*STATES, *LIFECYCLE_STATES)))
@click.option("--namespace", help="Only namespaces starting with this (tacit: tacit/...).")
@click.option(
    "--order",
    type=click.Choice(LIST_ORDERS),
    default="id",
    show_default=True,
    help="id, or access: most often served first.",
)
@click.option("--limit", type=LIMIT, help="At most this many.")
@click.option(
    "--top",
    is_flag=True,
    help=f"What an agent's list shows: most often served first, at most {AGENT_LIST_LIMIT}.",
)
@as_of_option
@global_options
@pass_state
def list_memories(
    state: CliState,
    user: str | None,
    layer: str | None,
    memory_state: str | None,
    namespace: str | None,
    order: ListOrder,
    limit: int | None,
    top: bool,
    as_of: str | None,
) -> None:
    """List current memories (or those at --as-of), ordered by id unless --order says."""
    if top:
        order, limit = "access", limit or AGENT_LIST_LIMIT
    if as_of is not None:
        if namespace or order != "id" or limit is not None:
            raise InvalidInput("--namespace, --order, --limit and --top list current memories")
        with state.ledger().as_of(as_of) as past:
            memories = past.list(user=user, layer=layer, state=memory_state)
    else:
        memories = state.ledger().list(
            user=user,
            layer=layer,
            state=memory_state,
            namespace=namespace,
            order=order,
            limit=limit,
        )
    output.emit(state.as_json, memories, lambda: output.memories_table(memories))


@cli.command()
@click.option("--user", required=True)
@click.option(
    "--limit",
    type=click.IntRange(1, LATEST_MAX_LIMIT),
    default=LATEST_DEFAULT_LIMIT,
    show_default=True,
)
@global_options
@pass_state
def latest(state: CliState, user: str, limit: int) -> None:
    """HAEMA get_latest: the user's most recently written memories, newest first."""
    memories = state.ledger().latest(user=user, limit=limit)
    output.emit(state.as_json, memories, lambda: output.memories_table(memories))


@cli.command()
@click.argument("query")
@click.option("--user", required=True)
@click.option("--k", "k", type=int, default=SEARCH_DEFAULT_K, show_default=True)
@click.option(
    "--at",
    type=click.DateTime(formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"]),
    help="Judge recency and expiry at this time (default: now); for reproducible output.",
)
@click.option(
    "--transcripts",
    "with_transcripts",
    is_flag=True,
    help="Also search session transcripts (ingested conversations), dampened x 0.6.",
)
@as_of_option
@global_options
@pass_state
def search(
    state: CliState,
    query: str,
    user: str,
    k: int,
    at: datetime | None,
    with_transcripts: bool,
    as_of: str | None,
) -> None:
    """Hybrid search (vectors + keywords) in a user's memories, ranked by relevance,
    importance and recency (in the memories as they were at --as-of, if given)."""
    when = at.replace(tzinfo=at.tzinfo or UTC) if at is not None else None
    if with_transcripts:
        if at is not None or as_of is not None:
            raise click.UsageError("--transcripts takes neither --at nor --as-of")
        found = state.ledger().search_all(query, user=user, k=k)
        output.emit(state.as_json, found, lambda: output.mixed_hits_table(found))
        return
    if as_of is not None:
        with state.ledger().as_of(as_of, search=True) as past:
            hits = past.search(query, user=user, k=k, at=when)
    else:
        hits = state.ledger().search(query, user=user, k=k, at=when)
    output.emit(state.as_json, hits, lambda: output.hits_table(hits))


@cli.command()
@click.argument("memory_id")
@click.argument("text")
@click.option("--tags", help="Replace the tags (comma-separated).")
@writer_options
@global_options
@pass_state
def update(
    state: CliState,
    memory_id: str,
    text: str,
    tags: str | None,
    agent: str | None,
    thread: str | None,
) -> None:
    """Replace a memory's content (UPDATE)."""
    memory = state.ledger().update(
        memory_id,
        text,
        tags=_tags(tags) if tags is not None else None,
        agent=agent,
        thread=thread,
    )
    output.emit(state.as_json, memory, lambda: output.memory_panel(memory))


@cli.command()
@click.argument("source_id")
@click.argument("target_id")
@click.option("--type", "link_type", default=DEFAULT_LINK_TYPE, show_default=True)
@click.option("--strength", type=float, default=DEFAULT_LINK_STRENGTH, show_default=True)
@click.option("--agent")
@global_options
@pass_state
def link(
    state: CliState,
    source_id: str,
    target_id: str,
    link_type: str,
    strength: float,
    agent: str | None,
) -> None:
    """Relate two memories of the same user (LINK)."""
    edge = state.ledger().link(
        source_id, target_id, link_type=link_type, strength=strength, agent=agent
    )
    output.emit(
        state.as_json,
        edge,
        lambda: output.stdout.print(f"{edge.from_id} -[{edge.type} {edge.strength}]-> {edge.to}"),
    )


@cli.command()
@click.argument("memory_id")
@click.option("--days", type=float, required=True, help="Expire this many days from now.")
@click.option("--agent")
@click.option("--thread", help="The conversation thread whose delta shows this change.")
@global_options
@pass_state
def ttl(
    state: CliState, memory_id: str, days: float, agent: str | None, thread: str | None
) -> None:
    """Make a memory expire after a number of days (TTL)."""
    memory = state.ledger().ttl(memory_id, days, agent=agent, thread=thread)
    output.emit(state.as_json, memory, lambda: output.memory_panel(memory))


@cli.command()
@click.argument("memory_id")
@click.option("--agent")
@click.option("--thread", help="The conversation thread whose delta shows this change.")
@global_options
@pass_state
def forget(state: CliState, memory_id: str, agent: str | None, thread: str | None) -> None:
    """Soft-delete a memory (its events stay; `restore` brings it back)."""
    memory = state.ledger().forget(memory_id, agent=agent, thread=thread)
    output.emit(state.as_json, memory, lambda: output.memory_panel(memory))


@cli.command()
@click.argument("memory_id")
@click.option("--agent")
@click.option("--thread", help="The conversation thread whose delta shows this change.")
@global_options
@pass_state
def restore(state: CliState, memory_id: str, agent: str | None, thread: str | None) -> None:
    """Bring back a soft-deleted memory (RESTORE)."""
    memory = state.ledger().restore(memory_id, agent=agent, thread=thread)
    output.emit(state.as_json, memory, lambda: output.memory_panel(memory))


@cli.command()
@click.argument("memory_id")
@global_options
@pass_state
def history(state: CliState, memory_id: str) -> None:
    """Every event of one memory, oldest first, with who did it, when, on whose behalf,
    which command caused it and the LLM call (stage, prompt, model, tokens) that decided it."""
    entries = state.ledger().memory_history(memory_id)
    output.emit(state.as_json, entries, lambda: history_table(entries))


@cli.command()
@click.option("--user", help="Only events of this user.")
@click.option("--since", help="Only after this log POSITION, or from this TIME (ISO-8601).")
@click.option("--until", help="Only up to this log POSITION or TIME (ISO-8601).")
@click.option(
    "--type", "event_types", multiple=True, help="Only events of this type, e.g. MemoryAdded."
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
    limit: int | None,
) -> None:
    """The event log (a user's timeline with --user), oldest first; `--actor A` keeps
    only the events of actor A."""
    events = state.ledger().timeline(
        user=user, types=event_types, since=since, until=until, actor=state.actor, limit=limit
    )
    output.emit(state.as_json, events, lambda: output.events_table(events))


@cli.command()
@click.argument("projection", required=False)
@global_options
@pass_state
def rebuild(state: CliState, projection: str | None) -> None:
    """Drop read models (all, or PROJECTION: layers, vectors) and replay them from the log."""
    with output.progress_bar(not state.as_json, "rebuilding") as progress:
        result = state.ledger().rebuild(projection, progress)
    output.emit(
        state.as_json,
        result,
        lambda: output.stdout.print(
            f"rebuilt {', '.join(result.projections)} from {result.events} events "
            f"in {result.seconds:.2f} s"
        ),
    )


@cli.command()
@global_options
@pass_state
def stats(state: CliState) -> None:
    """Counts of the log and the read models."""
    result = state.ledger().stats()
    output.emit(state.as_json, result, lambda: output.stdout.print_json(result.model_dump_json()))


cli.add_command(note)
cli.add_command(replay)
cli.add_command(diff)
cli.add_command(export)
cli.add_command(import_)
cli.add_command(report)
cli.add_command(ingest)
cli.add_command(profile)
cli.add_command(consent)
cli.add_command(query)
cli.add_command(delta)
cli.add_command(graph)
cli.add_command(resume)
cli.add_command(context)
cli.add_command(transcripts)
cli.add_command(project)
cli.add_command(serve)
cli.add_command(mcp)
cli.add_command(keys)
cli.add_command(consolidate)
cli.add_command(worker)
cli.add_command(topics)
cli.add_command(verify)
cli.add_command(seal)
cli.add_command(erase)


def main() -> None:
    cli.main(prog_name="mnemoledger")
