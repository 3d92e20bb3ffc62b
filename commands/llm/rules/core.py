"""Offline core update (seed 000, core entry policy): a conservative gate, one section per
candidate from what kind of memory the judge reads it as (`CORE_SECTION`), and the soft
target of about 8 bullets (CORE_SOFT_TARGET_BULLETS).

A candidate enters core.md only when it states something lasting about the user or the
agent; events, passing states and chatter never do. A candidate replaces the bullet it
supersedes: one named in `superseded_memories` about the same topic (or sharing enough
words), else one of its section about the same topic that the judge's relation model reads
it as replacing ("Maya lives in Paris" / "Maya moved to Berlin"). The topic is what the
judge's facts model reads in each: a single-valued attribute (occupation, employer, home,
hometown) or a person named. A superseded bullet that no routed candidate replaces goes,
unless a lasting candidate gives a new value of what it stated: that one takes its place,
so a fact of the core is never lost by being updated. Once the core holds the target
number of bullets, a candidate that would add one enters only when it is essential: a SOUL
or RULE bullet (how the agent must behave) or a health fact of the user; the candidates of
one call are taken essential first.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from mnemoledger.commands.judge import LearnedJudge, default_judge
from mnemoledger.commands.judge.decisions import replacements, replaces
from mnemoledger.commands.judge.facts import SINGLE_VALUED
from mnemoledger.commands.judge.kinds import LASTING, Kind
from mnemoledger.commands.llm.rules.text import comparison_key, overlap, single_line
from mnemoledger.commands.llm.schemas import CoreUpdateInput, CoreUpdateOutput
from mnemoledger.ledger.core import CORE_SECTIONS, parse_sections
from mnemoledger.ledger.policy import CORE_SOFT_TARGET_BULLETS

# --- seed 000, core entry policy: durable facts only; transient content stays out ---------

CORE_SECTION: Final[dict[str, str]] = {
    "profile": "USER",
    "health": "USER",
    "rule": "RULE",
    "agent": "SOUL",
    "tools": "TOOLS",
}
"""The section of each kind of memory (`judge.kinds`) that enters the core: who the user
is, how the assistant must behave, who it is, what the user works with. Tastes, lessons,
decisions and procedures stay in long-term memory; events, passing states and chatter never
enter (seed 000's core entry gate)."""
ESSENTIAL_SECTIONS: Final = ("SOUL", "RULE")
"""Sections whose new bullets enter past the soft target: how the agent must behave."""
ESSENTIAL_KINDS: Final = frozenset({"health"})
"""Kinds whose bullets enter past the soft target: a health fact of the user."""
_STALE_OVERLAP: Final = 0.3
"""Word overlap from which a superseded bullet is rewritten in place by a candidate."""
READINGS_CACHE_SIZE: Final = 4096
"""Texts whose reading by the facts model is kept: triage and the core gate ask again."""


def kind_of(text: str) -> Kind:
    """What kind of memory the judge's kinds model reads `text` as."""
    return default_judge().kinds([text])[0]


def topics_of(text: str) -> frozenset[str]:
    """What the judge's facts model reads the text as giving a value of: the standing
    attributes ("employer") and the people it names ("person:maya")."""
    return _topics_of(default_judge(), text)


STANDING: Final = SINGLE_VALUED - {"name"}
"""The single-valued attributes by which two bullets are about one topic. Not the name: it
reaches the core only through the consent gate ("Preferred name: ...", a sensitive field),
and in a text written about the user the facts model reads the subject's name as given
("Maya had pasta for lunch")."""


@lru_cache(maxsize=READINGS_CACHE_SIZE)
def _topics_of(judge: LearnedJudge, text: str) -> frozenset[str]:
    found = set()
    for fact in judge.facts([(text, "")])[0]:
        if fact.attribute in STANDING:
            found.add(fact.attribute)
        elif fact.attribute == "person":
            found.add(f"person:{fact.value.casefold()}")
    return frozenset(found)


def is_transient(text: str) -> bool:
    """Passing or one-off content (an event, a state that holds for now, chatter): never
    coreworthy (seed 000, core entry gate)."""
    return kind_of(text) not in LASTING


def section_of(candidate: str) -> str | None:
    """The section a durable candidate belongs to; None for anything not coreworthy."""
    return CORE_SECTION.get(kind_of(candidate))


def is_essential(candidate: str, section: str) -> bool:
    """A bullet that enters the core even past its soft target of about 8."""
    return section in ESSENTIAL_SECTIONS or kind_of(candidate) in ESSENTIAL_KINDS


def render_core_markdown(sections: dict[str, list[str]]) -> str:
    """The four sections in order, each a heading and its bullets."""
    parts = [
        "\n".join([f"## {name}", *(f"- {bullet}" for bullet in sections.get(name, []))])
        for name in CORE_SECTIONS
    ]
    return "\n\n".join(parts) + "\n"


def core_update(inputs: CoreUpdateInput) -> CoreUpdateOutput:
    sections = parse_sections(inputs.current_core_markdown)
    before = {name: list(bullets) for name, bullets in sections.items()}
    superseded = {comparison_key(text) for text in inputs.superseded_memories}
    stale = {
        (name, bullet)
        for name, bullets in sections.items()
        for bullet in bullets
        if comparison_key(bullet) in superseded
    }
    default_judge().kinds([single_line(c) for c in inputs.candidate_new_memories])  # one batch
    routed = [
        (c, s) for c in map(single_line, inputs.candidate_new_memories) if (s := section_of(c))
    ]
    routed.sort(key=lambda pair: not is_essential(*pair))  # stable: essential ones first
    for candidate, section in routed:
        if any(
            comparison_key(candidate) == comparison_key(b) for bs in sections.values() for b in bs
        ):
            continue
        bullets = sections[section]
        target = _replaced_bullet(candidate, section, bullets, stale)
        if target is None:
            held = sum(len(bs) for bs in sections.values()) - len(stale)
            if held >= CORE_SOFT_TARGET_BULLETS and not is_essential(candidate, section):
                continue  # past the soft target: it stays in long-term memory
            bullets.append(candidate)
        else:
            bullets[bullets.index(target)] = candidate
            stale.discard((section, target))
    routed_texts = {candidate for candidate, _ in routed}
    unrouted = [
        c
        for c in map(single_line, inputs.candidate_new_memories)
        if c not in routed_texts and not is_transient(c)
    ]
    for name, bullet in sorted(stale):
        successor = next((c for c in unrouted if _replaces(bullet, c)), None)
        if successor is None:
            sections[name].remove(bullet)
        else:  # a new value the core has no section for keeps the place of the one it replaces
            sections[name][sections[name].index(bullet)] = successor
            unrouted.remove(successor)
    return CoreUpdateOutput(
        should_update=sections != before, core_markdown=render_core_markdown(sections)
    )


def _replaces(bullet: str, candidate: str) -> bool:
    """Whether the candidate gives a new value of what the superseded bullet stated."""
    return replaces(bullet, candidate)


def _replaced_bullet(
    candidate: str, section: str, bullets: list[str], stale: set[tuple[str, str]]
) -> str | None:
    """The bullet of `section` the candidate replaces: a superseded one about the same topic
    (or sharing enough words), else the one about the same topic the judge's relation model
    reads it as replacing (the likeliest; two models agreeing, as the relation alone reads
    many a change of something else as a replacement)."""
    topics = topics_of(candidate)
    for bullet in bullets:
        if (section, bullet) in stale and (
            topics & topics_of(bullet) or overlap(candidate, bullet) >= _STALE_OVERLAP
        ):
            return bullet
    same_topic = [bullet for bullet in bullets if topics & topics_of(bullet)]
    found = replacements(same_topic, [candidate])
    return same_topic[min(found)] if found else None
