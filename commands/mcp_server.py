"""`mnemoledger mcp`: the memory as MCP tools over stdio (official `mcp` SDK, issue 8).

    MNEMOLEDGER_API_KEY=mlk_... mnemoledger mcp          # or: mnemoledger mcp --key mlk_...

Tools, after the Nebo memory tool's actions (seed 004 §5) and seed 003's single tool:

- `memory.query`: seed 003 §6, the agent's scoped recall (header, bullets or full, budget);
- `store`: remember contents (HAEMA add(): reconstruction, dedup); Nebo's `layer` +
  `namespace` give the effective namespace (`tacit/preferences`, `daily/2025-07-01`, ...);
- `recall`: the memories with exactly this key (normalized as Nebo does), else the best
  `memory.query` matches for the key or the query;
- `history`: every event of one memory, oldest first;
- `delta`: the delta header of a thread (seed 003 §1).

The key (API key from `mnemoledger keys create`) fixes the agent, the users and the
categories, exactly as on the HTTP API; it is re-checked on every call, so a revoked key
stops working at once. `user_id` may be left out when the key acts for one user only.
Failures come back as tool errors (`is_error`) whose text carries a stable code, e.g.
`user_not_allowed: ...`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from commands.categories import CategoryNotAllowed, UnknownAgent
from commands.http.requests import MAX_ADD_CONTENTS, Content, Identifier, QueryText, Tag
from commands.keys import ApiKeyStore, InvalidKey
from commands.models import AddResult, EventOut
from commands.query import QueryResult
from commands.query_api import DeltaOut
from commands.scoped import API_SOURCE, Forbidden, RecallResult, ScopedMemory
from commands.serial import FacadeThread
from ledger.errors import InvalidInput, InvalidTransition, MemoryNotFound
from ledger.policy import MAX_BUDGET_TOKENS, MAX_TAGS, QUERY_DEFAULT_TOP_K, SEARCH_MAX_K

if TYPE_CHECKING:
    from commands.facade import MnemoLedger

T = TypeVar("T")

NEBO_LAYERS = ("tacit", "daily", "entity")
"""Seed 004 §2: Nebo's three namespace layers."""

INSTRUCTIONS = """Long-term memory for this agent, recorded in an auditable event log.
Call `memory.query` before answering about the user, `store` to remember durable facts,
`recall` for a known key, `history` to see how a memory changed, `delta` for what changed
in this thread since you last looked."""


def effective_namespace(layer: str | None, namespace: str | None) -> str:
    """Seed 004 §2: `layer + "/" + namespace` (unless they are the same); the layer alone;
    else `default`."""
    if layer and namespace and namespace != layer:
        return f"{layer}/{namespace}"
    return layer or namespace or "default"


def _tool_error(error: Exception) -> ToolError:
    if isinstance(error, InvalidKey):
        code = "unauthorized"
    elif isinstance(error, Forbidden):
        code = error.code
    elif isinstance(error, UnknownAgent):
        code = "unknown_agent"
    elif isinstance(error, CategoryNotAllowed):
        code = "category_not_allowed"
    elif isinstance(error, MemoryNotFound):
        code = "not_found"
    elif isinstance(error, InvalidTransition):
        code = "conflict"
    else:
        code = "bad_request"
    return ToolError(f"{code}: {error}")


