"""What a re-run command did differently from the original run.

The original's events (its request, LLM calls and every event it caused) are set beside
the events the re-run appended to the replay's log, and compared by what they mean:

- each LLM call, in order: its stage, the prompt (`prompt_id@version`) and the answer;
  a call is listed when its stage or answer differs (a new prompt that draws the same
  answer is no divergence), with both prompts named;
- each memory the command wrote or changed: its text after the command and the events
  it got (`MemoryAdded`, `MemorySuperseded`, ...);
- the user's core.md after the command, when the command wrote a version;
- the command's status and outcome, field by field.

A command the re-run left as the original ran it is not listed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from mnemoledger.commands.audit.replay.source import RecordedCommand
from mnemoledger.ledger import EventRecord, Ledger
from mnemoledger.ledger.core import CoreDocument
from mnemoledger.ledger.memory import Memory

READ_PAGE = 1000

MEMORY_EVENTS = frozenset(
    value.__name__
    for value in vars(Memory).values()
    if isinstance(value, type) and issubclass(value, Memory.Event) and value is not Memory.Event
) - {"Created"}  # eventsourcing's name for a created event; a memory's is `MemoryAdded`
"""The event types of a memory's stream (`MemoryAdded`, `GateDecided`, `TTLSet`, ...)."""
TEXT_FIELDS = ("content", "markdown")
"""The fields that give a memory (`content`) or core.md (`markdown`) its text."""
OUTCOME_EVENTS = frozenset({"CommandCompleted", "CommandFailed"})
IGNORED_OUTCOME_FIELDS = frozenset({"llm_calls"})
"""Outcome fields the call list already compares."""


class CallDivergence(BaseModel):
    """One LLM call that came out differently; each pair is [original, replay]."""

    index: int
    """The call's place among the command's calls (0 = first)."""
    stage: list[str | None]
    prompt: list[str | None]
    """`prompt_id@version` of each run."""
    answer: list[str | None]


class MemoryDivergence(BaseModel):
    """One memory the command wrote or changed differently; each pair is [original, replay]."""

    id: str
    content: list[str | None]
    """Its text after the command (None: the run did not write it)."""
    events: list[list[str]]
    """The events the run gave it, by type."""


class CommandDivergence(BaseModel):
    """A re-run command whose LLM answers or effects differ from the original run's."""

    command: str
    type: str
    """The command's `*Requested` event type, e.g. `AddRequested`."""
    user: str
    calls: list[CallDivergence] = Field(default_factory=list)
    memories: list[MemoryDivergence] = Field(default_factory=list)
    core: list[str | None] | None = None
    """core.md after the command, [original, replay] (None: the same in both)."""
    outcome: dict[str, list[Any]] = Field(default_factory=dict)
    """Status and outcome fields that differ: name -> [original, replay]."""


def appended(ledger: Ledger, after: int) -> list[EventRecord]:
    """The events appended to `ledger`'s log after position `after`."""
    events: list[EventRecord] = []
    while page := ledger.read(after, READ_PAGE):
        events.extend(page)
        after = page[-1].position or after
    return events


def compare(command: RecordedCommand, replayed: Iterable[EventRecord]) -> CommandDivergence | None:
    """How the re-run (`replayed`: the events it appended) differs from `command` as
    recorded; None when it does not."""
    again = [e for e in replayed if e.stream_id == command.id or e.causation_id == command.id]
    before = [command.requested, *command.llm_calls, *command.caused]
    found = CommandDivergence(
        command=command.id, type=command.requested.type, user=command.requested.user_id
    )
    found.calls = _calls(command.llm_calls, [e for e in again if e.type == "LLMCallRecorded"])
    found.memories = _memories(before, again)
    core_id = CoreDocument.create_id(command.requested.user_id).hex
    core = [_text([e for e in events if e.stream_id == core_id]) for events in (before, again)]
    if core[0] != core[1]:
        found.core = core
    found.outcome = _outcome(
        [e for e in before if e.type in OUTCOME_EVENTS],
        [e for e in again if e.type in OUTCOME_EVENTS],
    )
    if found.calls or found.memories or found.core is not None or found.outcome:
        return found
    return None


def _calls(original: list[EventRecord], again: list[EventRecord]) -> list[CallDivergence]:
    found: list[CallDivergence] = []
    for index in range(max(len(original), len(again))):
        a = original[index].data if index < len(original) else None
        b = again[index].data if index < len(again) else None
        stage = [_field(a, "stage"), _field(b, "stage")]
        answer = [_field(a, "response"), _field(b, "response")]
        if stage[0] != stage[1] or answer[0] != answer[1]:
            prompt = [_prompt(a), _prompt(b)]
            found.append(CallDivergence(index=index, stage=stage, prompt=prompt, answer=answer))
    return found


def _field(data: dict[str, Any] | None, name: str) -> str | None:
    return None if data is None else str(data.get(name, ""))


def _prompt(data: dict[str, Any] | None) -> str | None:
    return None if data is None else f"{data.get('prompt_id', '')}@{data.get('version', '')}"


def _memories(original: list[EventRecord], again: list[EventRecord]) -> list[MemoryDivergence]:
    runs = [_by_memory(original), _by_memory(again)]
    found: list[MemoryDivergence] = []
    for memory_id in dict.fromkeys([*runs[0], *runs[1]]):
        events = [run.get(memory_id, []) for run in runs]
        content = [_text(e) for e in events]
        types = [[e.type for e in run] for run in events]
        if content[0] != content[1] or types[0] != types[1]:
            found.append(MemoryDivergence(id=memory_id, content=content, events=types))
    return found


def _by_memory(events: list[EventRecord]) -> dict[str, list[EventRecord]]:
    by_stream: dict[str, list[EventRecord]] = {}
    for event in events:
        if event.type in MEMORY_EVENTS:
            by_stream.setdefault(event.stream_id, []).append(event)
    return by_stream


def _text(events: list[EventRecord]) -> str | None:
    """The last text the events give their stream (None: none gives one)."""
    text: str | None = None
    for event in events:
        for name in TEXT_FIELDS:
            if isinstance(event.data.get(name), str):
                text = event.data[name]
    return text


def _outcome(original: list[EventRecord], again: list[EventRecord]) -> dict[str, list[Any]]:
    a, b = (events[-1] if events else None for events in (original, again))
    found: dict[str, list[Any]] = {}
    status = [e.type if e is not None else None for e in (a, b)]
    if status[0] != status[1]:
        found["status"] = status
    given = [_outcome_fields(e) for e in (a, b)]
    for name in dict.fromkeys([*given[0], *given[1]]):
        if name in IGNORED_OUTCOME_FIELDS:
            continue
        values = [given[0].get(name), given[1].get(name)]
        if values[0] != values[1]:
            found[name] = values
    return found


def _outcome_fields(event: EventRecord | None) -> dict[str, Any]:
    if event is None:
        return {}
    if event.type == "CommandFailed":
        return {"error": event.data.get("error"), "kind": event.data.get("kind")}
    outcome = event.data.get("outcome")
    return dict(outcome) if isinstance(outcome, dict) else {}
