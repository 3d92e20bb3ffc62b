"""The MCP tools `save_checkpoint` and `load_checkpoint` (seed 003 §15): an agent saves its
run state for a thread and loads it back after a restart. Registered by
`mcp_server.build_server` with its own `tool` decorator and `run` (the principal, the
facade's thread, failures as tool errors with a stable code).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol, TypeVar

from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from mnemoledger.commands.service import checkpoint_scope
from mnemoledger.commands.service.http.requests import Identifier
from mnemoledger.commands.service.scoped import ScopedMemory
from mnemoledger.commands.write.checkpoints_api import CheckpointOut
from mnemoledger.ledger.checkpoint import MAX_CHECKPOINT_BYTES
from mnemoledger.ledger.policy import MAX_POSITION

F = TypeVar("F", bound=Callable[..., Any])


class ToolDecorator(Protocol):
    """`build_server`'s `tool(name, annotations=...)`: registers the decorated function."""

    def __call__(self, name: str, annotations: ToolAnnotations) -> Callable[[F], F]: ...


Run = Callable[[Callable[[ScopedMemory], Any]], Awaitable[Any]]
UserOf = Callable[[ScopedMemory, str | None], str]

ThreadId = Annotated[Identifier, Field(description="The thread (conversation, run).")]
UserId = Annotated[
    Identifier | None,
    Field(description="The user; may be left out when the server acts for one user."),
]


class LoadedCheckpoint(BaseModel):
    """What `load_checkpoint` found: `checkpoint` is null when none was saved."""

    found: bool
    checkpoint: CheckpointOut | None = None


def add_checkpoint_tools(tool: ToolDecorator, run: Run, user_of: UserOf) -> None:
    """Register the checkpoint tools with `build_server`'s `tool` decorator and `run`;
    `user_of` resolves a missing user_id (the server's user, or the key's one user)."""
    write = ToolAnnotations(destructive_hint=False, open_world_hint=False)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @tool("save_checkpoint", annotations=write)
    async def save_checkpoint(
        thread_id: ThreadId,
        data: Annotated[
            dict[str, Any],
            Field(
                description="Your state to save: graph state, memory context, conversation "
                f"history, agent states; one JSON object of at most {MAX_CHECKPOINT_BYTES} "
                "bytes."
            ),
        ],
        user_id: UserId = None,
    ) -> CheckpointOut:
        """Save your state for a thread so it survives restarts; `load_checkpoint` gets it
        back. Every save is kept: earlier ones can be loaded by version."""

        def saving(scoped: ScopedMemory) -> CheckpointOut:
            user = scoped.check_user(user_of(scoped, user_id))
            return checkpoint_scope.save(scoped, thread_id, data, user=user)

        result: CheckpointOut = await run(saving)
        return result

    @tool("load_checkpoint", annotations=read_only)
    async def load_checkpoint(
        thread_id: ThreadId,
        user_id: UserId = None,
        version: Annotated[
            int | None,
            Field(ge=1, le=MAX_POSITION, description="1: the first saved (default: newest)."),
        ] = None,
    ) -> LoadedCheckpoint:
        """Load the state you saved for a thread (the newest, or `version`); `found` is
        false when there is none."""

        def loading(scoped: ScopedMemory) -> LoadedCheckpoint:
            user = scoped.check_user(user_of(scoped, user_id))
            found = scoped.memory.load_checkpoint(user, thread_id, version=version)
            return LoadedCheckpoint(found=found is not None, checkpoint=found)

        result: LoadedCheckpoint = await run(loading)
        return result
