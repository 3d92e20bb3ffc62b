"""The `mnemoledger` command line: a thin skin over `MnemoLedger` (see ../shared/CLI.md).

Errors are one line on stderr starting with `error:`; exit status 2 for bad usage or bad
input, 1 for anything else. A refused command writes nothing to the log.
"""

from __future__ import annotations

import importlib
import os
import sys
from datetime import UTC, datetime
from typing import Any

import click

from mnemoledger.commands import output
from mnemoledger.commands.options import (
    LIMIT,
    MEMORY_ID,
    CliState,
    as_of_option,
    category_option,
    global_options,
    pass_state,
    writer_options,
)
from mnemoledger.ledger.errors import InvalidInput, InvalidTransition, LedgerError, MemoryNotFound
from mnemoledger.ledger.policy import (
    ACTIVE,
    AGENT_LIST_LIMIT,
    DEFAULT_IMPORTANCE,
    DEFAULT_KIND,
    DEFAULT_LINK_STRENGTH,
    DEFAULT_LINK_TYPE,
    KINDS,
    LATEST_DEFAULT_LIMIT,
    LATEST_MAX_LIMIT,
    LAYERS,
    LIFECYCLE_STATES,
    LIST_ORDERS,
    SEARCH_DEFAULT_K,
    SEARCH_FUSION_CHOICES,
    SEARCH_MIN_SCORE,
    STATES,
    ListOrder,
)

BAD_INPUT = (InvalidInput, MemoryNotFound, InvalidTransition)

ROLES = ("user", "assistant", "tool", "document")
"""`commands.judge.judgement.ROLES`, written out: importing the judge package loads numpy and
its models' runtime, which `--help`, `--version` and a usage error should not wait for
(tests/test_startup.py checks the two agree)."""


