"""Recorded commands: how one ended, and the adds still waiting to be processed.

    result = memory.add(["I moved to Lisbon in May"], user="maya", wait=False)
    memory.command(result.command_id).status  # requested, then completed (or failed)
    memory.pending_adds()  # adds recorded and not processed yet
    memory.process_pending_adds()  # process them here (the worker's job)

`mnemoledger command ID` and `GET /commands/{id}` show the same status.
"""

from __future__ import annotations

import builtins
from datetime import datetime

from pydantic import BaseModel

from mnemoledger.commands.models import AddResult, CommandOut
from mnemoledger.commands.parts import Parts
from mnemoledger.commands.write.add_later import (
    PENDING_ADD_GRACE_SECONDS,
    CommandNotFound,
    due_adds,
    process_recorded,
)
from mnemoledger.commands.write.writes_api import add_result
from mnemoledger.ledger.errors import InvalidInput, LedgerError, MemoryNotFound
from mnemoledger.ledger.validation import identifier

REQUESTED_SUFFIX = "Requested"


class PendingAddOut(BaseModel):
    """An add recorded and not processed yet."""

    command_id: str
    user_id: str
    requested_at: datetime


class ProcessedAdd(BaseModel):
    """One pending add processed: what it did, or why it failed."""

    command_id: str
    user_id: str
    result: AddResult | None = None
    error: str | None = None
    """Why it failed (recorded on its command, which is then no longer pending)."""


class Commands:
    """Recorded commands on `MnemoLedger`: their status, and the pending adds."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def command(self, command_id: str) -> CommandOut:
        """`MnemoLedger.command`: a recorded command and its status (documented there)."""
        ledger = self.parts.ledger
        try:
            first = ledger.stream(command_id)[0]
            command = ledger.command(command_id)
        except (MemoryNotFound, InvalidInput):
            raise CommandNotFound(command_id) from None
        kind = first.type.removesuffix(REQUESTED_SUFFIX)
        return CommandOut(
            command_id=command.id.hex,
            kind=kind[:1].lower() + kind[1:],
            status=command.status,  # type: ignore[arg-type]
            user_id=first.user_id,
            requested_at=first.at.isoformat(),
            llm_calls=command.llm_calls,
            outcome=command.outcome,
        )

    def pending_adds(self, *, user: str | None = None) -> builtins.list[PendingAddOut]:
        """`MnemoLedger.pending_adds`: adds recorded, not processed yet (documented there)."""
        user_id = identifier("user", user, required=False)
        parts = self.parts
        parts.runner.catch_up(names=(parts.pending_adds_model.name,))
        return [
            PendingAddOut(command_id=p.command_id, user_id=p.user_id, requested_at=p.requested_at)
            for p in parts.pending_adds_model.pending(user_id)
        ]

    def process_pending_adds(
        self,
        *,
        user: str | None = None,
        older_than_seconds: float = PENDING_ADD_GRACE_SECONDS,
        now: datetime | None = None,
    ) -> builtins.list[ProcessedAdd]:
        """`MnemoLedger.process_pending_adds`: process pending adds here (documented there)."""
        if older_than_seconds < 0:
            raise InvalidInput(f"older_than_seconds must be 0 or more; got {older_than_seconds}")
        parts = self.parts
        user_id = identifier("user", user, required=False)
        done: list[ProcessedAdd] = []
        for due in due_adds(parts, user=user_id, older_than_seconds=older_than_seconds, now=now):
            processed = ProcessedAdd(command_id=due.command_id, user_id=due.user_id)
            try:
                outcome = process_recorded(parts.ledger, parts.add_pipeline, due.command_id)
            except LedgerError as error:
                processed.error = str(error)
            else:
                processed.result = add_result(outcome)
            done.append(processed)
        return done
