"""`/threads/{thread_id}/turns`: hand a conversation's newest turns over after each agent
loop; the server extracts them once the thread has been quiet for 5 seconds (seed 004 §3,
Trigger 1), in the background of every worker (`extract_quiet_threads`).

Extraction writes preferences, style, profile, projects, relationships and events, so a
key hands turns over only when it may write every one of those categories.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from pydantic import Field

from mnemoledger.commands.service.http.auth import Authenticated
from mnemoledger.commands.service.http.requests import (
    IDENTIFIER,
    Identifier,
    Moment,
    RequestBody,
)
from mnemoledger.commands.service.scoped import ScopedMemory
from mnemoledger.commands.service.serial import FacadeThread
from mnemoledger.commands.write.turn_queue_api import QueuedOut, QueuedThreadOut
from mnemoledger.ledger.policy import (
    CATEGORY_BY_NAMESPACE,
    EXTRACTION_POLL_SECONDS,
    MAX_ID_CHARS,
    MAX_TURN_CHARS,
)

router = APIRouter(tags=["conversations"])
log = logging.getLogger(__name__)

EXTRACTION_CATEGORIES = tuple(sorted({category for _, category in CATEGORY_BY_NAMESPACE}))
"""What an extraction may write (the categories of Nebo's namespaces)."""


class TurnIn(RequestBody):
    """One conversation turn."""

    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(max_length=MAX_TURN_CHARS)
    ts: Moment | None = Field(None, description="When it was said (default: now).")
    id: str | None = Field(None, max_length=MAX_ID_CHARS, description="The caller's turn id.")


class QueueTurnsRequest(RequestBody):
    """The turns of one agent loop (or more), oldest first."""

    user_id: Identifier
    turns: list[TurnIn] = Field(min_length=1, max_length=1000)
    agent_id: Identifier | None = None


def queue(scoped: ScopedMemory, thread: str, body: QueueTurnsRequest) -> QueuedOut:
    """The key's hand-over: its user and agent, and every category extraction writes."""
    user = scoped.check_user(body.user_id)
    agent = scoped.check_agent(body.agent_id)
    for category in EXTRACTION_CATEGORIES:
        scoped.check_category(category, "write, as extraction does")
    turns = [turn.model_dump(mode="json", exclude_none=True) for turn in body.turns]
    with scoped._acting() as memory:
        return memory.queue_turns(turns, user=user, thread=thread, agent=agent)


@router.post("/threads/{thread_id}/turns", status_code=202)
async def queue_turns(
    thread_id: Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS, pattern=IDENTIFIER)],
    body: QueueTurnsRequest,
    caller: Authenticated,
) -> QueuedOut:
    """Hand over a thread's newest turns for extraction (202: accepted, in the log, not
    extracted yet). The thread's waiting turns are extracted together once no new turn has
    come for `extract_after_seconds`; each hand-over restarts that wait."""
    return await caller.run(lambda scoped: queue(scoped, thread_id, body))


@router.get("/threads/waiting")
async def waiting_threads(
    caller: Authenticated, user_id: Annotated[Identifier, Query()]
) -> list[QueuedThreadOut]:
    """The user's threads whose turns wait for extraction, the longest waiting first."""

    def listing(scoped: ScopedMemory) -> list[QueuedThreadOut]:
        return scoped.memory.queued_threads(user=scoped.check_user(user_id))

    return await caller.run(listing)


async def extract_quiet_threads(writes: FacadeThread) -> None:
    """Until cancelled: every second, extract the threads quiet for 5 seconds (any user's:
    the server's own work, recorded under its actor and each hand-over's agent)."""
    while True:
        await asyncio.sleep(EXTRACTION_POLL_SECONDS)
        try:
            for done in await writes.run(lambda memory: memory.extract_queued()):
                if done.error is not None:
                    log.warning("extraction of thread %s failed: %s", done.thread_id, done.error)
        except Exception:  # keep extracting later threads; the failure is logged
            log.exception("extracting queued turns failed")