# Commands whose modules load only when run (or asked for their own --help), so that
# `mnemoledger --version` and `--help` start at once. name: (module:attribute, one-line help);
# tests/test_cli.py checks every line against the command's docstring.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "agent-profile": (
        "recall.agent_profile_cli:agent_profile",
        "The agent's name, identity, character and communication style for one user.",
    ),
    "checkpoint": (
        "write.checkpoints_cli:checkpoint",
        "Agent checkpoints: save and load a thread's state (one JSON object), every version kept.",
    ),
    "consent": (
        "write.consent_cli:consent",
        "Profile patches waiting for consent: sensitive fields change only once granted.",
    ),
    "command": (
        "write.commands_cli:command",
        "Show a recorded command (an add, an ingest, ...): requested (not processed yet), "
        "completed with what it did, or failed with why.",
    ),
    "consolidate": (
        "lifecycle.consolidate_cli:consolidate",
        "One consolidation cycle: lifecycle, promotion, triage, gate, merge, decay.",
    ),
    "context": (
        "recall.recall_cli:context",
        "The agent's system-prompt context: agent, soul, environment, user, rules, summaries and "
        "what it knows.",
    ),
    "delta": (
        "recall.query_cli:delta",
        "The delta header: a thread's revision and the memory changes made in it lately.",
    ),
    "diff": (
        "audit.replay_cli:diff",
        "Compare two ledgers: memories added/removed/changed, core.md (unified diff), decisions "
        "that flipped, LLM calls and tokens.",
    ),
    "erase": (
        "audit.integrity_cli:erase",
        "Crypto-shred one user: destroy their data key, record `UserErased`, rebuild every read "
        "model without their content.",
    ),
    "export": (
        "audit.export_cli:export",
        "Export a user's events: JSONL (the event stream, importable) or Parquet/CSV (the timeline"
        " table, one row per event).",
    ),
    "facts": (
        "recall.facts_cli:facts",
        "Facts (subject, predicate, object) that a user's memories state, and when each held.",
    ),
    "graph": (
        "recall.graph_cli:graph",
        "Relation edges between a user's memories, strongest first (each pair once).",
    ),
    "history": (
        "audit.history_cli:history",
        "Every event of one memory, oldest first, with who did it, when, on whose behalf, which "
        "command caused it and the LLM call (stage, prompt, model, tokens) that decided it.",
    ),
    "import": (
        "audit.export_cli:import_",
        "Import an exported JSONL event stream (same ids, times and provenance) and bring the read"
        " models up to date.",
    ),
    "ingest": (
        "write.ingest_cli:ingest",
        'Extract durable facts from a conversation (JSONL turns: {"role", "content", "ts"?, '
        '"id"?}; FILE may be - for stdin) and store them for a user, in one atomic write.',
    ),
    "keys": (
        "service.serve_cli:keys",
        "API keys for the HTTP API and the MCP server: one per agent, stored hashed.",
    ),
    "log": (
        "audit.history_cli:log",
        "The event log (a user's timeline with --user), oldest first; `--by-actor A` keeps only "
        "the events actor A recorded.",
    ),
    "mcp": (
        "service.serve_cli:mcp",
        "Serve the memory as MCP tools on stdin/stdout for a desktop or agent client: add, search,"
        " query, list, get, update, forget, restore, history, delta, notes and more.",
    ),
    "note": ("write.notes_cli:note", "Notes: log, summary, rule, soul, agent and user notes."),
    "profile": (
        "write.ingest_cli:profile",
        "Show a user's profile, from what they said about themselves (tacit/user memories).",
    ),
    "project": (
        "service.project_cli:project",
        "Bring the read models up to date with the log; with --follow keep them so while writers "
        "write (LISTEN/NOTIFY on PostgreSQL, polling on SQLite), until stopped.",
    ),
    "prune-expired": (
        "lifecycle.prune_cli:prune_expired_command",
        "Delete notes whose expiry time has passed and print how many; their history stays.",
    ),
    "query": (
        "recall.query_cli:query",
        "An agent's scoped recall: the thread's recent memory changes first, then the best matches"
        " in the categories the agent may read, within a token budget.",
    ),
    "replay": (
        "audit.replay_cli:replay",
        "Execute the recorded log again into a scratch ledger in DIR: every command through its "
        "pipeline, with the recorded LLM answers (recorded) or live stages (live).",
    ),
    "report": (
        "audit.history_cli:report",
        "Operations by node, op and status over time, and LLM calls, tokens and latency by stage "
        "and model (DuckDB over the event log).",
    ),
    "resume": (
        "recall.recall_cli:resume",
        "What a new session resumes from: Core, Recent, Topics and Triggers, within their budgets.",
    ),
    "seal": (
        "audit.integrity_cli:seal",
        "Seal the log since the last seal: a `Sealed` event with the root hash of the range.",
    ),
    "serve": (
        "service.serve_cli:serve",
        "Serve the HTTP API (OpenAPI at /openapi.json, docs at /docs and /redoc) until "
        "interrupted, in --workers processes on one port.",
    ),
    "store": (
        "write.ingest_cli:store",
        "Store VALUE under KEY for a user: a new key adds a memory, a new value updates the key's"
        " memory (its history keeps the old one), the same value changes nothing. Keys are at "
        "most 128 characters, values 2048.",
    ),
    "topics": (
        "lifecycle.consolidate_cli:topics",
        "The user's topic tree; with TOPIC_IDS, those topics' memories.",
    ),
    "transcripts": (
        "recall.recall_cli:transcripts",
        "Search the user's ingested conversations (session chunks, scores x 0.6).",
    ),
    "turns": (
        "write.turn_queue_cli:turns",
        "Conversation turns handed over now, extracted once their thread goes quiet.",
    ),
    "verify": (
        "audit.integrity_cli:verify",
        "Check every stored event, keyed hash chain and seal; name what was changed, forged, "
        "removed, moved or cut off the end.",
    ),
    "worker": (
        "lifecycle.consolidate_cli:worker",
        "Run consolidation cycles on an interval until SIGTERM (the running cycle finishes).",
    ),
}


