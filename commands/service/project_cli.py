"""`mnemoledger project [--follow]`: the read models as a separate process.

Registered on the main group in `commands/cli.py`:

    from mnemoledger.commands.service.project_cli import project
    cli.add_command(project)
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import click

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.projections.runner import FOLLOW_POLL_SECONDS


@click.command()
@click.option("--follow", is_flag=True, help="Keep following the log until SIGTERM or Ctrl-C.")
@click.option(
    "--poll",
    type=float,
    default=FOLLOW_POLL_SECONDS,
    show_default=True,
    help="Seconds between looks at the log when nothing wakes the follower (SQLite).",
)
@global_options
@pass_state
def project(state: CliState, follow: bool, poll: float) -> None:
    """Bring the read models up to date with the log; with --follow keep them so while
    writers write (LISTEN/NOTIFY on PostgreSQL, polling on SQLite), until stopped."""
    memory = state.ledger()

    def caught_up(events: int) -> None:
        if not state.as_json:
            output.stderr.print(f"applied {events} events")

    with _stop_on_signals() as stop:
        if follow and not state.as_json:
            output.stderr.print("following the log (SIGTERM or Ctrl-C stops)")
        result = memory.project(follow=follow, stop=stop, poll_seconds=poll, caught_up=caught_up)
    output.emit(
        state.as_json,
        result,
        lambda: output.stdout.print(
            f"read models at position {result.position} ({result.events} events applied)"
        ),
    )


@contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """An event set by SIGTERM or SIGINT while the block runs: a clean stop after the
    page being applied, instead of dying mid-page."""
    stop = threading.Event()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def handle(_signum: int, _frame: object) -> None:
        stop.set()

    for sig in previous:
        signal.signal(sig, handle)
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
