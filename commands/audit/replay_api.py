"""`ReplayMixin`: replay the log into a scratch ledger, and compare two ledgers.

memory.replay("/tmp/r1")                                   # exact: recorded answers
memory.replay("/tmp/r2", mode="live", prompts={"core_update": "strict.txt"})
report = memory.diff(memory.settings.home, "/tmp/r2")      # what the new prompt changed
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from mnemoledger.commands.audit.diff import DiffReport, diff_ledgers
from mnemoledger.commands.audit.replay import PromptOverride, ReplayOptions, ReplayResult, replay
from mnemoledger.commands.audit.replay.engine import Mode, Progress
from mnemoledger.commands.audit.timepoints import parse_point
from mnemoledger.ledger import Settings
from mnemoledger.ledger.errors import InvalidInput

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger


class ReplayMixin:
    """Expects on `self`: a `MnemoLedger`."""

    settings: Settings
    actor: str

    def replay(
        self,
        into: str | Path,
        *,
        mode: Mode = "recorded",
        prompts: Mapping[str, str | Path] | None = None,
        model: str | None = None,
        provider: str | None = None,
        since: str | int | datetime | None = None,
        until: str | int | datetime | None = None,
        user: str | None = None,
        progress: Progress | None = None,
    ) -> ReplayResult:
        """Execute the log again into a new ledger in `into`: every recorded command
        through its pipeline (LLM answers from the record in `recorded` mode; in `live`
        mode the stages run again, with `prompts` {stage: file}, `model`, `provider`);
        `since`/`until` (TIME|POSITION) and `user` limit what is executed again."""
        options = ReplayOptions(
            mode=mode,
            prompts={
                stage: PromptOverride.load(stage, path) for stage, path in (prompts or {}).items()
            },
            model=model,
            provider=provider,
            since=parse_point(since) if since is not None else None,
            until=parse_point(until) if until is not None else None,
            user=user,
        )
        return replay(cast("MnemoLedger", self), Path(into), options, progress)

    def diff(self, a: str | Path, b: str | Path, *, user: str | None = None) -> DiffReport:
        """What differs between the ledgers in directories `a` and `b` (memories, core.md,
        flipped decisions, LLM calls and tokens)."""
        with self._opened(a) as first, self._opened(b) as second:
            return diff_ledgers(first, second, user)

    @contextmanager
    def _opened(self, home: str | Path) -> Iterator[MnemoLedger]:
        """The ledger in `home`: this one when it is this home, else opened with these
        settings (the same embedder) on the SQLite log in that directory."""
        this = cast("MnemoLedger", self)
        path = Path(home).expanduser()
        if path.resolve() == this.settings.home.resolve():
            yield this
            return
        if not (path / "ledger.sqlite3").exists():
            raise InvalidInput(f"{path}: no ledger there (no ledger.sqlite3)")
        with ExitStack() as stack:
            other = type(this)(
                settings=self.settings.model_copy(update={"home": path, "db": None}),
                actor=self.actor,
            )
            stack.callback(other.close)
            yield other
