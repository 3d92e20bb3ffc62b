"""`/memories`: add (HAEMA add()), store, recall and delete by key, clear a namespace prefix
(Nebo's memory tool), get, list, latest (HAEMA get_latest), update, link, TTL,
forget/restore, history; engram's `/stats` and `/trash` (seed 001)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from pydantic import ConfigDict, Field, model_validator

from mnemoledger.commands.models import AddResult, EdgeOut, EventOut, MemoryOut
from mnemoledger.commands.service.http.auth import Authenticated
from mnemoledger.commands.service.http.paths import MEMORY_ID_PARAM, MemoryId
from mnemoledger.commands.service.http.requests import (
    KEY,
    VISIBLE,
    AddMemoriesRequest,
    Content,
    Identifier,
    KeyText,
    LinkRequest,
    RequestBody,
    Tag,
    TTLRequest,
    UpdateMemoryRequest,
)
from mnemoledger.commands.service.memory_tool import (
    ForgetResult,
    NeboLayer,
    clear_prefix,
    delete_key,
    effective_namespace,
    namespace_prefix,
)
from mnemoledger.commands.service.scoped import API_SOURCE, RecallResult, ScopedMemory, UserStats
from mnemoledger.commands.write.ingest_api import StoreResult
from mnemoledger.ledger.policy import (
    LATEST_DEFAULT_LIMIT,
    LATEST_MAX_LIMIT,
    MAX_CONTENT_CHARS,
    MAX_ID_CHARS,
    MAX_LIST_LIMIT,
    MAX_SOURCE_CHARS,
    MAX_TAGS,
    SEARCH_MAX_K,
    TRASH_DEFAULT_LIMIT,
    ListOrder,
)

router = APIRouter(prefix="/memories", tags=["memories"])
seed_paths = APIRouter(tags=["memories"])
"""The same operations under the paths the seeds write (`/memory/{id}/history`)."""


@router.post(
    "",
    status_code=201,
    responses={
        202: {
            "model": AddResult,
            "description": "Recorded, not yet processed (`wait` false): `pending` is true and "
            "`memories` empty; `GET /commands/{command_id}` tells when it is done.",
        }
    },
)
async def add_memories(
    body: AddMemoriesRequest,
    caller: Authenticated,
    response: Response,
    wait: Annotated[
        bool | None,
        Query(description="false: answer 202 once recorded (as the body's `wait`)."),
    ] = None,
) -> AddResult:
    """Remember one or more contents for a user in one atomic write:
    related memories are reconstructed together with them, replaced ones superseded,
    duplicates reinforced. The key's agent and actor are recorded on every event.
    With `wait` false (in the body or the query) the answer is 202 as soon as the request
    is recorded; the server decides the memories afterwards, and every read it serves
    waits for them."""
    waiting = body.wait and wait is not False
    if not waiting:
        response.status_code = 202
    return await caller.run(
        lambda scoped: scoped.add(
            body.contents,
            user=body.user_id,
            agent=body.agent_id,
            thread=body.thread_id,
            kind=body.kind,
            tags=body.tags,
            source=body.source,
            namespace=body.namespace,
            importance=body.importance,
            evidence=body.evidence,
            category=body.category,
            metadata=body.metadata,
            role=body.role,
            keep_all=body.keep_all,
            at=body.at,
            wait=waiting,
        )
    )


class StoreByKeyRequest(RequestBody):
    """`PUT /memories/by-key`: a value under a key for one user (an upsert). Keys of
    `tacit/user` (name, location, timezone, occupation, ...) build the user's profile."""

    user_id: Identifier
    key: str = Field(
        max_length=MAX_CONTENT_CHARS,
        pattern=KEY,
        description="At most 128 characters once normalized (longer is a 400).",
    )
    value: Content = Field(description="At most 2048 characters.")
    namespace: Identifier = "default"
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    agent_id: Identifier | None = None
    thread_id: Identifier | None = None
    source: str = Field(
        default=API_SOURCE, min_length=1, max_length=MAX_SOURCE_CHARS, pattern=VISIBLE
    )


