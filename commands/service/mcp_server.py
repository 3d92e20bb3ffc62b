"""`mnemoledger mcp`: the memory as MCP tools over stdio (official `mcp` SDK).

    mnemoledger mcp --user maya                          # local: no key, one user
    MNEMOLEDGER_API_KEY=mlk_... mnemoledger mcp          # or: mnemoledger mcp --key mlk_...

Tool names are letters, digits, `_` and `-` only (`^[a-zA-Z0-9_-]{1,64}$`), which every MCP
client accepts; seed 003 §6's `memory.query` is served as `query`.

- writes: `add`, `store` (Nebo's layer + namespace; a value by key is upserted), `update`,
  `forget`, `restore`, `write_note`, `remember` (a stable `log` note, no expiry) and
  `update_soul` (the one permanent `soul` note, replaced) from Luminary (seed 002), and
  Nebo's `delete` (by key) and `clear` (a namespace prefix), seed 004 §5; a delete or clear
  forgets, as events: the log keeps everything and `restore` brings a memory back;
- reads: `search`, `query` (seed 003 §6), `recall` (Nebo), `list` (a namespace prefix, most
  accessed first, at most 50: seed 004 §5), `get`, `history`, `delta` (seed 003 §1), `notes`.

Every tool is a thin call to `ScopedMemory`, the facade as one principal sees it. With a key
(from `mnemoledger keys create`) the principal is the key's agent, users and categories, as
on the HTTP API, re-checked on every call so a revoked key stops working at once. Without
one (`--user`, local stdio only) it is the home's owner acting for that one user: every
category, agent `mcp` unless `--agent` names another, the CLI's actor. Writes go through the
facade's verbs, so the injection screen (seed 004 §15) refuses the same contents it refuses
elsewhere. Failures come back as tool errors (`is_error`) whose text carries a stable code,
e.g. `user_not_allowed: ...`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import Field, TypeAdapter, ValidationError

from mnemoledger.commands.models import AddResult, EventOut, FoundMemory, MemoryOut
from mnemoledger.commands.recall.query import QueryResult
from mnemoledger.commands.recall.query_api import DeltaOut
from mnemoledger.commands.service.checkpoint_tools import add_checkpoint_tools
from mnemoledger.commands.service.http.errors import validation_message
from mnemoledger.commands.service.http.requests import (
    MAX_ADD_CONTENTS,
    SAID_AT_DESCRIPTION,
    Content,
    EvidenceId,
    Identifier,
    Metadata,
    QueryText,
    Role,
    SaidAt,
    Tag,
)
from mnemoledger.commands.service.keys import ApiKeyStore, InvalidKey, Principal
from mnemoledger.commands.service.memory_tool import (
    LIST_MAX,
    ForgetResult,
    ListResult,
    NeboLayer,
    clear_prefix,
    delete_key,
    effective_namespace,
    list_prefix,
    namespace_prefix,
)
from mnemoledger.commands.service.scoped import (
    API_SOURCE,
    Forbidden,
    RecallResult,
    ScopedMemory,
    category_of,
)
from mnemoledger.commands.service.serial import FacadeThread
from mnemoledger.commands.write.categories import CategoryNotAllowed, UnknownAgent
from mnemoledger.commands.write.ingest_api import StoreResult
from mnemoledger.commands.write.notes import DEFAULT_NOTE_CONFIDENCE, LOG, SOUL
from mnemoledger.commands.write.notes_api import NoteResult
from mnemoledger.ledger.errors import InvalidInput, InvalidTransition, LedgerError, MemoryNotFound
from mnemoledger.ledger.policy import (
    DEFAULT_IMPORTANCE,
    MAX_BUDGET_TOKENS,
    MAX_EVIDENCE_ITEMS,
    MAX_TAGS,
    NORMAL,
    PERMANENT,
    QUERY_DEFAULT_TOP_K,
    QUERY_OVERFETCH,
    SEARCH_MAX_K,
    STABLE,
)
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.layers import effective_category

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

SEARCH_DEFAULT_RESULTS = 10
"""Seed 004 §5: `search` returns at most 10 results (more on request here)."""

LOCAL_AGENT = "mcp"
"""The agent a keyless local server records and queries as, unless `--agent` names one."""

INSTRUCTIONS = """Long-term memory about the user, recorded in an auditable event log.
Call `query` before answering about the user, `add` to remember durable facts, `search` or
`list` to look around, `update` / `forget` to correct, `history` to see how a memory
changed, `delta` for what changed in this thread since you last looked. Nothing is ever
erased by these tools: a forgotten memory can be restored."""

UserId = Annotated[
    Identifier | None,
    Field(description="The user; may be left out when the server acts for one user."),
]
LayerName = Annotated[
    NeboLayer | None,
    Field(description="Combined with namespace as `layer/namespace`, as `store` files it."),
]
MemoryId = Annotated[Identifier, Field(description="A memory id, as returned by other tools.")]
Said = Annotated[SaidAt | None, Field(description=SAID_AT_DESCRIPTION)]
"""`add`'s and `store`'s `at` (`MnemoLedger.add`)."""


@dataclass(frozen=True)
class LocalPrincipal(Principal):
    """The home's owner on a keyless local stdio server: one user, every category."""

    acting_as: str = "mcp"

    @property
    def actor(self) -> str:
        return self.acting_as


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


