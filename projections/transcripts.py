"""The `transcripts` read model: session transcript chunks, searchable (seed 004 §8, §11).

Nebo indexes compacted session messages so that what was *said* stays recoverable by
search, not only what extraction kept. Here a session is one ingest: the turns an
`IngestRequested` event recorded (its command id is the session id, like Nebo's
`path = sessionID`). Its non-empty messages are grouped into blocks of 5, each block is
rendered as `role: content\\n\\n` lines and split by the seed's chunker (1600 characters,
320 of overlap, on sentence boundaries), and every chunk is stored with its embedding and
an FTS5 entry, per user.

`AddRequested` contents are *not* indexed: each becomes memories (the `layers` and `vectors`
read models already search them); indexing the raw text again would count it twice. Notes
are memories too. Only conversations are transcripts.

Chunks are never changed once written (the log's turns never change), so a page only
inserts; its rows and position commit in one transaction (`SQLiteReadModel`). Embeddings of
a page are computed in one batch before the transaction, through the embedding cache, so a
rebuild embeds nothing again. Vector search is exact (inner product of L2-normalised
vectors over the user's chunks, as FAISS `IndexFlatIP` would do), on a per-user matrix
cached in memory and reloaded when the user's chunks or the read model's generation change.

Scores (seed 004 §6): `vector_weight x cosine + text_weight x normalised BM25`, then x 0.6
(session chunks are "less precise than dedicated memory records"; the seed dampens their FTS
channel, here the whole chunk score is dampened so that a merged hybrid search ranks a
chunk below a memory of equal match whichever channel found it). BM25 is normalised as
|rank| / (1 + |rank|), which grows with the match; the seed's literal `1 / (1 - rank)` for
negative ranks would shrink as the match improves.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.policy import (
    CHUNK_MAX_CHARS,
    CHUNK_OVERLAP_CHARS,
    SEARCH_DEFAULT_WEIGHTS,
    SEARCH_OVERFETCH,
    SESSION_CHUNK_DAMPENING,
    TRANSCRIPT_BLOCK_MESSAGES,
)
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.sqlite_model import SQLiteReadModel

logger = logging.getLogger(__name__)

INGEST_REQUESTED = "IngestRequested"
"""The event whose recorded turns are a session transcript."""

CACHED_USERS = 64
"""Users whose chunk matrices stay in memory (least recently searched are dropped)."""

# --- the seed's chunker (004 §8) ------------------------------------------------------------

_SENTENCE_END = re.compile(r"\n\n|[.!?][ \n\t]")
"""Boundaries: a blank line, or . ! ? followed by a space, newline or tab (the delimiter
stays with the sentence before it)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a text: `text == original[start_char:end_char]`."""

    text: str
    start_char: int
    end_char: int
    index: int


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`; together they cover it exactly."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _bounded(spans: list[tuple[int, int]], text: str, max_chars: int) -> list[tuple[int, int]]:
    """Sentences longer than `max_chars` cut at the last whitespace that fits (or hard):
    the seed keeps such a sentence whole, which makes a chunk of any size."""
    bounded: list[tuple[int, int]] = []
    for start, end in spans:
        while end - start > max_chars:
            cut = text.rfind(" ", start + 1, start + max_chars) + 1 or start + max_chars
            bounded.append((start, cut))
            start = cut
        bounded.append((start, end))
    return bounded


def split_text(
    text: str, max_chars: int = CHUNK_MAX_CHARS, overlap_chars: int = CHUNK_OVERLAP_CHARS
) -> list[Chunk]:
    """SplitText (seed 004 §8): the trimmed text as one chunk if shorter than
    `max_chars + overlap_chars`; else sentences accumulated up to `max_chars` per chunk,
    each next chunk starting ~`overlap_chars` of whole sentences back. Offsets refer to
    `text` as given; a sentence longer than `max_chars` is cut at whitespace."""
    if max_chars < 1 or overlap_chars < 0:
        raise ValueError("max_chars must be >= 1 and overlap_chars >= 0")
    lead = len(text) - len(text.lstrip())
    body = text.strip()
    if not body:
        return []
    if len(body) < max_chars + overlap_chars:
        return [Chunk(body, lead, lead + len(body), 0)]
    spans = _bounded(split_sentences(body), body, max_chars)
    chunks: list[Chunk] = []
    i = 0
    while i < len(spans):
        first, size = i, 0
        while i < len(spans):
            length = spans[i][1] - spans[i][0]
            if size + length > max_chars and size > 0:
                break
            size += length
            i += 1
        start, end = spans[first][0], spans[i - 1][1]
        chunks.append(Chunk(body[start:end], lead + start, lead + end, len(chunks)))
        if i >= len(spans):
            break
        overlap, rewind = 0, i  # walk back whole sentences, never to the chunk's first one
        for j in range(i - 1, first, -1):
            overlap += spans[j][1] - spans[j][0]
            rewind = j
            if overlap >= overlap_chars:
                break
        i = rewind
    return chunks


# --- sessions (004 §11) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """One non-empty message of a session; `turn` counts the recorded turns from 1."""

    role: str
    content: str
    turn: int


@dataclass(frozen=True, slots=True)
class SessionChunk:
    """A chunk of one block of a session."""

    block: int
    """The block's number in the session, from 0."""
    index: int
    """The chunk's number in its block, from 0."""
    first_turn: int
    last_turn: int
    text: str
    start_char: int
    """Offsets in the block's rendered text."""
    end_char: int


