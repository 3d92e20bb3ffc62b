"""`mnemoledger ingest FILE --user U`, `mnemoledger store KEY VALUE --user U` and
`mnemoledger profile --user U` (../shared/CLI.md).

    mnemoledger ingest chat.jsonl --user maya --thread t1 --flush --compaction 2
    mnemoledger store timezone Europe/Lisbon --user maya --namespace tacit/user

Registered lazily on the main group in `commands/cli.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state, writer_options
from mnemoledger.commands.write.ingest import STORE_SOURCE, Turn, load_turns, parse_turns
from mnemoledger.commands.write.ingest_api import IngestResult, StoreResult
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
@click.option(
    "--flush",
    is_flag=True,
    help="FILE is the whole thread (--thread) about to be compacted: extract from all of it "
    "once per compaction (needs --compaction); skipped when already done for that count.",
)
@click.option(
    "--compaction",
    type=click.IntRange(min=0),
    help="With --flush: how many times the thread was compacted so far.",
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
    flush: bool,
    compaction: int | None,
) -> None:
    """Extract durable facts from a conversation (JSONL turns: {"role", "content", "ts"?,
    "id"?}; FILE may be - for stdin) and store them for a user, in one atomic write."""
    if flush and (compaction is None or thread is None):
        raise click.UsageError("--flush needs --thread and --compaction")
    if compaction is not None and not flush:
        raise click.UsageError("--compaction is only for --flush")
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
            flush=flush,
            compaction=compaction,
        )
    output.emit(state.as_json, result, lambda: ingest_summary(result))


@click.command()
@click.argument("key")
@click.argument("value")
@click.option("--user", required=True, help="User the memory belongs to.")
@click.option(
    "--namespace",
    default="default",
    show_default=True,
    help="Where the key lives, e.g. tacit/user (profile fields), tacit/preferences.",
)
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option(
    "--source", default=STORE_SOURCE, show_default=True, help="Where the value came from."
)
@writer_options
@global_options
@pass_state
def store(
    state: CliState,
    key: str,
    value: str,
    user: str,
    namespace: str,
    tags: tuple[str, ...],
    source: str,
    agent: str | None,
    thread: str | None,
) -> None:
    """Store VALUE under KEY for a user: a new key adds a memory, a new value updates the
    key's memory (its history keeps the old one), the same value changes nothing. Keys are
    at most 128 characters, values 2048."""
    result = state.ledger().store(
        key,
        value,
        user=user,
        namespace=namespace,
        tags=tags,
        source=source,
        agent=agent,
        thread=thread,
    )
    output.emit(state.as_json, result, lambda: store_summary(result))


def store_summary(result: StoreResult) -> None:
    """What a store by key did, for people."""
    memory = result.memory
    if memory is None:
        return
    output.memories_table([memory], f"{result.action}: {memory.namespace} / {memory.key}")
    notes = [f"command {result.command_id}"]
    if result.profile_updated:
        notes.append(f"profile: {', '.join(result.profile_updated)}")
    output.stdout.print("; ".join(notes))


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
    if result.flush is not None and not result.flush.ran:
        output.stdout.print(f"flush skipped: {result.flush.reason}")
        return
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
