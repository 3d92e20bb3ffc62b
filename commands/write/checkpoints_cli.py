"""`mnemoledger checkpoint save|load|list`: supervisor checkpoints (seed 003 §15) on the
command line.

    mnemoledger checkpoint save --user maya --thread run-42 --data '{"step": 3}'
    mnemoledger checkpoint save --user maya --thread run-42 --file state.json
    echo '{"step": 4}' | mnemoledger checkpoint save --user maya --thread run-42
    mnemoledger checkpoint load --user maya --thread run-42 [--version 1] [--json]
    mnemoledger checkpoint list --user maya

Errors and exit statuses follow the main CLI (bad input: one `error:` line, exit 2; a load
that finds nothing: exit 1).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.commands.write.checkpoints_api import (
    CHECKPOINTS_DEFAULT_LIMIT,
    CheckpointInfo,
    CheckpointOut,
)
from mnemoledger.ledger.checkpoint import MAX_CHECKPOINT_BYTES, parse_checkpoint
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import MAX_LIST_LIMIT, MAX_POSITION

MAX_INPUT_BYTES = 4 * MAX_CHECKPOINT_BYTES
"""JSON read from a file or stdin, whitespace and escapes included (the stored, compact
text is held to MAX_CHECKPOINT_BYTES)."""


@click.group()
@global_options
def checkpoint() -> None:
    """Agent checkpoints: save and load a thread's state (one JSON object), every version kept."""


@checkpoint.command(name="save")
@click.option("--user", required=True, help="User the thread belongs to.")
@click.option("--thread", required=True, help="Thread (conversation, run) whose state this is.")
@click.option("--data", "data_text", metavar="JSON", help="The state, a JSON object.")
@click.option(
    "--file",
    "data_file",
    type=click.Path(dir_okay=False, path_type=Path, allow_dash=True),
    help="Read the JSON object from FILE (- for stdin).",
)
@click.option("--agent", help="Agent that saves it.")
@global_options
@pass_state
def save(
    state: CliState,
    user: str,
    thread: str,
    data_text: str | None,
    data_file: Path | None,
    agent: str | None,
) -> None:
    """Save a thread's state (--data JSON, --file F, else stdin) as its newest checkpoint."""
    data = parse_checkpoint(_read_data(data_text, data_file))
    result = state.ledger().save_checkpoint(user, thread, data, agent=agent)
    output.emit(
        state.as_json,
        _summary(result),
        lambda: output.stdout.print(
            f"saved checkpoint {result.revision} of thread {result.thread_id} "
            f"({result.size} bytes) at {result.updated_at[:19]}"
        ),
    )


@checkpoint.command(name="load")
@click.option("--user", required=True, help="User the thread belongs to.")
@click.option("--thread", required=True, help="Thread whose checkpoint to load.")
@click.option(
    "--version",
    type=click.IntRange(1, MAX_POSITION),
    help="Checkpoint number (1: the first saved; default: the newest).",
)
@global_options
@pass_state
def load(state: CliState, user: str, thread: str, version: int | None) -> None:
    """Print a thread's newest checkpoint (or --version N); exit 1 if there is none."""
    found = state.ledger().load_checkpoint(user, thread, version=version)
    if found is None:
        which = "no checkpoint" if version is None else f"no checkpoint {version}"
        raise click.ClickException(f"{which} of thread {thread!r} for user {user!r}")
    if state.as_json:
        output.emit(True, found, lambda: None)
        return
    output.stdout.print(
        f"checkpoint {found.revision} of thread {found.thread_id} ({found.size} bytes), "
        f"saved {found.updated_at[:19]} by {found.actor}"
    )
    print(json.dumps(found.data, ensure_ascii=False, indent=2))


@checkpoint.command(name="list")
@click.option("--user", required=True, help="Whose threads to list.")
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_LIST_LIMIT),
    default=CHECKPOINTS_DEFAULT_LIMIT,
    show_default=True,
)
@global_options
@pass_state
def list_command(state: CliState, user: str, limit: int) -> None:
    """A user's threads with a checkpoint, most recently saved first."""
    found = state.ledger().checkpoints(user, limit)
    output.emit(state.as_json, found, lambda: _table(found))


def _read_data(text: str | None, path: Path | None) -> str | bytes:
    if text is not None and path is not None:
        raise InvalidInput("give the checkpoint with --data or --file, not both")
    if text is not None:
        return text
    if path is None or str(path) == "-":
        if path is None and sys.stdin.isatty():
            raise InvalidInput("give the checkpoint with --data JSON, --file F or on stdin")
        raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        try:
            with path.open("rb") as file:
                raw = file.read(MAX_INPUT_BYTES + 1)
        except OSError as error:
            raise InvalidInput(f"cannot read {path}: {error.strerror or error}") from None
    if len(raw) > MAX_INPUT_BYTES:
        raise InvalidInput(f"checkpoint input is larger than {MAX_INPUT_BYTES} bytes")
    return raw


def _summary(result: CheckpointOut) -> CheckpointInfo:
    """What `save --json` prints: the checkpoint saved, without echoing its data."""
    return CheckpointInfo(**result.model_dump(exclude={"data"}))


def _table(found: Sequence[CheckpointInfo]) -> None:
    if not found:
        output.stdout.print("no checkpoints")
        return
    table = Table()
    table.add_column("thread", overflow="fold")
    for column in ("revision", "bytes", "saved", "first saved", "by"):
        table.add_column(column, no_wrap=True)
    for c in found:
        table.add_row(
            c.thread_id,
            str(c.revision),
            str(c.size),
            c.updated_at[:19],
            c.created_at[:19],
            c.agent_id or c.actor,
        )
    output.stdout.print(table)
