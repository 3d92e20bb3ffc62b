"""`mnemoledger consolidate`, `worker` and `topics` (seed 001 §2-§3, §6, 003 §4, §7).

mnemoledger consolidate --user maya            # one engram cycle: {"epoch", "operations"}
mnemoledger consolidate --dry-run --json       # every user; planned operations, no writes
mnemoledger consolidate --llm-level off        # heuristics only: no LLM call (seed 001 §7)
mnemoledger worker --interval 1800             # a cycle every 30 min until SIGTERM
"""

from __future__ import annotations

from contextlib import nullcontext
from datetime import datetime
from typing import TYPE_CHECKING

import click
from rich.table import Table

from mnemoledger.commands import output
from mnemoledger.commands.lifecycle.background import BackgroundJobs, Job, TopicsAfterWrites
from mnemoledger.commands.lifecycle.consolidate_api import (
    ConsolidateResult,
    TopicDetail,
    TopicsResult,
)
from mnemoledger.commands.lifecycle.worker import Worker
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.commands.write.add_later import PENDING_ADD_GRACE_SECONDS
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import LLM_LEVELS, WORKER_INTERVAL_SECS

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger


def _operations_table(result: ConsolidateResult) -> None:
    verb = "would run" if result.dry_run else "ran"
    output.stdout.print(
        f"epoch {result.epoch}: {verb} {len(result.operations)} operations "
        f"for {len(result.users)} user(s) at {result.now}"
    )
    if not result.operations:
        return
    table = output.id_table()
    for column in ("user", "op", "rule", "memory", "detail"):
        table.add_column(column, overflow="fold")
    for op in result.operations:
        detail = {k: v for k, v in op.items() if k not in ("user", "op", "rule", "memory")}
        text = ", ".join(f"{k}={v}" for k, v in detail.items() if k not in ("content", "evidence"))
        table.add_row(
            op["user"], op["op"], op["rule"], output.short_id(op.get("memory") or ""), text[:120]
        )
    output.stdout.print(table)


def _clock_value(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"--now must be an ISO-8601 time, got {value!r}") from None
    if parsed.tzinfo is None:
        raise InvalidInput("--now must carry a UTC offset, e.g. 2031-01-01T00:00:00+00:00")
    return parsed


@click.command()
@click.option("--user", help="Only this user (default: every user with memories).")
@click.option("--dry-run", is_flag=True, help="Print the planned operations; write nothing.")
@click.option("--now", "now", help="The clock value to decide at (ISO-8601 with offset).")
@click.option(
    "--audit/--no-audit", default=None, help="Run the audit stage (default: every 48 epochs)."
)
@click.option(
    "--audit-guards/--no-audit-guards",
    default=True,
    help="The audit leaves alone memories written in the last 48 hours or changed in the "
    "last 24 (default: on).",
)
@click.option(
    "--llm-level",
    type=click.Choice(LLM_LEVELS),
    help="auto, or off: triage/gate by heuristics, no LLM call "
    "(default: $MNEMOLEDGER_LLM_LEVEL, else auto).",
)
@global_options
@pass_state
def consolidate(
    state: CliState,
    user: str | None,
    dry_run: bool,
    now: str | None,
    audit: bool | None,
    audit_guards: bool,
    llm_level: str | None,
) -> None:
    """One consolidation cycle: lifecycle, promotion, triage, gate, merge, decay.

    `--llm-level off` (or MNEMOLEDGER_LLM_LEVEL=off, which the worker reads too) decides
    triage and the gate by heuristics and skips merge, reconcile, distillation, the audit
    and the daily pass: the cycle makes no LLM call."""
    result = state.ledger().consolidate(
        user=user,
        dry_run=dry_run,
        now=_clock_value(now),
        audit=audit,
        llm_level=llm_level,
        audit_guards=audit_guards,
    )
    output.emit(state.as_json, result, lambda: _operations_table(result))