class CheckedTool(Tool):
    """A tool whose arguments, when they do not match its schema, are refused with a short
    message naming each wrong argument (`bad_request: k: Input should be greater than or
    equal to 1`), not pydantic's report with its links."""

    async def run(
        self,
        arguments: dict[str, Any],
        context: Any,
        convert_result: bool = False,
    ) -> Any:
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in e['loc']) or 'arguments'}: "
                f"{validation_message(e)}"
                for e in error.errors()
            )
            raise ToolError(f"bad_request: {problems}") from None
        return await super().run(arguments, context, convert_result)


def published_as_sent(tool: Tool) -> Tool:
    """The tool with its output schema in serialization mode. The SDK derives the schema in
    validation mode but sends fields by their serialization alias (a link's `from`), so
    clients that validate results (the official one does) would refuse any memory with
    links."""
    metadata = tool.fn_metadata
    if metadata.output_model is not None:
        metadata.output_schema = TypeAdapter(metadata.output_model).json_schema(
            mode="serialization"
        )
    return tool


def build_server(
    facade: FacadeThread,
    principal_of: Callable[[], Principal],
    default_user: str | None = None,
) -> MCPServer[Any]:
    """The MCP server whose tools act as the principal `principal_of` returns on each call
    (a key's, re-authenticated, or the local owner's) on `facade`."""
    tools: list[Tool] = []

    def tool(name: str, annotations: ToolAnnotations) -> Callable[[F], F]:
        def register(fn: F) -> F:
            registered = CheckedTool.from_function(fn, name=name, annotations=annotations)
            tools.append(published_as_sent(registered))
            return fn

        return register

    async def run(operation: Callable[[ScopedMemory], T]) -> T:
        try:
            principal = principal_of()
            return await facade.run(lambda memory: operation(ScopedMemory(memory, principal)))
        except LedgerError as error:
            raise _tool_error(error) from None

    def user_of(scoped: ScopedMemory, user_id: str | None) -> str:
        if user_id is not None:
            return user_id
        if default_user is not None:
            return default_user
        users = scoped.principal.users
        if len(users) != 1:
            raise InvalidInput(f"user_id is required: this key acts for {', '.join(users)}")
        return users[0]

    def noted(
        scoped: ScopedMemory,
        content: str,
        user_id: str | None,
        *,
        kind: str,
        stability: str | None,
        ttl_days: float | None = None,
        sensitivity: str = NORMAL,
        evidence: Sequence[str] = (),
        confidence: float = DEFAULT_NOTE_CONFIDENCE,
        tags: Sequence[str] = (),
        thread_id: str | None = None,
        category: str | None = None,
        job_id: str | None = None,
    ) -> NoteResult:
        """Luminary's writeNote (seed 002) as the principal: its user, agent, categories."""
        user = scoped.check_user(user_of(scoped, user_id))
        scoped.check_category(effective_category(category, "semantic", "", kind), "write")
        with scoped._acting() as memory:
            return memory.write_note(
                content,
                user=user,
                kind=kind,
                stability=stability,
                ttl_days=ttl_days,
                sensitivity=sensitivity,
                evidence=evidence,
                tags=tags,
                source=API_SOURCE,
                agent=scoped.principal.agent,
                thread=thread_id,
                confidence=confidence,
                category=category,
                job_id=job_id,
            )

    # query and recall read, but record what they served (RecallServed: access counts)
    recorded_read = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, open_world_hint=False
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    write = ToolAnnotations(destructive_hint=False, open_world_hint=False)
    # forgetting hides memories from every read (restore undoes it; the log keeps them)
    hiding = ToolAnnotations(destructive_hint=True, idempotent_hint=True, open_world_hint=False)

    # --- writes --------------------------------------------------------------------------

    @tool("add", annotations=write)
    async def add(
        contents: Annotated[
            list[Content],
            Field(min_length=1, max_length=MAX_ADD_CONTENTS, description="What to remember."),
        ],
        user_id: UserId = None,
        tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None,
        namespace: Identifier = "default",
        kind: Literal["semantic", "episodic", "procedural"] = "semantic",
        importance: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_IMPORTANCE,
        thread_id: Identifier | None = None,
        category: Annotated[
            Identifier | None,
            Field(description="File under this category (default: from kind and namespace)."),
        ] = None,
        evidence: Annotated[
            list[EvidenceId] | None,
            Field(
                max_length=MAX_EVIDENCE_ITEMS,
                description="The ids of the turns or messages the facts came from; every "
                "search hit of these memories reports them.",
            ),
        ] = None,
        role: Annotated[
            Role,
            Field(
                description="Who wrote the contents: `assistant` for your own advice to the "
                "user, `tool` for a fetched page or an API's answer, `document` for a file."
            ),
        ] = "user",
        metadata: Annotated[
            Metadata | None, Field(description="Flat metadata kept on every new memory.")
        ] = None,
        keep_all: Annotated[
            bool,
            Field(
                description="Store every content, even what reads as not worth keeping "
                "(greetings, thanks, questions; an assistant's remarks)."
            ),
        ] = False,
        at: Said = None,
        wait: Annotated[
            bool,
            Field(
                description="false: return as soon as the facts are recorded, with "
                "pending true and the command id; they are remembered moments later, "
                "before any later search of this server answers."
            ),
        ] = True,
    ) -> AddResult:
        """Remember one or more facts about the user in one write. Related memories are
        rewritten together with them, replaced ones superseded, duplicates reinforced
        instead of stored twice. `at` imports what was said earlier (e.g. an old chat).
        Text that tries to instruct an AI model is refused."""
        return await run(
            lambda scoped: scoped.add(
                contents,
                user=user_of(scoped, user_id),
                thread=thread_id,
                kind=kind,
                tags=tags or (),
                source=API_SOURCE,
                namespace=namespace,
                importance=importance,
                evidence=evidence,
                category=category,
                metadata=metadata,
                role=role,
                keep_all=keep_all,
                at=at,
                wait=wait,
            )
        )

    @tool("store", annotations=write)
    async def store(
        key: Annotated[
            Content | None,
            Field(
                description="Name to store the value under, e.g. timezone (at most 128 "
                "characters); the same key again replaces its value."
            ),
        ] = None,
        value: Annotated[
            Content | None,
            Field(description="The value for `key` (at most 2048 characters)."),
        ] = None,
        contents: Annotated[
            list[Content] | None,
            Field(
                min_length=1,
                max_length=MAX_ADD_CONTENTS,
                description="Without a key: what to remember, as `add` does.",
            ),
        ] = None,
        user_id: UserId = None,
        tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None,
        layer: Annotated[
            NeboLayer | None,
            Field(description="tacit (lasting preferences, style), daily (dated), entity."),
        ] = None,
        namespace: Identifier | None = None,
        kind: Literal["semantic", "episodic", "procedural"] = "semantic",
        thread_id: Identifier | None = None,
        category: Annotated[
            Identifier | None,
            Field(description="File under this category (default: from kind and namespace)."),
        ] = None,
        at: Said = None,
    ) -> StoreResult:
        """Remember `value` under `key` in `layer/namespace` (e.g. tacit/user, where name,
        location, timezone, occupation and the like build the user's profile;
        tacit/preferences; entity/people): a new key adds a memory, a new value replaces the
        key's (its history keeps the old one), the same value changes nothing. Without a key,
        `contents` are remembered as `add` does (`at` too), filed under `layer/namespace`.
        Text that tries to instruct an AI model is refused."""
        where = effective_namespace(layer, namespace)
        if key is not None or value is not None:
            if key is None or value is None or contents is not None:
                raise _tool_error(InvalidInput("give key and value, or contents without a key"))
            if category is not None or kind != "semantic" or at is not None:
                raise _tool_error(
                    InvalidInput("a value stored by key takes no kind, category or at")
                )
            return await run(
                lambda scoped: scoped.store(
                    key,
                    value,
                    user=user_of(scoped, user_id),
                    namespace=where,
                    thread=thread_id,
                    tags=tags or (),
                    source=API_SOURCE,
                )
            )
        if contents is None:
            raise _tool_error(InvalidInput("give key and value, or contents"))
        given = contents
        added = await run(
            lambda scoped: scoped.add(
                given,
                user=user_of(scoped, user_id),
                thread=thread_id,
                kind=kind,
                tags=tags or (),
                source=API_SOURCE,
                namespace=where,
                category=category,
                at=at,
            )
        )
        return StoreResult(**added.model_dump())

    @tool("update", annotations=write)
    async def update(
        memory_id: MemoryId,
        content: Content,
        tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None,
        thread_id: Identifier | None = None,
    ) -> MemoryOut:
        """Replace what a memory says (and its tags, if given); the previous text stays in
        its history."""
        return await run(
            lambda scoped: scoped.update(memory_id, content, tags=tags, thread=thread_id)
        )

    @tool("forget", annotations=hiding)
    async def forget(memory_id: MemoryId) -> MemoryOut:
        """Forget a memory: no longer searched or served, kept in the log; `restore`
        brings it back."""
        return await run(lambda scoped: scoped.forget(memory_id))

    @tool("restore", annotations=write)
    async def restore(memory_id: MemoryId) -> MemoryOut:
        """Bring back a forgotten memory."""
        return await run(lambda scoped: scoped.restore(memory_id))

    @tool("delete", annotations=hiding)
    async def delete(
        key: Annotated[str, Field(min_length=1, max_length=256, description="The key.")],
        namespace: Annotated[
            Identifier | None,
            Field(description="Only in this namespace (default: every namespace)."),
        ] = None,
        layer: LayerName = None,
        user_id: UserId = None,
    ) -> ForgetResult:
        """Forget the memories stored under a key (e.g. `code-style`, matched as
        `Code_Style` too), in one namespace or all of them. For one memory by id, use
        `forget`. Forgotten memories stay in the log and can be restored."""

        def matching(scoped: ScopedMemory) -> ForgetResult:
            only = effective_namespace(layer, namespace) if layer or namespace else None
            return delete_key(scoped, user_of(scoped, user_id), key, only)

        return await run(matching)

    @tool("clear", annotations=hiding)
    async def clear(
        namespace: Annotated[
            str,
            Field(
                max_length=256,
                description="Namespace prefix: `daily` clears daily/2025-07-01 and the rest.",
            ),
        ] = "",
        layer: LayerName = None,
        user_id: UserId = None,
    ) -> ForgetResult:
        """Forget every memory of the user whose namespace starts with `namespace` (or
        `layer/namespace`). Each is recorded as forgotten, stays in the log and can be
        restored one by one."""

        def clearing(scoped: ScopedMemory) -> ForgetResult:
            prefix = namespace_prefix(layer, namespace)
            return clear_prefix(scoped, user_of(scoped, user_id), prefix)

        return await run(clearing)

    @tool("write_note", annotations=write)
    async def write_note(
        content: Content,
        kind: Annotated[
            Literal["log", "summary", "rule", "soul", "agent", "user"],
            Field(
                description="log (what happened), summary, rule (reusable, needs evidence "
                "and confidence >= 0.8), soul (how you think), agent (who you are), user "
                "(who the user is); soul, agent and user replace the previous one."
            ),
        ],
        user_id: UserId = None,
        stability: Annotated[
            Literal["volatile", "stable", "permanent"] | None,
            Field(
                description="volatile expires after ttl_days (without one, it is merged with "
                "others after a week); permanent never expires."
            ),
        ] = None,
        ttl_days: Annotated[float | None, Field(gt=0)] = None,
        sensitivity: Literal["normal", "sensitive"] = "normal",
        evidence: Annotated[list[Tag], Field(max_length=50)] | None = None,
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_NOTE_CONFIDENCE,
        tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None,
        thread_id: Identifier | None = None,
        category: Annotated[
            Identifier | None,
            Field(description="File under this category (default: from the kind)."),
        ] = None,
        job_id: Annotated[
            Identifier | None,
            Field(description="The job or run writing the note, kept with it."),
        ] = None,
    ) -> NoteResult:
        """Write a note: a log entry, summary, rule or profile of the user or yourself."""
        return await run(
            lambda scoped: noted(
                scoped,
                content,
                user_id,
                kind=kind,
                stability=stability,
                ttl_days=ttl_days,
                sensitivity=sensitivity,
                evidence=evidence or (),
                confidence=confidence,
                tags=tags or (),
                thread_id=thread_id,
                category=category,
                job_id=job_id,
            )
        )

    @tool("remember", annotations=write)
    async def remember(
        content: Content,
        user_id: UserId = None,
        kind: Annotated[
            Literal["log", "summary", "rule"],
            Field(
                description="log (default): something to keep; summary; rule (reusable, "
                "needs evidence and confidence >= 0.8)."
            ),
        ] = LOG,
        evidence: Annotated[list[Tag], Field(max_length=50)] | None = None,
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_NOTE_CONFIDENCE,
        tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None,
        thread_id: Identifier | None = None,
    ) -> NoteResult:
        """Remember something as a note (a log entry unless you say summary or rule) that
        stays until it is replaced or merged: stable, with no expiry."""
        return await run(
            lambda scoped: noted(
                scoped,
                content,
                user_id,
                kind=kind,
                stability=STABLE,
                evidence=evidence or (),
                confidence=confidence,
                tags=tags or (),
                thread_id=thread_id,
            )
        )

    @tool("update_soul", annotations=write)
    async def update_soul(
        content: Annotated[
            Content, Field(description="Your reasoning protocol and behavioural principles.")
        ],
        user_id: UserId = None,
        thread_id: Identifier | None = None,
    ) -> NoteResult:
        """Replace your soul: how you think (your reasoning steps and principles). It is
        permanent; the previous soul is superseded and stays in its history."""
        return await run(
            lambda scoped: noted(
                scoped, content, user_id, kind=SOUL, stability=PERMANENT, thread_id=thread_id
            )
        )

    # --- reads ---------------------------------------------------------------------------

    @tool("search", annotations=read_only)
    async def search(
        query: QueryText,
        user_id: UserId = None,
        namespace: Annotated[
            str | None, Field(max_length=256, description="Only namespaces with this prefix.")
        ] = None,
        layer: LayerName = None,
        k: Annotated[int, Field(ge=1, le=SEARCH_MAX_K)] = SEARCH_DEFAULT_RESULTS,
        expand: Annotated[
            bool | None, Field(description="Also search LLM rephrasings: true always, false never.")
        ] = None,
        rerank: Annotated[bool, Field(description="Let the LLM reorder the results.")] = False,
    ) -> list[FoundMemory]:
        """Find the user's memories matching the words or the meaning of `query`, best
        first, with their scores and where each came from (evidence, thread, agent,
        created time)."""

        def searching(scoped: ScopedMemory) -> list[FoundMemory]:
            user = user_of(scoped, user_id)
            prefix = namespace_prefix(layer, namespace)
            if not prefix:
                hits = scoped.search(query, user=user, k=k, expand=expand, rerank=rerank)
                return [h.found() for h in hits]
            fetch = min(SEARCH_MAX_K, k * QUERY_OVERFETCH)
            hits = scoped.search(query, user=user, k=fetch, expand=expand, rerank=rerank)
            rows = scoped.memory.layers.get_many([h.id for h in hits])
            kept = [h for h in hits if h.id in rows and rows[h.id].namespace.startswith(prefix)]
            return [h.found() for h in kept[:k]]

        return await run(searching)

    @tool("query", annotations=recorded_read)
    async def query(
        query: QueryText,
        user_id: UserId = None,
        categories: Annotated[
            list[Identifier] | None,
            Field(description="Only these categories (default: all you may read)."),
        ] = None,
        filters: Annotated[
            dict[str, Any] | None,
            Field(
                description="agent_id, run_id, actor_id, role, pinned, importance_min / "
                "importance_max (0-1), updated_after / updated_before (ISO dates)."
            ),
        ] = None,
        top_k: Annotated[int, Field(ge=1, le=SEARCH_MAX_K)] = QUERY_DEFAULT_TOP_K,
        return_mode: Literal["bullets", "full"] = "bullets",
        budget_tokens: Annotated[int | None, Field(ge=1, le=MAX_BUDGET_TOKENS)] = None,
        threshold: Annotated[float | None, Field(ge=-1.0, le=1.0)] = None,
        thread: Identifier | None = None,
        since_rev: Annotated[int | None, Field(ge=0)] = None,
        fusion: Annotated[
            Literal["rrf", "weighted", "engram"] | None,
            Field(description="How vector and keyword matches combine (default: the server's)."),
        ] = None,
        expand: Annotated[
            bool | None, Field(description="Also search LLM rephrasings: true always, false never.")
        ] = None,
        rerank: Annotated[bool, Field(description="Let the LLM reorder the results.")] = False,
        dry: Annotated[bool, Field(description="Do not count an access to the results.")] = False,
    ) -> QueryResult:
        """What you may know about the user for this question, best first, as bullets
        (`[category] text`) or full memories, within a token budget if given. With
        `thread`, a header of what changed since you last looked there comes first."""

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
                "fusion": fusion,
                "expand": expand,
                "rerank": rerank,
                "dry": dry,
            }
            return scoped.query(request)

        return await run(answer)

    @tool("recall", annotations=recorded_read)
    async def recall(
        key: Annotated[str | None, Field(max_length=256)] = None,
        query: QueryText | None = None,
        user_id: UserId = None,
        k: Annotated[int, Field(ge=1, le=50)] = 5,
    ) -> RecallResult:
        """Recall by key (matched loosely: `Code_Style` finds `code-style`), falling back
        to a search with the key or `query`; returns the memories in full."""
        return await run(
            lambda scoped: scoped.recall(user=user_of(scoped, user_id), key=key, query=query, k=k)
        )

    @tool("list", annotations=read_only)
    async def list_memories(
        namespace: Annotated[
            str,
            Field(max_length=256, description="Namespace prefix, e.g. `tacit` (default: all)."),
        ] = "",
        layer: LayerName = None,
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=LIST_MAX)] = LIST_MAX,
    ) -> ListResult:
        """The user's memories under a namespace prefix, most often used first, at most
        50, each with its access count."""

        def listing(scoped: ScopedMemory) -> ListResult:
            prefix = namespace_prefix(layer, namespace)
            return list_prefix(scoped, user_of(scoped, user_id), prefix, limit)

        return await run(listing)

    @tool("get", annotations=read_only)
    async def get(memory_id: MemoryId) -> MemoryOut:
        """One memory as it is now: content, namespace, tags, state, links."""
        return await run(lambda scoped: scoped.get(memory_id))

    @tool("history", annotations=read_only)
    async def history(memory_id: MemoryId) -> list[EventOut]:
        """Every event of one memory, oldest first: what changed, when, by which agent."""
        return await run(lambda scoped: scoped.history(memory_id))

    @tool("delta", annotations=read_only)
    async def delta(
        thread: Identifier,
        since: Annotated[int | None, Field(ge=0)] = None,
        user_id: UserId = None,
    ) -> DeltaOut:
        """What changed in the user's memories for a thread: its revision and the latest
        changes since `since`, or since you were last served there."""
        return await run(lambda scoped: scoped.delta(thread, since, user=user_of(scoped, user_id)))

    @tool("notes", annotations=read_only)
    async def notes(
        user_id: UserId = None,
        kind: Literal["log", "summary", "rule", "soul", "agent", "user"] | None = None,
        tags: Annotated[list[Tag] | None, Field(description="Any of these tags.")] = None,
        limit: Annotated[int, Field(ge=1, le=LIST_MAX)] = 20,
    ) -> list[MemoryOut]:
        """The user's current notes, newest first (expired and replaced ones left out);
        sensitive ones are marked so."""

        def reading(scoped: ScopedMemory) -> list[MemoryOut]:
            user = scoped.check_user(user_of(scoped, user_id))
            found = scoped.memory.notes(user, kind, tags, limit)
            return [n for n in found if scoped.may_read(category_of(n))]

        return await run(reading)

    add_checkpoint_tools(tool, run, user_of)  # save_checkpoint, load_checkpoint (seed 003 §15)

    return MCPServer(
        "mnemoledger", instructions=INSTRUCTIONS, version=version("mnemoledger"), tools=tools
    )


