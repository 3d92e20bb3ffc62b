"""One engram cycle for one user (seed 001 §3, both phases), run as a command.

The raw input (`ConsolidationRequested`: user, the clock value `now`, options) is saved
first; then the rules decide against the read models at the current log position and
everything — memory events, the audit record, the LLM calls, the completion, the user
stream and one `ConsolidationEpochCompleted` — is saved in one transaction. Every decision
is a function of (the ledger state at that position, `now` from the input, the LLM
answers), so a replay re-runs it exactly. A dry run decides the same way and saves nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from mnemoledger.commands.lifecycle import core_candidates
from mnemoledger.commands.lifecycle.consolidation import (
    audit,
    buffer,
    core,
    daily,
    distill,
    lifecycle,
    pairs,
)
from mnemoledger.commands.lifecycle.consolidation.apply import apply_plan
from mnemoledger.commands.lifecycle.consolidation.context import Cycle
from mnemoledger.commands.lifecycle.consolidation.core_summary import update_core_summary
from mnemoledger.commands.lifecycle.consolidation.plan import Operation, Plan
from mnemoledger.commands.lifecycle.consolidation.state import UserState
from mnemoledger.commands.llm.prompts import CORE_UPDATE
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.write.command_run import decide_until_saved
from mnemoledger.commands.write.recorded_llm import RecordedLLM, prompt_version
from mnemoledger.commands.write.replaying import recorded_id
from mnemoledger.ledger import Ledger, Provenance, validation
from mnemoledger.ledger.command import Command
from mnemoledger.ledger.core_summary import CoreSummary
from mnemoledger.ledger.epoch import ConsolidationCommand, EngramClock
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    AUDIT_SANDBOX_GUARDS,
    BUFFER_CAP,
    DAILY_FINGERPRINT_DAYS,
    FORGETTING_DEFAULT,
    FORGETTING_MODES,
    IMPORTANCE_DECAY,
    LLM_LEVEL_AUTO,
    LLM_LEVELS,
    Forgetting,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.user import UserStream
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.layers import LayersProjection
from mnemoledger.projections.vectors import VectorsProjection

CORE_CANDIDATES_RULE = "core-candidates"
"""The rule of the cycle's batched core update: the memories waiting on the core document
are read in one core-update call."""


@dataclass(frozen=True)
class ConsolidationRequest:
    """One cycle for one user, at the clock value `now` (UTC)."""

    user: str
    now: datetime
    dry_run: bool = False
    audit: bool | None = None
    """Run the audit stage: True/False, or None = every AUDIT_INTERVAL_EPOCHS epochs."""
    sandbox_guards: bool = AUDIT_SANDBOX_GUARDS
    """Seed 001 §8: the audit sandbox refuses operations on memories created < 48 h or
    changed < 24 h before `now`; recorded with the command when on (earlier cycles, which
    ran without the guards, have no such input)."""
    daily: bool | None = False
    """Run the daily pass and insights (seed 003 §3-§4): True/False, or None = when 24 h
    have passed since the last one."""
    buffer_cap: int = BUFFER_CAP
    """Buffer entries above which the lowest-weight judged ones are evicted (a setting;
    recorded with the command so a replay caps as the original did)."""
    llm_level: str = LLM_LEVEL_AUTO
    """Seed 001 §7 (a setting): `auto`, or `off` for no LLM call in the cycle; recorded
    with the command when `off`, so a replay decides by the same heuristics."""
    core_summary: bool = True
    """Seed 001 §3 step 19: keep resume's compressed Core summary up to date; recorded
    with the command when on (earlier cycles, which had no such step, have no such input)."""
    forgetting: Forgetting = FORGETTING_DEFAULT
    """Who the idle rules may forget and how they count days (a setting; recorded with the
    command when not the default)."""
    core_candidates: bool = True
    """Read the new memories waiting on the user's core document (adds with one model call
    leave them for a batched core update) in one core-update call; recorded with the
    command when on (earlier cycles, which had no such step, have no such input)."""

    def as_input(self) -> dict[str, Any]:
        given: dict[str, Any] = {
            "user": self.user,
            "now": self.now.isoformat(),
            "audit": self.audit,
            "daily": self.daily,
            "buffer_cap": self.buffer_cap,
        }
        if self.llm_level != LLM_LEVEL_AUTO:  # the inputs of earlier cycles stay as they were
            given["llm_level"] = self.llm_level
        if self.sandbox_guards:
            given["sandbox_guards"] = True
        if self.core_summary:
            given["core_summary"] = True
        if self.forgetting != FORGETTING_DEFAULT:
            given["forgetting"] = self.forgetting
        if self.core_candidates:
            given["core_candidates"] = True
        return given


def forgetting_mode(value: object) -> Forgetting:
    """`value` as a forgetting mode; `InvalidInput` naming the modes otherwise."""
    for mode in FORGETTING_MODES:
        if value == mode:
            return mode
    raise InvalidInput(f"forgetting must be one of {', '.join(FORGETTING_MODES)}; got {value!r}")


@dataclass
class CycleOutcome:
    """What one cycle did (or, dry, would do)."""

    user: str
    epoch: int
    command_id: str | None
    operations: list[Operation] = field(default_factory=list)
    llm_calls: int = 0
    dry_run: bool = False

    def as_outcome(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "operations": len(self.operations),
            "by_op": _counts(self.operations),
        }


@dataclass
class ConsolidationPipeline:
    """Everything a cycle reads and writes."""

    ledger: Ledger
    layers: LayersProjection
    vectors: VectorsProjection
    embedder: Embedder
    provider: LLMProvider
    refresh: Callable[[], object] = lambda: None

    def run(self, request: ConsolidationRequest, provenance: Provenance) -> CycleOutcome:
        forgetting_mode(request.forgetting)
        if request.llm_level not in LLM_LEVELS:
            raise InvalidInput(
                f"llm_level must be one of {', '.join(LLM_LEVELS)}; got {request.llm_level!r}"
            )
        user = str(validation.identifier("user", request.user))
        provenance = replace(provenance, user_id=user)
        with acting_as(provenance):
            command = recorded_id(ConsolidationCommand(input=request.as_input()))
        if request.dry_run:
            self.refresh()
            plan, llm, _ = self._plan(command, request, provenance, self._clock(provenance))
            return CycleOutcome(
                user, plan.epoch, None, plan.operations, llm.command.llm_calls, True
            )
        self.ledger.save(command)
        decided = replace(provenance, causation_id=command.id.hex)
        return decide_until_saved(
            self.ledger,
            command,
            decided,
            lambda fresh, stream: self._decide(fresh, stream, request, decided),
            self.refresh,
        )

    def _plan(
        self,
        command: Command,
        request: ConsolidationRequest,
        provenance: Provenance,
        clock: EngramClock,
    ) -> tuple[Plan, RecordedLLM, CoreSummary | None]:
        since = (request.now - timedelta(days=DAILY_FINGERPRINT_DAYS)).isoformat()
        decided_at = self.layers.position()
        state = UserState.load(provenance.user_id, self.layers, self.vectors, since)
        llm = RecordedLLM(self.provider, command, provenance)
        cycle = Cycle(
            state,
            Plan(state.epoch, decided_at=decided_at),
            request.now,
            llm,
            self.embedder,
            request.buffer_cap,
            request.llm_level,
            request.forgetting,
        )
        run_rules(cycle, request.audit, request.sandbox_guards)
        if cycle.llm_on and daily.due(clock.last_daily_at, request.now, request.daily):
            cycle.plan.daily_pairs = daily.consolidate_daily(cycle)
            daily.write_insights(cycle, clock.last_insight_at)
        if cycle.llm_on and request.core_candidates:
            waiting = self.ledger.core_document(provenance, provenance.user_id).pending
            if waiting:  # read after the plan is applied (`_decide`), over what it left
                version = prompt_version(CORE_UPDATE)
                cycle.plan.add("core", None, CORE_CANDIDATES_RULE, version, memories=waiting)
        summary = None
        if cycle.llm_on and request.core_summary:  # step 19, last: over what the rules left
            summary = update_core_summary(cycle, self.ledger, self.layers, provenance)
        return cycle.plan, llm, summary

    def _decide(
        self,
        command: Command,
        user: UserStream,
        request: ConsolidationRequest,
        provenance: Provenance,
    ) -> CycleOutcome:
        assert isinstance(command, ConsolidationCommand)
        clock = self._clock(provenance)
        plan, llm, summary = self._plan(command, request, provenance, clock)
        if plan.epoch != clock.epoch + 1:
            raise IntegrityError("the read models are behind the user's epoch; deciding again")
        applied = apply_plan(self.ledger, plan, command, provenance)
        if any(op.rule == CORE_CANDIDATES_RULE for op in plan.operations):
            document = applied.core or self.ledger.core_document(provenance, provenance.user_id)
            if core_candidates.flush(llm, self.ledger, provenance, document, applied.memories):
                applied.core = document
        outcome = CycleOutcome(
            provenance.user_id, plan.epoch, command.id.hex, plan.operations, command.llm_calls
        )
        with acting_as(provenance):
            clock.complete_epoch(
                epoch=plan.epoch,
                command_id=command.id.hex,
                now=request.now.isoformat(),
                decay=IMPORTANCE_DECAY,
                operations=len(plan.operations),
                pairs=plan.pairs,
                decided_at=plan.decided_at,
            )
            if plan.daily_pairs is not None:
                clock.daily_completed(request.now.isoformat(), plan.daily_pairs, llm.tokens)
            if applied.insights:
                clock.insights_written(request.now.isoformat(), applied.insights)
            command.complete(outcome.as_outcome())
            user.changed(command.id.hex, applied.added, applied.superseded, [])
        # the epoch last: its decay (seed 001 §3 step 11) follows the cycle's changes
        summaries = [summary] if summary is not None else []
        self.ledger.save(command, user, *applied.aggregates(), *summaries, clock)
        return outcome

    def _clock(self, provenance: Provenance) -> EngramClock:
        try:
            clock: object = self.ledger.repository.get(EngramClock.create_id(provenance.user_id))
        except AggregateNotFoundError:
            with acting_as(provenance):
                return EngramClock(user_id=provenance.user_id)
        assert isinstance(clock, EngramClock)
        return clock


def run_rules(
    cycle: Cycle, audit_requested: bool | None, sandbox_guards: bool = AUDIT_SANDBOX_GUARDS
) -> None:
    """Seed 001 §3 in its order; lifecycle first, so expired memories take no part. With the
    LLM level `off` (§7), triage and the gate decide by their heuristics and the other
    LLM stages (reconcile, distillation, merge, audit) are skipped."""
    lifecycle.run_all(cycle)
    # phase 1: synchronous
    core.core_hygiene(cycle)
    core.core_overlap(cycle)
    candidates = core.gate_candidates(cycle)
    buffer.cap_buffer(cycle)  # step 2, and again after the promotions (step 8)
    buffer.promote_mechanically(cycle)
    buffer.cap_buffer(cycle)
    buffer.drop_decayed(cycle)
    # phase 2: LLM-dependent
    core.gate(cycle, candidates)
    if cycle.llm_on:
        pairs.reconcile(cycle)
        distill.distill_sessions(cycle)
    buffer.dedup_buffer(cycle)
    buffer.triage(cycle)
    if cycle.llm_on:
        pairs.merge(cycle)
        if audit.due(cycle, audit_requested):
            audit.audit(cycle, sandbox_guards)
    else:  # no pair was examined: the next cycle with the LLM scans these changes again
        pairs.cut_short(cycle)


def _counts(operations: list[Operation]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for operation in operations:
        counts[operation.op] = counts.get(operation.op, 0) + 1
    return dict(sorted(counts.items()))
