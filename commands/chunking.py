"""Text chunking (seed 004 §8) and session blocks (§11), for commands.

The chunker is implemented next to the read model that derives transcript chunks,
`projections/transcripts.py`, because projections never import commands (README,
Architecture); commands use it from here.

    split_text(text)            -> [Chunk(text, start_char, end_char, index), ...]
        one chunk below 1600 + 320 characters; else sentences (a blank line, or . ! ?
        before whitespace) accumulated up to 1600 characters, each next chunk starting
        ~320 characters of whole sentences back; `text[start_char:end_char] == chunk.text`
    session_chunks(turns)       -> [SessionChunk(block, index, first_turn, last_turn, ...)]
        non-empty turns in blocks of 5, each rendered `role: content\\n\\n` and split
"""

from __future__ import annotations

from ledger.policy import CHUNK_MAX_CHARS, CHUNK_OVERLAP_CHARS, TRANSCRIPT_BLOCK_MESSAGES
from projections.transcripts import (
    Chunk,
    Message,
    SessionChunk,
    block_text,
    chunk_id,
    message_blocks,
    session_chunks,
    session_messages,
    split_sentences,
    split_text,
)

__all__ = [
    "CHUNK_MAX_CHARS",
    "CHUNK_OVERLAP_CHARS",
    "TRANSCRIPT_BLOCK_MESSAGES",
    "Chunk",
    "Message",
    "SessionChunk",
    "block_text",
    "chunk_id",
    "message_blocks",
    "session_chunks",
    "session_messages",
    "split_sentences",
    "split_text",
]
