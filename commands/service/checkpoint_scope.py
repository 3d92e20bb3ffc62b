"""Supervisor checkpoints (seed 003 §15) as one API key may use them: what the HTTP routes
(`routes/checkpoints.py`) and the MCP tools (`checkpoint_tools.py`) call.

A key saves and loads the checkpoints of the users it acts for (`UserNotAllowed`, 403, for
any other); a checkpoint is an agent's own run state, in no memory category, so a key's
categories do not narrow it. The key's agent and actor are recorded on every save. A
caller that names no user acts for the key's one user (a key of several must name one).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from mnemoledger.commands.service.scoped import ScopedMemory
from mnemoledger.commands.write.checkpoints_api import (
    CHECKPOINTS_DEFAULT_LIMIT,
    CheckpointInfo,
    CheckpointOut,
)
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound


class CheckpointNotFound(MemoryNotFound):
    """No checkpoint of this thread (or of this number) for the user (HTTP 404)."""

    def __str__(self) -> str:
        user, thread, version = self.args
        which = "no checkpoint" if version is None else f"no checkpoint {version}"
        return f"{which} of thread {thread!r} for user {user!r}"


def user_of(scoped: ScopedMemory, user: str | None) -> str:
    """The user named, which the key must act for; else the key's only user."""
    if user is not None:
        return scoped.check_user(user)
    users = scoped.principal.users
    if len(users) != 1:
        raise InvalidInput(f"user_id is required: this key acts for {', '.join(users)}")
    return users[0]


def save(
    scoped: ScopedMemory, thread: str, data: Mapping[str, Any], *, user: str | None = None
) -> CheckpointOut:
    """Save the thread's newest checkpoint as the key (its agent and actor recorded)."""
    user_id = user_of(scoped, user)
    with scoped._acting() as memory:  # the key's actor on the event, as every scoped write
        return memory.save_checkpoint(user_id, thread, data, agent=scoped.principal.agent)


def load(
    scoped: ScopedMemory, thread: str, *, user: str | None = None, version: int | None = None
) -> CheckpointOut:
    """The thread's newest checkpoint (or number `version`); `CheckpointNotFound` if none."""
    user_id = user_of(scoped, user)
    found = scoped.memory.load_checkpoint(user_id, thread, version=version)
    if found is None:
        raise CheckpointNotFound(user_id, thread, version)
    return found


def listing(
    scoped: ScopedMemory, *, user: str | None = None, limit: int = CHECKPOINTS_DEFAULT_LIMIT
) -> builtins.list[CheckpointInfo]:
    """The user's threads with a checkpoint, most recently saved first."""
    return scoped.memory.checkpoints(user_of(scoped, user), limit)
