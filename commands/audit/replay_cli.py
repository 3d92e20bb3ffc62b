"""`mnemoledger replay` and `mnemoledger diff`: re-run the log, see what changes.

    mnemoledger replay --into /tmp/r1                      # exact: recorded LLM answers
    mnemoledger diff ~/.local/share/mnemoledger /tmp/r1    # "no differences"
    mnemoledger replay --into /tmp/r2 --mode live --prompt core_update=strict.txt
    mnemoledger diff ~/.local/share/mnemoledger /tmp/r2 --json

`replay --json` prints what it did and, per command that came out differently,
`divergences` (the LLM calls, memories, core.md and outcome fields that differ). `diff`
exits 0 whether or not the ledgers differ; `--json` prints the report
(`identical`, `added`, `removed`, `changed`, `core`, `decisions_flipped`, `llm`).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from mnemoledger.commands import output
from mnemoledger.commands.audit.diff import DiffReport
from mnemoledger.commands.audit.replay import MODES, ReplayResult
from mnemoledger.commands.audit.replay.divergence import CommandDivergence
from mnemoledger.commands.options import CliState, global_options, pass_state
from mnemoledger.ledger.errors import InvalidInput


def _prompts(values: tuple[str, ...]) -> dict[str, str]:
    prompts: dict[str, str] = {}
    for value in values:
        stage, sep, path = value.partition("=")
        if not sep or not stage or not path:
            raise InvalidInput(f"--prompt takes STAGE=FILE; got {value!r}")
        prompts[stage.strip()] = path
    return prompts


@click.command()
@click.option(
    "--into",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="New, empty directory for the replayed ledger.",
)
@click.option("--mode", type=click.Choice(MODES), default="recorded", show_default=True)
@click.option(
    "--prompt",
    "prompts",
    multiple=True,
    metavar="STAGE=FILE",
    help="Live mode: replace a stage's prompt with a file's text (repeatable).",
)
@click.option("--model", help="Live mode: the model the stages run on.")
@click.option("--provider", type=click.Choice(["offline", "openai"]), help="Live mode.")
@click.option(
    "--base-url",
    metavar="URL",
    help="Live mode: the OpenAI-compatible server the stages call, its /v1 URL "
    "(default: MNEMOLEDGER_OPENAI_BASE_URL); embeddings are not sent there.",
)
@click.option("--since", metavar="TIME|POSITION", help="Re-execute only commands after this.")
@click.option("--until", metavar="TIME|POSITION", help="Stop the replay at this point.")
@click.option("--user", help="Replay only this user's events.")
@global_options
@pass_state
def replay(
    state: CliState,
    into: Path,
    mode: str,
    prompts: tuple[str, ...],
    model: str | None,
    provider: str | None,
    base_url: str | None,
    since: str | None,
    until: str | None,
    user: str | None,
) -> None:
    """Execute the recorded log again into a scratch ledger in DIR: every command through
    its pipeline, with the recorded LLM answers (recorded) or live stages (live). Lists
    each command whose model answers, memories, core.md or outcome came out differently."""
    with output.progress_bar(not state.as_json, "replaying") as progress:
        result = state.ledger().replay(
            into,
            mode="live" if mode == "live" else "recorded",
            prompts=_prompts(prompts),
            model=model,
            provider=provider,
            base_url=base_url,
            since=since,
            until=until,
            user=user,
            progress=progress,
        )
    output.emit(state.as_json, result, lambda: _replay_summary(result))


def _replay_summary(result: ReplayResult) -> None:
    output.stdout.print(
        f"replayed {result.events} events into {result.into} ({result.mode}) in "
        f"{result.seconds:.2f} s: {result.commands_rerun} commands re-run "
        f"({result.llm_calls} LLM calls), {result.events_reapplied} events re-applied, "
        f"{result.events_skipped} skipped, {result.failed_commands} commands failed"
        + (f", {result.diverged_calls} calls diverged" if result.diverged_calls else "")
        + f", {result.diverged_commands} commands came out differently"
    )
    for failure in result.failures:
        output.stdout.print(f"  failed: {failure}")
    for found in result.divergences:
        _divergence_text(found)


def _divergence_text(found: CommandDivergence) -> None:
    out = output.stdout
    out.print(f"{found.type} {found.command} ({found.user}):", markup=False)
    for call in found.calls:
        out.print(
            f"  call {call.index} {call.stage[1] or call.stage[0]}: "
            f"{call.prompt[0]} -> {call.prompt[1]}",
            markup=False,
        )
        out.print(f"    answer: {call.answer[0]!r} -> {call.answer[1]!r}", markup=False)
    for memory in found.memories:
        out.print(
            f"  memory {memory.id}: {memory.content[0]!r} -> {memory.content[1]!r}", markup=False
        )
        if memory.events[0] != memory.events[1]:
            events = " -> ".join(", ".join(e) or "none" for e in memory.events)
            out.print(f"    events: {events}", markup=False)
    if found.core is not None:
        out.print(f"  core.md: {found.core[0]!r} -> {found.core[1]!r}", markup=False)
    for name, (was, now) in found.outcome.items():
        out.print(f"  outcome {name}: {was!r} -> {now!r}", markup=False)


@click.command()
@click.argument("dir_a", type=click.Path(file_okay=False, path_type=Path))
@click.argument("dir_b", type=click.Path(file_okay=False, path_type=Path))
@click.option("--user", help="Compare only this user's state.")
@global_options
@pass_state
def diff(state: CliState, dir_a: Path, dir_b: Path, user: str | None) -> None:
    """Compare two ledgers: memories added/removed/changed, core.md (unified diff),
    decisions that flipped, LLM calls and tokens."""
    report = state.ledger().diff(dir_a, dir_b, user=user)
    output.emit(state.as_json, report, lambda: _diff_text(report))


def _diff_text(report: DiffReport) -> None:
    out = output.stdout
    if report.identical:
        out.print(f"no differences between {report.a} and {report.b}")
    for title, memories in (("added (only in b)", report.added), ("removed", report.removed)):
        if memories:
            output.memories_table(memories, title)
    for change in report.changed:
        out.print(f"changed {change.id} ({change.user_id}):")
        for name, (was, now) in change.fields.items():
            out.print(f"  {name}: {was!r} -> {now!r}", markup=False)
    for user, text in report.core.items():
        out.print(f"core.md of {user}:")
        for line in text.splitlines():
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
            out.print(Text(line, style=style))
    for flip in report.decisions_flipped:
        out.print(f"{flip.type} #{flip.occurrence} on {flip.memory_id}: {flip.a} -> {flip.b}")
    table = Table(title="LLM calls (a -> b)")
    for column in ("stage", "calls", "prompt tokens", "completion tokens"):
        table.add_column(column)
    a, b = report.llm.get("a"), report.llm.get("b")
    stages = sorted({*(a.by_stage if a else {}), *(b.by_stage if b else {})})
    for stage in stages:
        was = (a.by_stage if a else {}).get(stage, {})
        now = (b.by_stage if b else {}).get(stage, {})
        table.add_row(
            stage,
            *(
                f"{was.get(k, 0)} -> {now.get(k, 0)}"
                for k in ("calls", "prompt_tokens", "completion_tokens")
            ),
        )
    if stages:
        out.print(table)
