"""`AgentProfiles`: the agent's profile in the Python API (seed 004 §9 agent_profile).

    memory.set_agent_profile("maya", name="Ada", voice="warm", creature="curious owl",
                             role="your research partner", prompt="You are {name}.")
    memory.agent_profile("maya")          # AgentProfileOut, or None

Writing a profile writes the user's `agent` note (the previous one is superseded), so
`context` renders its identity, character, communication style and tool notes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.parts import Parts
from mnemoledger.commands.recall.agent_profile import (
    DEFAULT_IDENTITY,
    AgentProfile,
    parse_profile,
    profile_of,
)
from mnemoledger.commands.write.notes import AGENT, WriteNoteRequest
from mnemoledger.commands.write.notes_api import notes_pipeline
from mnemoledger.ledger import validation
from mnemoledger.ledger.policy import ACTIVE


class AgentProfileOut(BaseModel):
    """The agent's profile for one user, and the note that holds it."""

    note_id: str
    prompt: str
    """The identity prompt (`{name}` is filled in by the context)."""
    profile: AgentProfile
    updated_at: str


class AgentProfiles:
    """Set and read the agent's profile."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def set_agent_profile(
        self,
        user: str,
        *,
        prompt: str | None = None,
        name: str | None = None,
        voice: str | None = None,
        response_length: str | None = None,
        emoji_usage: str | None = None,
        formality: str | None = None,
        proactivity: str | None = None,
        emoji: str | None = None,
        creature: str | None = None,
        role: str | None = None,
        vibe: str | None = None,
        tool_notes: str | None = None,
        agent: str | None = None,
        thread: str | None = None,
    ) -> AgentProfileOut:
        """`MnemoLedger.set_agent_profile`: set the agent's profile (documented there)."""
        given: dict[str, Any] = {
            "name": name,
            "voice": voice,
            "response_length": response_length,
            "emoji_usage": emoji_usage,
            "formality": formality,
            "proactivity": proactivity,
            "emoji": emoji,
            "creature": creature,
            "role": role,
            "vibe": vibe,
            "tool_notes": tool_notes,
        }
        current = self.agent_profile(user)
        merged = {
            **(current.profile.model_dump(exclude_unset=True) if current else {}),
            **{field: value for field, value in given.items() if value is not None},
        }
        profile = parse_profile(merged)
        text = prompt if prompt is not None else (current.prompt if current else DEFAULT_IDENTITY)
        request = WriteNoteRequest(
            content=validation.content(text),
            kind=AGENT,
            agent_profile=profile.model_dump(exclude_unset=True),
        )
        self.parts.refresh()
        notes_pipeline(self.parts).write(request, self.parts.provenance(user, agent, thread))
        found = self.agent_profile(user)
        assert found is not None, "the agent note was just written"
        return found

    def agent_profile(self, user: str) -> AgentProfileOut | None:
        """`MnemoLedger.agent_profile`: the agent's profile for `user` (documented there)."""
        user_id = str(validation.identifier("user", user))
        self.parts.refresh()
        notes = [
            row
            for row in self.parts.layers.list(user_id, state=ACTIVE)
            if row.note_kind == AGENT and row.superseded_by is None
        ]
        notes.sort(key=lambda row: (row.created_at, row.position), reverse=True)
        for row in notes:
            profile = profile_of(row.metadata)
            if profile is not None:
                return AgentProfileOut(
                    note_id=row.id, prompt=row.content, profile=profile, updated_at=row.created_at
                )
        return None
