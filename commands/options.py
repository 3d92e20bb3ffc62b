"""Options shared by every command, composed once (as sqlite-utils does)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from mnemoledger.ledger.policy import MAX_LIST_LIMIT, MAX_POSITION

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

F = TypeVar("F", bound=Callable[..., Any])

POSITION = click.IntRange(0, MAX_POSITION)
"""A log position or delta revision: none is larger, and the stores cannot compare with a
larger number (an unbounded one was an OverflowError, exit 1)."""

LIMIT = click.IntRange(1, MAX_LIST_LIMIT)
"""How many rows a listing may return."""


@dataclass
class CliState:
    """What the global options chose; the ledger opens on first use."""

    home: Path | None = None
    as_json: bool = False
    actor: str | None = None
    _ledger: MnemoLedger | None = field(default=None, repr=False)

    def ledger(self) -> MnemoLedger:
        if self._ledger is None:
            from mnemoledger.commands.facade import MnemoLedger

            self._ledger = MnemoLedger(self.home, actor=self.actor)
            click.get_current_context().call_on_close(self._ledger.close)
        return self._ledger


def _remember(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        state = ctx.find_object(CliState) or ctx.ensure_object(CliState)
        if value not in (None, False):
            setattr(state, name, value)
        return value

    return callback


def global_options(command: F) -> F:
    """--home, --json and --actor, accepted before or after the command name."""
    for option in reversed(
        [
            click.option(
                "--home",
                type=click.Path(file_okay=False, path_type=Path),
                expose_value=False,
                callback=_remember("home"),
                is_eager=True,
                help="Data directory (default: $MNEMOLEDGER_HOME, else the user data dir).",
            ),
            click.option(
                "--json",
                "as_json",
                is_flag=True,
                expose_value=False,
                callback=_remember("as_json"),
                is_eager=True,
                help="Machine-readable output on stdout, nothing else.",
            ),
            click.option(
                "--actor",
                expose_value=False,
                callback=_remember("actor"),
                is_eager=True,
                help="Who is acting, recorded on every event (default: cli:<login>).",
            ),
        ]
    ):
        command = option(command)
    return command


def as_of_option(command: F) -> F:
    """--as-of TIME|POSITION: answer from the read models as they stood then."""
    return click.option(
        "--as-of",
        "as_of",
        metavar="TIME|POSITION",
        help="As the ledger stood at this time (ISO-8601) or log position.",
    )(command)


def writer_options(command: F) -> F:
    """--agent and --thread: the provenance of a write."""
    command = click.option("--thread", help="Conversation thread the change belongs to.")(command)
    return click.option("--agent", help="Agent that asked for the change.")(command)


def category_option(command: F) -> F:
    """--category: the category a write files its memories under (seed 003 §5)."""
    return click.option(
        "--category",
        help="Category to file under; with --agent, one of its allowlist "
        "(default: derived from kind, note kind and namespace).",
    )(command)


pass_state = click.make_pass_decorator(CliState, ensure=True)
