"""`/commands/{id}`: how a recorded command ended (an add sent with `wait` false is
`requested` until the server processed it); and the server's own processing of the adds
recorded without waiting that no process finished."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Path

from mnemoledger.commands.models import CommandOut
from mnemoledger.commands.service.http.auth import Authenticated
from mnemoledger.commands.service.serial import FacadeThread
from mnemoledger.commands.write.add_later import PENDING_ADD_GRACE_SECONDS
from mnemoledger.commands.write.commands_api import ProcessedAdd
from mnemoledger.ledger.policy import EXTRACTION_POLL_SECONDS

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

router = APIRouter(tags=["commands"])
log = logging.getLogger(__name__)

CommandId = Annotated[str, Path(max_length=64, description="A command id (32 hex digits).")]


@router.get("/commands/{command_id}")
async def command_status(command_id: CommandId, caller: Authenticated) -> CommandOut:
    """A recorded command of one of the key's users: `requested` (recorded, not processed
    yet), `completed` with what it did (the ids it added, superseded, reinforced) or
    `failed` with why. Another user's command is a 404."""
    return await caller.run(lambda scoped: scoped.command(command_id))


async def process_pending_adds(writes: FacadeThread) -> None:
    """Until cancelled: at once every pending add (what a stopped process left), then every
    second those pending for 5 seconds, each processed on the writes facade."""
    older_than = 0.0
    while True:
        try:
            done = await writes.run(partial(_process, older_than=older_than))
            for processed in done:
                if processed.error is not None:
                    log.warning("add %s failed: %s", processed.command_id, processed.error)
        except Exception:  # keep processing later adds; the failure is logged
            log.exception("processing pending adds failed")
        older_than = PENDING_ADD_GRACE_SECONDS
        await asyncio.sleep(EXTRACTION_POLL_SECONDS)


def _process(memory: MnemoLedger, older_than: float) -> list[ProcessedAdd]:
    return memory.process_pending_adds(older_than_seconds=older_than)
