"""`/facts`: the fact graph (seed 001 §9), subject-predicate-object facts that memories
state, each valid from a time until another replaces it.

    POST /facts                 {"subject", "predicate", "object", "memory_id", ...}
    GET  /facts                 ?user_id=&entity=&predicate=&hops=&at=&history=&limit=
    POST /facts/{id}/end        {"valid_until"?}
    POST /facts/extract         {"memory_id"}: the fact-extract stage over one memory

A key sees the facts of the memories it may see.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import Field

from mnemoledger.commands.recall.facts_api import (
    DEFAULT_FACT_HOPS,
    DEFAULT_FACTS_LIMIT,
    MAX_FACT_HOPS,
    MAX_FACT_PART_CHARS,
    FactExtraction,
    FactOut,
)
from mnemoledger.commands.service import fact_scope
from mnemoledger.commands.service.http.auth import Authenticated
from mnemoledger.commands.service.http.requests import WORDS, Identifier, Moment, RequestBody
from mnemoledger.ledger.policy import MAX_LIST_LIMIT

router = APIRouter(prefix="/facts", tags=["facts"])

FactPart = Annotated[str, Field(min_length=1, max_length=MAX_FACT_PART_CHARS, pattern=WORDS)]
FactId = Annotated[str, Path(pattern=r"^[0-9a-fA-F]{32}$", description="The fact's id.")]


class StateFactRequest(RequestBody):
    """`POST /facts`: one fact a memory states."""

    subject: FactPart
    predicate: FactPart = Field(description="Stored as lower_case_words, e.g. lives_in.")
    object: FactPart
    memory_id: str = Field(description="The memory that states it (the fact's user is its).")
    valid_from: Moment | None = Field(
        default=None, description="Since when it holds (RFC 3339, with its zone; default now)."
    )
    keep_others: bool = Field(
        default=False,
        description="Keep the subject's other objects of this predicate valid (e.g. likes); "
        "by default they end where this one starts, superseded by it.",
    )


class EndFactRequest(RequestBody):
    """`POST /facts/{id}/end`."""

    valid_until: Moment | None = Field(default=None, description="Default: now.")


def iso(moment: datetime | None) -> str | None:
    """The time as the ledger takes it (ISO 8601 text)."""
    return None if moment is None else moment.isoformat()


@router.post("", status_code=201)
async def state_fact(body: StateFactRequest, caller: Authenticated) -> FactOut:
    """Record a fact; the same subject's fact of the same predicate that held until then
    ends, superseded by it (unless keep_others). The same fact again is returned as is."""
    return await caller.run(
        lambda scoped: fact_scope.state(
            scoped,
            body.subject,
            body.predicate,
            body.object,
            memory_id=body.memory_id,
            valid_from=iso(body.valid_from),
            keep_others=body.keep_others,
        )
    )


class ExtractFactsRequest(RequestBody):
    """`POST /facts/extract`: the memory to read facts from."""

    memory_id: str = Field(description="An active memory the key may see.")


@router.post("/extract")
async def extract_facts(body: ExtractFactsRequest, caller: Authenticated) -> FactExtraction:
    """Read the facts one memory states (the fact-extract stage, recorded) and
    record them; a fact that holds one object at a time (lives_in, works_at) replaces the
    user's earlier one."""
    return await caller.run(lambda scoped: fact_scope.extract(scoped, body.memory_id))


@router.get("")
async def list_facts(
    caller: Authenticated,
    user_id: Annotated[Identifier | None, Query()] = None,
    entity: Annotated[str | None, Query(max_length=MAX_FACT_PART_CHARS, pattern=WORDS)] = None,
    predicate: Annotated[str | None, Query(max_length=MAX_FACT_PART_CHARS, pattern=WORDS)] = None,
    hops: Annotated[int, Query(ge=1, le=MAX_FACT_HOPS)] = DEFAULT_FACT_HOPS,
    at: Annotated[Moment | None, Query(description="RFC 3339, with its zone.")] = None,
    history: bool = False,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = DEFAULT_FACTS_LIMIT,
) -> list[FactOut]:
    """The user's facts that hold now (or `at` a time; all with `history`), newest first;
    with `entity`, those naming it and, with hops=2, the facts about what they lead to."""
    return await caller.run(
        lambda scoped: fact_scope.listing(
            scoped,
            user=user_id,
            entity=entity,
            predicate=predicate,
            hops=hops,
            at=iso(at),
            history=history,
            limit=limit,
        )
    )


@router.post("/{fact_id}/end")
async def end_fact(fact_id: FactId, body: EndFactRequest, caller: Authenticated) -> FactOut:
    """Say a fact stopped holding; it stays in the history."""
    return await caller.run(
        lambda scoped: fact_scope.end(scoped, fact_id, valid_until=iso(body.valid_until))
    )
