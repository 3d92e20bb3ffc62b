"""How each recorded command is executed again: one handler per `*Requested` event type.

A handler rebuilds the request from the recorded raw input and runs the same pipeline
under the recorded provenance. Commands without a handler are re-applied event by event
as recorded (so a new command type replays faithfully before it gets a handler, it just
cannot be re-decided by a changed prompt until then).

    @handles("ConsolidationRequested")
    def consolidation(target, command): ...
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mnemoledger.commands.audit.replay.source import RecordedCommand
from mnemoledger.commands.lifecycle.consolidation.cycle import forgetting_mode
from mnemoledger.commands.write.add import request_of
from mnemoledger.commands.write.ingest_api import ingest_pipeline
from mnemoledger.commands.write.notes import WriteNoteRequest
from mnemoledger.commands.write.notes_api import notes_pipeline
from mnemoledger.ledger.policy import BUFFER_CAP, FORGETTING_DEFAULT, LLM_LEVEL_AUTO

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

Handler = Callable[["MnemoLedger", RecordedCommand], object]

HANDLERS: dict[str, Handler] = {}
"""Handlers by the command's `*Requested` event type."""


def handles(event_type: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        HANDLERS[event_type] = handler
        return handler

    return register


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _mapping(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, dict) else None


@handles("AddRequested")
def add(target: MnemoLedger, command: RecordedCommand) -> object:
    target.refresh()
    return target.add_pipeline.run(request_of(command.input), command.provenance())


@handles("NoteRequested")
def note(target: MnemoLedger, command: RecordedCommand) -> object:
    given = dict(command.input)
    pipeline = notes_pipeline(target)
    target.refresh()
    if given.pop("operation", "write") == "merge":
        return pipeline.merge([str(i) for i in _list(given.get("note_ids"))], command.provenance())
    request = WriteNoteRequest(
        content=str(given["content"]),
        kind=str(given["kind"]),
        stability=given.get("stability"),  # type: ignore[arg-type]
        ttl_days=given.get("ttl_days"),  # type: ignore[arg-type]
        sensitivity=str(given.get("sensitivity", "normal")),
        evidence=tuple(str(e) for e in _list(given.get("evidence"))),
        confidence=float(given["confidence"]),  # type: ignore[arg-type]
        tags=tuple(str(t) for t in _list(given.get("tags"))),
        scope=str(given["scope"]),
        source=str(given["source"]),
        category=None if given.get("category") is None else str(given["category"]),
    )
    return pipeline.write(request, command.provenance())


@handles("IngestRequested")
def ingest(target: MnemoLedger, command: RecordedCommand) -> object:
    given = command.input
    now = given.get("now")
    at = datetime.fromisoformat(now) if isinstance(now, str) else None
    pipeline = ingest_pipeline(target)
    store = given.get("store")
    if isinstance(store, dict):  # Nebo's store by key (`memory.store`)
        tags, source = store.get("tags"), store.get("source")
        return pipeline.remember_keyed(
            str(store["namespace"]),
            str(store["key"]),
            str(store["value"]),
            command.provenance(),
            tags=[str(t) for t in tags] if isinstance(tags, list) else (),
            **({"source": source} if isinstance(source, str) else {}),
            now=at,
        )
    source = given.get("source")
    flush = given.get("flush")
    return pipeline.run(
        _list(given.get("turns")),
        command.provenance(),
        multi_fact=bool(given.get("multi_fact", False)),
        now=at,
        source=source if isinstance(source, str) else None,
        flush=int(flush["compaction"]) if isinstance(flush, dict) else None,
        queued=[str(q) for q in _list(given.get("queued"))],
    )


@handles("ConsolidationRequested")
def consolidation(target: MnemoLedger, command: RecordedCommand) -> object:
    from mnemoledger.commands.lifecycle.consolidation import ConsolidationRequest

    given = command.input
    audit, daily = given.get("audit"), given.get("daily")
    request = ConsolidationRequest(
        user=str(given["user"]),
        now=datetime.fromisoformat(str(given["now"])),
        audit=audit if isinstance(audit, bool) else None,
        daily=daily if isinstance(daily, bool) else None,
        buffer_cap=int(str(given.get("buffer_cap", BUFFER_CAP))),  # recorded since its setting
        llm_level=str(given.get("llm_level", LLM_LEVEL_AUTO)),  # recorded when not auto
        # recorded since the guards exist; a cycle recorded before ran without them
        sandbox_guards=bool(given.get("sandbox_guards", False)),
        # recorded since the Core summary step exists; a cycle recorded before had none
        core_summary=bool(given.get("core_summary", False)),
        forgetting=forgetting_mode(given.get("forgetting", FORGETTING_DEFAULT)),
        # recorded since a cycle reads the waiting core candidates; one recorded before did not
        core_candidates=bool(given.get("core_candidates", False)),
    )
    target.refresh()
    return target.consolidation_pipeline().run(request, command.provenance())