def session_messages(turns: Sequence[Mapping[str, Any]]) -> list[Message]:
    """The messages worth indexing: every turn with non-blank content, in order."""
    found: list[Message] = []
    for number, turn in enumerate(turns, start=1):
        content = turn.get("content") if isinstance(turn, Mapping) else None
        if isinstance(content, str) and content.strip():
            found.append(Message(str(turn.get("role") or "unknown"), content, number))
    return found


def message_blocks(
    messages: Sequence[Message], size: int = TRANSCRIPT_BLOCK_MESSAGES
) -> list[list[Message]]:
    """Consecutive blocks of `size` messages (the last may be shorter)."""
    return [list(messages[i : i + size]) for i in range(0, len(messages), size)]


def block_text(block: Sequence[Message]) -> str:
    """A block as the seed concatenates it: `role: content\\n\\n` per message."""
    return "".join(f"{m.role}: {m.content}\n\n" for m in block)


def session_chunks(turns: Sequence[Mapping[str, Any]]) -> list[SessionChunk]:
    """Every chunk of a session's blocks, in order."""
    chunks: list[SessionChunk] = []
    for number, block in enumerate(message_blocks(session_messages(turns))):
        for chunk in split_text(block_text(block)):
            chunks.append(
                SessionChunk(
                    number,
                    chunk.index,
                    block[0].turn,
                    block[-1].turn,
                    chunk.text,
                    chunk.start_char,
                    chunk.end_char,
                )
            )
    return chunks


def chunk_id(session_id: str, block: int, index: int) -> str:
    """A chunk's stable id: the same whichever way the read model was built."""
    return f"{session_id}:{block}:{index}"


