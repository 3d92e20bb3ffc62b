"""A small ledger for the explorer's tests: two users, an update (a content diff), a link, a
supersession (a scripted reconstruct answer), core.md versions, and a recorded replay of
the log taken before one last add (so the replay diff has something to show)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm import ScriptedProvider
from mnemoledger.commands.llm.schemas import ReconstructOutput
from tests.live_server import LiveServer, live_server

LAST_ADD = "Maya is learning the cello"
"""Added after the replay was taken: the replay diff shows it as the one removed memory."""


@dataclass(frozen=True)
class Explorer:
    """A running server over the seeded ledger, and what the tests look for."""

    server: LiveServer
    home: Path
    replay: Path
    admin_key: str
    agent_key: str
    paris: str
    berlin: str
    peanuts: str


def seed(memory: MnemoLedger, replay: Path) -> dict[str, str]:
    paris, peanuts = memory.add(
        ["Maya lives in Paris", "Maya is allergic to peanuts"], user="maya", agent="researcher"
    ).memories
    memory.update(peanuts.id, "Maya is allergic to peanuts and cashews", agent="researcher")
    pipeline = memory.add_pipeline
    offline = pipeline.provider
    scripted = ScriptedProvider(offline)
    scripted.script(
        "reconstruct",
        ReconstructOutput.model_validate(
            {
                "memories": [{"content": "Maya moved to Berlin", "sources": ["new:0", paris.id]}],
                "coverage": [{"new_content": 0, "memories": [0]}],
            }
        ),
    )
    settings = pipeline.settings
    # Every memory counts as related for this one add, so the scripted answer is asked for.
    pipeline.settings = settings.model_copy(update={"related_min_similarity": -1.0})
    pipeline.provider = scripted
    try:
        [berlin] = memory.add(
            ["Maya lives in Paris", "Maya moved to Berlin"], user="maya", agent="researcher"
        ).memories
    finally:
        pipeline.provider, pipeline.settings = offline, settings
    memory.link(peanuts.id, berlin.id)
    memory.add(["Sam plays chess on Sundays"], user="sam")
    memory.replay(replay)
    memory.add([LAST_ADD], user="maya")
    return {"paris": paris.id, "berlin": berlin.id, "peanuts": peanuts.id}


@contextmanager
def explorer(root: Path) -> Iterator[Explorer]:
    """A live server (SQLite) over the seeded ledger in `root`/home."""
    home, replay = root / "home", root / "replay"
    with live_server(home, sqlite=True) as server:
        ids = server.state.facade.call(lambda memory: seed(memory, replay))
        yield Explorer(
            server=server,
            home=home,
            replay=replay,
            admin_key=server.key("auditor", ["maya", "sam"], admin=True),
            agent_key=server.key("researcher", ["maya"]),
            **ids,
        )
