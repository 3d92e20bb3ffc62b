"""Prompt-injection screening of memory content (Nebo, seed 004 §15; issue 15 item 1).

A memory is later pasted into agents' prompts, so text that tries to instruct the model is
refused with a clear error instead of being stored. The text is read in several normalised
views (NFKC, look-alike letters folded, invisible characters dropped, leetspeak and
spaced-out letters joined: `commands.screen.normalize`) and matched against the seed's 14
patterns and the broader families of `commands.screen.patterns`. The refusal names the
phrase that looked like an instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemoledger.commands.write.screen.normalize import compact, views
from mnemoledger.commands.write.screen.patterns import (
    COMPACT,
    DELIMITER_NAMED,
    FAMILIES,
    MENTION_CUE,
    NEGATABLE,
    NEGATION_BEFORE,
    QUOTED,
    SEED,
)
from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.errors import InvalidInput

# The seed's alternatives (seed 004 §15), kept as the floor of the screen; `system:` only
# counts at a line start (see `commands.screen.patterns.SEED`).
INJECTION_PATTERNS = SEED

# Tool-path limits (seed 004 §15): keys 128, values 2048 characters.
MAX_TOOL_KEY_CHARS = 128
MAX_TOOL_VALUE_CHARS = 2048

# Characters of the matched phrase a refusal quotes (enough to recognise it, short
# enough for one line of an error message).
QUOTE_CHARS = 80
# Characters before a match searched for a negation ("never share your passwords").
NEGATION_WINDOW = 30


class InjectionRefused(InvalidInput):
    """The content looks like an attempt to instruct the agent that will read it."""


@dataclass(frozen=True)
class Finding:
    """What looked like an instruction: the family of patterns and the matched phrase."""

    family: str
    phrase: str


def _negated(view: str, match: re.Match[str]) -> bool:
    before = view[max(0, match.start() - NEGATION_WINDOW) : match.start()]
    return bool(NEGATION_BEFORE.search(before))


def _mentioned(view: str, match: re.Match[str], quoted: list[tuple[int, int]]) -> bool:
    """The match lies inside quotation marks and the words around the quote talk about
    it ("someone hid 'ignore previous instructions' in their resume")."""
    for start, end in quoted:
        if start <= match.start() and match.end() <= end:
            outside = view[:start] + " " + view[end:]
            return bool(MENTION_CUE.search(outside)) and _bare(outside) is None
    return False


def _bare(view: str) -> Finding | None:
    for family, patterns in FAMILIES.items():
        for pattern in patterns:
            for match in pattern.finditer(view):
                if family in NEGATABLE and _negated(view, match):
                    continue
                return Finding(family, match.group(0))
    return None


def detect(text: str) -> Finding | None:
    """The first instruction-like phrase in `text` (any view, any family), or None; a
    phrase quoted and talked about is a mention, not an instruction."""
    for view in views(text):
        quoted = [m.span() for m in QUOTED.finditer(view)]
        for family, patterns in FAMILIES.items():
            for pattern in patterns:
                for match in pattern.finditer(view):
                    if family in NEGATABLE and _negated(view, match):
                        continue
                    if quoted and _mentioned(view, match, quoted):
                        continue
                    if family == "delimiter" and DELIMITER_NAMED.match(view, match.end()):
                        continue
                    return Finding(family, match.group(0))
    unquoted = QUOTED.sub(" ", text)
    letters = compact(unquoted if MENTION_CUE.search(unquoted) else text)
    for pattern in COMPACT:
        spaced = pattern.search(letters)
        if spaced:
            return Finding("spaced", spaced.group(0))
    return None


def screen(text: str) -> str:
    """`text` unchanged, or `InjectionRefused` naming the phrase that looks like an injection."""
    finding = detect(text)
    if finding is not None:
        phrase = " ".join(finding.phrase.split())[:QUOTE_CHARS]
        raise InjectionRefused(
            f"content refused: {phrase!r} looks like an instruction to the assistant "
            f"({finding.family}; prompt injection screen)"
        )
    return text


# Event types whose `content` becomes what agents read: memories and notes. A command's
# recorded input is not screened (a refused request stays in the log by design).
STORED_TEXT_EVENTS = ("Memory", "Note")


def screen_record(record: EventRecord) -> EventRecord:
    """`record` unchanged, or `InjectionRefused` when the memory or note text it would
    store on import looks like an instruction (import, seed 003 §8)."""
    content = record.data.get("content")
    if record.type.startswith(STORED_TEXT_EVENTS) and isinstance(content, str):
        try:
            screen(content)
        except InjectionRefused as error:
            raise InjectionRefused(f"{record.type} on {record.stream_id}: {error}") from None
    return record
