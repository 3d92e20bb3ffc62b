"""Reading memory the agent way: `memory.query`, search (POST and engram's GET), engram's
recall, resume, the delta header, core.md."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from mnemoledger.commands.models import CoreOut, SearchHit
from mnemoledger.commands.recall.query import QueryResult
from mnemoledger.commands.recall.query_api import DeltaOut
from mnemoledger.commands.recall.recall_api import MAX_RESUME_HOURS
from mnemoledger.commands.recall.resume import ResumeOut
from mnemoledger.commands.service.http.auth import Authenticated
from mnemoledger.commands.service.http.requests import (
    MAX_JSON_INTEGER,
    MIN_SCORE_DESCRIPTION,
    SEARCH_AT_DESCRIPTION,
    Identifier,
    MemoryRecallRequest,
    QueryBody,
    QueryText,
    SearchAt,
    SearchRequest,
)
from mnemoledger.commands.service.scoped import MemoryRecallResult
from mnemoledger.ledger.policy import (
    RESUME_RECENT_HOURS,
    SEARCH_DEFAULT_K,
    SEARCH_MAX_K,
    SEARCH_MIN_SCORE,
)

router = APIRouter(tags=["recall"])


@router.post("/query")
async def memory_query(body: QueryBody, caller: Authenticated) -> QueryResult:
    """An agent's scoped recall: the delta header (with `thread`), then the results as
    bullets or full memories within `budget_tokens`; the agent's allowlist and the key's
    categories are enforced before anything is searched. Records what was served."""
    request = body.as_request()
    return await caller.run(lambda scoped: scoped.query(request))


@router.post("/search")
async def search(body: SearchRequest, caller: Authenticated) -> list[SearchHit]:
    """Hybrid search (vectors + keywords) in one user's memories, the key's categories only."""
    return await caller.run(
        lambda scoped: scoped.search(
            body.query,
            user=body.user_id,
            k=body.k,
            namespace=body.namespace,
            fusion=body.fusion,
            expand=body.expand,
            rerank=body.rerank,
            min_score=body.min_score,
            at=body.at,
        )
    )


@router.get("/search")
async def search_get(
    caller: Authenticated,
    q: Annotated[QueryText, Query(description="What to look for.")],
    user_id: Annotated[Identifier, Query()],
    k: Annotated[int, Query(ge=1, le=SEARCH_MAX_K)] = SEARCH_DEFAULT_K,
    namespace: Annotated[Identifier | None, Query()] = None,
    fusion: Annotated[Literal["rrf", "weighted", "engram"] | None, Query()] = None,
    expand: Annotated[bool | None, Query()] = None,
    rerank: Annotated[bool, Query()] = False,
    min_score: Annotated[
        float, Query(ge=0.0, le=1.0, description=MIN_SCORE_DESCRIPTION)
    ] = SEARCH_MIN_SCORE,
    at: Annotated[SearchAt | None, Query(description=SEARCH_AT_DESCRIPTION)] = None,
) -> list[SearchHit]:
    """`GET /search?q=...&k=...`: the same hybrid search as `POST /search`, in one
    user's memories, the key's categories only (with `namespace`, that namespace's and the
    shared `default` ones). Records nothing but the LLM calls of `expand` / `rerank`."""
    return await caller.run(
        lambda scoped: scoped.search(
            q,
            user=user_id,
            k=k,
            namespace=namespace,
            fusion=fusion,
            expand=expand,
            rerank=rerank,
            min_score=min_score,
            at=at,
        )
    )


@router.post("/recall")
async def recall(body: MemoryRecallRequest, caller: Authenticated) -> MemoryRecallResult:
    """The user's best matches in full, at most `limit`, above `min_score`; records what
    it served (access counts) unless `dry`. Runs the scoped recall of `POST /query` (or,
    dry, the hybrid search) as the key sees the user's memories."""
    return await caller.run(
        lambda scoped: scoped.engram_recall(
            body.query,
            user=body.user_id,
            limit=body.limit,
            min_score=body.min_score,
            dry=body.dry,
            expand=body.expand,
            rerank=body.rerank,
        )
    )


@router.get("/resume")
async def resume(
    caller: Authenticated,
    user_id: Annotated[Identifier, Query()],
    namespace: Annotated[Identifier | None, Query()] = None,
    hours: Annotated[float, Query(gt=0, le=MAX_RESUME_HOURS)] = RESUME_RECENT_HOURS,
    compact: Annotated[
        bool, Query(description="Keep Core and Working memories related to the recent context.")
    ] = False,
) -> ResumeOut:
    """What a new session resumes from: Core, Recent, Topics, Triggers, within fixed budgets,
    from the memories the key may read. Writes nothing."""
    return await caller.run(
        lambda scoped: scoped.resume(
            user=user_id, namespace=namespace, hours=hours, compact=compact
        )
    )


@router.get("/delta")
async def delta(
    caller: Authenticated,
    thread: Annotated[Identifier, Query()],
    user_id: Annotated[Identifier, Query()],
    since: Annotated[int | None, Query(ge=0, le=MAX_JSON_INTEGER)] = None,
) -> DeltaOut:
    """The delta header: the thread's revision and the latest changes of the
    user's memories in the key's categories, since `since` or since this agent was last
    served in the thread."""
    return await caller.run(lambda scoped: scoped.delta(thread, since, user=user_id))


@router.get("/core")
async def core(caller: Authenticated, user_id: Annotated[Identifier, Query()]) -> CoreOut:
    """The user's core.md (their durable profile); needs the `profile` category."""
    return await caller.run(lambda scoped: scoped.core(user=user_id))
