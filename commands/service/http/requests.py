"""Request bodies of the HTTP API; the responses are `commands.models` (shared with the
facade and the CLI's --json). Limits are part of the schema, so OpenAPI documents them and
an oversized field is a 422 before anything runs:

- a request body: at most `MAX_BODY_BYTES` (413 beyond);
- `POST /memories`: at most `MAX_ADD_CONTENTS` contents of at most `MAX_CONTENT_CHARS`
  characters each (seed 001 §2: content <= 8192, tags <= 20, source <= 64);
- queries: at most `MAX_QUERY_CHARS` characters, `top_k`/`k` at most `SEARCH_MAX_K`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from mnemoledger.commands.recall.query import SEED_IMPORTANCE_MAX, QueryFilters
from mnemoledger.commands.service.scoped import API_SOURCE
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    DEFAULT_IMPORTANCE,
    DEFAULT_LINK_STRENGTH,
    DEFAULT_LINK_TYPE,
    MAX_BUDGET_TOKENS,
    MAX_CONTENT_CHARS,
    MAX_EVIDENCE_CHARS,
    MAX_EVIDENCE_ITEMS,
    MAX_ID_CHARS,
    MAX_KEY_CHARS,
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
    SEARCH_MIN_SCORE,
)
from mnemoledger.ledger.validation import (
    CONTROL_RANGES,
    SEPARATOR_RANGES,
    WHITE_SPACE_RANGES,
    said_at,
)

MAX_ADD_CONTENTS = 32
"""Not in the seeds: contents of one `POST /memories` (one reconstruction pass each call)."""

MAX_BODY_BYTES = 1 << 20
"""Not in the seeds: 1 MiB per request body, room for 32 contents of 8192 characters."""


def schema_class(ranges: Iterable[tuple[int, int]]) -> str:
    """The inside of a character class of a schema pattern matching `ranges`, read alike by
    ECMA 262 (with the `u` flag, as JSON Schema means), Rust's regex (pydantic's) and Python's
    `re` (schemathesis's): `\\uXXXX` in the BMP, the character itself beyond it. Surrogates
    are left out: no engine but Python's has them, and pydantic refuses a string with one."""
    parts = []
    for first, last in ranges:
        if first >= 0xD800 and last <= 0xDFFF:
            continue
        low, high = (chr(c) if c > 0xFFFF else f"\\u{c:04X}" for c in (first, last))
        parts.append(low if first == last else f"{low}-{high}")
    return "".join(parts)


INVISIBLE_CLASS = schema_class((*CONTROL_RANGES, *SEPARATOR_RANGES))
"""Control, format, private-use and separator (white space) characters: what an identifier
must not hold, and what a text needs more than (`ledger.validation`)."""
IDENTIFIER = f"^[^{INVISIBLE_CLASS}]+$"
"""An identifier: printable, no white space (as `ledger.validation.identifier` checks)."""
VISIBLE = f"[^{INVISIBLE_CLASS}]"
"""A text with a character that is not white space or a control or format character: what
is left once normalized is not empty ("", "   ", "\\u200b" are refused alike, 422)."""
WORDS = f"^[^\\u0000]*[^\\u0000{schema_class(WHITE_SPACE_RANGES)}][^\\u0000]*$"
"""A text that is not only white space and holds no NUL (a fact's subject, predicate or
object, an entity: `commands.recall.facts_api`)."""
KEY = f"[^{INVISIBLE_CLASS}/_-]"
"""A memory key with a character that normalizing keeps (it drops white space and control
characters, and trims `-`, `_` and `/`: `ledger.validation.normalize_key`)."""


def integral(value: object) -> object:
    """A JSON number without a fraction is an integer, as JSON Schema reads it: `81.0` is
    81 (a strict int would refuse it, as it refuses `true` and `"81"`)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


MAX_JSON_INTEGER = 2**53 - 1
"""The largest integer the API takes for a log position or revision (the ledger's go to
2**63 - 1): beyond 2**53 a JSON number is not exact in most clients (I-JSON, RFC 7493
§2.2), nor in schemathesis's boundary values."""

# The integers of bodies (`RequestBody` is strict), their bounds before `integral` so that
# the schema states them (`minimum`, `maximum`).
SearchK = Annotated[int, Field(ge=1, le=SEARCH_MAX_K), BeforeValidator(integral)]
Budget = Annotated[int, Field(ge=1, le=MAX_BUDGET_TOKENS), BeforeValidator(integral)]
Revision = Annotated[int, Field(ge=0, le=MAX_JSON_INTEGER), BeforeValidator(integral)]
RFC3339_TIME = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)")
"""A time as JSON Schema's `date-time` format writes it (RFC 3339): date, time, zone."""
RFC3339_DAY = re.compile(r"\d{4}-\d\d-\d\d")
"""A day as the `date` format writes it."""


