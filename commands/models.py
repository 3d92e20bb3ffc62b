"""Response models shared by the Python facade, the CLI's --json output and the HTTP API."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from mnemoledger.ledger import Memory


class MemoryOut(BaseModel):
    """One memory, current state."""

    id: str
    user_id: str
    content: str
    layer: str
    kind: str
    state: str
    importance: float
    tags: list[str]
    source: str
    namespace: str
    repetition_count: int
    expires_at: str | None
    expired: bool
    created_at: str
    updated_at: str
    version: int
    key: str | None = None
    note_kind: str | None = None
    stability: str = "stable"
    sensitivity: str = "normal"
    confidence: float | None = None
    evidence: list[str] | None = None
    metadata: dict[str, Any] | None = None
    superseded_by: str | None = None
    category: str | None = None
    """The category its writer named; queries derive one when it is None."""
    links: list[EdgeOut] = Field(default_factory=list)


class EdgeOut(BaseModel):
    """A relation edge between two memories."""

    from_id: str = Field(serialization_alias="from")
    to: str
    type: str
    strength: float


class AddResult(BaseModel):
    """What one `add` call did."""

    command_id: str
    memories: list[MemoryOut]
    """The memories this call created."""
    superseded: list[str] = Field(default_factory=list)
    """Ids of the related memories the new ones replaced."""
    reinforced: list[MemoryOut] = Field(default_factory=list)
    """Existing memories the contents duplicated (repetition + 1, merged wording)."""
    core_updated: bool = False
    fallback: bool = False
    """True when reconstruction failed twice and the normalized contents were stored."""
    llm_calls: int = 0
    not_kept: list[str] = Field(default_factory=list)
    """Pieces not worth keeping (greetings, thanks, acknowledgements, questions): not stored."""
    pending: bool = False
    """True when the add was recorded and not processed yet (`wait=False`): the other fields
    are empty; `command(command_id)` tells when it is done and what it did."""


class CommandOut(BaseModel):
    """One recorded command (an add, an ingest, a note, ...): what it is and how it ended."""

    command_id: str
    kind: str
    """What was asked: `add`, `ingest`, `note`, `consolidation`, ..."""
    status: Literal["requested", "completed", "failed"]
    """`requested`: recorded and not processed yet (or being processed)."""
    user_id: str
    requested_at: str
    """When the request was recorded (ISO 8601, UTC)."""
    llm_calls: int = 0
    outcome: dict[str, Any] | None = None
    """What it did (the ids it added, superseded, reinforced) or why it failed."""


class CoreOut(BaseModel):
    """A user's core.md."""

    user_id: str
    markdown: str
    version: int
    path: str | None


class FoundMemory(BaseModel):
    """One search result as an agent reads it (MCP): the memory, its score and where it
    came from, best first."""

    id: str
    content: str
    score: float
    layer: str
    kind: str
    namespace: str = "default"
    key: str | None = None
    """The memory's key, if it was stored by one."""
    evidence: list[str] | None = None
    """Where the memory came from: the evidence ids its writer gave (a source turn, a
    message id), merged across the adds that restated it."""
    thread_id: str | None = None
    """The conversation thread of the add that created it, if any."""
    agent_id: str | None = None
    """The agent of the add that created it, if any."""
    created_at: str | None = None
    """When it was created (ISO-8601 UTC)."""


class SearchHit(FoundMemory):
    """One search result, best first, with how it was ranked (what an evaluation reads, not
    what an agent needs: `found()` leaves it out)."""

    keyword_rank: int | None
    vector_rank: int | None
    relevance: float | None = None
    """The fused query relevance (0-1) the recall score is built on."""
    vector_score: float | None = None
    """Cosine similarity with the query, when the vector retriever returned the memory."""
    text_score: float | None = None
    """Normalised BM25 (0-1), when the keyword retriever returned the memory."""
    recency: float | None = None
    """0-1, halving every week since the memory last changed."""
    source: str | None = None
    """Which retrievers found it: `fts`, `vector`, `fts+vector`, or `fact` (the fact
    graph channel)."""
    answer: float | None = None
    """The relevance model's likelihood (0-1) that the memory answers the query, when it
    read it (setting `search_relevance`)."""
    fused: float | None = None
    """When the relevance model read it: the retrievers' fused relevance before the model's
    blend made it `relevance`."""

    def found(self) -> FoundMemory:
        """The hit as an agent reads it: the memory and where it came from."""
        return FoundMemory.model_validate(self.model_dump(include=set(FoundMemory.model_fields)))


class EventOut(BaseModel):
    """One event of the log."""

    position: int | None
    type: str
    stream: str
    version: int
    at: str
    user_id: str
    actor: str
    agent_id: str | None
    thread_id: str | None
    causation_id: str
    prompt_version: str | None
    data: dict[str, Any]


class RebuildResult(BaseModel):
    """What a rebuild replayed."""

    projections: list[str]
    events: int
    seconds: float


class Stats(BaseModel):
    """Counts of the log and the read models."""

    events: int
    memories: int
    users: int
    links: int
    by_layer: dict[str, int]
    by_state: dict[str, int]
    projections: dict[str, int]
    embedder: str


MemoryOut.model_rebuild()


def memory_out(memory: Memory, *, just_added: bool = False) -> MemoryOut:
    """A memory aggregate (just decided, maybe not yet projected) as the API shows it. A
    memory said at a past time (an import) was created then; `just_added` (every event of
    it is the add's that wrote it, its links) makes that its last change too, as the
    `layers` read model shows it."""
    at = memory.said_at or memory.created_on.isoformat()
    changed = at if memory.said_at is not None and just_added else memory.modified_on.isoformat()
    fields: dict[str, Any] = {
        "id": memory.id.hex,
        "user_id": memory.user_id,
        "content": memory.content,
        "layer": memory.layer,
        "kind": memory.kind,
        "state": memory.state,
        "importance": memory.importance,
        "tags": list(memory.tags),
        "source": memory.source,
        "namespace": memory.namespace,
        "repetition_count": memory.repetition_count,
        "expires_at": memory.expires_at,
        "expired": False,
        "created_at": at,
        "updated_at": changed,
        "version": memory.version,
        "key": memory.key,
        "note_kind": memory.note_kind,
        "stability": memory.stability,
        "sensitivity": memory.sensitivity,
        "confidence": memory.confidence,
        "evidence": memory.evidence,
        "metadata": memory.metadata,
        "superseded_by": memory.superseded_by,
        "category": memory.category,
    }
    return MemoryOut(**fields)
