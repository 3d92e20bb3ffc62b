"""Supervisor checkpoints (seed 003 §15) in the Python API: `Checkpoints` gives
`MnemoLedger` its `save_checkpoint`, `load_checkpoint` and `checkpoints`.

    memory.save_checkpoint("maya", "run-42", {"graph": {...}, "messages": [...]})
    memory.load_checkpoint("maya", "run-42")             # the newest, or None
    memory.load_checkpoint("maya", "run-42", version=1)  # the first one saved
    memory.checkpoints("maya")                           # threads, newest first

A save is one `CheckpointSaved` event in the thread's stream (`ledger.checkpoint`); the
`checkpoints` read model keeps the newest per thread; every earlier one stays in the log.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from eventsourcing.persistence import IntegrityError
from pydantic import BaseModel

from mnemoledger.commands.parts import Parts
from mnemoledger.ledger.application import retry_on_conflict
from mnemoledger.ledger.checkpoint import (
    Checkpoint,
    checkpoint_id,
    checkpoint_text,
)
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import ERASED_TEXT, MAX_LIST_LIMIT, MAX_POSITION
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.checkpoints import CheckpointRow

CHECKPOINTS_DEFAULT_LIMIT: Final = 50
"""Not in the seeds: threads `checkpoints` lists when no limit is given."""

READ_MODEL = "checkpoints"
"""The read model a load or a listing catches up (the others follow at their next read)."""


class CheckpointInfo(BaseModel):
    """One thread's newest checkpoint, without its data (listings)."""

    user_id: str
    thread_id: str
    revision: int
    """The checkpoint's number in its thread: 1 for the first saved, then 2, 3, ..."""
    created_at: str
    """When the thread's first checkpoint was saved (UTC, ISO 8601)."""
    updated_at: str
    """When this checkpoint was saved."""
    agent_id: str | None
    actor: str
    size: int
    """Bytes of the checkpoint as JSON text."""


class CheckpointOut(CheckpointInfo):
    """A checkpoint: the state saved for a thread."""

    data: dict[str, Any]
    """The saved JSON object, as it was given."""


class Checkpoints:
    """Save and load agents' per-(user, thread) state; every version stays in the log."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def save_checkpoint(
        self,
        user: str,
        thread: str,
        data: Mapping[str, Any],
        *,
        agent: str | None = None,
    ) -> CheckpointOut:
        """`MnemoLedger.save_checkpoint`: save a thread's newest checkpoint (documented there)."""
        user_id = str(identifier("user", user))
        thread_id = str(identifier("thread", thread))
        text = checkpoint_text(data)
        provenance = self.parts.provenance(user_id, agent, thread_id)
        ledger = self.parts.ledger
        stream = checkpoint_id(user_id, thread_id)

        def attempt() -> None:
            # The stream's newest version is all a save needs (revision = version - 1: the
            # stream starts with `CheckpointStarted`); folding it would decrypt every
            # earlier checkpoint, so the event is appended after the newest one as is.
            newest = ledger.recorder.select_events(stream, desc=True, limit=1)
            with acting_as(replace(provenance, user_id=user_id)):
                if not newest:
                    checkpoint = Checkpoint(user_id=user_id, thread=thread_id)
                    checkpoint.save_data(thread_id, 1, text)
                    ledger.save(checkpoint)
                    return
                version = newest[0].originator_version
                saved = Checkpoint.CheckpointSaved(  # type: ignore[attr-defined]
                    originator_id=stream,
                    originator_version=version + 1,
                    timestamp=Checkpoint.CheckpointSaved.create_timestamp(),  # type: ignore[attr-defined]
                    thread=thread_id,
                    revision=version,
                    data=text,
                )
            ledger.save(saved)

        try:
            retry_on_conflict(attempt)
        except IntegrityError:  # pragma: no cover - five concurrent saves of one thread
            raise InvalidInput(
                f"checkpoint of thread {thread_id!r} kept changing while saving; try again"
            ) from None
        found = self.load_checkpoint(user_id, thread_id)
        assert found is not None, "a saved checkpoint is in the read model once caught up"
        return found

    def load_checkpoint(
        self, user: str, thread: str, *, version: int | None = None
    ) -> CheckpointOut | None:
        """`MnemoLedger.load_checkpoint`: a thread's newest checkpoint (documented there)."""
        user_id = str(identifier("user", user))
        thread_id = str(identifier("thread", thread))
        if version is not None and (
            isinstance(version, bool)
            or not isinstance(version, int)
            or not 1 <= version <= MAX_POSITION
        ):
            raise InvalidInput(f"version must be a whole number from 1; got {version!r}")
        self.parts.runner.catch_up(names=[READ_MODEL])
        found = self.parts.checkpoints_model.get(user_id, thread_id)
        if found is None:
            return None  # none saved, or the user was erased
        row, text = found
        if version is None or version == row.revision:
            return _out(row, text)
        if version > row.revision:
            return None
        return self._from_log(row, version)

    def checkpoints(
        self, user: str, limit: int = CHECKPOINTS_DEFAULT_LIMIT
    ) -> builtins.list[CheckpointInfo]:
        """`MnemoLedger.checkpoints`: the user's threads with a checkpoint (documented there)."""
        user_id = str(identifier("user", user))
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= MAX_LIST_LIMIT
        ):
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST_LIMIT}; got {limit!r}")
        self.parts.runner.catch_up(names=[READ_MODEL])
        return [_info(row) for row in self.parts.checkpoints_model.list(user_id, limit)]

    def _from_log(self, row: CheckpointRow, revision: int) -> CheckpointOut | None:
        """An earlier checkpoint of the thread, read from its stream in the log."""
        ledger = self.parts.ledger
        ledger.keys.sync()
        stored = ledger.recorder.select_events(
            checkpoint_id(row.user_id, row.thread_id), gt=revision, lte=revision + 1
        )
        if not stored:
            return None
        event = ledger.mapper.to_domain_event(stored[0])
        text = getattr(event, "data", None)
        if (
            not isinstance(event, Checkpoint.CheckpointSaved)  # type: ignore[attr-defined]
            or not isinstance(text, str)
            or text == ERASED_TEXT  # saved before the user was erased (and wrote again)
        ):
            return None
        earlier = replace(
            row,
            revision=revision,
            updated_at=event.timestamp.isoformat(),
            agent_id=getattr(event, "agent_id", None),
            actor=str(getattr(event, "actor", "")),
            size=len(text.encode("utf-8", "surrogatepass")),
        )
        return _out(earlier, text)


def _info(row: CheckpointRow) -> CheckpointInfo:
    return CheckpointInfo(
        user_id=row.user_id,
        thread_id=row.thread_id,
        revision=row.revision,
        created_at=row.created_at,
        updated_at=row.updated_at,
        agent_id=row.agent_id,
        actor=row.actor,
        size=row.size,
    )


def _out(row: CheckpointRow, text: str) -> CheckpointOut:
    data = json.loads(text)
    return CheckpointOut(**_info(row).model_dump(), data=data)