def rfc3339_time(value: object) -> object:
    """`value` if it is written as a `date-time` (pydantic alone also reads `12345` as a
    time, and a time without its zone)."""
    if isinstance(value, str) and RFC3339_TIME.fullmatch(value):
        return value
    raise PydanticCustomError(
        "time_format", "must be a time with its zone, e.g. 2026-05-01T09:30:00Z (RFC 3339)"
    )


def rfc3339_time_or_day(value: object) -> object:
    """`value` if it is written as a `date-time` or a `date`."""
    if isinstance(value, str) and RFC3339_DAY.fullmatch(value):
        return value
    return rfc3339_time(value)


Moment = Annotated[AwareDatetime, BeforeValidator(rfc3339_time), Field(strict=False)]
"""A time with its zone, RFC 3339 (`format: date-time`); `strict` would refuse the text."""
MomentOrDay = Annotated[
    datetime,
    BeforeValidator(rfc3339_time_or_day),
    Field(strict=False),
    WithJsonSchema(
        {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]}
    ),
]
"""A time with its zone or a day (its start, UTC)."""


def said_by_now(value: datetime) -> datetime:
    """`value` if it is a time the contents can have been said at: not in the future (a
    few seconds of clock skew allowed), and within the years a time holds in UTC."""
    try:
        said_at(value, name="the time")
    except InvalidInput as error:
        raise PydanticCustomError("time_said", str(error)) from None
    return value


SaidAt = Annotated[Moment, AfterValidator(said_by_now)]
"""An add's `at` (`MnemoLedger.add`): a past time, RFC 3339."""
SAID_AT_DESCRIPTION = (
    "When the contents were said, to import an old conversation or notes: a time with its "
    "zone, e.g. 2024-05-01T09:00:00Z, not in the future (default: now). The memories' "
    "`created_at` is that time; a memory said later is never replaced by them."
)


def in_utc(value: datetime) -> datetime:
    """`value` if it is a time UTC can hold (a time near year 1 or 9999 may not be)."""
    try:
        value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise PydanticCustomError(
            "time_range", "must be a time within years 1 to 9999 UTC"
        ) from None
    return value


SearchAt = Annotated[Moment, AfterValidator(in_utc)]
"""A search's `at` (`MnemoLedger.search`): any time, RFC 3339."""
SEARCH_AT_DESCRIPTION = (
    "Judge recency and expiry at this time, a time with its zone, e.g. "
    "2024-05-01T09:00:00Z (default: now); the same time gives the same ranking."
)
MIN_SCORE_DESCRIPTION = (
    "Relevance floor, 0-1 (default 0.3): a memory below it is left out (with rank "
    "fusion, unless one of the query's telling words or its cosine similarity passes it)."
)
Int64 = Annotated[int, Field(ge=-MAX_POSITION - 1, le=MAX_POSITION)]
Metadata = dict[str, str | Int64 | float | bool | None]
"""Flat metadata: text keys, scalar values; a whole number fits in 64 bits (a larger one
is a float): `ledger.validation.metadata`."""
Identifier = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=IDENTIFIER)]
Content = Annotated[str, Field(max_length=MAX_CONTENT_CHARS, pattern=VISIBLE)]
Tag = Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS, pattern=VISIBLE)]
QueryText = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=VISIBLE)]
KeyText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_KEY_CHARS,
        pattern=KEY,
        description="A memory key; matched loosely: `Code_Style` is `code-style`.",
    ),
]
"""A memory key with something left once normalized (`ledger.validation.memory_key`)."""
Kind = Literal["semantic", "episodic", "procedural"]
Role = Literal["user", "assistant", "tool", "document"]
"""Who wrote an add's contents (`MnemoLedger.add`'s `role`)."""
EvidenceId = Annotated[str, Field(min_length=1, max_length=MAX_EVIDENCE_CHARS, pattern=VISIBLE)]
"""The id of a turn or message the contents came from (`ledger.validation.evidence`)."""


