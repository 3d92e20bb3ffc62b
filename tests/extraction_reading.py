"""What the offline extractor reads, as the extraction family tests compare it."""

from __future__ import annotations

from mnemoledger.commands.llm.rules.extract import extract
from mnemoledger.commands.llm.rules.user_facts import stated_facts
from mnemoledger.commands.llm.schemas import ConversationTurn, ExtractInput


def facts_of(sentence: str) -> set[tuple[str, str]]:
    """(attribute, value) of every fact the user states in `sentence`."""
    return {(f.attribute, f.value) for f in stated_facts(sentence)}


def extracted(*turns: tuple[str, str]) -> dict[str, str]:
    """Key -> value of the preferences and styles extracted from (role, text) turns."""
    conversation = [ConversationTurn(role=role, content=text) for role, text in turns]
    out = extract(ExtractInput(conversation=conversation))
    return {f.key: f.value for f in [*out.preferences, *out.styles]}
