"""The recorded run a replay follows: the source log, indexed once.

Every command stream (`AddRequested`, `NoteRequested`, ... and the LLM calls and outcome
recorded on it), the events each command caused, and the time and id of every event, so a
re-run can be given the same ids, clock and LLM answers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from mnemoledger.commands.write.replaying import ReplayScript
from mnemoledger.ledger import EventRecord, Ledger, Provenance

READ_PAGE = 5000

DRAFTED = frozenset({"MemoryAdded", "ConsentRequested"})
"""Created events of the aggregates pipelines draft under random ids (`recorded_ids`);
the others (user stream, core document) have ids derived from the user."""

Progress = Callable[[int, int], None]


@dataclass
class RecordedCommand:
    """One command run as the log holds it."""

    requested: EventRecord
    """Its `*Requested` event: the raw input and the provenance."""
    llm_calls: list[EventRecord] = field(default_factory=list)
    """Its `LLMCallRecorded` events, in the order the calls were made."""
    caused: list[EventRecord] = field(default_factory=list)
    """Every other event it caused (its own stream's and those it decided elsewhere)."""

    @property
    def id(self) -> str:
        return self.requested.stream_id

    @property
    def input(self) -> dict[str, object]:
        value = self.requested.data.get("input")
        return value if isinstance(value, dict) else {}

    def provenance(self) -> Provenance:
        """Who issued the command, exactly as recorded."""
        r = self.requested
        return Provenance(
            user_id=r.user_id,
            actor=r.actor,
            agent_id=r.agent_id,
            thread_id=r.thread_id,
            causation_id=r.causation_id,
            prompt_version=r.prompt_version,
        )

    def script(self) -> ReplayScript:
        """What a re-run needs from the original: ids in creation order, TTLs, its time."""
        created = sorted(
            (e for e in self.caused if e.type in DRAFTED),
            key=lambda e: (e.at, e.position or 0),
        )
        ttls = [
            (float(e.data["days"]), str(e.data["expires_at"]))
            for e in self.caused
            if e.type == "TTLSet" and "days" in e.data and "expires_at" in e.data
        ]
        return ReplayScript(
            ids=deque(UUID(hex=x.stream_id) for x in [self.requested, *created]),
            ttls=deque(ttls),
            now=self.requested.at,
        )


@dataclass
class RecordedLog:
    """The source log in order, its commands, and the time of every event."""

    events: list[EventRecord]
    commands: dict[str, RecordedCommand]
    times: dict[tuple[str, int], datetime]
    """When each event (stream id, version) happened."""

    def command_of(self, record: EventRecord) -> RecordedCommand | None:
        """The command `record` belongs to or was caused by, if any."""
        return self.commands.get(record.stream_id) or self.commands.get(record.causation_id)


def is_command_request(record: EventRecord) -> bool:
    """A command stream's first event (`AddRequested`, `ConsolidationRequested`, ...)."""
    return record.version == 1 and record.type.endswith("Requested") and "input" in record.data


def read_log(ledger: Ledger, progress: Progress | None = None) -> RecordedLog:
    """Read and index the whole log of `ledger`."""
    events: list[EventRecord] = []
    total = ledger.last_position()
    after = 0
    while page := ledger.read(after, READ_PAGE):
        events.extend(page)
        after = page[-1].position or after
        if progress is not None:
            progress(after, total)
    commands: dict[str, RecordedCommand] = {}
    for record in events:
        if is_command_request(record):
            commands[record.stream_id] = RecordedCommand(record)
    for record in events:
        owner = commands.get(record.stream_id) or commands.get(record.causation_id)
        if owner is None or record is owner.requested:
            continue
        if record.type == "LLMCallRecorded" and record.stream_id == owner.id:
            owner.llm_calls.append(record)
        else:
            owner.caused.append(record)
    times = {(e.stream_id, e.version): e.at for e in events}
    return RecordedLog(events, commands, times)