class RequestBody(BaseModel):
    """A JSON request body, validated as its schema reads: no other field (extra="forbid"),
    and no value of another JSON type taken for one (strict: `0` or `"false"` is not a
    boolean, `true` or `"5"` not a number; an ISO 8601 string is a time)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class AddMemoriesRequest(RequestBody):
    """`POST /memories`: add one or more contents for one user (one atomic
    write). `agent_id`, when given, must be the key's agent; every write records it."""

    contents: list[Content] = Field(min_length=1, max_length=MAX_ADD_CONTENTS)
    user_id: Identifier
    agent_id: Identifier | None = None
    thread_id: Identifier | None = None
    kind: Kind = "semantic"
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    source: str = Field(
        default=API_SOURCE, min_length=1, max_length=MAX_SOURCE_CHARS, pattern=VISIBLE
    )
    namespace: Identifier = "default"
    importance: float = Field(default=DEFAULT_IMPORTANCE, ge=0.0, le=1.0)
    category: Identifier | None = Field(
        default=None,
        description="File the memories under this category, one of the key's "
        "(default: derived from kind and namespace); another is a 403 naming the key's.",
    )
    metadata: Metadata | None = Field(
        default=None, description="Flat metadata kept on every new memory."
    )
    evidence: list[EvidenceId] | None = Field(
        default=None,
        max_length=MAX_EVIDENCE_ITEMS,
        description="The ids of the turns or messages the contents came from; every memory "
        "the add writes keeps them, and each search hit reports them as its provenance.",
    )
    role: Role = Field(
        default="user",
        description="Who wrote the contents: an assistant's advice to the user is read as "
        "advice, not as an instruction to the model (the injection screen).",
    )
    keep_all: bool = Field(
        default=False,
        description="Store every content, even greetings, thanks, acknowledgements and "
        "questions (otherwise listed in `not_kept`).",
    )
    layer: Literal["buffer", "working", "core"] | None = Field(
        default=None,
        description="Accepted for clients that name a layer, and ignored: every write enters the "
        "buffer layer; consolidation promotes what earns it.",
    )
    at: SaidAt | None = Field(default=None, description=SAID_AT_DESCRIPTION)
    wait: bool = Field(
        default=True,
        description="false: answer 202 with the `command_id` once the request is recorded; "
        "the memories are decided afterwards (`GET /commands/{command_id}`). Same as "
        "`?wait=false`.",
    )


class UpdateMemoryRequest(RequestBody):
    """`PATCH /memories/{id}`: replace the content (and the tags, when given)."""

    content: Content
    tags: list[Tag] | None = Field(default=None, max_length=MAX_TAGS)
    thread_id: Identifier | None = None


class LinkRequest(RequestBody):
    """`POST /memories/{id}/links`: a relation edge to another memory of the same user."""

    target_id: Identifier
    type: Identifier = DEFAULT_LINK_TYPE
    strength: float = Field(default=DEFAULT_LINK_STRENGTH, ge=0.0, le=1.0)


class TTLRequest(RequestBody):
    """`PUT /memories/{id}/ttl`: expire the memory this many days from now."""

    days: float = Field(gt=0, le=MAX_TTL_DAYS)