def build_server(facade: FacadeThread, keys: ApiKeyStore, key: str) -> MCPServer[Any]:
    """The MCP server whose tools act as `key` on `facade`."""
    server: MCPServer[Any] = MCPServer("mnemoledger", instructions=INSTRUCTIONS)

    async def run(operation: Callable[[ScopedMemory], T]) -> T:
        try:
            principal = keys.authenticate(key)
            return await facade.run(lambda memory: operation(ScopedMemory(memory, principal)))
        except (InvalidKey, InvalidInput, MemoryNotFound, InvalidTransition, Forbidden) as error:
            raise _tool_error(error) from None

    def user_of(scoped: ScopedMemory, user_id: str | None) -> str:
        if user_id is not None:
            return user_id
        users = scoped.principal.users
        if len(users) != 1:
            raise InvalidInput(f"user_id is required: this key acts for {', '.join(users)}")
        return users[0]

    # memory.query and recall read, but record what they served (RecallServed)
    recorded_read = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, open_world_hint=False
    )

    @server.tool(name="memory.query", annotations=recorded_read)
    async def memory_query(
        query: QueryText,
        user_id: Identifier | None = None,
        categories: Annotated[
            list[Identifier] | None,
            Field(description="A subset of your allowlist; default: all but procedural."),
        ] = None,
        filters: Annotated[
            dict[str, Any] | None,
            Field(
                description="Seed 003 §6 filters: agent_id, run_id, actor_id, role, pinned, "
                "importance_min/max (0-1), updated_after/before (ISO dates)."
            ),
        ] = None,
        top_k: Annotated[int, Field(ge=1, le=SEARCH_MAX_K)] = QUERY_DEFAULT_TOP_K,
        return_mode: Literal["bullets", "full"] = "bullets",
        budget_tokens: Annotated[int | None, Field(ge=1, le=MAX_BUDGET_TOKENS)] = None,
        threshold: Annotated[float | None, Field(ge=-1.0, le=1.0)] = None,
        thread: Identifier | None = None,
        since_rev: Annotated[int | None, Field(ge=0)] = None,
    ) -> QueryResult:
        """memory.query (seed 003 §6): what you may know about the user for this question,
        best first, as bullets (`[category] text`) or full memories; with `thread`, a delta
        header of what changed since you last looked comes first. Your key's agent
        allowlist and categories apply; the answer is recorded (access counts)."""

        def answer(scoped: ScopedMemory) -> QueryResult:
            request: dict[str, Any] = {
                "query": query,
                "categories": categories,
                "filters": {**(filters or {}), "user_id": user_of(scoped, user_id)},
                "top_k": top_k,
                "return": return_mode,
                "budget_tokens": budget_tokens,
                "threshold": threshold,
                "thread": thread,
                "since_rev": since_rev,
            }
            return scoped.query(request)

        return await run(answer)

    @server.tool(name="store", annotations=ToolAnnotations(open_world_hint=False))
    async def store(
        contents: Annotated[
            list[Content],
            Field(min_length=1, max_length=MAX_ADD_CONTENTS, description="What to remember."),
        ],
        user_id: Identifier | None = None,
        tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None,
        layer: Annotated[
            Literal["tacit", "daily", "entity"] | None,
            Field(description="Nebo layer: tacit (preferences), daily (dated), entity."),
        ] = None,
        namespace: Identifier | None = None,
        kind: Literal["semantic", "episodic", "procedural"] = "semantic",
        thread_id: Identifier | None = None,
        category: Annotated[
            Identifier | None,
            Field(description="File under this category, one of the key's (seed 003 §5)."),
        ] = None,
    ) -> AddResult:
        """Remember one or more facts about the user in one write: related memories are
        reconstructed with them, replaced ones superseded, duplicates reinforced instead of
        stored twice. The namespace is `layer/namespace` (Nebo). `category` must be one the
        key may write (default: derived from kind and namespace)."""
        return await run(
            lambda scoped: scoped.add(
                contents,
                user=user_of(scoped, user_id),
                thread=thread_id,
                kind=kind,
                tags=tags or (),
                source=API_SOURCE,
                namespace=effective_namespace(layer, namespace),
                category=category,
            )
        )

    @server.tool(name="recall", annotations=recorded_read)
    async def recall(
        key: Annotated[str | None, Field(max_length=256)] = None,
        query: QueryText | None = None,
        user_id: Identifier | None = None,
        k: Annotated[int, Field(ge=1, le=50)] = 5,
    ) -> RecallResult:
        """Recall by key (exact, normalized: `Code_Style` = `code-style`), falling back to
        a search with the key or `query`; returns the memories with their metadata."""
        return await run(
            lambda scoped: scoped.recall(user=user_of(scoped, user_id), key=key, query=query, k=k)
        )

    @server.tool(name="history", annotations=ToolAnnotations(read_only_hint=True))
    async def history(memory_id: Identifier) -> list[EventOut]:
        """Every event of one memory, oldest first: what changed, when, by which agent."""
        return await run(lambda scoped: scoped.history(memory_id))

    @server.tool(name="delta", annotations=ToolAnnotations(read_only_hint=True))
    async def delta(
        thread: Identifier,
        since: Annotated[int | None, Field(ge=0)] = None,
        user_id: Identifier | None = None,
    ) -> DeltaOut:
        """The delta header (seed 003 §1): the thread's revision and the latest memory
        changes since `since`, or since you were last served in this thread."""
        return await run(lambda scoped: scoped.delta(thread, since, user=user_of(scoped, user_id)))

    return server


def serve_stdio(open_facade: Callable[[], MnemoLedger], key: str) -> None:
    """Authenticate `key`, then serve the tools on stdin/stdout until the client leaves."""
    facade = FacadeThread(open_facade)
    try:
        keys = facade.call(lambda memory: memory.api_key_store)
        keys.authenticate(key)  # refuse to start with a bad key
        build_server(facade, keys, key).run("stdio")
    finally:
        facade.close()
