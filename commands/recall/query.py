"""`memory.query` (seed 003 §6): one tool for the supervisor and its scoped subagents.

    {"agent": "planner", "query": "deployment plan context", "categories": ["tasks"],
     "filters": {"user_id": "maya", "importance_min": 2, "updated_after": "2025-07-01"},
     "top_k": 3, "return": "bullets", "budget_tokens": 512, "threshold": 0.65,
     "thread": "t-42"}

In this order:

1. The request is validated and the agent's allowlist enforced (seed 003 §5): an unknown
   agent, or a category outside its allowlist, is refused (`CategoryNotAllowed`) before
   anything is embedded or searched, and nothing is written. No categories = the whole
   allowlist except `procedural` (§12: served only when a query names it).
2. With a `thread`, the delta header (§1) comes first: changes since `since_rev`, else since
   the revision this agent was last served in the thread (from its `RecallServed` events),
   else since rev 0; only the user's memories, in the agent's allowlist, not sensitive.
3. `context: all` categories: their servable memories (no similarity threshold), most
   important first, come first and count toward `top_k`. `context: rag` categories fill
   the rest: hybrid search over-fetched
   (`top_k x QUERY_OVERFETCH`, growing while filters reject), then the filters applied
   here, server-side; at most `rag_length` per category, at most `top_k` in all; with a
   `threshold`, results whose relevance (cosine similarity of the query and memory
   embeddings) is below it are dropped. Only active, unexpired, non-sensitive memories are
   ever served (seed 002: sensitive notes stay out of agent context).
4. Filters: `user_id` (required), `agent_id` / `actor_id` (who wrote the memory),
   `run_id` (the thread or the command run it was written in), `role` (memory metadata),
   `category` (one name or a list, held to the agent's allowlist like `categories`; alone,
   it names the categories read), `pinned` (the `pinned` tag, the one the lifecycle's
   soft-delete spares), `importance_min/max` (inclusive) and `updated_after` (inclusive) /
   `updated_before` (exclusive). Importance bounds are read on the seed's 1-5 scale
   (compared with 1 + round(4 x importance), the `imp=` of the delta header) when either
   bound is above 1, else on the ledger's 0-1 scale; `importance_scale` ("1-5" / "0-1")
   says which explicitly. So `{"importance_min": 1, "importance_max": 5}` admits all.
5. Rendering: `bullets` -> `{"id", "category", "text": "[category] content"}`; `full` ->
   the memory as `get` shows it plus `score`, `relevance`, effective `category`, context
   mode and access counters. `budget_tokens` bounds header + results, each estimated as
   ceil(chars / 4) of its rendered text (a bullet's text, a full result's compact JSON):
   results stop before the one that would exceed it; a header too large loses bullets.
6. A `RecallServed` event records what was served to whom (access counts derive from it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.recall.relations import edges_of, related_bullets, relation_boost
from mnemoledger.commands.recall.search import (
    DEFAULT_OPTIONS,
    SearchOptions,
    embed_early,
    hybrid_search,
    query_vector_of,
)
from mnemoledger.commands.recall.search_llm import SearchHooks
from mnemoledger.commands.recall.user_names import UserNames
from mnemoledger.commands.write.categories import CategoriesConfig, Scope
from mnemoledger.commands.write.procedural import in_context
from mnemoledger.ledger import Ledger, Provenance
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    ACTIVE,
    BULLETS,
    CHARS_PER_TOKEN,
    CONTEXT_ALL,
    CONTEXT_RAG,
    FULL,
    MAX_BUDGET_TOKENS,
    MAX_QUERY_CHARS,
    PINNED_TAG,
    PROCEDURAL_CATEGORY,
    QUERY_DEFAULT_RETURN,
    QUERY_DEFAULT_TOP_K,
    QUERY_OVERFETCH,
    RECALL_TOUCH_MIN_RELEVANCE,
    RELATION_RERANK_DEPTH,
    SEARCH_MAX_K,
    SEARCH_OVERFETCH,
    SENSITIVE,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.recall import Recall
from mnemoledger.ledger.validation import identifier, normalize_text
from mnemoledger.projections.delta import DeltaProjection, seed_importance
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.graph import GraphProjection
from mnemoledger.projections.layers import LayersProjection, MemoryRow
from mnemoledger.projections.vectors import VectorsProjection

SEED_IMPORTANCE_MIN = 1  # seed 003's importance scale (imp=1..5): 1 + round(4 x ours)
SEED_IMPORTANCE_MAX = 5

ImportanceScale = Literal["0-1", "1-5"]
"""`0-1`: the ledger's importance; `1-5`: the seed's scale (the delta header's `imp=`)."""


class QueryFilters(BaseModel):
    """Filters applied server-side; only `user_id` is required."""

    model_config = ConfigDict(extra="forbid")

    user_id: str
    agent_id: str | None = None
    """The agent that wrote the memory."""
    run_id: str | None = None
    """The thread, or the command run (causation id), the memory was written in."""
    actor_id: str | None = None
    """The actor (person or process) that wrote the memory."""
    role: str | None = None
    """The memory's `role` metadata (e.g. user, assistant)."""
    category: list[str] | None = None
    """Only memories of these categories (one name or a list); each must be one the
    agent may read."""
    pinned: bool | None = None
    """Whether the memory carries the `pinned` tag (pinned memories are never
    soft-deleted for disuse)."""
    importance_min: float | None = None
    """Inclusive; on the 1-5 scale when a bound is above 1 (or `importance_scale` is
    "1-5"), else on the 0-1 scale."""
    importance_max: float | None = None
    importance_scale: ImportanceScale | None = None
    """Which scale the importance bounds use (default: "1-5" if a bound is above 1)."""
    updated_after: datetime | None = None
    """Inclusive; a date or a time, UTC when no zone is given."""
    updated_before: datetime | None = None
    """Exclusive."""

    @field_validator("user_id")
    @classmethod
    def _user(cls, value: str) -> str:
        return str(identifier("user", value))

    @field_validator("agent_id", "run_id", "actor_id", "role")
    @classmethod
    def _optional_id(cls, value: str | None) -> str | None:
        return None if value is None else normalize_text(value) or None

    @field_validator("category", mode="before")
    @classmethod
    def _categories(cls, value: object) -> object:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            names = [str(identifier("category", name)) for name in value]
            return list(dict.fromkeys(names)) or None
        return value

    @field_validator("importance_min", "importance_max")
    @classmethod
    def _importance(cls, value: float | None) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or math.isnan(value):
            raise ValueError("importance bounds must be numbers")
        return float(value)

    @field_validator("updated_after", "updated_before")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None or value.tzinfo is not None:
            return value
        return value.replace(tzinfo=UTC)

    @model_validator(mode="after")
    def _ranges(self) -> QueryFilters:
        low, high = self.importance_min, self.importance_max
        scale = self.scale
        bottom, top = (SEED_IMPORTANCE_MIN, SEED_IMPORTANCE_MAX) if scale == "1-5" else (0, 1)
        for name, value in (("importance_min", low), ("importance_max", high)):
            if value is not None and not bottom <= value <= top:
                raise ValueError(f"{name} {value:g} is outside the {scale} importance scale")
        if low is not None and high is not None and low > high:
            raise ValueError(f"importance_min {low:g} is above importance_max {high:g}")
        return self

    @property
    def scale(self) -> ImportanceScale:
        """The scale the importance bounds are read on."""
        if self.importance_scale is not None:
            return self.importance_scale
        bounds = (b for b in (self.importance_min, self.importance_max) if b is not None)
        return "1-5" if any(b > 1 for b in bounds) else "0-1"

    def match(self, row: MemoryRow) -> bool:
        """Whether the memory passes every filter given."""
        meta = row.metadata or {}
        updated = _aware(datetime.fromisoformat(row.updated_at))
        importance = seed_importance(row.importance) if self.scale == "1-5" else row.importance
        checks = (
            row.user_id == self.user_id,
            self.agent_id is None or row.agent_id == self.agent_id,
            self.run_id is None or self.run_id in (row.thread_id, row.causation_id),
            self.actor_id is None or row.actor == self.actor_id,
            self.role is None or meta.get("role") == self.role,
            self.category is None or row.effective_category in self.category,
            self.pinned is None or (PINNED_TAG in row.tags) == self.pinned,
            self.importance_min is None or importance >= self.importance_min,
            self.importance_max is None or importance <= self.importance_max,
            self.updated_after is None or updated >= self.updated_after,
            self.updated_before is None or updated < self.updated_before,
        )
        return all(checks)


class QueryRequest(BaseModel):
    """One `memory.query` call (seed 003 §6), plus the delta header's `thread`/`since_rev`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    agent: str
    query: str
    categories: list[str] | None = None
    filters: QueryFilters
    top_k: int = Field(default=QUERY_DEFAULT_TOP_K, ge=1, le=SEARCH_MAX_K)
    return_mode: Literal["bullets", "full"] = Field(default=QUERY_DEFAULT_RETURN, alias="return")
    budget_tokens: int | None = Field(default=None, ge=1, le=MAX_BUDGET_TOKENS)
    threshold: float | None = Field(default=None, ge=-1.0, le=1.0)
    """Drop searched results whose relevance (cosine similarity) is below this."""
    thread: str | None = None
    """The conversation thread: the answer starts with its delta header."""
    since_rev: int | None = Field(default=None, ge=0)
    """The header's base revision (default: the last one this agent was served here)."""
    fusion: Literal["rrf", "weighted", "engram"] | None = None
    """How the search fuses vectors and keywords (default: the setting `search_fusion`)."""
    expand: bool | None = None
    """Search LLM-written alternative phrasings too: always (true), never (false), or when
    the best match is below 0.25 (default, setting `search_expand`)."""
    rerank: bool = False
    """Let the LLM reorder the searched results."""
    dry: bool = False
    """Serve without touching: no access is counted (seed 001 §4.5)."""

    @field_validator("agent")
    @classmethod
    def _agent(cls, value: str) -> str:
        return str(identifier("agent", value))

    @field_validator("thread")
    @classmethod
    def _thread(cls, value: str | None) -> str | None:
        return identifier("thread", value, required=False)

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        if len(value) > MAX_QUERY_CHARS:  # as given, as the API states: NFC may lengthen it
            raise ValueError(f"query has {len(value)} characters; the limit is {MAX_QUERY_CHARS}")
        text = normalize_text(value)
        if not text:
            raise ValueError("query is empty")
        return text


class BulletResult(BaseModel):
    """A result as a bullet: `{"id", "category", "text": "[category] content"}`."""

    id: str
    category: str
    text: str


class FullResult(MemoryOut):
    """A memory as `get` shows it, with how it was found; `category` is the effective one."""

    score: float | None = None
    """The search score (None for `context: all` memories, which are not searched)."""
    relevance: float | None = None
    """Cosine similarity to the query, when a threshold asked for it."""
    context: str = CONTEXT_RAG
    """`all` (always included) or `rag` (found by search)."""
    access_count: int = 0
    """Times served before this answer."""
    last_accessed: str | None = None


class QueryResult(BaseModel):
    """The answer: the delta header first, then the results, best first."""

    header: str | None
    results: list[BulletResult | FullResult]
    rev: int | None = None
    """The thread's revision this answer reflects (None without a thread)."""
    tokens: int = 0
    """Estimated tokens of header + results (ceil(chars / 4) each)."""
    recall_id: str | None = None
    """The `RecallServed` stream recording this answer."""
    related: list[str] = Field(default_factory=list)
    """Seed 003 §2: 1-2 "↳ related: ..." lines, memories linked to the results."""
    hidden: int = 0
    """Search matches left out because their category is outside the categories this query
    reads (the agent's allowlist, the key's subset, or the categories it named); counted,
    never shown."""
    message: str | None = None
    """Set when there are no results but `hidden` matches: says the allowlist hid them."""


@dataclass(frozen=True)
class _Candidate:
    row: MemoryRow
    context: str
    score: float | None = None
    relevance: float | None = None
    fused: float | None = None
    """The search's fused relevance (0-1); None: served by `context: all`."""


def parse_request(request: QueryRequest | Mapping[str, Any]) -> QueryRequest:
    """A validated request; pydantic's complaints become `InvalidInput`."""
    if isinstance(request, QueryRequest):
        return request
    try:
        return QueryRequest.model_validate(dict(request))
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in error.errors()
        )
        raise InvalidInput(f"invalid query: {problems}") from None


