"""Replay: the recorded log executed again into a scratch ledger.

Every recorded command is run again through its pipeline (`handlers.HANDLERS`) from its
raw input, under its recorded provenance, ids and time; in `recorded` mode each LLM call
is answered by the call the original run recorded at the same place, so the scratch
ledger's read models come out exactly as the original's. In `live` mode the stages run
again (prompts replaced from files, another model or provider), and `diff` shows what
that changes. Every other event (direct verbs, consent, recalls, commands without a
handler, and everything outside the chosen range) is re-applied as recorded, in log
order.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from eventsourcing.domain import Aggregate
from pydantic import BaseModel

from mnemoledger.commands.audit.replay.divergence import CommandDivergence, appended, compare
from mnemoledger.commands.audit.replay.handlers import HANDLERS
from mnemoledger.commands.audit.replay.providers import (
    PromptedProvider,
    PromptOverride,
    RecordedAnswers,
)
from mnemoledger.commands.audit.replay.reapply import reapply
from mnemoledger.commands.audit.replay.source import RecordedCommand, RecordedLog, read_log
from mnemoledger.commands.audit.timepoints import Point, after, at_or_before
from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.llm import make_provider
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.write.recorded_llm import prompts_replaced
from mnemoledger.commands.write.replaying import replaying
from mnemoledger.ledger import EventRecord, Ledger
from mnemoledger.ledger.errors import InvalidInput, LedgerError
from mnemoledger.ledger.policy import LLM_COMPONENTS

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

Mode = Literal["recorded", "live"]
MODES = ("recorded", "live")
Progress = Callable[[int, int], None]

MAX_REPORTED_FAILURES = 20
MAX_REPORTED_DIVERGENCES = 200


@dataclass
class ReplayOptions:
    """What to replay and how."""

    mode: Mode = "recorded"
    prompts: Mapping[str, PromptOverride] = field(default_factory=dict)
    """Live mode: replaced prompts by stage name."""
    model: str | None = None
    """Live mode: the model the stages run on."""
    provider: str | None = None
    """Live mode: `offline` or `openai` (default: the ledger's settings)."""
    base_url: str | None = None
    """Live mode: the `/v1` URL of the OpenAI-compatible server the stages call (default:
    the ledger's `openai_base_url`); embeddings keep the ledger's settings."""
    since: Point | None = None
    """Only commands after this point are executed again (earlier events are re-applied)."""
    until: Point | None = None
    """The replay ends at this point (a command it cuts is re-applied up to the cut)."""
    user: str | None = None
    """Only this user's events."""


class ReplayResult(BaseModel):
    """What a replay did."""

    into: str
    mode: str
    events: int
    """Events of the source log considered."""
    commands_rerun: int
    """Commands executed again through their pipelines."""
    events_reapplied: int
    """Events re-applied as recorded."""
    events_skipped: int
    """Events that could not apply (their stream is missing in the replay)."""
    failed_commands: int
    """Commands whose re-run failed (as recorded on their stream)."""
    failures: list[str] = []
    diverged_calls: int
    """Recorded mode: calls whose stage or request differed from the record."""
    llm_calls: int
    """LLM calls made (or answered from the record) by the re-run commands."""
    diverged_commands: int = 0
    """Re-run commands whose LLM answers or effects differ from the original run's."""
    divergences: list[CommandDivergence] = []
    """What each of them did differently (the first MAX_REPORTED_DIVERGENCES)."""
    seconds: float


class _Clock:
    """Gives every event saved in the replay the time of the recorded event it stands
    for (same stream, same version), else the time of the recorded event being replayed."""

    def __init__(self, times: Mapping[tuple[str, int], datetime]) -> None:
        self.times = times
        self.current: datetime | None = None

    def stamp(self, objs: tuple[Any, ...]) -> None:
        for obj in objs:
            events = obj.pending_events if isinstance(obj, Aggregate) else [obj]
            for event in events:
                when = self.times.get((event.originator_id.hex, event.originator_version))
                when = when or self.current
                if when is not None:
                    # not stored yet: the frozen event still takes its recorded time
                    object.__setattr__(event, "timestamp", when)


def _timed(ledger: Ledger, clock: _Clock) -> None:
    save = ledger.save

    def timed_save(*objs: Any, **kwargs: Any) -> Any:
        clock.stamp(objs)
        return save(*objs, **kwargs)

    setattr(ledger, "save", timed_save)  # noqa: B010 - an instance's save, for this replay only


def _provider(source: MnemoLedger, options: ReplayOptions) -> LLMProvider:
    updates: dict[str, Any] = {}
    if options.provider is not None:
        updates["llm_provider"] = options.provider
    if options.base_url is not None:
        updates["openai_base_url"] = options.base_url
    if options.model is not None:
        updates["llm_model"] = options.model
        # one model for every stage: the components' own models give way to it
        updates.update({f"{component}_model": None for component in LLM_COMPONENTS})
    inner = make_provider(source.settings.model_copy(update=updates))
    if options.model is not None and inner.model != options.model:
        inner.model = options.model
    return PromptedProvider(inner, options.prompts)


def replay(
    source: MnemoLedger, into: Path, options: ReplayOptions, progress: Progress | None = None
) -> ReplayResult:
    """Replay `source`'s log into a new ledger in `into` (which must be empty)."""
    if options.mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}; got {options.mode!r}")
    if options.mode == "recorded" and (
        options.prompts or options.model or options.provider or options.base_url
    ):
        raise InvalidInput("--prompt, --model, --provider and --base-url need --mode live")
    into = into.expanduser()
    if into.exists() and any(into.iterdir()):
        raise InvalidInput(f"{into} is not empty: replay into a new directory")
    started = time.perf_counter()
    log = read_log(source.ledger)
    settings = source.settings.model_copy(update={"home": into, "db": None})
    target = type(source)(settings=settings, actor=source.actor)
    try:
        answers = RecordedAnswers()
        live = options.mode == "live"
        provider: LLMProvider = _provider(source, options) if live else answers
        target.llm = provider
        target.add_pipeline.provider = provider
        clock = _Clock(log.times)
        _timed(target.ledger, clock)
        run = _Run(target, log, options, answers, clock)
        replaced = {stage: p.version for stage, p in options.prompts.items()} if live else {}
        with prompts_replaced(replaced):  # decisions name the prompt that took them
            run.all(progress)
        target.refresh()
        return ReplayResult(
            into=str(into),
            mode=options.mode,
            events=run.considered,
            commands_rerun=run.rerun,
            events_reapplied=run.reapplied,
            events_skipped=run.skipped,
            failed_commands=len(run.failures),
            failures=run.failures[:MAX_REPORTED_FAILURES],
            diverged_calls=answers.diverged,
            llm_calls=run.llm_calls,
            diverged_commands=len(run.divergences),
            divergences=run.divergences[:MAX_REPORTED_DIVERGENCES],
            seconds=round(time.perf_counter() - started, 3),
        )
    finally:
        target.close()