# --- the read model -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A stored transcript chunk."""

    chunk_id: str
    user_id: str
    session_id: str
    """The ingest command whose turns the chunk comes from."""
    thread_id: str | None
    agent_id: str | None
    block: int
    index: int
    first_turn: int
    last_turn: int
    start_char: int
    end_char: int
    text: str
    at: str
    """When the session was recorded (ISO-8601 UTC)."""
    position: int


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """A chunk found by `TranscriptsProjection.hits`, with its score parts."""

    chunk: ChunkRow
    score: float
    """(vector_weight x vector_score + text_weight x text_score) x 0.6."""
    vector_score: float | None
    """Cosine similarity with the query (clamped at 0), if the vector channel found it."""
    text_score: float | None
    """Normalised BM25 in 0..1, if the keyword channel found it."""


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS transcript_chunks ("
    " seq INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL,"
    " session_id TEXT NOT NULL, thread_id TEXT, agent_id TEXT, block INTEGER NOT NULL,"
    " chunk_index INTEGER NOT NULL, first_turn INTEGER NOT NULL, last_turn INTEGER NOT NULL,"
    " start_char INTEGER NOT NULL, end_char INTEGER NOT NULL, text TEXT NOT NULL,"
    " vector BLOB NOT NULL, at TEXT NOT NULL, position INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS transcript_chunks_by_user ON transcript_chunks (user_id, seq)",
    "CREATE INDEX IF NOT EXISTS transcript_chunks_by_session ON transcript_chunks (session_id)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS transcript_chunks_fts USING fts5("
    "text, content = 'transcript_chunks', content_rowid = 'seq', "
    "tokenize = 'unicode61 remove_diacritics 2')",
    "CREATE TABLE IF NOT EXISTS transcript_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)
_ROW_COLUMNS = (
    "chunk_id, user_id, session_id, thread_id, agent_id, block, chunk_index, first_turn, "
    "last_turn, start_char, end_char, text, at, position"
)
_INSERT = (
    "INSERT INTO transcript_chunks (chunk_id, user_id, session_id, thread_id, agent_id, block,"
    " chunk_index, first_turn, last_turn, start_char, end_char, text, vector, at, position)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_WORD = re.compile(r"\w+", re.UNICODE)

Matrix = npt.NDArray[np.float32]


class TranscriptsProjection(SQLiteReadModel):
    """Session transcript chunks per user, with FTS5 and embeddings (seed 004 §11)."""

    name = "transcripts"
    schema = _SCHEMA

    def __init__(self, directory: Path, embedder: Embedder) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.embedder = embedder
        self._lock = threading.RLock()
        self._pending: dict[str, list[tuple[SessionChunk, bytes]]] = {}
        self._matrices: OrderedDict[str, tuple[tuple[str, int], npt.NDArray[np.int64], Matrix]]
        self._matrices = OrderedDict()
        super().__init__(directory / "transcripts.sqlite3")
        self._adopt_embedder()

    # --- Projection ----------------------------------------------------------------------

    def apply(self, records: Sequence[EventRecord]) -> None:
        """Chunk and embed the page's sessions in one batch, then insert rows and position
        in one transaction."""
        with self._lock:
            self._pending = self._prepare(records)
            try:
                super().apply(records)
            finally:
                self._pending = {}

    def handle(self, record: EventRecord) -> None:
        if record.type != INGEST_REQUESTED:
            return
        prepared = self._pending.get(record.stream_id)
        if prepared is None:  # pragma: no cover - `apply` prepares every session of a page
            prepared = self._prepare([record]).get(record.stream_id, [])
        self.db.executemany(
            _INSERT,
            [
                (
                    chunk_id(record.stream_id, c.block, c.index),
                    record.user_id,
                    record.stream_id,
                    record.thread_id,
                    record.agent_id,
                    c.block,
                    c.index,
                    c.first_turn,
                    c.last_turn,
                    c.start_char,
                    c.end_char,
                    c.text,
                    vector,
                    record.at.isoformat(),
                    record.position,
                )
                for c, vector in prepared
            ],
        )
        self.db.execute(
            "INSERT INTO transcript_chunks_fts (rowid, text) SELECT seq, text "
            "FROM transcript_chunks WHERE session_id = ?",
            (record.stream_id,),
        )

    def reset(self) -> None:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.execute("DELETE FROM transcript_chunks")
                self.db.execute(
                    "INSERT INTO transcript_chunks_fts (transcript_chunks_fts) "
                    "VALUES ('delete-all')"
                )
                self.db.execute("DELETE FROM projection_position")
                self._set_meta("generation", secrets.token_hex(16))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self._matrices.clear()

    def close(self) -> None:
        with self._lock:
            self._matrices.clear()
            super().close()

    # --- queries -------------------------------------------------------------------------

    def search(self, user_id: str, query: str, k: int) -> list[tuple[str, str, float]]:
        """The `k` best chunks of `user_id` for `query`: (chunk id, text, dampened score),
        best first, ties by chunk id."""
        return [(h.chunk.chunk_id, h.chunk.text, h.score) for h in self.hits(user_id, query, k)]

    def hits(
        self,
        user_id: str,
        query: str,
        k: int,
        weights: tuple[float, float] = SEARCH_DEFAULT_WEIGHTS,
    ) -> list[ChunkHit]:
        """Like `search`, with each chunk's row and score parts; `weights` are (vector,
        text) weights (seed 004 §6 defaults 0.7 / 0.3; adaptive weights may be passed)."""
        if k <= 0 or not query.strip():
            return []
        pool = k * SEARCH_OVERFETCH
        with self._lock:
            text_scores = self._keyword(user_id, query, pool)
            vector_scores = self._nearest(user_id, query, pool)
            rows = self._rows_by_seq(set(text_scores) | set(vector_scores))
        vector_weight, text_weight = weights
        found = [
            ChunkHit(
                row,
                SESSION_CHUNK_DAMPENING
                * (
                    vector_weight * vector_scores.get(seq, 0.0)
                    + text_weight * text_scores.get(seq, 0.0)
                ),
                vector_scores.get(seq),
                text_scores.get(seq),
            )
            for seq, row in rows.items()
        ]
        found.sort(key=lambda hit: (-hit.score, hit.chunk.chunk_id))
        return found[:k]

    def chunks(self, user_id: str | None = None, session_id: str | None = None) -> list[ChunkRow]:
        """Stored chunks in the order they were written, filtered when asked."""
        clauses, params = [], []
        for column, value in (("user_id", user_id), ("session_id", session_id)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        with self._lock:
            result = self.db.execute(
                f"SELECT {_ROW_COLUMNS} FROM transcript_chunks {where} ORDER BY seq", params
            ).fetchall()
        return [ChunkRow(*row) for row in result]

    def count(self, user_id: str | None = None) -> int:
        """How many chunks are stored (for `user_id`, if given)."""
        sql = "SELECT COUNT(*) FROM transcript_chunks"
        params: tuple[str, ...] = ()
        if user_id is not None:
            sql, params = sql + " WHERE user_id = ?", (user_id,)
        with self._lock:
            return int(self.db.execute(sql, params).fetchone()[0])

    # --- internals -----------------------------------------------------------------------

    def _prepare(
        self, records: Sequence[EventRecord]
    ) -> dict[str, list[tuple[SessionChunk, bytes]]]:
        """Every session's chunks with their vectors, embedded in one batch."""
        sessions: dict[str, list[SessionChunk]] = {}
        for record in records:
            if record.type != INGEST_REQUESTED:
                continue
            given = record.data.get("input")
            turns = given.get("turns") if isinstance(given, Mapping) else None
            sessions[record.stream_id] = session_chunks(turns if isinstance(turns, list) else [])
        texts = list(dict.fromkeys(c.text for chunks in sessions.values() for c in chunks))
        if not texts:
            return {session: [] for session in sessions}
        matrix = np.ascontiguousarray(self.embedder.passages(texts), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise RuntimeError(
                f"{self.embedder.model} returned {matrix.shape[0]} vectors for {len(texts)} texts"
            )
        blobs = {text: matrix[i].tobytes() for i, text in enumerate(texts)}
        return {
            session: [(c, blobs[c.text]) for c in chunks] for session, chunks in sessions.items()
        }

    def _keyword(self, user_id: str, query: str, pool: int) -> dict[int, float]:
        """FTS5 over the user's chunks, any word of `query`: seq -> normalised BM25."""
        words = _WORD.findall(query.lower())
        if not words:
            return {}
        match = " OR ".join('"' + w + '"' for w in dict.fromkeys(words))
        result = self.db.execute(
            "SELECT c.seq, bm25(transcript_chunks_fts) AS rank FROM transcript_chunks_fts "
            "JOIN transcript_chunks c ON c.seq = transcript_chunks_fts.rowid "
            "WHERE transcript_chunks_fts MATCH ? AND c.user_id = ? ORDER BY rank, c.seq LIMIT ?",
            (match, user_id, pool),
        ).fetchall()
        return {int(seq): abs(rank) / (1.0 + abs(rank)) for seq, rank in result}

    def _nearest(self, user_id: str, query: str, pool: int) -> dict[int, float]:
        """Exact inner product with the query over the user's chunks: seq -> cosine >= 0."""
        seqs, matrix = self._matrix(user_id)
        if not len(seqs):
            return {}
        vector = np.ascontiguousarray(self.embedder.query(query), dtype=np.float32).reshape(-1)
        if vector.shape[0] != matrix.shape[1]:
            raise ValueError(
                f"query vector has {vector.shape[0]} dimensions; chunks have {matrix.shape[1]}"
            )
        scores = matrix @ vector
        order = np.lexsort((seqs, -scores))[:pool]
        return {int(seqs[i]): max(float(scores[i]), 0.0) for i in order}

    def _matrix(self, user_id: str) -> tuple[npt.NDArray[np.int64], Matrix]:
        """The user's chunk vectors, cached until the user's chunks or the generation change."""
        generation = self._meta("generation") or ""
        (last,) = self.db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM transcript_chunks WHERE user_id = ?", (user_id,)
        ).fetchone()
        key = (generation, int(last))
        cached = self._matrices.get(user_id)
        if cached is not None and cached[0] == key:
            self._matrices.move_to_end(user_id)
            return cached[1], cached[2]
        rows = self.db.execute(
            "SELECT seq, vector FROM transcript_chunks WHERE user_id = ? AND seq <= ? ORDER BY seq",
            (user_id, key[1]),
        ).fetchall()
        seqs = np.asarray([seq for seq, _ in rows], dtype=np.int64)
        if rows:
            matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
            matrix = matrix.reshape(len(rows), -1)
        else:
            matrix = np.zeros((0, 0), dtype=np.float32)
        self._matrices[user_id] = (key, seqs, matrix)
        self._matrices.move_to_end(user_id)
        while len(self._matrices) > CACHED_USERS:
            self._matrices.popitem(last=False)
        return seqs, matrix

    def _rows_by_seq(self, seqs: set[int]) -> dict[int, ChunkRow]:
        found: dict[int, ChunkRow] = {}
        ordered = sorted(seqs)
        for start in range(0, len(ordered), 500):
            part = ordered[start : start + 500]
            marks = ", ".join("?" * len(part))
            for seq, *row in self.db.execute(
                f"SELECT seq, {_ROW_COLUMNS} FROM transcript_chunks WHERE seq IN ({marks})",
                part,
            ):
                found[int(seq)] = ChunkRow(*row)
        return found

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM transcript_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO transcript_meta (key, value) VALUES (?, ?)", (key, value)
        )

    def _adopt_embedder(self) -> None:
        """Vectors of another model are useless: drop them, so the runner replays the log."""
        with self._lock:
            model = self._meta("model")
            if model is not None and model != self.embedder.model:
                logger.warning(
                    "transcript chunks were embedded by %s and the embedder is now %s: "
                    "dropping them to rebuild",
                    model,
                    self.embedder.model,
                )
                self.reset()
            if self._meta("generation") is None:
                self._set_meta("generation", secrets.token_hex(16))
            self._set_meta("model", self.embedder.model)
