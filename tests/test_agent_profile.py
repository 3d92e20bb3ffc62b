"""The agent profile (seed 004 §9 agent_profile, loadAgentProfile, FormatForSystemPrompt):
name, identity prompt, character card, communication style and tool notes, kept on the
user's agent note and rendered by the agent context."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoledger import MnemoLedger
from mnemoledger.ledger import InvalidInput
from tests.test_cli import run, run_json

TOOL_NOTES = (
    '{"version": 1, "sections": [{"name": "Search", "items": ['
    '{"text": "Prefer arxiv", "enabled": true}, {"text": "Use Bing", "enabled": false}]}]}'
)


def sections(text: str) -> list[str]:
    return [part.splitlines()[0] for part in text.split("\n\n---\n\n")]


def test_seed004_s9_profile_renders_in_the_seed_order(memory: MnemoLedger) -> None:
    memory.write_note("Think step by step.", user="maya", kind="soul")
    memory.write_note("Cite sources", user="maya", kind="rule", evidence=["t:1"])
    memory.set_agent_profile(
        "maya",
        prompt="You are {name}, Maya's assistant.",
        name="Ada",
        voice="warm",
        creature="curious owl",
        role="your research partner",
        vibe="calm",
        emoji="🦉",
        tool_notes=TOOL_NOTES,
    )
    context = memory.context("maya", environment="Linux")
    assert sections(context.text) == [
        "## Agent",
        "## Character",
        "## Soul",
        "## Communication Style",
        "## Environment",
        "## Rules",
        "## Tool Notes",
    ]
    text = context.text
    assert "You are Ada, Maya's assistant." in text and "{name}" not in text
    assert "You are a curious owl. Your relationship: your research partner." in text
    assert "Your vibe: calm." in text and "🦉" in text
    assert "- Voice: warm" in text and "- Formality: adaptive" in text  # seed default
    assert "- Prefer arxiv" in text and "Use Bing" not in text  # enabled items only


def test_a_second_set_keeps_what_it_does_not_name_and_supersedes_the_note(
    memory: MnemoLedger,
) -> None:
    first = memory.set_agent_profile("maya", name="Ada", voice="warm")
    second = memory.set_agent_profile("maya", formality="casual")
    assert (second.profile.name, second.profile.voice) == ("Ada", "warm")
    assert second.profile.formality == "casual" and second.prompt == first.prompt
    assert memory.get(first.note_id).superseded_by == second.note_id
    assert memory.agent_profile("bob") is None


def test_bad_profile_values_are_refused_and_nothing_is_written(memory: MnemoLedger) -> None:
    with pytest.raises(InvalidInput, match="voice"):
        memory.set_agent_profile("maya", voice="loud")
    with pytest.raises(InvalidInput, match="emoji"):
        memory.set_agent_profile("maya", emoji="x" * 40)
    assert memory.agent_profile("maya") is None
    assert memory.notes("maya", kind="agent") == []


def test_an_agent_note_without_a_profile_renders_as_before(memory: MnemoLedger) -> None:
    memory.write_note("You are {name}.", user="maya", kind="agent")
    context = memory.context("maya", environment="Linux")
    assert context.agent_profile is None
    assert sections(context.text) == ["## Agent", "## Environment"]
    assert "You are {name}." in context.text


def test_cli_set_and_show(home: Path) -> None:
    assert run_json(home, "agent-profile", "show", "--user", "maya") is None
    shown = run_json(
        home, "agent-profile", "set", "--user", "maya", "--name", "Ada", "--voice", "casual"
    )
    assert shown["profile"]["name"] == "Ada" and shown["profile"]["voice"] == "casual"
    again = run_json(home, "agent-profile", "show", "--user", "maya")
    assert again["note_id"] == shown["note_id"]
    refused = run(home, "agent-profile", "set", "--user", "maya", "--voice", "loud")
    assert refused.exit_code == 2 and "loud" in refused.stderr
    human = run(home, "agent-profile", "show", "--user", "maya")
    assert human.exit_code == 0 and "name: Ada" in human.stdout


def test_seed004_s9_onboarding_and_memory_tool_instructions(
    memory: MnemoLedger,
) -> None:
    bare = memory.context("maya", environment="Linux")
    assert bare.onboarding_needed and not bare.tool_instructions
    assert "## Memory Tools" not in bare.text
    # (no city: "in Porto" would keep the note out of the context until a grant)
    memory.write_note("Maya, a violinist.", user="maya", kind="user")
    told = memory.context("maya", environment="Linux", tool_instructions=True)
    assert not told.onboarding_needed
    assert sections(told.text)[-1] == "## Memory Tools"
    for tool in ("recall(", "search(", "store(", "list(", "delete("):
        assert tool in told.text


def test_cli_context_tools_flag(home: Path) -> None:
    plain = run(home, "context", "--user", "maya")
    with_tools = run(home, "context", "--user", "maya", "--tools")
    assert plain.exit_code == with_tools.exit_code == 0
    assert "## Memory Tools" in with_tools.stdout and "## Memory Tools" not in plain.stdout