def load_command(name: str) -> click.Command:
    """The lazily registered command `name`, its module imported now."""
    target, _ = LAZY_COMMANDS[name]
    module, attribute = target.split(":")
    command = getattr(importlib.import_module(f"mnemoledger.commands.{module}"), attribute)
    assert isinstance(command, click.Command)
    return command


class LedgerGroup(click.Group):
    """Turns every failure into one `error:` line and the contract's exit status; loads the
    `LAZY_COMMANDS` only when one of them runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            self.add_command(load_command(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the registry's help lines: no command module is imported."""
        limit = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name) or click.Command(name, help=LAZY_COMMANDS[name][1])
            rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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
    from mnemoledger.commands.demo import run_demo

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
@click.option(
    "--role",
    type=click.Choice(ROLES),
    default="user",
    show_default=True,
    help="Who wrote the TEXTs: an assistant's advice to the user is not read as an "
    "instruction to the model.",
)
@click.option(
    "--keep-all",
    is_flag=True,
    help="Store every TEXT, even greetings, thanks and questions.",
)
@click.option(
    "--evidence",
    metavar="ID",
    multiple=True,
    help="The id of a turn or message the TEXTs came from (repeat for more); every memory "
    "keeps them, and search shows them as where it came from.",
)
@click.option(
    "--at",
    metavar="TIME",
    help="When the TEXTs were said, to import an old conversation or notes: a date and "
    "time with its zone, e.g. 2024-05-01T09:00:00Z (default: now). The memories show it "
    "as their creation time; a memory said later is never replaced by them.",
)
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="--no-wait: record the TEXTs, print the add's command id and exit; a running "
    "`mnemoledger worker` or `serve` on this home remembers them moments later "
    "(`mnemoledger command show ID` shows when).",
)
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
    role: str,
    keep_all: bool,
    evidence: tuple[str, ...],
    at: str | None,
    wait: bool,
    category: str | None,
) -> None:
    """Remember one or more TEXTs for a user, in one atomic write. Greetings, thanks,
    acknowledgements and questions are not stored (they are listed as skipped)."""
    memory = state.ledger()
    if not wait:  # this process exits at once: the worker or the server processes the add
        memory.parts.adds_in_background = False
    result = memory.add(
        list(text),
        user=user,
        agent=agent,
        thread=thread,
        kind=kind,
        tags=_tags(tags),
        source=source,
        namespace=namespace,
        importance=importance,
        evidence=list(evidence) or None,
        category=category,
        role=role,
        keep_all=keep_all,
        at=at,
        wait=wait,
    )
    if result.pending:
        output.emit(state.as_json, result, lambda: _pending_summary(result.command_id))
        return
    output.emit(state.as_json, result, lambda: output.add_summary(result))


def _pending_summary(command_id: str) -> None:
    output.stdout.print(command_id)
    output.stderr.print(
        "recorded, not processed yet: a running `mnemoledger worker` or `serve` processes it; "
        f"`mnemoledger command show {command_id}` shows its status"
    )


