"""Options shared by every command, composed once (as sqlite-utils does)."""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from mnemoledger.commands.output import SHORT_ID_CHARS, is_full_id
from mnemoledger.ledger.policy import MAX_LIST_LIMIT, MAX_POSITION

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

F = TypeVar("F", bound=Callable[..., Any])

POSITION = click.IntRange(0, MAX_POSITION)
"""A log position or delta revision: none is larger, and the stores cannot compare with a
larger number (an unbounded one was an OverflowError, exit 1)."""

LIMIT = click.IntRange(1, MAX_LIST_LIMIT)
"""How many rows a listing may return."""

FACADE = "mnemoledger.commands.facade"
"""The Python API's module: imported by the first command that opens the ledger."""


@dataclass
class CliState:
    """What the global options chose; the ledger opens on first use."""

    home: Path | None = None
    as_json: bool = False
    actor: str | None = None
    _ledger: MnemoLedger | None = field(default=None, repr=False)

    def ledger(self) -> MnemoLedger:
        if self._ledger is None:
            if FACADE not in sys.modules:  # the first time in this process
                with collector_paused():
                    importlib.import_module(FACADE)
            from mnemoledger.commands.facade import MnemoLedger

            self._ledger = MnemoLedger(self.home, actor=self.actor)
            click.get_current_context().call_on_close(self._ledger.close)
        return self._ledger


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the Python API is first imported, then
    what exists frozen (`gc.freeze`): the import makes ~90,000 objects that live as long as
    the process (classes, schemas, compiled patterns); collecting again and again while they
    are made, and rescanning them later, cost a cold `add` ~0.1 s of CPU. Not the ledger's
    `collector_paused`: importing it would import the API before the collector is paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


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
                help="Who is acting, recorded on every event this command writes "
                "(default: $MNEMOLEDGER_ACTOR, else cli:<login>).",
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
    """--category: the category a write files its memories under."""
    return click.option(
        "--category",
        help="Category to file under; with --agent, one of its allowlist "
        "(default: derived from kind, note kind and namespace).",
    )(command)


pass_state = click.make_pass_decorator(CliState, ensure=True)


if TYPE_CHECKING:
    _StrParamType = click.ParamType[str, Any]
else:  # generic only since click 8.2; the project supports 8.1
    _StrParamType = click.ParamType


class MemoryId(_StrParamType):
    """A memory id, whole or as a unique prefix of at least `SHORT_ID_CHARS` characters
    (what the tables show); converted to the whole id before the command runs.

    Why 8: an id is 32 random hex digits, so 8 of them leave about 4.3 billion values; in
    a home of 100,000 memories a given 8-character prefix is shared with another memory
    about once in 43,000 (and then the command says so and asks for more). A shorter
    minimum would make ambiguity common in large homes and let a typo pick another
    memory silently. Dashes (a UUID as printed elsewhere) and capitals are accepted.
    Anything that is not hex goes to the command as given, which answers "no memory with
    id ..."."""

    name = "memory_id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        given = str(value).strip()
        digits = given.replace("-", "").lower()
        if is_full_id(digits) or any(c not in "0123456789abcdef" for c in digits):
            return given  # whole (or no) id: the command looks it up and says if it is unknown
        if len(digits) < SHORT_ID_CHARS:
            self.fail(
                f"{given!r} is too short: give the memory id or its first {SHORT_ID_CHARS} or "
                "more characters",
                param,
                ctx,
            )
        found = resolve_prefix(digits, ctx)
        if not found:
            self.fail(f"no memory id starts with {given!r}", param, ctx)
        if len(found) > 1:
            self.fail(
                f"{given!r} is ambiguous: {' and '.join(found)} (at least) start with it; "
                "give more characters",
                param,
                ctx,
            )
        return found[0]


def resolve_prefix(prefix: str, ctx: click.Context | None) -> list[str]:
    """Up to 2 ids of the memories starting with `prefix`, after the read models caught up
    with the log (a memory added a moment ago is found)."""
    from mnemoledger.projections.layers import ids_starting_with

    context = ctx or click.get_current_context()
    state = context.find_object(CliState) or context.ensure_object(CliState)
    ledger = state.ledger()
    ledger.refresh()
    return ids_starting_with(ledger.layers, prefix, limit=2)


MEMORY_ID = MemoryId()
"""Parameter type of every memory id argument and option: whole or a unique prefix."""
