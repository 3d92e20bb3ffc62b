"""Offline core update (seed 000, core entry policy): a conservative gate, one-section
routing by cue words and the soft target of about 8 bullets (CORE_SOFT_TARGET_BULLETS).

A candidate enters core.md only when it states something durable about the user or the
agent; temporary content never does. A candidate replaces the bullet it supersedes: one
named in `superseded_memories` about the same topic (or sharing enough words), else one of
its section about the same topic that the judge's relation model reads it as replacing
("Maya lives in Paris" / "Maya moved to Berlin"). The topic is what the judge's facts model
reads in each: a single-valued attribute (name, occupation, employer, home, hometown) or a
person named. A superseded bullet that no routed candidate
replaces goes, unless a lasting candidate gives a new value of what it stated ("As of March
I'm in-house counsel at Medtronic" names no section's cue): that one takes its place, so a
fact of the core is never lost by being updated. Once the core holds the target number of
bullets, a candidate that would add one enters only when it is essential: a SOUL or RULE
bullet (how the agent must behave) or a health fact of the user (SAFETY_CUES); the
candidates of one call are taken essential first.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from mnemoledger.commands.judge import LearnedJudge, default_judge
from mnemoledger.commands.judge.decisions import replacements, replaces
from mnemoledger.commands.judge.facts import SINGLE_VALUED
from mnemoledger.commands.llm.rules.text import comparison_key, overlap, single_line
from mnemoledger.commands.llm.schemas import CoreUpdateInput, CoreUpdateOutput
from mnemoledger.ledger.core import CORE_SECTIONS, parse_sections
from mnemoledger.ledger.policy import CORE_SOFT_TARGET_BULLETS

_I = re.IGNORECASE

# --- seed 000, core entry policy: durable facts only; transient content stays out ---------

TRANSIENT: Final = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|right now|at the moment|for now|for the moment"
    r"|temporar(y|ily)|later today|last night|this (morning|afternoon|evening|week|weekend"
    r"|month|session|sprint)|(today|tomorrow|this week)'s|next (week|weekend|month)"
    r"|in (a few|\d+) (minutes|hours|days)"
    r"|currently (debugging|working on|fixing|investigating|testing|looking|trying|reviewing))\b",
    _I,
)
"""Session-only or passing content, excluded from the core whatever else it says."""

_WEEKDAY = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
ONE_OFF: Final = re.compile(
    r"\b(the|a|an|my|our|his|her|their|this|next|upcoming)( \w+)? (meeting|appointment|call"
    r"|standup|stand-up|interview|demo|presentation|flight|reservation|deadline|webinar"
    r"|check-?up)s?\b"
    r"|\b(meeting|appointment|call|interview|flight) (with|at|on|moved|is at|got)\b"
    r"|\b(deadline|due (date|on|by))\b|\bis due\b"
    r"|\b(moved|pushed|rescheduled|postponed|shifted|brought forward) (back )?(to|until) "
    r"(\d|noon|midnight|" + _WEEKDAY + r"|next|later|tomorrow)"
    r"|\b\d{1,2}(:\d{2})? ?(am|pm)\b|\b\d{1,2}:\d{2}\b"
    r"|\b(on|next|this|by|until|before|after|coming) " + _WEEKDAY + r"\b"
    r"|\b(to-?do|task list|remind me to|reminder)\b"
    r"|\bneeds? to (finish|submit|send|call|email|buy|book|pick up|fix|review|prepare|pay)\b",
    _I,
)
"""One-off events and plans (seed 000's core entry gate): meetings, appointments, calls,
deadlines, tasks, anything pinned to one clock time or one coming day ("moved to 3pm",
"on Friday at 10"). Excluded unless HABITUAL says it recurs."""
HABITUAL: Final = re.compile(
    r"\b(always|never|every|each|usually|typically|generally|normally|whenever|daily"
    r"|weekly|weekdays|weekends|(mon|tues|wednes|thurs|fri|satur|sun)days)\b",
    _I,
)
"""What makes a timed statement a standing fact: "every day at 7am", "on Fridays"."""

SOUL_CUES: Final = re.compile(
    r"\b(assistant|agent)('s)? (name|persona|personality|role|identity|values?|principles?)\b"
    r"|\b(assistant|agent) is (called|named)\b|\byour (name|persona|personality|role)\b"
    r"|\bcore principle",
    _I,
)
USER_CUES: Final = re.compile(
    r"\b(name is|named|call me|goes by|lives? in|living in|moved to|relocated to|based in"
    r"|resides? in|(?-i:from [A-Z]\w+)|works? (at|for|as)|working (at|for|as)|employed|job is"
    r"|works? (from home|remotely|from the office)"
    r"|profession|allergic|allergy|allergies|intoleran\w+|pronouns|speaks|native language"
    r"|mother tongue|time ?zone|married|wife|husband|partner|son|daughter|children|kids?"
    r"|mother|father|sister|brother|dog|cat|pets?|vegetarian|vegan|birthday|born)\b",
    _I,
)
"""Identity and profile: name, home, work, health, language, timezone, family, pets."""
RULE_CUES: Final = re.compile(
    r"\b(always|never|must|should (always|never))\b"
    r"|^(please\s+)?(don't|do not|avoid|use|answer|reply|respond|write|keep)\b"
    r"|\bprefers? .*\b(answers?|responses?|replies|explanations?|summaries|format|tone)\b",
    _I,
)
TOOLS_CUES: Final = re.compile(
    r"\b(uses?|using|runs?|running|works? with|deploys?|deployed|deploy with|installed"
    r"|editor|ide|terminal|shell|os|operating system|linux|macos|windows|ubuntu|debian"
    r"|docker|kubernetes|k8s|python|node|git|github|gitlab|postgres\w*|sqlite|vim|neovim"
    r"|emacs|vs ?code|version)\b|\bv?\d+\.\d+",
    _I,
)
SAFETY_CUES: Final = re.compile(
    r"\b(allerg\w*|intoleran\w*|anaphyla\w*|epilep\w*|diabet\w*|asthma\w*|celiac|coeliac"
    r"|medical condition|medication|blood type|pacemaker|emergency contact)\b",
    _I,
)
"""Health facts of the user: essential, so they enter the core even past its soft target."""
ESSENTIAL_SECTIONS: Final = ("SOUL", "RULE")
"""Sections whose new bullets enter past the soft target: how the agent must behave."""
_ROUTES: Final = (("SOUL", SOUL_CUES), ("USER", USER_CUES), ("RULE", RULE_CUES))
"""Checked in this order; the first that matches wins, then TOOLS."""

_STALE_OVERLAP: Final = 0.3
"""Word overlap from which a superseded bullet is rewritten in place by a candidate."""
READINGS_CACHE_SIZE: Final = 4096
"""Texts whose reading by the facts model is kept: triage and the core gate ask again."""


EVENTS: Final = re.compile(
    r"\b(?:meeting|appointment|call|standup|stand-up|interview|demo|presentation|flight"
    r"|reservation|deadline|webinar|check-?up|class|lesson|session)s?\b",
    _I,
)
"""What happens at a time, whatever moves it."""
NEW_STATE: Final = re.compile(
    r"\b(?:started|joined|moved|relocated|switched|became|promoted|retired|quit|left"
    r"|handed in)\b",
    _I,
)
"""Verbs by which a dated statement starts a standing fact ("I started at Datadog this
Monday")."""


def states_a_standing_value(text: str) -> bool:
    """Whether the text gives (or ends) a value of one of a person's single-valued
    attributes, as the judge's facts model reads it: an occupation, an employer, where they
    live, where they come from (`STANDING`)."""
    return any(topic in STANDING for topic in topics_of(text))


def topics_of(text: str) -> frozenset[str]:
    """What the judge's facts model reads the text as giving a value of: the standing
    attributes ("employer") and the people it names ("person:maya")."""
    return _topics_of(default_judge(), text)


STANDING: Final = SINGLE_VALUED - {"name"}
"""The single-valued attributes that make a text a profile fact of the core. Not the name:
it reaches the core only through the consent gate ("Preferred name: ...", a sensitive
field), and in a text written about the user the facts model reads the subject's name as
given ("Maya had pasta for lunch")."""


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
    """Passing or one-off content: never coreworthy (seed 000, core entry gate). A change of
    one of the person's standing values keeps, whenever it happened."""
    if NEW_STATE.search(text) and not EVENTS.search(text) and states_a_standing_value(text):
        return False
    return bool(TRANSIENT.search(text)) or (
        bool(ONE_OFF.search(text)) and not HABITUAL.search(text)
    )


def section_of(candidate: str) -> str | None:
    """The section a durable candidate belongs to; None for anything not coreworthy."""
    if is_transient(candidate):
        return None
    for section, cues in _ROUTES:
        if cues.search(candidate):
            return section
    if TOOLS_CUES.search(candidate):
        return "TOOLS"
    # a value of a person's single-valued attribute ("I joined Shopify as a backend
    # developer", "I now freelance as a photographer") is a profile fact
    return "USER" if states_a_standing_value(candidate) else None


def is_essential(candidate: str, section: str) -> bool:
    """A bullet that enters the core even past its soft target of about 8."""
    return section in ESSENTIAL_SECTIONS or bool(SAFETY_CUES.search(candidate))


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
        else:  # a new value no section's cue names keeps the place of the one it replaces
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
