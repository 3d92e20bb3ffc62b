"""Resume, agent context and transcript search in the Python API: `Recall` gives
`MnemoLedger` its `resume`, `context`, `transcripts` and `search_all`.

    memory.resume("maya", namespace="billing").text      # where the user left off
    memory.context("maya", message="book a table").text  # the agent's prompt context
    memory.transcripts("the hotel in Porto", user="maya")  # session chunks

All three are reads: they bring the read models up to date and write nothing to the log.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel

from mnemoledger.commands.models import SearchHit
from mnemoledger.commands.parts import Parts
from mnemoledger.commands.recall.context import AgentContext, build_context
from mnemoledger.commands.recall.context_files import context_directories, load_context_files
from mnemoledger.commands.recall.nudge import nudge_turn
from mnemoledger.commands.recall.reads_api import Reads
from mnemoledger.commands.recall.resume import (
    ResumeOut,
    Topic,
    build_resume,
    compact_relevance,
    epochs_window_start,
    recent_window,
    stored_core_summary,
    tree_topics,
)
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    ACTIVE,
    MAX_TTL_DAYS,
    RESUME_RECENT_HOURS,
    SEARCH_DEFAULT_K,
    SEARCH_DEFAULT_WEIGHTS,
    SEARCH_MAX_K,
    SESSION_SOURCE,
)
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.layers import MemoryRow
from mnemoledger.projections.transcripts import TranscriptsProjection
from mnemoledger.projections.vectors import VectorsProjection

logger = logging.getLogger(__name__)

MAX_RESUME_HOURS = 24 * MAX_TTL_DAYS
MAX_RESUME_EPOCHS = 1_000_000
"""Consolidation epochs a resume's Recent section may look back (a bound on the input)."""
"""Bounds resume's look-back (not in the seeds: the longest TTL, so times stay representable)."""


class TranscriptHit(BaseModel):
    """A session transcript chunk found for a query."""

    source: Literal["session"] = SESSION_SOURCE
    """Marks a hit from a conversation transcript, not a memory record."""
    id: str
    """The chunk id: `<session id>:<block>:<chunk>`."""
    content: str
    score: float
    """Dampened: (vector_weight x vector_score + text_weight x text_score) x 0.6."""
    vector_score: float | None = None
    text_score: float | None = None
    session_id: str
    """The ingest command whose turns the chunk comes from."""
    thread_id: str | None = None
    agent_id: str | None = None
    first_turn: int
    last_turn: int
    """The recorded turns (counted from 1) of the chunk's block."""
    at: str


def transcript_hits(
    transcripts: TranscriptsProjection,
    query: str,
    user_id: str,
    k: int,
    *,
    weights: tuple[float, float] = SEARCH_DEFAULT_WEIGHTS,
) -> list[TranscriptHit]:
    """The `k` best transcript chunks of `user_id` for `query`, best first, each marked
    `source="session"` and scored with the 0.6 dampening (for merging into hybrid search;
    `weights` = (vector, text), e.g. the adaptive weights of seed 004 §6)."""
    return [
        TranscriptHit(
            id=hit.chunk.chunk_id,
            content=hit.chunk.text,
            score=round(hit.score, 6),
            vector_score=None if hit.vector_score is None else round(hit.vector_score, 6),
            text_score=None if hit.text_score is None else round(hit.text_score, 6),
            session_id=hit.chunk.session_id,
            thread_id=hit.chunk.thread_id,
            agent_id=hit.chunk.agent_id,
            first_turn=hit.chunk.first_turn,
            last_turn=hit.chunk.last_turn,
            at=hit.chunk.at,
        )
        for hit in transcripts.hits(user_id, query, k, weights)
    ]


def note_similarities(
    vectors: VectorsProjection, embedder: Embedder, message: str, notes: Sequence[MemoryRow]
) -> Mapping[str, float]:
    """Cosine similarity of each note's stored vector with `message`, by memory id. An
    embedder that fails leaves the context on its recency fallback (seed 002, graceful
    degradation)."""
    try:
        query = np.asarray(embedder.query(message), dtype=np.float32).reshape(-1)
    except Exception as error:  # any provider failure: fall back to recency, as the seed does
        logger.warning("context: embedding the message failed, using recent notes: %s", error)
        return {}
    scores: dict[str, float] = {}
    for note in notes:
        vector = vectors.vector(note.id)
        if vector is not None and vector.shape[0] == query.shape[0]:
            scores[note.id] = float(np.dot(vector, query))
    return scores


