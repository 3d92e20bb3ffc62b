"""mem0's open-source REST server (`server/main.py` of mem0) under `/mem0`: a mem0 client
changes its base URL to `http://HOST:PORT/mem0` and keeps its requests.

Our own `/memories` and `/search` take other bodies, so mem0's shapes live under the
prefix. Every route runs `commands.mem0_compat.Memory` as the key sees it (its users, its
agent, its categories), so each write is an event like any other. The key may come as
`Authorization: Bearer <key>` or, as mem0's server takes it, `X-API-Key: <key>`;
`DELETE /memories` and `/reset` need an admin key, as in mem0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final, Literal, TypeVar

from fastapi import APIRouter, Depends, Query, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue
from pydantic_core import PydanticCustomError

from mnemoledger.commands.service.http.auth import Caller, bearer, server_state
from mnemoledger.commands.service.http.paths import MEMORY_ID_PARAM, MemoryId
from mnemoledger.commands.service.http.requests import (
    MAX_ADD_CONTENTS,
    Content,
    Identifier,
    Metadata,
    QueryText,
    RequestBody,
    SearchK,
)
from mnemoledger.commands.service.mem0_compat import (
    DEFAULT_LIMIT,
    FilterOperator,
    Memory,
    said_at_timestamp,
)
from mnemoledger.commands.service.scoped import AdminRequired
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound

T = TypeVar("T")

router = APIRouter(prefix="/mem0", tags=["mem0"])

api_key_header = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    scheme_name="Mem0ApiKey",
    description="The same key as `Authorization: Bearer`, as mem0's server accepts it.",
)


async def mem0_caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    api_key: Annotated[str | None, Depends(api_key_header)],
) -> Caller:
    state = server_state(request)
    principal = state.keys.authenticate(credentials.credentials if credentials else api_key)
    return Caller(principal, state.for_request(request))


Mem0Caller = Annotated[Caller, Depends(mem0_caller)]


async def _run(caller: Caller, operation: Callable[[Memory], T]) -> T:
    return await caller.run(lambda scoped: operation(Memory.scoped(scoped)))


def require_admin(caller: Caller, what: str) -> None:
    """mem0's server lets only admins delete a whole scope or reset."""
    if not caller.principal.admin:
        raise AdminRequired(
            f"{what} needs an admin key (`mnemoledger keys create --admin`); "
            f"key {caller.principal.key_id} is not one"
        )


def said_by_now(value: float) -> float:
    """`value` if it is Unix seconds the messages can have been said at (not in the future,
    within the years a time holds)."""
    try:
        said_at_timestamp(value)
    except InvalidInput as error:
        raise PydanticCustomError("time_said", str(error)) from None
    return value


FIRST_SECOND: Final = -62135596800
"""0001-01-01T00:00:00Z in Unix seconds: the earliest time the ledger holds."""
LAST_SECOND: Final = 253402300799
"""9999-12-31T23:59:59Z in Unix seconds: the latest."""
Timestamp = Annotated[float, Field(ge=FIRST_SECOND, le=LAST_SECOND), AfterValidator(said_by_now)]
"""mem0's `timestamp`: Unix seconds, a time now or earlier."""


class Message(RequestBody):
    role: Literal["user", "assistant", "system"] = Field(description="Who wrote the message.")
    content: Content
    name: Identifier | None = None


SCOPE_KEYS = ("user_id", "agent_id", "run_id")


def one_of_the_ids(where: str | None = None) -> list[JsonValue]:
    """JSON Schema alternatives: a user, agent or run id is given (not null), at the top
    level or, with `where`, in that object."""
    given: list[JsonValue] = [
        {"required": [key], "properties": {key: {"type": "string"}}} for key in SCOPE_KEYS
    ]
    if where is None:
        return given
    # `required` holds of any value that is not an object: the object must be one
    inside: JsonValue = {"type": "object", "anyOf": given}
    return [*given, {"required": [where], "properties": {where: inside}}]


class MemoryCreate(RequestBody):
    """mem0's `MemoryCreate`: at least one of `user_id`, `agent_id`, `run_id` (the memories'
    owner is the first given)."""

    model_config = ConfigDict(json_schema_extra={"anyOf": one_of_the_ids()})

    messages: list[Message] = Field(min_length=1, max_length=MAX_ADD_CONTENTS)
    user_id: Identifier | None = None
    agent_id: Identifier | None = None
    run_id: Identifier | None = None
    metadata: Metadata | None = None
    infer: bool | None = Field(None, description="Extract facts (default) or store as is.")
    memory_type: Literal["procedural_memory"] | None = Field(
        None, description="`procedural_memory`: the messages are the steps of a procedure."
    )
    prompt: None = Field(
        None, description="Not supported (mem0's custom extraction prompt): leave it out."
    )
    timestamp: Timestamp | None = Field(
        None,
        description="When the messages were said, in Unix seconds (mem0's `timestamp`), to "
        "import an old conversation; not in the future (default: now). The ledger's `at`: "
        "the memories' `created_at` is that time.",
    )


class MemoryUpdate(RequestBody):
    """mem0's `MemoryUpdate`. The ledger has no event that changes metadata, so `metadata`
    may only be empty."""

    text: Content
    metadata: Annotated[dict[str, Any], Field(max_length=0)] | None = None


Condition = dict[FilterOperator, JsonValue] | list[JsonValue] | str | int | float | bool | None
"""A metadata condition: a value to equal, `"*"` (the key is set), or operators."""