def serve_stdio(
    open_facade: Callable[[], MnemoLedger],
    key: str | None = None,
    *,
    user: str | None = None,
    agent: str | None = None,
) -> None:
    """Serve the tools on stdin/stdout until the client leaves: as `key` (refused at start
    if invalid; `user`, if given, must be one of its users), else as the home's owner for
    `user` alone (local only: stdio has no other caller)."""
    facade = FacadeThread(open_facade)
    try:
        principal_of: Callable[[], Principal]
        if key is not None:
            keys: ApiKeyStore = facade.call(lambda memory: memory.api_key_store)
            principal = keys.authenticate(key)  # refuse to start with a bad key
            if user is not None and user not in principal.users:
                raise InvalidInput(
                    f"key {principal.key_id} may not act for user {user!r}; "
                    f"its users: {', '.join(principal.users)}"
                )
            principal_of = lambda: keys.authenticate(key)  # noqa: E731
        else:
            if user is None:
                raise InvalidInput("a local server needs a user (--user), or give a key")
            owner = LocalPrincipal(
                key_id="local",
                agent=str(identifier("agent", agent or LOCAL_AGENT)),
                users=(str(identifier("user", user)),),
                categories=None,
                admin=True,
                acting_as=facade.call(lambda memory: memory.actor),
            )
            principal_of = lambda: owner  # noqa: E731
        build_server(facade, principal_of, default_user=user).run("stdio")
    finally:
        facade.close()