class SearchRequest(RequestBody):
    """`POST /search`: hybrid search in one user's memories."""

    query: QueryText
    user_id: Identifier
    k: SearchK = SEARCH_DEFAULT_K
    namespace: Identifier | None = None
    """Only this namespace's memories and the shared `default` ones."""
    fusion: Literal["rrf", "weighted", "engram"] | None = None
    """How vectors and keywords are fused (default: the server's `search_fusion`)."""
    expand: bool | None = None
    """LLM query expansion: always (true), never (false), below 0.25 (default)."""
    rerank: bool = False
    """Let the LLM reorder the results."""
    min_score: float = Field(
        default=SEARCH_MIN_SCORE, ge=0.0, le=1.0, description=MIN_SCORE_DESCRIPTION
    )
    at: SearchAt | None = Field(default=None, description=SEARCH_AT_DESCRIPTION)


class MemoryRecallRequest(RequestBody):
    """`POST /recall`: the best matches in one user's memories, in full."""

    query: QueryText
    user_id: Identifier
    limit: SearchK = SEARCH_DEFAULT_K
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


IMPORTANCE_BOUNDS: dict[str, Any] = {
    "anyOf": [
        {
            "properties": {
                "importance_scale": {"enum": ["0-1", None]},
                "importance_min": {"maximum": 1},
                "importance_max": {"maximum": 1},
            }
        },
        {
            "properties": {
                "importance_scale": {"enum": ["1-5", None]},
                "importance_min": {"minimum": 1},
                "importance_max": {"minimum": 1},
            }
        },
    ]
}
"""The importance bounds' scales, as JSON Schema says it: both bounds on 0-1, or both on
1-5 (a bound above 1 reads both on 1-5 when `importance_scale` is not given)."""


class QueryFiltersRequest(QueryFilters):
    """`filters` of `POST /query` (`QueryFilters`, validated as a JSON body: strict, times
    in RFC 3339). `importance_min` must not be above `importance_max` (422), which JSON
    Schema cannot say."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=IMPORTANCE_BOUNDS)

    user_id: Identifier
    # one name is read as a list of one by `QueryFilters`' validator, before the type is
    # checked: the field takes both, and is a list once read
    category: Identifier | list[Identifier] | None = None  # type: ignore[assignment]
    """Only memories of these categories (one name or a list); each must be one the
    agent may read."""
    importance_min: float | None = Field(default=None, ge=0, le=SEED_IMPORTANCE_MAX)
    """Inclusive; on the 1-5 scale when a bound is above 1 (or `importance_scale` is
    "1-5"), else on the 0-1 scale."""
    importance_max: float | None = Field(default=None, ge=0, le=SEED_IMPORTANCE_MAX)
    updated_after: MomentOrDay | None = None
    """Inclusive; a time with its zone, or a day (from its start, UTC)."""
    updated_before: MomentOrDay | None = None
    """Exclusive."""


class QueryBody(RequestBody):
    """`POST /query`: an agent's scoped recall. `agent` defaults to the key's (another
    is refused); `filters.user_id` must be a user the key acts for."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    agent: Identifier | None = None
    query: QueryText
    categories: list[Identifier] | None = Field(default=None, max_length=64)
    filters: QueryFiltersRequest
    top_k: SearchK = QUERY_DEFAULT_TOP_K
    return_mode: Literal["bullets", "full"] = Field(default=QUERY_DEFAULT_RETURN, alias="return")
    budget_tokens: Budget | None = None
    threshold: float | None = Field(default=None, ge=-1.0, le=1.0)
    thread: Identifier | None = None
    since_rev: Revision | None = None
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


class TopicRequest(RequestBody):
    """`POST /topic`: drill into topics by id."""

    user_id: Identifier
    ids: list[Identifier] = Field(min_length=1, max_length=64)


class ConsolidateRequest(RequestBody):
    """`POST /consolidate`: one consolidation cycle for one user."""

    user_id: Identifier
    dry_run: bool = False
