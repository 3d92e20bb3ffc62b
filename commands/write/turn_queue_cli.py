"""`mnemoledger turns queue|waiting|extract`: hand a thread's newest turns over after each
agent loop and extract them once the thread has been quiet for a while.

    mnemoledger turns queue loop.jsonl --user maya --thread t1   # after each agent loop
    mnemoledger turns waiting [--user maya]                      # threads not extracted yet
    mnemoledger turns extract [--idle 5]                         # what `serve` does each second

Registered lazily on the main group in `commands/cli.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.commands.write.ingest import Turn, load_turns, parse_turns
from mnemoledger.commands.write.turn_queue_api import QueuedExtraction, QueuedThreadOut
from mnemoledger.ledger.policy import EXTRACTION_IDLE_SECONDS, MAX_INGEST_BYTES

STDIN = "-"


@click.group()
@global_options
def turns() -> None:
    """Conversation turns handed over now, extracted once their thread goes quiet."""


@turns.command(name="queue")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--user", required=True, help="User the conversation is with.")
@click.option("--thread", required=True, help="Thread (conversation) the turns belong to.")
@click.option("--agent", help="Agent that talked with the user.")
@global_options
@pass_state
def queue(state: CliState, file: Path, user: str, thread: str, agent: str | None) -> None:
    """Hand over a thread's newest turns (JSONL: {"role", "content", "ts"?, "id"?}; FILE may
    be - for stdin). They are recorded now and extracted once the thread has had no new
    turn for 5 seconds (by `serve`, `worker` or `turns extract`)."""
    given: list[Turn] = (
        parse_turns(sys.stdin.read(MAX_INGEST_BYTES + 1), source="<stdin>")
        if str(file) == STDIN
        else load_turns(file)
    )
    result = state.ledger().queue_turns(given, user=user, thread=thread, agent=agent)
    output.emit(
        state.as_json,
        result,
        lambda: output.stdout.print(
            f"queued {len(given)} turn(s) of thread {result.thread_id} "
            f"({result.pending_turns} waiting; extracted after "
            f"{result.extract_after_seconds:g} s of quiet)"
        ),
    )


@turns.command(name="waiting")
@click.option("--user", help="Only this user's threads.")
@global_options
@pass_state
def waiting(state: CliState, user: str | None) -> None:
    """Threads whose turns wait for extraction, the longest waiting first."""
    found = state.ledger().queued_threads(user=user)
    output.emit(state.as_json, found, lambda: _threads_table(found))


@turns.command(name="extract")
@click.option(
    "--idle",
    type=click.FloatRange(min=0),
    default=EXTRACTION_IDLE_SECONDS,
    show_default=True,
    help="Extract threads that have had no new turn for this many seconds (0: all now).",
)
@click.option("--user", help="Only this user's threads.")
@global_options
@pass_state
def extract(state: CliState, idle: float, user: str | None) -> None:
    """Extract the waiting turns of every quiet thread, one ingest per thread."""
    done = state.ledger().extract_queued(idle_seconds=idle, user=user)
    output.emit(state.as_json, done, lambda: _extractions_table(done))


def _threads_table(found: list[QueuedThreadOut]) -> None:
    if not found:
        output.stdout.print("no turns waiting")
        return
    table = Table("user", "thread", "hand-overs", "turns", "last queued")
    for thread in found:
        table.add_row(
            thread.user_id,
            thread.thread_id,
            str(thread.hand_overs),
            str(thread.pending_turns),
            thread.last_queued_at.isoformat(timespec="seconds"),
        )
    output.stdout.print(table)


def _extractions_table(done: list[QueuedExtraction]) -> None:
    if not done:
        output.stdout.print("no thread was quiet long enough")
        return
    table = Table("user", "thread", "turns", "memories", "outcome")
    for extraction in done:
        result = extraction.result
        table.add_row(
            extraction.user_id,
            extraction.thread_id,
            str(result.turns if result else "-"),
            str(len(result.memories) if result else 0),
            extraction.error or f"command {result.command_id if result else ''}",
        )
    output.stdout.print(table)
