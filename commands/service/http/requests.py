"""Request bodies of the HTTP API; the responses are `commands.models` (shared with the
facade and the CLI's --json). Limits are part of the schema, so OpenAPI documents them and
an oversized field is a 422 before anything runs:

- a request body: at most `MAX_BODY_BYTES` (413 beyond);
- `POST /memories`: at most `MAX_ADD_CONTENTS` contents of at most `MAX_CONTENT_CHARS`
  characters each (seed 001 §2: content <= 8192, tags <= 20, source <= 64);
- queries: at most `MAX_QUERY_CHARS` characters, `top_k`/`k` at most `SEARCH_MAX_K`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemoledger.commands.recall.query import QueryFilters
from mnemoledger.commands.service.scoped import API_SOURCE
from mnemoledger.ledger.policy import (
    DEFAULT_IMPORTANCE,
    DEFAULT_LINK_STRENGTH,
    DEFAULT_LINK_TYPE,
    MAX_BUDGET_TOKENS,
    MAX_CONTENT_CHARS,
    MAX_ID_CHARS,
    MAX_POSITION,
    MAX_QUERY_CHARS,
    MAX_SOURCE_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TTL_DAYS,
    QUERY_DEFAULT_RETURN,
    QUERY_DEFAULT_TOP_K,
    SEARCH_DEFAULT_K,
    SEARCH_MAX_K,
)

MAX_ADD_CONTENTS = 32
"""Not in the seeds: contents of one `POST /memories` (one reconstruction pass each call)."""

MAX_BODY_BYTES = 1 << 20
"""Not in the seeds: 1 MiB per request body, room for 32 contents of 8192 characters."""

Identifier = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=r"^\S+$")]
NOT_BLANK = r"\S"
"""A text with a character other than white space: "" and "   " are refused alike (422)."""
Content = Annotated[str, Field(max_length=MAX_CONTENT_CHARS, pattern=NOT_BLANK)]
Tag = Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]
QueryText = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
Kind = Literal["semantic", "episodic", "procedural"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AddMemoriesRequest(_Body):
    """`POST /memories`: add one or more contents for one user (one atomic
    write). `agent_id`, when given, must be the key's agent; every write records it."""

    contents: list[Content] = Field(min_length=1, max_length=MAX_ADD_CONTENTS)
    user_id: Identifier
    agent_id: Identifier | None = None
    thread_id: Identifier | None = None
    kind: Kind = "semantic"
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    source: str = Field(default=API_SOURCE, min_length=1, max_length=MAX_SOURCE_CHARS)
    namespace: Identifier = "default"
    importance: float = Field(default=DEFAULT_IMPORTANCE, ge=0.0, le=1.0)
    category: Identifier | None = Field(
        default=None,
        description="File the memories under this category, one of the key's "
        "(default: derived from kind and namespace); another is a 403 naming the key's.",
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="Free-form metadata kept on every new memory."
    )
    layer: Literal["buffer", "working", "core"] | None = Field(
        default=None,
        description="Accepted for clients that name a layer, and ignored: every write enters the "
        "buffer layer; consolidation promotes what earns it.",
    )
    wait: bool = Field(
        default=True,
        description="false: answer 202 with the `command_id` once the request is recorded; "
        "the memories are decided afterwards (`GET /commands/{command_id}`). Same as "
        "`?wait=false`.",
    )


class UpdateMemoryRequest(_Body):
    """`PATCH /memories/{id}`: replace the content (and the tags, when given)."""

    content: Content
    tags: list[Tag] | None = Field(default=None, max_length=MAX_TAGS)
    thread_id: Identifier | None = None


class LinkRequest(_Body):
    """`POST /memories/{id}/links`: a relation edge to another memory of the same user."""

    target_id: Identifier
    type: Identifier = DEFAULT_LINK_TYPE
    strength: float = Field(default=DEFAULT_LINK_STRENGTH, ge=0.0, le=1.0)


class TTLRequest(_Body):
    """`PUT /memories/{id}/ttl`: expire the memory this many days from now."""

    days: float = Field(gt=0, le=MAX_TTL_DAYS)


class SearchRequest(_Body):
    """`POST /search`: hybrid search in one user's memories."""

    query: QueryText
    user_id: Identifier
    k: int = Field(default=SEARCH_DEFAULT_K, ge=1, le=SEARCH_MAX_K)
    namespace: Identifier | None = None
    """Only this namespace's memories and the shared `default` ones."""
    fusion: Literal["rrf", "weighted", "engram"] | None = None
    """How vectors and keywords are fused (default: the server's `search_fusion`)."""
    expand: bool | None = None
    """LLM query expansion: always (true), never (false), below 0.25 (default)."""
    rerank: bool = False
    """Let the LLM reorder the results."""


class MemoryRecallRequest(_Body):
    """`POST /recall`: the best matches in one user's memories, in full."""

    query: QueryText
    user_id: Identifier
    limit: int = Field(default=SEARCH_DEFAULT_K, ge=1, le=SEARCH_MAX_K)
    min_score: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Cosine similarity floor (dry and unset: 0.30); with dry, a "
        "memory holding one of the query's telling words passes it too.",
    )
    dry: bool = Field(
        default=False,
        description="Search only: record nothing (no access counted).",
    )
    expand: bool | None = Field(
        default=None,
        description="LLM query expansion: always (true), never (false), or when the "
        "best match is below 0.25 (unset).",
    )
    rerank: bool = Field(default=False, description="Let the LLM reorder the results.")


class QueryBody(_Body):
    """`POST /query`: an agent's scoped recall. `agent` defaults to the key's (another
    is refused); `filters.user_id` must be a user the key acts for."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    agent: Identifier | None = None
    query: QueryText
    categories: list[Identifier] | None = Field(default=None, max_length=64)
    filters: QueryFilters
    top_k: int = Field(default=QUERY_DEFAULT_TOP_K, ge=1, le=SEARCH_MAX_K)
    return_mode: Literal["bullets", "full"] = Field(default=QUERY_DEFAULT_RETURN, alias="return")
    budget_tokens: int | None = Field(default=None, ge=1, le=MAX_BUDGET_TOKENS)
    threshold: float | None = Field(default=None, ge=-1.0, le=1.0)
    thread: Identifier | None = None
    since_rev: int | None = Field(default=None, ge=0, le=MAX_POSITION)
    fusion: Literal["rrf", "weighted", "engram"] | None = None
    expand: bool | None = None
    rerank: bool = False
    dry: bool = False
    """Serve without counting an access."""

    def as_request(self) -> dict[str, Any]:
        """The facade's `memory_query` request (the seed's field names)."""
        body = self.model_dump(by_alias=True, exclude_none=True)
        body["filters"] = self.filters.model_dump(exclude_none=True)
        return body


class TopicRequest(_Body):
    """`POST /topic`: drill into topics by id."""

    user_id: Identifier
    ids: list[Identifier] = Field(min_length=1, max_length=64)


class ConsolidateRequest(_Body):
    """`POST /consolidate`: one consolidation cycle for one user."""

    user_id: Identifier
    dry_run: bool = False