class Recall:
    """The session resume, the agent context and transcript search on `MnemoLedger`; memory
    search itself is `reads.search`."""

    def __init__(self, parts: Parts, reads: Reads) -> None:
        self.parts = parts
        self.reads = reads

    def resume(
        self,
        user: str,
        namespace: str | None = None,
        *,
        hours: float = RESUME_RECENT_HOURS,
        topics: Sequence[Topic] | None = None,
        now: datetime | None = None,
        epochs: int | None = None,
        compact: bool = False,
    ) -> ResumeOut:
        """`MnemoLedger.resume`: the session resume (documented there)."""
        identifier("user", user)
        identifier("namespace", namespace, required=False)
        if (
            isinstance(hours, bool)
            or not isinstance(hours, int | float)
            or not 0 < hours <= MAX_RESUME_HOURS
        ):
            raise InvalidInput(
                f"hours must be above 0 and at most {MAX_RESUME_HOURS}; got {hours!r}"
            )
        if epochs is not None and (
            isinstance(epochs, bool)
            or not isinstance(epochs, int)
            or not 0 < epochs <= MAX_RESUME_EPOCHS
        ):
            raise InvalidInput(f"epochs must be 1 to {MAX_RESUME_EPOCHS}; got {epochs!r}")
        self.parts.refresh()
        markdown, version = self.parts.core_model.current(user)
        members = None
        if topics is None and (tree := tree_topics(self.parts.topics_model, user)) is not None:
            topics, members = tree
        rows = self.parts.layers.list(user, state=ACTIVE)
        since = None if epochs is None else epochs_window_start(self.parts.ledger, user, epochs)
        window = recent_window(now or datetime.now(UTC), hours, epochs, since)
        relevance = (
            compact_relevance(rows, self.parts.vectors, namespace, window) if compact else None
        )
        return build_resume(
            rows,
            user_id=user,
            namespace=namespace,
            core_document=markdown,
            core_version=version,
            topics=topics,
            topic_members=members,
            hours=float(hours),
            now=now,
            core_summary=stored_core_summary(self.parts.ledger, user, namespace),
            recent_epochs=epochs,
            recent_since=since,
            relevance=relevance,
        )

    def context(
        self,
        user: str,
        message: str | None = None,
        *,
        environment: str | None = None,
        now: datetime | None = None,
        files_dir: str | Path | None = None,
        turns: Sequence[object] | None = None,
        tool_instructions: bool = False,
    ) -> AgentContext:
        """`MnemoLedger.context`: the agent context (documented there)."""
        identifier("user", user)
        directories = context_directories(files_dir, self.parts.settings.context_files_dir)
        thread_turns = None if turns is None else [nudge_turn(turn) for turn in turns]
        self.parts.refresh()
        vectors, embedder = self.parts.vectors, self.parts.embedder

        def similarity(notes: Sequence[MemoryRow]) -> Mapping[str, float]:
            return note_similarities(vectors, embedder, message or "", notes)

        return build_context(
            self.parts.layers.list(user, state=ACTIVE),
            user_id=user,
            message=message,
            similarity=similarity if message and message.strip() else None,
            environment=environment,
            now=now,
            granted=self.parts.consent_model.profile_fields(user),
            files=(lambda: load_context_files(directories)) if directories else None,
            turns=thread_turns,
            tool_instructions=tool_instructions,
            nudge_disclosure=self.parts.settings.nudge_disclosure,
        )

    def transcripts(
        self, query: str, user: str, k: int = SEARCH_DEFAULT_K
    ) -> builtins.list[TranscriptHit]:
        """`MnemoLedger.transcripts`: search the session transcripts (documented there)."""
        identifier("user", user)
        if not query.strip():
            raise InvalidInput("query is empty")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= SEARCH_MAX_K:
            raise InvalidInput(f"k must be between 1 and {SEARCH_MAX_K}; got {k}")
        self.parts.refresh()
        return transcript_hits(self.parts.transcripts_model, query, user, k)

    def search_all(
        self, query: str, *, user: str, k: int = SEARCH_DEFAULT_K
    ) -> builtins.list[SearchHit | TranscriptHit]:
        """`MnemoLedger.search_all`: memories and transcripts by score (documented there)."""
        memories = self.reads.search(query, user=user, k=k)
        chunks = self.transcripts(query, user, k)
        merged: list[SearchHit | TranscriptHit] = [*memories, *chunks]
        merged.sort(key=lambda hit: -hit.score)  # stable: a memory first on equal scores
        return merged[:k]