def estimate_tokens(text: str) -> int:
    """Tokens of `text`, estimated as ceil(chars / CHARS_PER_TOKEN)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def rendered(result: BulletResult | FullResult) -> str:
    """The text a result costs: a bullet's text, a full result's compact JSON."""
    if isinstance(result, BulletResult):
        return result.text
    return json.dumps(result.model_dump(mode="json", by_alias=True), ensure_ascii=False)


def servable(row: MemoryRow, now: datetime) -> bool:
    """Active, unexpired and not sensitive: the only memories ever served."""
    return row.state == ACTIVE and not row.is_expired(now) and row.sensitivity != SENSITIVE


def memory_query(
    request: QueryRequest | Mapping[str, Any],
    *,
    ledger: Ledger,
    layers: LayersProjection,
    vectors: VectorsProjection,
    embedder: Embedder,
    delta: DeltaProjection | None,
    categories: CategoriesConfig,
    actor: str,
    graph: GraphProjection | None = None,
    refresh: Callable[[], object] = lambda: None,
    now: datetime | None = None,
    options: SearchOptions | None = None,
    hooks: SearchHooks | None = None,
    user_names: UserNames | None = None,
) -> QueryResult:
    """Answer one `memory.query` (see the module doc) and record it as `RecallServed`.
    `options`: how the search fuses and scores (default: `search.DEFAULT_OPTIONS`, the
    request's `fusion` overriding theirs); `hooks`: its query expansion and re-ranking;
    `user_names`: the names each user's memories give as theirs, searched as "the user"."""
    req = parse_request(request)
    options = options or DEFAULT_OPTIONS
    if req.fusion is not None:
        options = replace(options, fusion=req.fusion)
    named = req.filters.category
    # refused here, nothing searched: categories, and a `category` filter, beyond the allowlist
    scope = categories.scope(req.agent, req.categories or named)
    if named is not None and req.categories:
        categories.scope(req.agent, named)
    user = req.filters.user_id
    # the model embeds the query while the read models catch up (when that cannot change it)
    before = req.query if user_names is None else user_names.asked(req.query, user, known_only=True)
    early = embed_early(layers, embedder, user, before) if scope.searched else None
    refresh()
    asked = req.query if user_names is None else user_names.asked(req.query, user)
    early = early if asked == before else None  # a name's answer moved with the log
    moment = now or datetime.now(UTC)

    rev: int | None = None
    since: int | None = None
    header: str | None = None
    if req.thread is not None and delta is not None:
        rev = delta.revision(req.thread)
        since = req.since_rev
        if since is None:
            since = delta.served_revision(req.thread, req.agent) or 0
        header = delta.header(
            req.thread, since, user_id=user, categories=_header_categories(categories, scope)
        )

    candidates = _always(layers, scope, req, moment)[: req.top_k]
    hidden = 0
    room = req.top_k - len(candidates)
    if scope.searched and room > 0:
        searched = req.model_copy(update={"top_k": room})
        search_vector = query_vector_of(early, layers, embedder, user, asked)
        found, hidden = _searched(
            layers,
            vectors,
            embedder,
            scope,
            searched,
            moment,
            graph,
            search_vector,
            options,
            hooks,
            asked,
        )
        candidates += found

    told = header
    if header is not None and req.budget_tokens is not None:
        header = _fit_header(header, req.budget_tokens)
    used = 0 if header is None else estimate_tokens(header)
    results: list[BulletResult | FullResult] = []
    touched: list[str] = []
    for candidate in candidates:
        result = _render(candidate, req.return_mode, graph)
        cost = estimate_tokens(rendered(result))
        if req.budget_tokens is not None and used + cost > req.budget_tokens:
            break
        results.append(result)
        used += cost
        if not req.dry and _touches(candidate):
            touched.append(candidate.row.id)
    related: list[str] = []
    if graph is not None and results:
        for line in related_bullets(
            graph,
            layers,
            [r.id for r in results],
            admit=lambda row: (
                row.effective_category in scope.categories
                and _servable_for(row, scope, req, moment)
            ),
        ):
            cost = estimate_tokens(line)
            if req.budget_tokens is not None and used + cost > req.budget_tokens:
                break
            related.append(line)
            used += cost

    # a header the budget left out was not seen: the next query starts from the same base
    shown_rev = since if told is not None and header is None else rev
    provenance = Provenance(user_id=user, actor=actor, agent_id=req.agent, thread_id=req.thread)
    with acting_as(provenance):
        recall = Recall(
            query=req.query,
            categories=list(scope.categories),
            memory_ids=[r.id for r in results],
            return_mode=req.return_mode,
            top_k=req.top_k,
            budget_tokens=req.budget_tokens,
            rev=shown_rev,
            since_rev=since,
            touched=touched,
        )
    ledger.save(recall)
    if hooks is not None:
        hooks.finish()
    return QueryResult(
        header=header,
        results=results,
        rev=rev,
        tokens=used,
        recall_id=recall.id.hex,
        related=related,
        hidden=hidden,
        message=_hidden_message(hidden, scope) if hidden and not results else None,
    )


def _touches(candidate: _Candidate) -> bool:
    """Seed 001 §4.5: a searched result is touched (its access counted) when its relevance
    is above 0.5; a `context: all` memory, served whatever the query, always is."""
    if candidate.context != CONTEXT_RAG or candidate.fused is None:
        return True
    return candidate.fused > RECALL_TOUCH_MIN_RELEVANCE


def _hidden_message(hidden: int, scope: Scope) -> str:
    """Why an empty answer is empty: matches exist outside what this query may read."""
    what = "memory matches" if hidden == 1 else "memories match"
    return (
        f"no results: {hidden} {what} the query in categories outside those this query "
        f"reads ({', '.join(scope.categories) or 'none'}, agent {scope.agent!r}); they are "
        "not shown"
    )


def _header_categories(config: CategoriesConfig, scope: Scope) -> set[str]:
    """The agent's whole allowlist; `procedural` only when the query names it (§12)."""
    allowed = set(config.allowlist(scope.agent))
    if scope.requested is None or PROCEDURAL_CATEGORY not in scope.requested:
        allowed.discard(PROCEDURAL_CATEGORY)
    return allowed


def _fit_header(header: str, budget: int) -> str | None:
    """The header with as many bullets as fit `budget` tokens (None if no bullet fits)."""
    lines = header.splitlines()
    for keep in range(len(lines), 1, -1):
        text = "\n".join(lines[:keep])
        if estimate_tokens(text) <= budget:
            return text
    return None


def _servable_for(row: MemoryRow, scope: Scope, req: QueryRequest, now: datetime) -> bool:
    return servable(row, now) and in_context(row.kind, scope.requested) and req.filters.match(row)


def _always(
    layers: LayersProjection, scope: Scope, req: QueryRequest, now: datetime
) -> list[_Candidate]:
    """Every servable memory of the `context: all` categories, most important first (the
    caller keeps the first `top_k`)."""
    always = set(scope.always)
    if not always:
        return []
    ids = layers.ids_in_categories(req.filters.user_id, always)
    rows = [row for row in layers.get_many(ids).values() if _servable_for(row, scope, req, now)]
    rows.sort(key=lambda r: r.id)
    rows.sort(key=lambda r: (r.importance, r.updated_at), reverse=True)
    return [_Candidate(row, CONTEXT_ALL) for row in rows]


def _searched(
    layers: LayersProjection,
    vectors: VectorsProjection,
    embedder: Embedder,
    scope: Scope,
    req: QueryRequest,
    now: datetime,
    graph: GraphProjection | None = None,
    search_vector: npt.NDArray[np.float32] | None = None,
    options: SearchOptions | None = None,
    hooks: SearchHooks | None = None,
    asked: str | None = None,
) -> tuple[list[_Candidate], int]:
    """Up to `top_k` servable memories of the `rag` categories, best first: hybrid search
    over-fetched, filtered here, `rag_length` per category, relevance >= threshold; with a
    relations `graph`, the best `top_k x RELATION_RERANK_DEPTH` of them are reordered by
    `score + w_rel x max_related_strength` (seed 003 §2) before `top_k` are kept. Also how
    many search matches (servable, passing the filters and the threshold) were left out
    for a category outside the query's. `search_vector` is the vector side's embedding of
    the query (`search.query_vector_of`), embedded once for every round of over-fetching;
    `asked`: the query as searched (the user's names said as "the user"), while `threshold`
    keeps comparing the request's own words."""
    wanted = req.top_k * (RELATION_RERANK_DEPTH if graph is not None else 1)
    searched = scope.searched
    picked: list[_Candidate] = []
    hidden = 0
    per_category: dict[str, int] = {}
    seen: set[str] = set()
    query_vector: np.ndarray[Any, Any] | None = None
    k = min(SEARCH_MAX_K, req.top_k * QUERY_OVERFETCH)
    while True:
        hits = hybrid_search(
            layers,
            vectors,
            embedder,
            asked or req.query,
            req.filters.user_id,
            k,
            pool=req.top_k * SEARCH_OVERFETCH,
            query_vector=search_vector,
            options=options,
            now=now,
            expand=None if hooks is None else hooks.expand,
            rerank=None if hooks is None else hooks.rerank,
            expand_always=hooks is not None and hooks.expand_always,
            facts=None if hooks is None else hooks.facts,
            relevance=None if hooks is None else hooks.relevance,
            replacing=None if hooks is None else hooks.replacing,
        )
        fresh = [hit for hit in hits if hit.id not in seen]
        seen.update(hit.id for hit in fresh)
        rows = layers.get_many([hit.id for hit in fresh])
        eligible = []
        outside: list[MemoryRow] = []
        for hit in fresh:
            row = rows.get(hit.id)
            if row is None:
                continue
            if row.effective_category not in searched:
                if row.effective_category not in scope.categories and _hideable(row, req, now):
                    outside.append(row)
                continue
            if _servable_for(row, scope, req, now):
                eligible.append((hit.score, row, hit.relevance))
        relevance: list[float | None] = [None] * len(eligible)
        if req.threshold is not None and (eligible or outside):
            if query_vector is None:
                query_vector = np.asarray(embedder.query(req.query), dtype=np.float32)
            texts = [r.content for _, r, _ in eligible] + [r.content for r in outside]
            similarities = np.asarray(embedder.passages(texts), np.float32) @ query_vector
            relevance = [float(v) for v in similarities[: len(eligible)]]
            hidden += sum(float(v) >= req.threshold for v in similarities[len(eligible) :])
        else:
            hidden += len(outside)
        for (score, row, fused), similarity in zip(eligible, relevance, strict=True):
            if similarity is not None and req.threshold is not None and similarity < req.threshold:
                continue
            category = row.effective_category
            limit = searched[category]
            if limit is not None and per_category.get(category, 0) >= limit:
                continue
            per_category[category] = per_category.get(category, 0) + 1
            rounded = None if similarity is None else round(similarity, 6)
            picked.append(_Candidate(row, CONTEXT_RAG, score, rounded, fused))
            if len(picked) >= wanted:
                return _boosted(picked, graph, req.top_k), hidden
        if len(hits) < k or k >= SEARCH_MAX_K:
            return _boosted(picked, graph, req.top_k), hidden
        k = min(SEARCH_MAX_K, k * QUERY_OVERFETCH)


def _hideable(row: MemoryRow, req: QueryRequest, now: datetime) -> bool:
    """A memory the query would have served but for its category: servable, filters met."""
    return servable(row, now) and req.filters.match(row)


def _boosted(
    picked: list[_Candidate], graph: GraphProjection | None, top_k: int
) -> list[_Candidate]:
    """The `top_k` best of `picked` after the relation boost (in order if no graph)."""
    if graph is None:
        return picked[:top_k]
    strongest = graph.max_related_strength([c.row.id for c in picked])
    boosted = [
        replace(c, score=relation_boost(c.score or 0.0, strongest[c.row.id])) for c in picked
    ]
    boosted.sort(key=lambda c: -(c.score or 0.0))  # stable: ties keep the search's order
    return boosted[:top_k]


def _render(
    candidate: _Candidate, mode: str, graph: GraphProjection | None
) -> BulletResult | FullResult:
    row = candidate.row
    category = row.effective_category
    if mode == BULLETS:
        return BulletResult(id=row.id, category=category, text=f"[{category}] {row.content}")
    assert mode == FULL
    fields = row.as_json()
    fields.update(
        category=category,
        score=candidate.score,
        relevance=candidate.relevance,
        context=candidate.context,
        access_count=row.access_count,
        last_accessed=row.last_accessed,
        links=[] if graph is None else edges_of(graph, row.id),
    )
    return FullResult(**fields)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
