"""Supervisor checkpoints (seed 003 §15): one stream per (user, thread) holding every saved
state of an agent's run (graph state, memory context, conversation history, agent states:
one JSON object), so it survives restarts and every earlier checkpoint stays in the log.

The stream's id is derived from the user and the thread (uuid5), so every process finds
the same stream without a lookup. Each save is one `CheckpointSaved` event carrying the
object as its JSON text, the thread and the save's revision (1, 2, ...). The text is
content: sealed with the user's data key like a memory's (`ledger.encryption`), so erasing
the user shreds every checkpoint they saved.

Why JSON text and not the object itself: the log's transcoder revives any two-key object
`{"_type_": ..., "_data_": ...}` as a registered type, and an arbitrary agent state may
hold exactly that (or integers beyond 64 bits); a text comes back as it was written.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from mnemoledger.ledger import validation
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.event import LedgerEvent

MAX_CHECKPOINT_BYTES: Final = 512 * 1024
"""Not in the seeds: the largest checkpoint, as compact UTF-8 JSON (512 KiB; room within
the HTTP API's 1 MiB body, and a save stays far below the seed's 100 ms)."""

MAX_CHECKPOINT_DEPTH: Final = 64
"""Not in the seeds: how deep a checkpoint's objects and lists may nest."""

_CHECKPOINT_NAMESPACE = UUID("3c6a2f1e-9b47-4d8a-a5e2-7f10c4b9d6e3")


@dataclass
class Checkpoint(Aggregate, created_event_name="CheckpointStarted"):
    """The saved states of one (user, thread), newest last."""

    class Event(LedgerEvent):
        """Every event of a checkpoint stream carries the provenance metadata."""

    user_id: str
    """The user the thread belongs to."""
    thread: str
    """The thread (conversation, run) whose state is saved."""
    revision: int = field(default=0, init=False)
    """How many checkpoints were saved (the newest one's revision)."""
    data: str = field(default="{}", init=False)
    """The newest checkpoint, as JSON text."""

    @staticmethod
    def create_id(user_id: str, thread: str) -> UUID:
        return checkpoint_id(user_id, thread)

    @event("CheckpointSaved")
    def save_data(self, thread: str, revision: int, data: str) -> None:
        """Record a new checkpoint: `data` is the object's JSON text (`checkpoint_text`)."""
        self.revision = revision
        self.data = data


def checkpoint_id(user_id: str, thread: str) -> UUID:
    """The stream of the checkpoints of `thread` of `user_id`."""
    return uuid.uuid5(_CHECKPOINT_NAMESPACE, f"checkpoint:{user_id}:{thread}")


def checkpoint_text(data: object) -> str:
    """The JSON text a checkpoint is stored as: `data` must be a JSON object (a mapping
    with text keys) of at most `MAX_CHECKPOINT_BYTES` bytes and `MAX_CHECKPOINT_DEPTH`
    levels, with finite numbers only."""
    if not isinstance(data, Mapping):
        raise InvalidInput(f"checkpoint data must be a JSON object, not {_json_kind(data)}")
    validation.json_depth(data, "checkpoint data", MAX_CHECKPOINT_DEPTH)
    bad_key = next((k for k in data if not isinstance(k, str)), None)
    if bad_key is not None:
        raise InvalidInput(f"checkpoint data keys must be text; got {bad_key!r}")
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InvalidInput(f"checkpoint data is not JSON: {error}") from None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_CHECKPOINT_BYTES:
        raise InvalidInput(
            f"checkpoint data is {size} bytes as JSON; the limit is {MAX_CHECKPOINT_BYTES}"
        )
    return text


def parse_checkpoint(text: str | bytes) -> dict[str, Any]:
    """A checkpoint given as JSON text (CLI, files): it must be one JSON object."""
    try:
        given = text if isinstance(text, str) else text.decode()
        data = json.loads(validation.json_text_depth(given, "checkpoint data"))
    except InvalidInput:
        raise
    except ValueError as error:
        raise InvalidInput(f"checkpoint data is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"checkpoint data must be a JSON object, not {_json_kind(data)}")
    return data


def _json_kind(value: object) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"
