"""`mnemoledger verify`, `seal` and `erase`: trust the log, checkpoint it, forget a user.

    mnemoledger verify --json        # {"ok", "events", "problems": [...]}; exit 1 if not ok
    mnemoledger verify --expect-root 1234:ROOT   # and a root published elsewhere holds
    mnemoledger seal --json          # the Sealed event(s) since the last seal
    mnemoledger erase --user maya --yes

`erase` without `--yes` refuses (exit 2); an unknown user is bad input (exit 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from mnemoledger.commands import output
from mnemoledger.commands.audit.integrity_api import (
    ErasureResult,
    SealOut,
    VerifyResult,
)
from mnemoledger.commands.options import CliState, global_options, pass_state

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger


def _api(state: CliState) -> MnemoLedger:
    return state.ledger()


def _show_verify(result: VerifyResult) -> None:
    verdict = "[green]ok[/]" if result.ok else f"[red]{len(result.problems)} problem(s)[/]"
    output.stdout.print(
        f"{verdict}: {result.events} events checked, {result.seals} seal(s), "
        f"sealed through position {result.sealed_through}",
        markup=True,
    )
    for note in result.notes:
        output.stdout.print(f"note: {note}")
    for seal in result.sealed:
        output.stdout.print(
            f"sealed positions {seal.from_position}-{seal.to_position} "
            f"({seal.events} events): root {seal.root}"
        )
    if result.problems:
        table = output.id_table()
        for column in ("kind", "position", "stream", "version", "detail"):
            table.add_column(column, overflow="fold")
        for p in result.problems:
            table.add_row(
                p.kind,
                "" if p.position is None else str(p.position),
                output.short_id(p.stream) if p.stream else "",
                "" if p.version is None else str(p.version),
                p.detail,
            )
        output.stdout.print(table)


def _published_root(
    _context: click.Context, _parameter: click.Parameter, values: tuple[str, ...]
) -> dict[int, str]:
    roots: dict[int, str] = {}
    for value in values:
        through, _, root = value.partition(":")
        if not through.isdigit() or len(root) != 64 or not _is_hex(root):
            raise click.BadParameter(f"{value!r}: give LAST_POSITION:ROOT (64 hex digits)")
        roots[int(through)] = root.lower()
    return roots


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


@click.command()
@click.option(
    "--expect-root",
    "published",
    multiple=True,
    callback=_published_root,
    metavar="LAST_POSITION:ROOT",
    help="A seal root published elsewhere (from `seal --json` or `verify --json`): the log "
    "must hold a seal through LAST_POSITION with this root. Repeatable.",
)
@global_options
@pass_state
def verify(state: CliState, published: dict[int, str]) -> int:
    """Check every stored event, keyed hash chain and seal; name what was changed, forged,
    removed, moved or cut off the end. Exit status 1 when anything is wrong; when nothing
    is, seal what was unsealed."""
    with output.progress_bar(not state.as_json, "verifying") as progress:
        result = _api(state).verify(progress, published)
    output.emit(state.as_json, result, lambda: _show_verify(result))
    return 0 if result.ok else 1


def _show_seals(seals: list[SealOut]) -> None:
    for seal in seals:
        output.stdout.print(
            f"sealed positions {seal.from_position}-{seal.to_position} "
            f"({seal.events} events): root {seal.root}"
        )


@click.command()
@click.option("--agent", help="Agent that asked for the seal.")
@global_options
@pass_state
def seal(state: CliState, agent: str | None) -> None:
    """Seal the log since the last seal: a `Sealed` event with the root hash of the range."""
    seals = _api(state).seal(agent=agent)
    output.emit(state.as_json, seals, lambda: _show_seals(seals))


def _show_erasure(result: ErasureResult) -> None:
    output.stdout.print(f"erased {result.user_id}: {'; '.join(result.completed)}")


@click.command()
@click.option("--user", required=True, help="The user whose content to erase.")
@click.option("--yes", is_flag=True, help="Confirm: the content cannot be recovered.")
@click.option("--agent", help="Agent that asked for the erasure.")
@global_options
@pass_state
def erase(state: CliState, user: str, yes: bool, agent: str | None) -> None:
    """Crypto-shred one user: destroy their data key, record `UserErased`, rebuild every
    read model without their content. Irreversible; needs --yes. Run it again to finish an
    interrupted erasure."""
    if not yes:
        raise click.UsageError(f"erasing {user!r} cannot be undone: add --yes to confirm")
    with output.progress_bar(not state.as_json, "rebuilding") as progress:
        result = _api(state).erase(user=user, agent=agent, progress=progress)
    output.emit(state.as_json, result, lambda: _show_erasure(result))
