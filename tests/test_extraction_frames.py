"""Kinds of phrasing from the error analysis of holdout4/holdout5, each checked on new sentences:
accented names and titles, introductions in the user's first language, and tools the user
refuses or avoids (a negative, never a tool of theirs)."""

from __future__ import annotations

import pytest

from mnemoledger.commands.llm.rules.extract import extract
from mnemoledger.commands.llm.schemas import ConversationTurn, ExtractInput


def _user_facts(text: str) -> dict[str, str]:
    out = extract(ExtractInput(conversation=[ConversationTurn(role="user", content=text)]))
    return {f.key: f.value for f in out.preferences if f.key.startswith("user/")}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hi, my name is Zoë and I paint houses", "Zoë"),
        ("my name is Łukasz, nice to meet you", "Łukasz"),
        ("I am Dr. Amara Osei, a paediatrician", "Amara Osei"),
        ("I'm Prof Ines Duarte, I teach chemistry", "Ines Duarte"),
        ("Ich bin Matthias, I work in a bakery", "Matthias"),
        ("Hola, soy Carmen, from Sevilla", "Carmen"),
    ],
)
def test_names_with_accents_titles_or_in_another_language(text: str, name: str) -> None:
    assert _user_facts(text).get("user/name") == name


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("I refuse to use Zoom for anything", "Zoom"),
        ("honestly I don't get on with Eclipse", "Eclipse"),
        ("we avoid using Trello", "Trello"),
        ("I won't use Outlook", "Outlook"),
    ],
)
def test_a_tool_refused_or_given_up_is_a_negative(text: str, tool: str) -> None:
    facts = _user_facts(text)
    key = f"user/tool/{tool.lower()}"
    assert facts.get(key) == f"does not use {tool}", facts


def test_an_avoided_name_is_no_tool_of_theirs() -> None:
    facts = _user_facts("I avoid Photoshop whenever I can")
    assert not any(v == "Photoshop" for v in facts.values()), facts
