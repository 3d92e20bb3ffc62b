"""How results reach a person (rich tables) or a script (`--json`, nothing else on stdout)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from mnemoledger.commands.models import AddResult, EventOut, MemoryOut, SearchHit, Stats


class ScoredText(Protocol):
    """A search result that is not a memory (e.g. a transcript chunk)."""

    @property
    def id(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def source(self) -> str: ...


# markup off: what users wrote (a memory "[erased]", "see [1]") is printed as written; a
# styled line of the CLI's own asks for markup explicitly (`print(..., markup=True)`).
stdout = Console(soft_wrap=True, markup=False)
stderr = Console(stderr=True, markup=False)

SHORT_ID_CHARS = 8
"""Characters of a memory id the tables show; every command taking a memory id accepts
them (any unique prefix of at least this many), and `--json` prints ids whole."""
SHORT_ID_CAPTION = f"ids: first {SHORT_ID_CHARS} characters (--json for whole ids)"

_HEX = frozenset("0123456789abcdef")


def is_full_id(value: str) -> bool:
    """A whole memory id: 32 lowercase hex digits."""
    return len(value) == 32 and _HEX.issuperset(value)


def short_id(value: str | None) -> str:
    """A memory id cut to its first `SHORT_ID_CHARS` characters; anything else as it is."""
    if value is None:
        return "-"
    return value[:SHORT_ID_CHARS] if is_full_id(value) else value


def id_table(*, title: str | None = None) -> Table:
    """A rich table that shows shortened memory ids and says so underneath."""
    return Table(title=title, caption=SHORT_ID_CAPTION)


def to_jsonable(data: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(data, BaseModel):
        return data.model_dump(mode="json", by_alias=True)
    if isinstance(data, list | tuple):
        return [to_jsonable(item) for item in data]
    if isinstance(data, dict):
        return {key: to_jsonable(value) for key, value in data.items()}
    return data


def emit(as_json: bool, data: Any, human: Callable[[], None]) -> None:
    """Print `data` as JSON for scripts, or call `human` to render it for people."""
    if as_json:
        print(json.dumps(to_jsonable(data), ensure_ascii=False, indent=2))
    else:
        human()


@contextmanager
def progress_bar(enabled: bool, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr, or nothing when output is for scripts or stderr is
    not a terminal (where the bar would leave a blank line before an `error:` line)."""
    if not enabled or not stderr.is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeRemainingColumn(), console=stderr, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def memories_table(memories: Sequence[MemoryOut], title: str | None = None) -> None:
    table = id_table(title=title)
    for column in ("id", "content", "layer", "kind", "state", "tags"):
        table.add_column(column, overflow="fold")
    for m in memories:
        state = m.state + (" (expired)" if m.expired else "")
        table.add_row(short_id(m.id), m.content, m.layer, m.kind, state, ", ".join(m.tags))
    stdout.print(table)


def memory_panel(memory: MemoryOut) -> None:
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in memory.model_dump(by_alias=True).items():
        if key == "links":
            value = (
                ", ".join(f"{short_id(e['to'])} ({e['type']}, {e['strength']})" for e in value)
                or "-"
            )
        elif isinstance(value, list):
            value = ", ".join(map(str, value)) or "-"
        table.add_row(key, "-" if value is None else str(value))
    stdout.print(table)


def hits_table(hits: Sequence[SearchHit]) -> None:
    table = id_table()
    for column in ("score", "id", "content", "layer", "kw", "vec"):
        table.add_column(column, overflow="fold")
    for h in hits:
        table.add_row(
            f"{h.score:.4f}",
            short_id(h.id),
            h.content,
            h.layer,
            str(h.keyword_rank or "-"),
            str(h.vector_rank or "-"),
        )
    stdout.print(table if hits else "no matches")


def mixed_hits_table(hits: Sequence[SearchHit | ScoredText]) -> None:
    """Memories and transcript chunks, best first: `source` tells them apart."""
    from mnemoledger.commands.models import SearchHit

    table = id_table()
    for column in ("score", "source", "id", "content"):
        table.add_column(column, overflow="fold")
    for h in hits:
        source = "memory" if isinstance(h, SearchHit) else h.source
        table.add_row(f"{h.score:.4f}", source, short_id(h.id), h.content)
    stdout.print(table if hits else "no matches")


def events_table(events: Sequence[EventOut], title: str | None = None) -> None:
    table = Table(title=title)
    for column in ("pos", "at", "type", "actor", "agent", "user", "data"):
        table.add_column(column, overflow="fold")
    for e in events:
        data = json.dumps(e.data, ensure_ascii=False)
        table.add_row(
            str(e.position or "-"),
            e.at[:19],
            e.type,
            e.actor,
            e.agent_id or "-",
            e.user_id,
            data if len(data) < 160 else data[:157] + "...",
        )
    stdout.print(table)


def add_summary(result: AddResult) -> None:
    if result.memories:
        memories_table(result.memories, "added")
    if result.reinforced:
        memories_table(result.reinforced, "reinforced (already known)")
    if result.superseded:
        stdout.print(f"superseded: {', '.join(result.superseded)}")
    for text in result.not_kept:
        stdout.print(f"not kept (nothing worth remembering): {text!r}")
    notes = [f"command {result.command_id}", f"{result.llm_calls} LLM calls"]
    if result.core_updated:
        notes.append("core.md updated")
    if result.fallback:
        notes.append("reconstruction failed twice: stored the normalized contents")
    stdout.print("; ".join(notes))


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def stats_summary(stats: Stats) -> None:
    """`stats` for people: one line each; the same numbers as `--json`."""
    lines = [
        ("events", f"{stats.events} in the log"),
        (
            "memories",
            f"{stats.memories}"
            + (
                f" ({_counts(stats.by_state)}; {_counts(stats.by_layer)})" if stats.memories else ""
            ),
        ),
        ("users", str(stats.users)),
        ("links", str(stats.links)),
        ("embedder", stats.embedder),
    ]
    positions = set(stats.projections.values())
    if len(positions) == 1 and positions == {stats.events}:
        models = f"all {len(stats.projections)} up to date (position {stats.events})"
    else:
        models = "at position " + ", ".join(
            f"{name} {position}" for name, position in stats.projections.items()
        )
    lines.append(("read models", models))
    width = max(len(label) for label, _ in lines)
    for label, value in lines:
        stdout.print(f"{label:<{width}}  {value}")
