"""`/checkpoints`: supervisor checkpoints (seed 003 §15), an agent's per-thread run state.

    PUT /checkpoints/{thread}    {"data": {...}, "user_id"?}   save the newest checkpoint
    GET /checkpoints/{thread}    ?user_id=&version=            load it (or an earlier one)
    GET /checkpoints             ?user_id=&limit=              threads, newest first

`user_id` may be left out when the key acts for one user. Every save is an event; the
earlier checkpoints stay in the log (`version=1` is the first saved).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import Field

from mnemoledger.commands.service import checkpoint_scope
from mnemoledger.commands.service.http.auth import Authenticated
from mnemoledger.commands.service.http.requests import (
    IDENTIFIER,
    MAX_JSON_INTEGER,
    Identifier,
    RequestBody,
)
from mnemoledger.commands.write.checkpoints_api import (
    CHECKPOINTS_DEFAULT_LIMIT,
    CheckpointInfo,
    CheckpointOut,
)
from mnemoledger.ledger.checkpoint import MAX_CHECKPOINT_BYTES
from mnemoledger.ledger.policy import MAX_ID_CHARS, MAX_LIST_LIMIT

router = APIRouter(prefix="/checkpoints", tags=["checkpoints"])

ThreadId = Annotated[
    str,
    Path(min_length=1, max_length=MAX_ID_CHARS, pattern=IDENTIFIER, description="The thread."),
]
UserQuery = Annotated[
    Identifier | None,
    Query(description="The user (default: the key's one user)."),
]


class SaveCheckpointRequest(RequestBody):
    """`PUT /checkpoints/{thread}`: the thread's state, one JSON object."""

    data: dict[str, Any] = Field(
        description=f"The state (graph state, memory context, conversation history, agent "
        f"states): a JSON object of at most {MAX_CHECKPOINT_BYTES} bytes as compact JSON."
    )
    user_id: Identifier | None = Field(
        default=None, description="The user (default: the key's one user)."
    )


@router.put("/{thread}")
async def save_checkpoint(
    thread: ThreadId, body: SaveCheckpointRequest, caller: Authenticated
) -> CheckpointOut:
    """Save the thread's newest checkpoint (one `CheckpointSaved` event; the earlier ones
    stay in the log). The key's agent and actor are recorded."""
    return await caller.run(
        lambda scoped: checkpoint_scope.save(scoped, thread, body.data, user=body.user_id)
    )


@router.get("/{thread}")
async def load_checkpoint(
    thread: ThreadId,
    caller: Authenticated,
    user_id: UserQuery = None,
    version: Annotated[
        int | None,
        Query(ge=1, le=MAX_JSON_INTEGER, description="1: the first saved (default: the newest)."),
    ] = None,
) -> CheckpointOut:
    """The thread's newest checkpoint, or checkpoint number `version`; 404 if none."""
    return await caller.run(
        lambda scoped: checkpoint_scope.load(scoped, thread, user=user_id, version=version)
    )


@router.get("")
async def list_checkpoints(
    caller: Authenticated,
    user_id: UserQuery = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = CHECKPOINTS_DEFAULT_LIMIT,
) -> list[CheckpointInfo]:
    """The user's threads with a checkpoint, most recently saved first (without data)."""
    return await caller.run(
        lambda scoped: checkpoint_scope.listing(scoped, user=user_id, limit=limit)
    )