@cli.command()
@click.option("--user", required=True, help="Whose core.md to show.")
@as_of_option
@global_options
@pass_state
def core(state: CliState, user: str, as_of: str | None) -> None:
    """Show a user's core.md: the durable profile that every add keeps up to date."""
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
@click.argument("memory_id", type=MEMORY_ID)
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
@click.option(
    "--state",
    "memory_state",
    type=click.Choice((*STATES, *LIFECYCLE_STATES)),
    help=f"Only memories in this state (default: {ACTIVE}).",
)
@click.option(
    "--all",
    "every_state",
    is_flag=True,
    help="Memories in every state: also forgotten, superseded, evicted, expired and purged.",
)
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
    every_state: bool,
    namespace: str | None,
    order: ListOrder,
    limit: int | None,
    top: bool,
    as_of: str | None,
) -> None:
    """List active memories (or those at --as-of), ordered by id unless --order says;
    --state or --all shows forgotten, superseded and other ones."""
    if every_state and memory_state is not None:
        raise click.UsageError("give --state or --all, not both")
    if not every_state and memory_state is None:
        memory_state = ACTIVE
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
    """The user's most recently written memories, newest first."""
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
    "--namespace",
    help="Only this namespace's memories and the shared 'default' ones.",
)
@click.option(
    "--transcripts",
    "with_transcripts",
    is_flag=True,
    help="Also search session transcripts (ingested conversations), dampened x 0.6.",
)
@click.option(
    "--fusion",
    type=click.Choice(SEARCH_FUSION_CHOICES),
    help="How vector and keyword matches combine (default: the setting, rrf).",
)
@click.option(
    "--expand/--no-expand",
    default=None,
    help="Also search alternative phrasings from the LLM: always / never "
    "(default: only when nothing matches well).",
)
@click.option("--rerank", is_flag=True, help="Let the LLM reorder the results.")
@click.option(
    "--min-score",
    type=click.FloatRange(0.0, 1.0),
    default=SEARCH_MIN_SCORE,
    show_default=True,
    help="Relevance floor: a memory below it is left out (with rank fusion, unless one of "
    "the query's telling words or its cosine similarity passes it).",
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
    namespace: str | None,
    with_transcripts: bool,
    fusion: Any,
    expand: bool | None,
    rerank: bool,
    min_score: float,
    as_of: str | None,
) -> None:
    """Hybrid search (vectors + keywords) in a user's memories, ranked by relevance,
    importance and recency (in the memories as they were at --as-of, if given)."""
    when = at.replace(tzinfo=at.tzinfo or UTC) if at is not None else None
    if with_transcripts:
        given = at is not None or as_of is not None or namespace is not None
        if given or fusion or rerank or min_score != SEARCH_MIN_SCORE:
            raise click.UsageError(
                "--transcripts takes none of --at, --as-of, --namespace, --fusion, --rerank, "
                "--min-score"
            )
        found = state.ledger().search_all(query, user=user, k=k)
        output.emit(state.as_json, found, lambda: output.mixed_hits_table(found))
        return
    how = {"fusion": fusion, "expand": expand, "rerank": rerank, "min_score": min_score}
    if as_of is not None:
        with state.ledger().as_of(as_of, search=True) as past:
            hits = past.search(query, user=user, k=k, at=when, namespace=namespace, **how)
    else:
        hits = state.ledger().search(query, user=user, k=k, at=when, namespace=namespace, **how)
    output.emit(state.as_json, hits, lambda: output.hits_table(hits))


@cli.command()
@click.argument("memory_id", type=MEMORY_ID)
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
@click.argument("source_id", type=MEMORY_ID)
@click.argument("target_id", type=MEMORY_ID)
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
@click.argument("memory_id", type=MEMORY_ID)
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
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--agent")
@click.option("--thread", help="The conversation thread whose delta shows this change.")
@global_options
@pass_state
def forget(state: CliState, memory_id: str, agent: str | None, thread: str | None) -> None:
    """Soft-delete a memory (its events stay; `restore` brings it back)."""
    memory = state.ledger().forget(memory_id, agent=agent, thread=thread)
    output.emit(state.as_json, memory, lambda: output.memory_panel(memory))


@cli.command()
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--agent")
@click.option("--thread", help="The conversation thread whose delta shows this change.")
@global_options
@pass_state
def restore(state: CliState, memory_id: str, agent: str | None, thread: str | None) -> None:
    """Bring back a soft-deleted memory (RESTORE)."""
    memory = state.ledger().restore(memory_id, agent=agent, thread=thread)
    output.emit(state.as_json, memory, lambda: output.memory_panel(memory))


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
    """Counts of the log and the read models (--json for a machine-readable object)."""
    result = state.ledger().stats()
    output.emit(state.as_json, result, lambda: output.stats_summary(result))


def main() -> None:
    cli.main(prog_name="mnemoledger")
