"""The agent's profile (seed 004 §9, `agent_profile`): its name, identity prompt, character
card and communication style, as the agent context renders them.

It is kept on the user's `agent` note (seed 002): the note's text is the identity prompt
and its metadata `agent_profile` holds the fields, so writing a profile is writing an
agent note (one active per user, the previous superseded, every version in the history).
Fields left unset take Nebo's defaults (`loadAgentProfile`) when the context renders the
profile; an agent note written without a profile renders as before (its text alone).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mnemoledger.commands.write.notes import AGENT_PROFILE_KEY
from mnemoledger.ledger.errors import InvalidInput

NAME_PLACEHOLDER: Final = "{name}"
"""Seed 004 §9: "{name} placeholder replaced with actual agent name"."""
MAX_PROFILE_FIELD_CHARS: Final = 2048  # seed 004 §15: a tool value's limit

# seed 004 §9 loadAgentProfile defaults
DEFAULT_AGENT_NAME: Final = "Nebo"
DEFAULT_IDENTITY: Final = "You are {name}, a personal AI assistant."

Voice = Literal["neutral", "warm", "formal", "casual"]
ResponseLength = Literal["adaptive", "brief", "detailed"]
EmojiUsage = Literal["moderate", "minimal", "abundant"]
Formality = Literal["adaptive", "formal", "casual"]
Proactivity = Literal["moderate", "passive", "aggressive"]

Text = Field(default=None, max_length=MAX_PROFILE_FIELD_CHARS)


class AgentProfile(BaseModel):
    """Who the agent is and how it talks (seed 004 §9 DBContext's agent fields)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default=DEFAULT_AGENT_NAME, min_length=1, max_length=128)
    voice: Voice = "neutral"
    response_length: ResponseLength = "adaptive"
    emoji_usage: EmojiUsage = "moderate"
    formality: Formality = "adaptive"
    proactivity: Proactivity = "moderate"
    emoji: str | None = Field(default=None, max_length=16)
    """The agent's signature emoji."""
    creature: str | None = Text
    """What it is, e.g. "curious owl"."""
    role: str | None = Text
    """Its relationship to the user, e.g. "your trusted advisor"."""
    vibe: str | None = Text
    """Personality flavour text."""
    tool_notes: str | None = Text
    """Notes on using tools: markdown, or the seed's versioned JSON sections."""


def parse_profile(fields: dict[str, Any]) -> AgentProfile:
    """The profile of `fields`, or InvalidInput naming what is wrong."""
    try:
        return AgentProfile.model_validate(fields)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'profile'}: {e['msg']}" for e in error.errors()
        )
        raise InvalidInput(f"agent profile: {problems}") from None


def profile_of(metadata: dict[str, Any] | None) -> AgentProfile | None:
    """The profile an agent note carries, if it carries a valid one."""
    fields = (metadata or {}).get(AGENT_PROFILE_KEY)
    if not isinstance(fields, str):
        return None
    try:
        return AgentProfile.model_validate_json(fields)
    except ValidationError:
        return None


def identity(profile: AgentProfile, prompt: str) -> str:
    """Agent Identity: the prompt (or the default one) with `{name}` filled in."""
    return (prompt.strip() or DEFAULT_IDENTITY).replace(NAME_PLACEHOLDER, profile.name)


def character(profile: AgentProfile) -> str | None:
    """Seed 004 §9 item 2, the "business card": creature, role, vibe, emoji."""
    lines = []
    if profile.creature:
        lines.append(f"You are a {profile.creature}.")
    if profile.role:
        lines.append(f"Your relationship: {profile.role}.")
    if profile.vibe:
        lines.append(f"Your vibe: {profile.vibe}.")
    if profile.emoji:
        lines.append(f"Your signature emoji: {profile.emoji}")
    return " ".join(lines) or None


def communication_style(profile: AgentProfile) -> str:
    """Seed 004 §9 item 4: voice, formality, emoji, response length (and proactivity)."""
    return "\n".join(
        (
            f"- Voice: {profile.voice}",
            f"- Formality: {profile.formality}",
            f"- Emoji: {profile.emoji_usage}",
            f"- Response length: {profile.response_length}",
            f"- Proactivity: {profile.proactivity}",
        )
    )
