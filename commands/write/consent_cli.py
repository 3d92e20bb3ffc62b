"""`mnemoledger consent ...`: the consent queue of seed 003 §10 on the command line.

    mnemoledger consent propose --user maya --field city --value Lisbon   # queued, pending
    mnemoledger consent list --user maya --status pending
    mnemoledger consent grant ID          # the patch applies (ConsentGranted)
    mnemoledger consent deny ID --reason "wrong city"
    mnemoledger consent expire            # pending requests past their 7-day window
    mnemoledger consent profile --user maya

Errors follow the CLI contract (the root group turns them into one `error:` line): deciding
a request that is not pending is bad input, exit 2, and writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state, writer_options
from mnemoledger.commands.write.consent import ConsentOut
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import CONSENT_STATUSES, PROFILE_FIELDS

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger


def _api(state: CliState) -> MnemoLedger:
    return state.ledger()


def _requests_table(requests: Sequence[ConsentOut]) -> None:
    if not requests:
        output.stdout.print("no consent requests")
        return
    table = Table()
    for column in ("id", "user", "field", "value", "status", "by", "expires"):
        table.add_column(column, overflow="fold")
    for r in requests:
        table.add_row(
            r.id,
            r.user_id,
            r.field + (" (sensitive)" if r.sensitive else ""),
            r.proposed_value,
            r.status,
            r.decided_by or "-",
            r.expires_at[:19],
        )
    output.stdout.print(table)


@click.group()
@global_options
def consent() -> None:
    """Profile patches waiting for consent: sensitive fields change only once granted."""


@consent.command()
@click.option("--user", required=True, help="Whose profile would change.")
@click.option("--field", required=True, type=click.Choice(PROFILE_FIELDS))
@click.option("--value", required=True, help="The proposed value.")
@click.option("--signals", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--reason", default="", help="Why the change is proposed.")
@click.option(
    "--tom-confidence",
    type=click.FloatRange(0, 1),
    help="Proposed by a theory-of-mind insight this confident (0-1): a benign field applies "
    "alone from 0.8.",
)
@writer_options
@global_options
@pass_state
def propose(
    state: CliState,
    user: str,
    field: str,
    value: str,
    signals: int,
    reason: str,
    tom_confidence: float | None,
    agent: str | None,
    thread: str | None,
) -> None:
    """Propose a profile patch: queued for consent, or applied if benign and corroborated."""
    outcome = _api(state).propose_consent(
        user=user,
        field=field,
        value=value,
        signals=signals,
        reason=reason,
        tom_confidence=tom_confidence,
        agent=agent,
        thread=thread,
    )
    output.emit(
        state.as_json,
        outcome,
        lambda: output.stdout.print(
            f"{'applied' if outcome.applied else 'queued for consent'}: "
            f"{outcome.request.field} = {outcome.request.proposed_value!r} "
            f"(request {outcome.request.id})"
        ),
    )


@consent.command(name="list")
@click.option("--user", help="Only this user's requests.")
@click.option("--status", type=click.Choice(CONSENT_STATUSES))
@global_options
@pass_state
def list_requests(state: CliState, user: str | None, status: str | None) -> None:
    """Consent requests in the order they were made."""
    requests = _api(state).consents(user=user, status=status)
    output.emit(state.as_json, requests, lambda: _requests_table(requests))


@consent.command()
@click.argument("request_id")
@click.option("--agent", help="Agent that relayed the consent.")
@global_options
@pass_state
def grant(state: CliState, request_id: str, agent: str | None) -> None:
    """Consent to a pending request: its patch applies."""
    request = _api(state).grant_consent(request_id, agent=agent)
    output.emit(state.as_json, request, lambda: _requests_table([request]))


@consent.command()
@click.argument("request_id")
@click.option("--reason", default="", help="Why consent is refused.")
@click.option("--agent", help="Agent that relayed the refusal.")
@global_options
@pass_state
def deny(state: CliState, request_id: str, reason: str, agent: str | None) -> None:
    """Refuse a pending request: its patch never applies."""
    request = _api(state).deny_consent(request_id, reason=reason, agent=agent)
    output.emit(state.as_json, request, lambda: _requests_table([request]))


@consent.command()
@click.option("--now", "now_text", help="Expire as of this ISO-8601 time (default: now).")
@global_options
@pass_state
def expire(state: CliState, now_text: str | None) -> None:
    """Expire pending requests whose 7-day consent window is over."""
    now = _moment(now_text) if now_text else None
    expired = _api(state).expire_consents(now=now)
    output.emit(state.as_json, expired, lambda: _requests_table(expired))


@consent.command()
@click.option("--user", required=True)
@global_options
@pass_state
def profile(state: CliState, user: str) -> None:
    """The user's applied profile fields (granted patches only)."""
    fields = _api(state).profile_fields(user=user)
    output.emit(
        state.as_json,
        fields,
        lambda: output.stdout.print(
            "\n".join(f"{k}: {v}" for k, v in fields.items()) or f"(no profile for {user})"
        ),
    )


def _moment(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"--now must be an ISO-8601 time; got {text!r}") from None
