"""`mnemoledger demo`: a bundled sample conversation, loaded into a fresh home and shown."""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from commands import output
from commands.facade import MnemoLedger
from ledger.errors import InvalidInput

USER = "maya"
AGENT = "demo-assistant"
THREAD = "demo-thread"


def sample_conversation() -> list[dict[str, Any]]:
    """The bundled turns: `{"id", "role", "content", "corrects"?}` per line."""
    text = resources.files("commands").joinpath("data/sample_conversation.jsonl").read_text()
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

    def say(message: str) -> None:
        if not as_json:
            output.stdout.print(message)

    say(f"[bold]mnemoledger demo[/] in {home}\n")
    with MnemoLedger(home, actor="demo") as memory:
        by_turn: dict[str, str] = {}
        for turn in sample_conversation():
            if turn["role"] != "user":
                continue
            if corrected := by_turn.get(turn.get("corrects", "")):
                memory.update(corrected, turn["content"], agent=AGENT, thread=THREAD)
                say(f"turn {turn['id']} corrects an earlier memory -> UPDATE {corrected[:8]}")
                continue
            result = memory.add([turn["content"]], user=USER, agent=AGENT, thread=THREAD)
            by_turn[turn["id"]] = result.memories[0].id
        memory.ttl(by_turn["t8"], 7, agent=AGENT)
        memory.link(by_turn["t10"], by_turn["t1"], link_type="related", strength=0.6)
        memory.forget(by_turn["t12"])

        memories = memory.list(user=USER)
        query = "where does Maya live now?"
        hits = memory.search(query, user=USER, k=3)
        history = memory.history(by_turn["t1"])
        stats = memory.stats()
        if as_json:
            print(
                json.dumps(
                    output.to_jsonable(
                        {
                            "home": str(home),
                            "memories": memories,
                            "search": hits,
                            "history": history,
                            "stats": stats,
                        }
                    ),
                    indent=2,
                )
            )
            return
        output.memories_table(memories, f"memories of {USER} (one TTL, one forgotten)")
        say(f"\n[bold]search[/] {query!r}")
        output.hits_table(hits)
        say("\n[bold]history[/] of the corrected memory (every change is an event)")
        output.events_table(history)
        say(
            f"\n{stats.events} events in the log; read models at "
            f"{', '.join(f'{k}={v}' for k, v in stats.projections.items())}."
        )
        say(f"Try: mnemoledger --home {home} log")
