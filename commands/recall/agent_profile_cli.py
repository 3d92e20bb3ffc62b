"""`mnemoledger agent-profile set|show`: the agent's name, identity, character and
communication style for one user, as `context` renders them.

    mnemoledger agent-profile set --user maya --name Ada --voice warm --creature "curious owl"
    mnemoledger agent-profile show --user maya --json
"""

from __future__ import annotations

from typing import get_args

import click

from mnemoledger.commands import output
from mnemoledger.commands.options import CliState, global_options, pass_state, writer_options
from mnemoledger.commands.recall.agent_profile import (
    EmojiUsage,
    Formality,
    Proactivity,
    ResponseLength,
    Voice,
)
from mnemoledger.commands.recall.agent_profile_api import AgentProfileOut


def _show(found: AgentProfileOut | None) -> None:
    if found is None:
        output.stdout.print("no agent profile")
        return
    output.stdout.print(f"prompt: {found.prompt}")
    for field, value in found.profile.model_dump().items():
        if value is not None:
            output.stdout.print(f"{field}: {value}")
    output.stdout.print(f"note {found.note_id}, written {found.updated_at}")


@click.group(name="agent-profile")
@global_options
def agent_profile() -> None:
    """The agent's name, identity, character and communication style for one user."""


@agent_profile.command(name="set")
@click.option("--user", required=True, help="The user this agent serves.")
@click.option("--prompt", help="Identity text; {name} becomes the agent's name.")
@click.option("--name", help="The agent's name.")
@click.option("--voice", type=click.Choice(get_args(Voice)))
@click.option("--response-length", type=click.Choice(get_args(ResponseLength)))
@click.option("--emoji-usage", type=click.Choice(get_args(EmojiUsage)))
@click.option("--formality", type=click.Choice(get_args(Formality)))
@click.option("--proactivity", type=click.Choice(get_args(Proactivity)))
@click.option("--emoji", help="The agent's signature emoji.")
@click.option("--creature", help='What the agent is, e.g. "curious owl".')
@click.option("--role", help='Its relationship to the user, e.g. "your research partner".')
@click.option("--vibe", help="Personality flavour text.")
@click.option("--tool-notes", help="Notes on using tools (markdown or versioned JSON sections).")
@writer_options
@global_options
@pass_state
def set_command(
    state: CliState,
    user: str,
    prompt: str | None,
    name: str | None,
    voice: str | None,
    response_length: str | None,
    emoji_usage: str | None,
    formality: str | None,
    proactivity: str | None,
    emoji: str | None,
    creature: str | None,
    role: str | None,
    vibe: str | None,
    tool_notes: str | None,
    agent: str | None,
    thread: str | None,
) -> None:
    """Set the profile; options left out keep their current value (new profiles start from
    the defaults: Nebo, neutral, adaptive, moderate)."""
    found = state.ledger().set_agent_profile(
        user,
        prompt=prompt,
        name=name,
        voice=voice,
        response_length=response_length,
        emoji_usage=emoji_usage,
        formality=formality,
        proactivity=proactivity,
        emoji=emoji,
        creature=creature,
        role=role,
        vibe=vibe,
        tool_notes=tool_notes,
        agent=agent,
        thread=thread,
    )
    output.emit(state.as_json, found, lambda: _show(found))


@agent_profile.command(name="show")
@click.option("--user", required=True, help="The user this agent serves.")
@global_options
@pass_state
def show(state: CliState, user: str) -> None:
    """Show the profile (`null` with --json when none was set)."""
    found = state.ledger().agent_profile(user)
    output.emit(state.as_json, found, lambda: _show(found))
