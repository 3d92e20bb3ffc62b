"""`mnemoledger prune-expired`: Luminary's pruneExpired on its own, answering with a count."""

from __future__ import annotations

import click

from mnemoledger.commands import output
from mnemoledger.commands.lifecycle.consolidate_cli import _clock_value
from mnemoledger.commands.lifecycle.prune import PruneResult, prune_expired
from mnemoledger.commands.options import CliState, global_options, pass_state


def _summary(result: PruneResult) -> None:
    output.stdout.print(f"pruned {result.count} expired note(s) at {result.now}")
    for user in result.users:
        shown = ", ".join(output.short_id(i) for i in user.pruned)
        output.stdout.print(f"  {user.user}: {len(user.pruned)} ({shown})")


@click.command(name="prune-expired")
@click.option("--user", help="Only this user's notes (default: every user).")
@click.option("--now", "now", help="Prune as of this time (ISO-8601 with offset; default: now).")
@click.option("--agent", help="Agent that asked for the prune.")
@global_options
@pass_state
def prune_expired_command(
    state: CliState, user: str | None, now: str | None, agent: str | None
) -> None:
    """Delete notes whose expiry time has passed and print how many; their history stays."""
    result = prune_expired(state.ledger(), user=user, now=_clock_value(now), agent=agent)
    output.emit(state.as_json, result.as_json(), lambda: _summary(result))