class MetadataFilter(BaseModel):
    """Conditions on metadata (`{"key": value}`, `{"key": {"op": value}}`, `"*"`) joined by
    `AND` / `OR` / `NOT` over lists of filters."""

    model_config = ConfigDict(extra="allow", strict=True)
    __pydantic_extra__: dict[str, Condition] = Field(init=False)  # type: ignore[assignment]

    AND: list[MetadataFilter] | MetadataFilter = Field(default_factory=list)
    OR: list[MetadataFilter] | MetadataFilter = Field(default_factory=list)
    NOT: list[MetadataFilter] | MetadataFilter = Field(default_factory=list)


class Mem0Filters(MetadataFilter):
    """mem0 2.x's `filters`: the scope's ids, and conditions on metadata."""

    user_id: Identifier | None = None
    agent_id: Identifier | None = None
    run_id: Identifier | None = None


class SearchRequest(RequestBody):
    """mem0's `SearchRequest`; `limit` and `top_k` are the same bound. At least one of
    `user_id`, `agent_id`, `run_id`, at the top level or in `filters`."""

    model_config = ConfigDict(json_schema_extra={"anyOf": one_of_the_ids("filters")})

    query: QueryText
    user_id: Identifier | None = None
    agent_id: Identifier | None = None
    run_id: Identifier | None = None
    filters: Mem0Filters | None = None
    limit: SearchK | None = None
    top_k: SearchK | None = None
    threshold: float | None = Field(None, ge=0, le=1)


class MessageResponse(BaseModel):
    message: str


@router.post("/memories")
async def add_memory(body: MemoryCreate, caller: Mem0Caller) -> dict[str, Any]:
    """mem0's add: `{"results": [{"id", "memory", "event"}]}`."""
    messages = [m.model_dump(exclude_none=True) for m in body.messages]
    return await _run(
        caller,
        lambda memory: memory.add(
            messages,
            user_id=body.user_id,
            agent_id=body.agent_id,
            run_id=body.run_id,
            metadata=body.metadata,
            infer=True if body.infer is None else body.infer,
            memory_type=body.memory_type,
            prompt=body.prompt,
            timestamp=body.timestamp,
        ),
    )


@router.get("/memories")
async def get_all_memories(
    caller: Mem0Caller,
    user_id: Annotated[Identifier | None, Query()] = None,
    run_id: Annotated[Identifier | None, Query()] = None,
    agent_id: Annotated[Identifier | None, Query()] = None,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
    top_k: Annotated[int | None, Query(ge=1, le=1000)] = None,
) -> dict[str, Any]:
    """mem0's get_all: the scope's active memories, newest first."""
    bound = top_k or limit or DEFAULT_LIMIT
    return await _run(
        caller,
        lambda memory: memory.get_all(
            user_id=user_id, agent_id=agent_id, run_id=run_id, limit=bound
        ),
    )


@router.delete("/memories")
async def delete_all_memories(
    caller: Mem0Caller,
    user_id: Annotated[Identifier | None, Query()] = None,
    run_id: Annotated[Identifier | None, Query()] = None,
    agent_id: Annotated[Identifier | None, Query()] = None,
) -> MessageResponse:
    """mem0's delete_all (admin key): forget every active memory of the scope."""
    require_admin(caller, "delete all memories")

    await _run(
        caller,
        lambda memory: memory.delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id),
    )
    return MessageResponse(message="All relevant memories deleted")


@router.get(f"/memories/{MEMORY_ID_PARAM}")
async def get_memory(memory_id: MemoryId, caller: Mem0Caller) -> dict[str, Any]:
    """mem0's get (404 when no active memory the key may read has this id)."""
    found = await _run(caller, lambda memory: memory.get(memory_id))
    if found is None:
        raise MemoryNotFound(memory_id)
    return found


@router.put(f"/memories/{MEMORY_ID_PARAM}")
async def update_memory(
    memory_id: MemoryId, body: MemoryUpdate, caller: Mem0Caller
) -> dict[str, Any]:
    """mem0's update: the memory's new text (a `MemoryUpdated` event)."""
    return await _run(caller, lambda memory: memory.update(memory_id, body.text, body.metadata))


@router.delete(f"/memories/{MEMORY_ID_PARAM}")
async def delete_memory(memory_id: MemoryId, caller: Mem0Caller) -> MessageResponse:
    """mem0's delete: the memory is forgotten (soft delete; its events stay)."""
    await _run(caller, lambda memory: memory.delete(memory_id))
    return MessageResponse(message="Memory deleted successfully")


@router.get(f"/memories/{MEMORY_ID_PARAM}/history")
async def memory_history(memory_id: MemoryId, caller: Mem0Caller) -> list[dict[str, Any]]:
    """mem0's history: the memory's additions, updates and deletions, oldest first."""
    return await _run(caller, lambda memory: memory.history(memory_id))


@router.post("/search")
async def search_memories(body: SearchRequest, caller: Mem0Caller) -> dict[str, Any]:
    """mem0's search: ids from the top level or from `filters`, best first."""
    bound = body.top_k or body.limit or DEFAULT_LIMIT
    return await _run(
        caller,
        lambda memory: memory.search(
            body.query,
            user_id=body.user_id,
            agent_id=body.agent_id,
            run_id=body.run_id,
            filters=None if body.filters is None else body.filters.model_dump(exclude_unset=True),
            limit=bound,
            threshold=body.threshold,
        ),
    )


@router.post("/reset")
async def reset_memory(caller: Mem0Caller) -> MessageResponse:
    """mem0's reset (admin key): every active memory of the key's users is forgotten, each
    an event; the log keeps everything."""
    await _run(caller, lambda memory: memory.reset())
    return MessageResponse(message="All memories reset")
