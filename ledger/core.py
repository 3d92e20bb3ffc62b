"""The core document: one stream per user holding every version of its `core.md` (HAEMA).

Each version records, next to the markdown, the memory ids each bullet rests on
(`sources`), so the document can follow the store: when such a memory is forgotten,
updated, superseded, merged or dropped, a new version drops or rewrites the bullet.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from mnemoledger.ledger.event import LedgerEvent

CORE_SECTIONS = ("SOUL", "TOOLS", "RULE", "USER")
"""The four sections of core.md, in order (seed 000, core entry policy)."""

_CORE_NAMESPACE = UUID("6f1d7a4e-2c39-4c55-9a57-3b1d8c0e9f21")


@dataclass
class CoreDocument(Aggregate, created_event_name="CoreStarted"):
    """A user's durable profile: identity, tools, rules, facts about the user."""

    class_version = 3
    """2: the document keeps `sources` (snapshots of version 1 are upcast); 3: it keeps
    the candidates waiting for a core-update call (`pending`)."""

    class Event(LedgerEvent):
        """Every event of a core document carries the provenance metadata."""

    class CoreUpdated(Event):
        """A new version of core.md.

        `memory_ids` are the memories the version was decided from (added or changed by
        the command); `sources` maps each bullet to the memories it rests on."""

        class_version = 2

        markdown: str
        sections: dict[str, list[str]]
        memory_ids: list[str]
        sources: dict[str, list[str]] | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """Version 1 did not say what each bullet rests on: nothing known."""
            state["sources"] = {}

    class CoreCandidatesDeferred(Event):
        """An add left its new memories for a later core-update call, which reads the
        candidates of several adds at once."""

        memory_ids: list[str]

    class CoreCandidatesRead(Event):
        """A core-update call read the waiting candidates: none waits any more."""

        memory_ids: list[str]

    user_id: str
    """The user the document describes."""
    markdown: str = field(default="", init=False)
    """The current core.md."""
    revision: int = field(default=0, init=False)
    """How many times the document was updated."""
    sources: dict[str, list[str]] = field(default_factory=dict, init=False)
    """The memory ids each bullet of the current core.md rests on, by bullet text; a
    bullet written before sources were recorded rests on nothing known."""

    @staticmethod
    def create_id(user_id: str) -> UUID:
        return uuid.uuid5(_CORE_NAMESPACE, f"core:{user_id}")

    pending: list[str] = field(default_factory=list, init=False)
    """New memories no core-update call has read yet, oldest first."""
    pending_adds: int = field(default=0, init=False)
    """How many adds left the `pending` candidates."""

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A snapshot taken before sources were recorded."""
        state["sources"] = {}

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A snapshot taken before candidates could wait: none waits."""
        state["pending"] = []
        state["pending_adds"] = 0

    @event(CoreUpdated)
    def update(
        self,
        markdown: str,
        sections: dict[str, list[str]],
        memory_ids: list[str],
        sources: dict[str, list[str]] | None = None,
    ) -> None:
        self.markdown = markdown
        self.revision += 1
        self.sources = dict(sources or {})

    @event(CoreCandidatesDeferred)
    def defer(self, memory_ids: list[str]) -> None:
        self.pending = [*self.pending, *memory_ids]
        self.pending_adds += 1

    @event(CoreCandidatesRead)
    def read_candidates(self, memory_ids: list[str]) -> None:
        self.pending = []
        self.pending_adds = 0


def empty_core_markdown() -> str:
    return "\n\n".join(f"## {name}" for name in CORE_SECTIONS) + "\n"


def parse_sections(markdown: str) -> dict[str, list[str]]:
    """The bullets of each known section of a core.md."""
    sections: dict[str, list[str]] = {name: [] for name in CORE_SECTIONS}
    current: str | None = None
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            name = stripped[3:].strip().upper()
            current = name if name in sections else None
        elif current and stripped.startswith(("- ", "* ")):
            sections[current].append(stripped[2:].strip())
    return sections
