"""`mnemoledger demo`: a bundled sample conversation, loaded into a fresh home and shown."""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from mnemoledger.commands import output
from mnemoledger.commands.audit.history_cli import history_table
from mnemoledger.commands.facade import MnemoLedger
from mnemoledger.ledger.errors import InvalidInput

USER = "maya"
AGENT = "demo-assistant"
THREAD = "demo-thread"
QUERY = "which city does she live in now?"
SAMPLE_RESOURCE = "data/sample_conversation.jsonl"


def sample_conversation() -> list[dict[str, Any]]:
    """The bundled turns: `{"id", "role", "content"}` per line."""
    text = resources.files("mnemoledger.commands").joinpath(SAMPLE_RESOURCE).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def choose_home(home: Path | None) -> Path:
    chosen = home or (Path(env) if (env := os.environ.get("MNEMOLEDGER_HOME")) else None)
    if chosen is None:
        return Path(tempfile.mkdtemp(prefix="mnemoledger-demo-"))
    if (chosen / "ledger.sqlite3").exists():
        raise InvalidInput(f"demo needs a fresh home; {chosen} already holds a ledger")
    return chosen


def run_demo(home: Path | None, *, as_json: bool = False) -> None:
    home = choose_home(home)

    def say(message: str, *, markup: bool = False) -> None:
        if not as_json:
            output.stdout.print(message, markup=markup)

    say(f"[bold]mnemoledger demo[/] in {home}\n", markup=True)
    with MnemoLedger(home, actor="demo") as memory:
        if memory.ledger.last_position():  # a ledger on PostgreSQL has no file in home
            raise InvalidInput(f"demo needs a fresh home; {home} already holds a ledger")
        superseded: list[str] = []
        corrected: list[str] = []
        """Memories of a turn that a later turn corrects (`corrects`), once replaced."""
        correction: tuple[str, list[str]] | None = None
        """The correcting turn's text and the memories of the turn it corrects."""
        of_turn: dict[str, list[str]] = {}
        by_text: dict[str, str] = {}
        turns = [t for t in sample_conversation() if t["role"] == "user"]
        with output.progress_bar(not as_json, "remembering the conversation") as progress:
            for done, turn in enumerate(turns, 1):
                result = memory.add(
                    [turn["content"]],
                    user=USER,
                    agent=AGENT,
                    thread=THREAD,
                    source="demo",
                    evidence=[turn["id"]],
                )
                superseded += result.superseded
                of_turn[turn["id"]] = [m.id for m in result.memories]
                mended = of_turn.get(turn.get("corrects", ""), [])
                if mended:
                    correction = (turn["content"], mended)
                corrected += [i for i in result.superseded if i in mended]
                by_text.update({m.content: m.id for m in result.memories})
                if progress:
                    progress(done, len(turns))
        debugging = next(i for text, i in by_text.items() if "debugging" in text)
        memory.ttl(debugging, 7, agent=AGENT)
        work = next(i for text, i in by_text.items() if "PostgreSQL" in text)
        memory.link(work, debugging, agent=AGENT)
        editor = next(i for text, i in by_text.items() if "Neovim" in text)
        memory.forget(editor, agent=AGENT)

        memories = memory.list(user=USER)
        hits = memory.search(QUERY, user=USER, k=3)
        shown = corrected[:1] or ([_closest(memory, *correction)] if correction else [])
        history = memory.memory_history(shown[0]) if shown else []
        core = memory.core(user=USER)
        stats = memory.stats()
        llm_calls = len(memory.log(event_type="LLMCallRecorded"))
        if as_json:
            report = {
                "home": str(home),
                "memories": memories,
                "search": hits,
                "history": history,
                "corrected": bool(corrected),
                "core": core,
                "superseded": superseded,
                "llm_calls": llm_calls,
                "stats": stats,
            }
            print(json.dumps(output.to_jsonable(report), indent=2))
            return
        output.memories_table(memories, f"memories of {USER}")
        say(f"\n[bold]search[/] {QUERY!r}", markup=True)
        output.hits_table(hits)
        if history:
            heading = "of a memory the conversation later corrected"
            if not corrected:
                heading = "of the memory a later turn corrects (the add kept both: not replaced)"
            say(f"\n[bold]history[/] {heading}", markup=True)
            history_table(history)
        say(f"\n[bold]core.md[/] (version {core.version})", markup=True)
        say(core.markdown)
        say(
            f"{stats.events} events in the log ({llm_calls} LLM calls recorded, offline "
            f"provider); read models at "
            f"{', '.join(f'{k}={v}' for k, v in stats.projections.items())}."
        )
        say(f"Try: mnemoledger --home {home} log --type MemorySuperseded")


def _closest(memory: MnemoLedger, text: str, candidates: list[str]) -> str:
    """Of `candidates`, the memory sharing the most words with `text` (what it corrects)."""
    words = set(text.lower().split())
    return max(candidates, key=lambda i: len(words & set(memory.get(i).content.lower().split())))
