"""Seed 000, Core Entry Policy (Prompt-Level): "compact high-signal core with a soft target
around 8 total bullets", held by the offline core-update rules too."""

from __future__ import annotations

from mnemoledger import MnemoLedger
from mnemoledger.commands.llm.rules.core import core_update
from mnemoledger.commands.llm.schemas import CoreUpdateInput
from mnemoledger.ledger.core import empty_core_markdown, parse_sections
from mnemoledger.ledger.policy import CORE_SOFT_TARGET_BULLETS

DURABLE_FACTS = [
    "I work at Globex as a data engineer",
    "I have a dog named Rufus",
    "I use Neovim as my editor",
    "I run Arch Linux on my laptop",
    "I deploy with Docker",
    "My sister is called Ines",
    "I am vegetarian",
    "My wife is a nurse",
    "I use Postgres for most projects",
    "My birthday is in March",
    "I write Python every day",
    "I have two kids",
    "I work remotely",
    "My partner runs a bakery",
]
"""Fourteen durable facts, more than the core's target holds. Which section each belongs to is
the judge's kinds model's reading, scored with the other sentences the rule tests pinned in
`tests/data/kinds_rule_tests.jsonl` by `scripts/eval_judge.py` (it reads "My birthday is in
March" as an event, "I work remotely" as chatter)."""


def bullets(memory: MnemoLedger) -> dict[str, list[str]]:
    return parse_sections(memory.core(user="u").markdown)


def count(sections: dict[str, list[str]]) -> int:
    return sum(len(b) for b in sections.values())


def test_seed000_core_entry_policy_soft_target_of_about_8_bullets(memory: MnemoLedger) -> None:
    memory.add(DURABLE_FACTS, user="u")
    first = bullets(memory)
    assert count(first) == CORE_SOFT_TARGET_BULLETS == 8
    assert len(memory.list(user="u")) == len(DURABLE_FACTS), "the rest stays in memory"

    # full: an ordinary new fact waits in long-term memory ...
    memory.add(["I have a cat named Tom"], user="u")
    assert bullets(memory) == first
    # ... a newer value of a fact in the core replaces its bullet ...
    memory.add(["I now work at Initech as a data engineer"], user="u")
    after = bullets(memory)
    assert count(after) == 8
    assert "I now work at Initech as a data engineer" in after["USER"]
    assert not any("Globex" in b for b in after["USER"])
    # ... and the target is soft: a rule for the agent and a health fact still enter
    # (not a reply language: that is a sensitive field, held back until granted)
    memory.add(["Always answer in metric units"], user="u")
    memory.add(["I'm allergic to penicillin"], user="u")
    last = bullets(memory)
    assert "Always answer in metric units" in last["RULE"]
    assert "I'm allergic to penicillin" in last["USER"]
    assert count(last) == 10


def test_seed000_core_entry_policy_essential_candidates_take_the_slots_first() -> None:
    """One call with more candidates than room: the rule and the allergy are kept even when
    they come last."""
    output = core_update(
        CoreUpdateInput(
            current_core_markdown=empty_core_markdown(),
            candidate_new_memories=[
                *DURABLE_FACTS,
                "Never share my address",
                "I'm allergic to shellfish",
            ],
            superseded_memories=[],
        )
    )
    sections = parse_sections(output.core_markdown)
    assert count(sections) == CORE_SOFT_TARGET_BULLETS
    assert "Never share my address" in sections["RULE"]
    assert "I'm allergic to shellfish" in sections["USER"]


def test_seed000_core_entry_policy_a_new_value_replaces_only_its_own_bullet() -> None:
    """A newer value of one fact takes the place of the bullet about the same thing and
    holder; the bullets about anything or anyone else stay."""
    held = [
        "My sister is called Ines",
        "Maya lives in Paris",
        "My birthday is in March",
        "I work at Globex as a data engineer",
        "I live in Portland, Oregon",
    ]
    core = "## SOUL\n\n## USER\n" + "".join(f"- {b}\n" for b in held) + "\n## RULE\n\n## TOOLS\n"
    for candidate, replaced in [
        ("I now work at Initech as a data engineer", "I work at Globex as a data engineer"),
        ("Maya moved to Berlin", "Maya lives in Paris"),
        ("I have a cat named Tom", None),
    ]:
        output = core_update(
            CoreUpdateInput(
                current_core_markdown=core,
                candidate_new_memories=[candidate],
                superseded_memories=[],
            )
        )
        user = parse_sections(output.core_markdown)["USER"]
        assert user == [candidate if b == replaced else b for b in held] + (
            [] if replaced else [candidate]
        ), candidate
