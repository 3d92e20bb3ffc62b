"""Turns handed over now and extracted once their thread goes quiet (seed 004 §3, Trigger 1).

    memory.queue_turns(turns, user="maya", thread="t1")  # after each agent loop: at once
    memory.extract_queued()       # threads quiet for 5 s: one ingest each (the server's job)

Nebo schedules an extraction 5 seconds after an agent loop ends and restarts the wait when
another loop ends first, so a busy conversation is extracted once it pauses, not after
every message. Here the hand-over is an event (`TurnsQueued`), so nothing handed over is
lost when the process stops before the wait is over, and every process on the log sees the
same queue: `serve` extracts due threads in the background, `worker` on each tick, and
anyone may call `extract_queued`. A thread is extracted under its user's writer lock, after
reading which hand-overs are still pending, so two processes never extract the same turns
(Nebo's per-session guard); the ingest records the hand-overs it consumed.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.parts import Parts
from mnemoledger.commands.write.command_run import user_write_lock
from mnemoledger.commands.write.ingest import Turn, too_large, turn_bytes, turn_from
from mnemoledger.commands.write.ingest_api import IngestResult, ingest_pipeline
from mnemoledger.ledger.errors import InvalidInput, LedgerError
from mnemoledger.ledger.policy import EXTRACTION_IDLE_SECONDS, MAX_INGEST_BYTES, MAX_INGEST_TURNS
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.turn_queue import QueuedTurns
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.turn_queue import TURN_QUEUE_DIR

TURN_QUEUE_READS = (TURN_QUEUE_DIR,)


class QueuedOut(BaseModel):
    """What a hand-over came to: its stream, and what the thread now has waiting."""

    queue_id: str
    user_id: str
    thread_id: str
    pending_turns: int
    """Turns of the thread waiting for extraction, this hand-over's included."""
    extract_after_seconds: float
    """How long the thread must stay quiet before its turns are extracted."""


class QueuedThreadOut(BaseModel):
    """A thread with turns waiting for extraction."""

    user_id: str
    thread_id: str
    hand_overs: int
    pending_turns: int
    last_queued_at: datetime


class QueuedExtraction(BaseModel):
    """One extraction of a quiet thread's waiting turns."""

    user_id: str
    thread_id: str
    hand_overs: list[str]
    result: IngestResult | None = None
    error: str | None = None
    """Why the extraction failed (recorded on its command; its turns are not retried)."""


class TurnQueue:
    """The turn queue on `MnemoLedger`: hand turns over, extract them when the thread is quiet."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def queue_turns(
        self,
        turns: Sequence[Turn | Mapping[str, Any]],
        *,
        user: str,
        thread: str,
        agent: str | None = None,
    ) -> QueuedOut:
        """`MnemoLedger.queue_turns`: hand over a thread's turns (documented there)."""
        user_id = str(identifier("user", user))
        thread_id = str(identifier("thread", thread))
        checked = [turn_from(t, f"turn {n}") for n, t in enumerate(turns, start=1)]
        if not checked:
            raise InvalidInput("nothing to queue: give at least one turn")
        if len(checked) > MAX_INGEST_TURNS:
            raise InvalidInput(
                f"{len(checked)} turns; one hand-over may have at most {MAX_INGEST_TURNS}"
            )
        size = sum(turn_bytes(t) for t in checked)
        if size > MAX_INGEST_BYTES:
            raise InvalidInput(too_large("the turns", size, MAX_INGEST_BYTES, "one hand-over"))
        provenance = self.parts.provenance(user_id, agent, thread_id)
        with acting_as(provenance):
            queued = QueuedTurns(thread=thread_id, turns=[t.as_input() for t in checked])
        self.parts.ledger.save(queued)
        self.parts.runner.catch_up(names=TURN_QUEUE_READS)
        waiting = [
            t for t in self.parts.turn_queue_model.threads(user_id) if t.thread_id == thread_id
        ]
        return QueuedOut(
            queue_id=queued.id.hex,
            user_id=user_id,
            thread_id=thread_id,
            pending_turns=waiting[0].turns if waiting else len(checked),
            extract_after_seconds=EXTRACTION_IDLE_SECONDS,
        )

    def queued_threads(self, *, user: str | None = None) -> builtins.list[QueuedThreadOut]:
        """`MnemoLedger.queued_threads`: threads with turns waiting (documented there)."""
        user_id = identifier("user", user, required=False)
        self.parts.runner.catch_up(names=TURN_QUEUE_READS)
        return [
            QueuedThreadOut(
                user_id=t.user_id,
                thread_id=t.thread_id,
                hand_overs=t.queued,
                pending_turns=t.turns,
                last_queued_at=t.last_at,
            )
            for t in self.parts.turn_queue_model.threads(user_id)
        ]

    def extract_queued(
        self,
        *,
        now: datetime | None = None,
        idle_seconds: float = EXTRACTION_IDLE_SECONDS,
        user: str | None = None,
    ) -> builtins.list[QueuedExtraction]:
        """`MnemoLedger.extract_queued`: extract the quiet threads' turns (documented there)."""
        if idle_seconds < 0:
            raise InvalidInput(f"idle_seconds must be 0 or more; got {idle_seconds}")
        user_id = identifier("user", user, required=False)
        moment = now or self.parts.clock()
        quiet_since = moment - timedelta(seconds=idle_seconds)
        self.parts.runner.catch_up(names=TURN_QUEUE_READS)
        due = [t for t in self.parts.turn_queue_model.threads(user_id) if t.last_at <= quiet_since]
        done: list[QueuedExtraction] = []
        for waiting in due:
            extraction = self._extract(waiting.user_id, waiting.thread_id)
            if extraction is not None:
                done.append(extraction)
        return done

    def _extract(self, user_id: str, thread_id: str) -> QueuedExtraction | None:
        ledger, model = self.parts.ledger, self.parts.turn_queue_model
        with user_write_lock(ledger, user_id):
            self.parts.runner.catch_up(names=TURN_QUEUE_READS)
            taken: list[str] = []
            turns: list[dict[str, Any]] = []
            size, agent = 0, None
            for queue_id in model.queue_ids(user_id, thread_id):
                record = ledger.stream(queue_id)[0]
                given = [t for t in record.data.get("turns") or () if isinstance(t, dict)]
                more = sum(turn_bytes(turn_from(t, "a queued turn")) for t in given)
                if taken and (
                    len(turns) + len(given) > MAX_INGEST_TURNS or size + more > MAX_INGEST_BYTES
                ):
                    break  # the rest waits for the next extraction, which is due at once
                taken.append(queue_id)
                turns.extend(given)
                size += more
                agent = record.agent_id or agent
            if not taken:  # another process extracted them first
                return None
            provenance = replace(self.parts.provenance(user_id, None, thread_id), agent_id=agent)
            extraction = QueuedExtraction(user_id=user_id, thread_id=thread_id, hand_overs=taken)
            try:
                outcome = ingest_pipeline(self.parts).run(turns, provenance, queued=taken)
            except LedgerError as error:  # recorded on the command, which ends the hand-overs
                extraction.error = str(error)
                return extraction
            extraction.result = IngestResult.model_validate(outcome.as_json())
            return extraction