@router.put("/by-key")
async def store_by_key(body: StoreByKeyRequest, caller: Authenticated) -> StoreResult:
    """Store a value under a key: a new key adds a memory (`action`
    "added"), a new value updates the key's memory, whose history keeps the old one
    ("updated"), the same value changes nothing ("unchanged"). A key over 128 characters, a
    value over 2048 or a value that looks like an instruction to the assistant is refused
    (400); a user or a category outside the key is 403."""
    return await caller.run(
        lambda scoped: scoped.store(
            body.key,
            body.value,
            user=body.user_id,
            namespace=body.namespace,
            agent=body.agent_id,
            thread=body.thread_id,
            tags=body.tags,
            source=body.source,
        )
    )


@router.get("")
async def list_memories(
    caller: Authenticated,
    user_id: Annotated[Identifier, Query()],
    layer: Annotated[Literal["buffer", "working", "core"] | None, Query()] = None,
    state: Annotated[Literal["active", "forgotten", "superseded"] | None, Query()] = None,
    namespace: Annotated[
        str | None,
        Query(max_length=MAX_ID_CHARS, description="Only namespaces starting with this."),
    ] = None,
    order: Annotated[
        ListOrder, Query(description="id, or access: most often served first.")
    ] = "id",
    limit: Annotated[int | None, Query(ge=1, le=MAX_LIST_LIMIT)] = None,
) -> list[MemoryOut]:
    """A user's current memories in the key's categories, ordered by id (or most often
    served first), under a namespace prefix, at most `limit`."""

    def listing(scoped: ScopedMemory) -> list[MemoryOut]:
        visible = {m.id for m in scoped.list(user=user_id, layer=layer, state=state)}
        ordered = scoped.memory.list(
            user=user_id, layer=layer, state=state, namespace=namespace, order=order
        )
        return [m for m in ordered if m.id in visible][:limit]

    return await caller.run(listing)


NamespacePrefix = Annotated[
    str, Query(max_length=MAX_ID_CHARS, description="Namespace prefix, e.g. tacit or daily.")
]
Layer = Annotated[
    NeboLayer | None,
    Query(description="With namespace, read as layer/namespace (as a store by key files it)."),
]


@router.get("/by-key")
async def recall_by_key(
    caller: Authenticated,
    user_id: Annotated[Identifier, Query()],
    key: Annotated[KeyText, Query()],
    k: Annotated[int, Query(ge=1, le=SEARCH_MAX_K)] = 5,
) -> RecallResult:
    """Recall by key: the memory stored under `key` (matched loosely: `Code_Style` finds
    `code-style`), else a search with the key as the query; the memories in full, each
    counted as served."""
    return await caller.run(lambda scoped: scoped.recall(user=user_id, key=key, k=k))


@router.delete("/by-key")
async def delete_by_key(
    caller: Authenticated,
    user_id: Annotated[Identifier, Query()],
    key: Annotated[KeyText, Query()],
    namespace: Annotated[Identifier | None, Query()] = None,
    layer: Layer = None,
) -> ForgetResult:
    """Delete by key: forget the memories stored under `key`, in one namespace (or
    `layer/namespace`) or in all of them. Each is a forget event: `restore` brings it
    back."""
    only = effective_namespace(layer, namespace) if layer or namespace else None
    return await caller.run(lambda scoped: delete_key(scoped, user_id, key, only))


class ClearRequest(RequestBody):
    """`POST /memories/clear`: forget every memory under a namespace prefix, given by a
    `namespace` or a `layer` (or both: `layer/namespace`)."""

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["namespace"], "properties": {"namespace": {"minLength": 1}}},
                {"required": ["layer"], "properties": {"layer": {"type": "string"}}},
            ]
        }
    )

    user_id: Identifier
    namespace: str = Field(default="", max_length=MAX_ID_CHARS)
    layer: NeboLayer | None = None

    @model_validator(mode="after")
    def _prefix(self) -> ClearRequest:
        if not self.namespace and self.layer is None:
            raise ValueError("clear needs a namespace or a layer")
        return self