@click.command()
@click.option(
    "--interval",
    type=click.FloatRange(min=0.0),
    default=WORKER_INTERVAL_SECS,
    show_default=True,
    help="Seconds between cycles.",
)
@click.option("--user", help="Only this user (default: every user with memories).")
@click.option("--cycles", type=click.IntRange(min=1), help="Stop after this many cycles.")
@click.option(
    "--extract-turns/--no-extract-turns",
    default=True,
    show_default=True,
    help="Meanwhile, every second, extract handed-over conversation turns whose thread has "
    "been quiet for 5 seconds (`turns queue`).",
)
@click.option(
    "--topics-after-writes/--no-topics-after-writes",
    default=True,
    show_default=True,
    help="Meanwhile, rebuild a user's topic tree once their memories changed and then stayed "
    "unchanged for 5 seconds (and at start, for users who have none).",
)
@click.option(
    "--pending-adds/--no-pending-adds",
    default=True,
    show_default=True,
    help="Process the adds recorded without waiting (`add --no-wait`) that no process "
    "finished: every one at start, then every second those waiting for 5 seconds.",
)
@global_options
@pass_state
def worker(
    state: CliState,
    interval: float,
    user: str | None,
    cycles: int | None,
    extract_turns: bool,
    topics_after_writes: bool,
    pending_adds: bool,
) -> None:
    """Run consolidation cycles on an interval until SIGTERM (the running cycle finishes)."""
    memory = state.ledger()

    def report(result: ConsolidateResult) -> None:
        if state.as_json:
            output.emit(True, result.model_dump(exclude={"operations"}), lambda: None)
        else:
            output.stderr.print(
                f"epoch {result.epoch}: {len(result.operations)} operations at {result.now}"
            )

    def warn(error: Exception) -> None:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        click.echo(f"warning: consolidation cycle failed: {first_line}", err=True)

    def extract_quiet_threads(side: MnemoLedger) -> None:
        for done in side.extract_queued():
            if done.error is not None:
                failed = f"extraction of thread {done.thread_id} failed: {done.error}"
                click.echo(f"warning: {failed}", err=True)

    def process_pending_adds(
        side: MnemoLedger, older_than_seconds: float = PENDING_ADD_GRACE_SECONDS
    ) -> None:
        for done in side.process_pending_adds(older_than_seconds=older_than_seconds):
            if done.error is not None:
                click.echo(f"warning: add {done.command_id} failed: {done.error}", err=True)

    jobs: list[Job] = []
    if pending_adds:
        process_pending_adds(memory, older_than_seconds=0)  # what a stopped process left
        jobs.append(process_pending_adds)
    if extract_turns:
        jobs.append(extract_quiet_threads)
    if topics_after_writes:
        jobs.append(TopicsAfterWrites())
    runner = Worker(memory, interval, user=user, on_cycle=report, on_error=warn)
    side_jobs = BackgroundJobs(
        lambda: type(memory)(settings=memory.parts.settings, actor=memory.actor), jobs
    )
    with runner.stopping_on_signals(), side_jobs.running() if jobs else nullcontext():
        ran = runner.run(cycles)
    if not state.as_json:
        output.stderr.print(f"worker stopped after {ran} cycle(s)")


def _topics_table(result: TopicsResult) -> None:
    if not result.topics:
        output.stdout.print(f"no topics for {result.user}")
        return
    table = Table(title=f"topics of {result.user} (as of position {result.position})")
    for column in ("id", "name", "members", "parent"):
        table.add_column(column, overflow="fold")
    for topic in result.topics:
        table.add_row(topic.id, topic.name, str(topic.members), topic.parent or "")
    output.stdout.print(table)


def _drill_down(found: dict[str, TopicDetail]) -> None:
    for topic_id, detail in found.items():
        output.memories_table(detail.memories, title=f"{topic_id}: {detail.name}")


@click.command()
@click.argument("topic_ids", nargs=-1)
@click.option("--user", required=True, help="Whose topics.")
@click.option("--rebuild", is_flag=True, help="Build and name the tree again first.")
@global_options
@pass_state
def topics(state: CliState, topic_ids: tuple[str, ...], user: str, rebuild: bool) -> None:
    """The user's topic tree; with TOPIC_IDS, those topics' memories."""
    memory = state.ledger()
    if topic_ids:
        if rebuild:
            memory.topics(user=user, rebuild=True)
        found = memory.topic_memories(user=user, ids=topic_ids)
        output.emit(state.as_json, found, lambda: _drill_down(found))
        return
    result = memory.topics(user=user, rebuild=rebuild)
    output.emit(state.as_json, result, lambda: _topics_table(result))
