"""`Replay`: replay the log into a scratch ledger, and compare two ledgers.

memory.replay("/tmp/r1")                                   # exact: recorded answers
memory.replay("/tmp/r2", mode="live", prompts={"core_update": "strict.txt"})
report = memory.diff(memory.settings.home, "/tmp/r2")      # what the new prompt changed
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from mnemoledger.commands.audit.timepoints import parse_point
from mnemoledger.commands.parts import Parts
from mnemoledger.ledger import Settings
from mnemoledger.ledger.errors import InvalidInput

if TYPE_CHECKING:  # the replay engine loads every stage: imported when a replay runs
    from mnemoledger.commands.audit.diff import DiffReport
    from mnemoledger.commands.audit.replay import ReplayOptions, ReplayResult
    from mnemoledger.commands.audit.replay.engine import Mode, Progress


class Closable(Protocol):
    def close(self) -> None: ...


Live = TypeVar("Live", bound=Closable)
"""The facade: the ledger replayed, compared, and opened on another home."""


class Replay(Generic[Live]):
    """Execute the log again into a new ledger; compare two ledgers.

    `run` is `commands.audit.replay.replay`, `compare` is `commands.audit.diff.diff_ledgers`
    and `reopen(settings)` opens another ledger like this one (same class, same actor)."""

    def __init__(
        self,
        parts: Parts,
        live: Live,
        *,
        run: Callable[[Live, Path, ReplayOptions, Progress | None], ReplayResult],
        compare: Callable[[Live, Live, str | None], DiffReport],
        reopen: Callable[[Settings], Live],
    ) -> None:
        self.parts = parts
        self.live = live
        self.run = run
        self.compare = compare
        self.reopen = reopen

    def replay(
        self,
        into: str | Path,
        *,
        mode: Mode = "recorded",
        prompts: Mapping[str, str | Path] | None = None,
        model: str | None = None,
        provider: str | None = None,
        base_url: str | None = None,
        since: str | int | datetime | None = None,
        until: str | int | datetime | None = None,
        user: str | None = None,
        progress: Progress | None = None,
    ) -> ReplayResult:
        """`MnemoLedger.replay`: execute the log again elsewhere (documented there)."""
        from mnemoledger.commands.audit.replay import PromptOverride, ReplayOptions

        options = ReplayOptions(
            mode=mode,
            prompts={
                stage: PromptOverride.load(stage, path) for stage, path in (prompts or {}).items()
            },
            model=model,
            provider=provider,
            base_url=base_url,
            since=parse_point(since) if since is not None else None,
            until=parse_point(until) if until is not None else None,
            user=user,
        )
        return self.run(self.live, Path(into), options, progress)

    def diff(self, a: str | Path, b: str | Path, *, user: str | None = None) -> DiffReport:
        """`MnemoLedger.diff`: what differs between two ledgers (documented there)."""
        with self.opened(a) as first, self.opened(b) as second:
            return self.compare(first, second, user)

    @contextmanager
    def opened(self, home: str | Path) -> Iterator[Live]:
        """The ledger in `home`: this one when it is this home, else opened with these
        settings (the same embedder) on the SQLite log in that directory."""
        settings = self.parts.settings
        path = Path(home).expanduser()
        if path.resolve() == settings.home.resolve():
            yield self.live
            return
        if not (path / "ledger.sqlite3").exists():
            raise InvalidInput(f"{path}: no ledger there (no ledger.sqlite3)")
        with ExitStack() as stack:
            other = self.reopen(settings.model_copy(update={"home": path, "db": None}))
            stack.callback(other.close)
            yield other