@router.post("/clear")
async def clear_namespace(body: ClearRequest, caller: Authenticated) -> ForgetResult:
    """Clear a namespace: forget every memory of the user whose namespace starts with
    `namespace` (or `layer/namespace`), e.g. `daily` clears every day. Each is a forget
    event: `restore` brings it back one by one."""
    prefix = namespace_prefix(body.layer, body.namespace)
    return await caller.run(lambda scoped: clear_prefix(scoped, body.user_id, prefix))


@router.get("/latest")
async def latest_memories(
    caller: Authenticated,
    user_id: Annotated[Identifier, Query()],
    limit: Annotated[int, Query(ge=1, le=LATEST_MAX_LIMIT)] = LATEST_DEFAULT_LIMIT,
) -> list[MemoryOut]:
    """The user's most recently written active memories (added,
    updated or merged) in the key's categories, newest first."""
    return await caller.run(lambda scoped: scoped.latest(user=user_id, limit=limit))


@router.get(f"/{MEMORY_ID_PARAM}")
async def get_memory(memory_id: MemoryId, caller: Authenticated) -> MemoryOut:
    """One memory, current state."""
    return await caller.run(lambda scoped: scoped.get(memory_id))


@router.patch(f"/{MEMORY_ID_PARAM}")
async def update_memory(
    memory_id: MemoryId, body: UpdateMemoryRequest, caller: Authenticated
) -> MemoryOut:
    """Replace a memory's content, and its tags when given (UPDATE)."""
    return await caller.run(
        lambda scoped: scoped.update(memory_id, body.content, tags=body.tags, thread=body.thread_id)
    )


@router.post(f"/{MEMORY_ID_PARAM}/links")
async def link_memory(memory_id: MemoryId, body: LinkRequest, caller: Authenticated) -> EdgeOut:
    """Relate this memory to another of the same user (LINK)."""
    return await caller.run(
        lambda scoped: scoped.link(
            memory_id, body.target_id, link_type=body.type, strength=body.strength
        )
    )


@router.put(f"/{MEMORY_ID_PARAM}/ttl")
async def set_ttl(memory_id: MemoryId, body: TTLRequest, caller: Authenticated) -> MemoryOut:
    """Make the memory expire `days` from now (TTL)."""
    return await caller.run(lambda scoped: scoped.ttl(memory_id, body.days))


@router.delete(f"/{MEMORY_ID_PARAM}")
@router.post(f"/{MEMORY_ID_PARAM}/forget")
async def forget_memory(memory_id: MemoryId, caller: Authenticated) -> MemoryOut:
    """Soft-delete (also `DELETE /memories/{id}`): hidden from readers, its events kept;
    `restore` brings it back."""
    return await caller.run(lambda scoped: scoped.forget(memory_id))


@router.post(f"/{MEMORY_ID_PARAM}/restore")
async def restore_memory(memory_id: MemoryId, caller: Authenticated) -> MemoryOut:
    """Bring back a soft-deleted memory (RESTORE)."""
    return await caller.run(lambda scoped: scoped.restore(memory_id))


@router.get(f"/{MEMORY_ID_PARAM}/history")
@seed_paths.get(f"/memory/{MEMORY_ID_PARAM}/history")
async def memory_history(memory_id: MemoryId, caller: Authenticated) -> list[EventOut]:
    """Every event of the memory, oldest first: who did what, when, through which agent."""
    return await caller.run(lambda scoped: scoped.history(memory_id))


@seed_paths.get("/stats")
async def user_stats(caller: Authenticated, user_id: Annotated[Identifier, Query()]) -> UserStats:
    """The user's memories in the key's categories, counted by layer,
    state and kind (as `mnemoledger stats` counts the whole log)."""
    return await caller.run(lambda scoped: scoped.stats(user=user_id))


@seed_paths.get("/trash")
async def trash(
    caller: Authenticated,
    user_id: Annotated[Identifier, Query()],
    limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = TRASH_DEFAULT_LIMIT,
) -> list[MemoryOut]:
    """The trash: the user's forgotten memories in the key's categories, the most
    recently forgotten first, at most `limit`; `POST /memories/{id}/restore` brings one
    back."""
    return await caller.run(lambda scoped: scoped.trash(user=user_id, limit=limit))