@dataclass
class _Run:
    target: MnemoLedger
    log: RecordedLog
    options: ReplayOptions
    answers: RecordedAnswers
    clock: _Clock
    considered: int = 0
    rerun: int = 0
    reapplied: int = 0
    skipped: int = 0
    llm_calls: int = 0
    failures: list[str] = field(default_factory=list)
    divergences: list[CommandDivergence] = field(default_factory=list)
    done: set[str] = field(default_factory=set)

    def all(self, progress: Progress | None) -> None:
        events = self.log.events
        for n, record in enumerate(events, start=1):
            if self.options.until is not None and not at_or_before(record, self.options.until):
                break
            if self.options.user is None or record.user_id == self.options.user:
                self.one(record)
            if progress is not None and (n % 50 == 0 or n == len(events)):
                progress(n, len(events))

    def one(self, record: EventRecord) -> None:
        command = self.log.command_of(record)
        if command is not None and command.id in self.done:
            return  # produced again by the command's re-run
        self.considered += 1
        self.clock.current = record.at
        if (
            command is not None
            and record is command.requested
            and command.requested.type in HANDLERS
            and (self.options.since is None or after(record, self.options.since))
            and self._completed_in_range(command)
        ):
            self.execute(command)
            return
        if command is None and core_sync.refollow(self.target.ledger, record):
            self.reapplied += 1  # a direct verb's core version, derived again
            return
        if reapply(self.target.ledger, record):
            self.reapplied += 1
        else:
            self.skipped += 1

    def _completed_in_range(self, command: RecordedCommand) -> bool:
        """Whether the whole command lies before `until`; one cut by it is re-applied as
        recorded up to the cut, so the replay ends exactly where the log is cut."""
        until = self.options.until
        return until is None or all(
            at_or_before(e, until) for e in (*command.llm_calls, *command.caused)
        )

    def execute(self, command: RecordedCommand) -> None:
        self.done.add(command.id)
        self.rerun += 1
        self.answers.start(command.llm_calls)
        handler = HANDLERS[command.requested.type]
        ledger = self.target.ledger
        before = ledger.last_position()
        with replaying(command.script()):
            try:
                handler(self.target, command)
            except Exception as error:  # recorded on the command's stream by the pipeline
                self.failures.append(f"{command.requested.type} {command.id}: {error}")
        with contextlib.suppress(LedgerError):  # refused before its input was recorded
            self.llm_calls += ledger.command(command.id).llm_calls
        if (found := compare(command, appended(ledger, before))) is not None:
            self.divergences.append(found)
