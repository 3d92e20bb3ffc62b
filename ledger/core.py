"""The core document: one stream per user holding every version of its `core.md` (HAEMA)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from ledger.event import LedgerEvent

CORE_SECTIONS = ("SOUL", "TOOLS", "RULE", "USER")
"""The four sections of core.md, in order (seed 000, core entry policy)."""

_CORE_NAMESPACE = UUID("6f1d7a4e-2c39-4c55-9a57-3b1d8c0e9f21")


@dataclass
class CoreDocument(Aggregate, created_event_name="CoreStarted"):
    """A user's durable profile: identity, tools, rules, facts about the user."""

    class Event(LedgerEvent):
        """Every event of a core document carries the provenance metadata."""

    user_id: str
    """The user the document describes."""
    markdown: str = field(default="", init=False)
    """The current core.md."""
    revision: int = field(default=0, init=False)
    """How many times the document was updated."""

    @staticmethod
    def create_id(user_id: str) -> UUID:
        return uuid.uuid5(_CORE_NAMESPACE, f"core:{user_id}")

    @event("CoreUpdated")
    def update(self, markdown: str, sections: dict[str, list[str]], memory_ids: list[str]) -> None:
        self.markdown = markdown
        self.revision += 1


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
