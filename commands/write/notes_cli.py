"""`mnemoledger note write|merge|list`: Luminary notes (seed 002) on the command line.

Registered on the main group with `cli.add_command(note)`; errors and exit statuses follow
the main CLI (bad input: one `error:` line, exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from mnemoledger.commands import output
from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.options import (
    MEMORY_ID,
    CliState,
    category_option,
    global_options,
    pass_state,
    writer_options,
)
from mnemoledger.commands.write.notes import (
    DEFAULT_NOTE_CONFIDENCE,
    DEFAULT_NOTE_SCOPE,
    DEFAULT_NOTES_LIMIT,
)
from mnemoledger.commands.write.notes_api import NoteResult
from mnemoledger.ledger.policy import NORMAL, NOTE_KINDS, SENSITIVE, SENSITIVITIES, STABILITIES


def _comma_list(value: str | None) -> list[str]:
    return [] if not value else [item.strip() for item in value.split(",")]


@click.group()
@global_options
def note() -> None:
    """Notes: log, summary, rule, soul, agent and user notes."""


@note.command(name="write")
@click.argument("text")
@click.option("--user", required=True, help="User the note belongs to.")
@click.option("--kind", type=click.Choice(NOTE_KINDS), required=True, help="Note kind.")
@click.option(
    "--stability",
    type=click.Choice(STABILITIES),
    help=(
        "volatile: expires after --ttl-days, or without it is merged with other notes "
        "after a week (default: permanent for soul/agent/user, else stable)."
    ),
)
@click.option("--ttl-days", type=float, help="Expire this many days from now.")
@click.option("--sensitivity", type=click.Choice(SENSITIVITIES), default=NORMAL, show_default=True)
@click.option("--evidence", help="Comma-separated evidence (required for rule notes).")
@click.option("--confidence", type=float, default=DEFAULT_NOTE_CONFIDENCE, show_default=True)
@click.option("--tags", help="Comma-separated tags.")
@click.option("--scope", default=DEFAULT_NOTE_SCOPE, show_default=True)
@click.option("--job", "job_id", help="The job or run that wrote the note, kept with it.")
@writer_options
@category_option
@global_options
@pass_state
def write(
    state: CliState,
    text: str,
    user: str,
    kind: str,
    stability: str | None,
    ttl_days: float | None,
    sensitivity: str,
    evidence: str | None,
    confidence: float,
    tags: str | None,
    scope: str,
    agent: str | None,
    thread: str | None,
    category: str | None,
    job_id: str | None,
) -> None:
    """Write one note (writeNote); a soul, agent or user note replaces the previous one."""
    result = state.ledger().write_note(
        text,
        user=user,
        kind=kind,
        stability=stability,
        ttl_days=ttl_days,
        sensitivity=sensitivity,
        evidence=_comma_list(evidence),
        confidence=confidence,
        tags=_comma_list(tags),
        scope=scope,
        source="cli",
        agent=agent,
        thread=thread,
        category=category,
        job_id=job_id,
    )
    output.emit(state.as_json, result, lambda: _result_summary(result, "note"))


@note.command(name="merge")
@click.argument("note_ids", nargs=-1, required=True, type=MEMORY_ID)
@writer_options
@global_options
@pass_state
def merge(
    state: CliState, note_ids: tuple[str, ...], agent: str | None, thread: str | None
) -> None:
    """Merge 2+ active notes of one user into one summary note (mergeNotes)."""
    result = state.ledger().merge_notes(list(note_ids), agent=agent, thread=thread)
    output.emit(state.as_json, result, lambda: _result_summary(result, "summary"))


@note.command(name="supersede")
@click.argument("note_id", type=MEMORY_ID)
@click.option("--by", required=True, type=MEMORY_ID, help="The note that replaces it.")
@writer_options
@global_options
@pass_state
def supersede(
    state: CliState, note_id: str, by: str, agent: str | None, thread: str | None
) -> None:
    """Mark a note as replaced by another note of the same user; it stays in history but is
    no longer listed."""
    result = state.ledger().supersede_note(note_id, by=by, agent=agent, thread=thread)
    output.emit(state.as_json, result, lambda: _result_summary(result, "replaced by"))


@note.command(name="list")
@click.option("--user", required=True, help="Whose notes to list.")
@click.option("--kind", type=click.Choice(NOTE_KINDS))
@click.option("--tags", help="Comma-separated tags; a note matching any of them is listed.")
@click.option("--scope", help="Only notes of this scope.")
@click.option("--limit", type=click.IntRange(min=1), default=DEFAULT_NOTES_LIMIT, show_default=True)
@global_options
@pass_state
def list_command(
    state: CliState,
    user: str,
    kind: str | None,
    tags: str | None,
    scope: str | None,
    limit: int,
) -> None:
    """Active notes of a user, newest first (getNotes: unexpired, not superseded)."""
    notes = state.ledger().notes(user, kind=kind, tags=_comma_list(tags), limit=limit, scope=scope)
    output.emit(state.as_json, notes, lambda: notes_table(notes))


def _result_summary(result: NoteResult, title: str) -> None:
    output.memories_table([result.note], title)
    if result.superseded:
        output.stdout.print(f"superseded: {', '.join(result.superseded)}")
    output.stdout.print(f"command {result.command_id}; {result.llm_calls} LLM calls")


def notes_table(notes: Sequence[MemoryOut]) -> None:
    """Notes for people: `output.memories_table` has no column for the note fields."""
    if not notes:
        output.stdout.print("no notes")
        return
    table = output.id_table()
    for column in ("id", "note", "content", "stability", "expires", "tags"):
        table.add_column(column, overflow="fold")
    for n in notes:
        kind = f"{n.note_kind} (sensitive)" if n.sensitivity == SENSITIVE else str(n.note_kind)
        table.add_row(
            output.short_id(n.id),
            kind,
            n.content,
            n.stability,
            (n.expires_at or "-")[:19],
            ", ".join(n.tags),
        )
    output.stdout.print(table)
