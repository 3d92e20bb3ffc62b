"""Prompt-injection screening of memory content (Nebo, seed 004 §15; issue 15 item 1).

A memory is later pasted into agents' prompts, so text that tries to instruct the model is
refused with a clear error instead of being stored. Two readers decide, knowing who wrote
the text (user, assistant, tool, document):
- the seed's 14 patterns (seed 004 §15), matched on several normalised views (NFKC,
  look-alike letters folded, invisible characters dropped, leetspeak and spaced-out letters
  joined: `commands.write.screen.normalize`), unless the phrase is quoted and talked about;
  an assistant's reply is not matched ("You are now ready to publish!" is advice to a
  person);
- the judge (`commands.judge`), which reads what each passage means with its role: an
  assistant's advice to the user is not an instruction to the model, a hidden order in a
  fetched page is.
The refusal names the phrase or the passage that looked like an instruction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from mnemoledger.commands.judge import Judge, Turn, default_judge
from mnemoledger.commands.judge.judgement import Role
from mnemoledger.commands.write.screen.normalize import clean, decoded, fold_confusables, views
from mnemoledger.commands.write.screen.patterns import MENTION_CUE, QUOTED, SEED
from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import INJECTION_CUT, INSTRUCTING_NOTE_KINDS, PERSONALITY_NAMESPACE

# The seed's alternatives (seed 004 §15), kept as the floor of the screen; `system:` only
# counts at a line start (see `commands.screen.patterns.SEED`).
INJECTION_PATTERNS = SEED

# Tool-path limits (seed 004 §15): keys 128, values 2048 characters.
MAX_TOOL_KEY_CHARS = 128
MAX_TOOL_VALUE_CHARS = 2048

# Characters of the matched phrase a refusal quotes (enough to recognise it, short
# enough for one line of an error message).
QUOTE_CHARS = 80


class InjectionRefused(InvalidInput):
    """The content looks like an attempt to instruct the agent that will read it."""


@dataclass(frozen=True)
class Finding:
    """What looked like an instruction: the family of patterns and the matched phrase."""

    family: str
    phrase: str


def _mentioned(view: str, match: re.Match[str], quoted: list[tuple[int, int]]) -> bool:
    """The match lies inside quotation marks and the words around the quote talk about
    it ("someone hid 'ignore previous instructions' in their resume")."""
    for start, end in quoted:
        if start <= match.start() and match.end() <= end:
            outside = view[:start] + " " + view[end:]
            return bool(MENTION_CUE.search(outside)) and _seed_match(outside) is None
    return False


def _seed_match(view: str) -> re.Match[str] | None:
    for pattern in SEED:
        if (match := pattern.search(view)) is not None:
            return match
    return None


def detect_phrasing(text: str) -> Finding | None:
    """The first of the seed's injection phrasings in `text` (any normalised view), or
    None; a phrase quoted and talked about is a mention, not an instruction."""
    for view in views(text):
        quoted = [m.span() for m in QUOTED.finditer(view)]
        for pattern in SEED:
            for match in pattern.finditer(view):
                if quoted and _mentioned(view, match, quoted):
                    continue
                return Finding("phrasing", match.group(0))
    return None


PASSAGE_CHARS: Final = 360
"""Sentences are read together up to about this many characters (the turn model reads 128
tokens): a long document is read passage by passage, so an order at its end is seen."""
_SENTENCE_BREAK: Final = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def passages(text: str) -> list[str]:
    """`text` cut at sentence ends into passages of at most about `PASSAGE_CHARS`, plus the
    texts hidden in its base64 runs."""
    readable = fold_confusables(clean(text))
    found: list[str] = []
    current = ""
    for sentence in (s.strip() for s in _SENTENCE_BREAK.split(readable)):
        if not sentence:
            continue
        if current and len(current) + len(sentence) + 1 > PASSAGE_CHARS:
            found.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        found.append(current)
    found += [fold_confusables(clean(plain)) for plain in decoded(readable)]
    return found or [readable]


def detect_instruction(
    texts: Sequence[str], role: Role = "user", judge: Judge | None = None
) -> Finding | None:
    """The first passage of `texts` the judge reads as an instruction to the model, given
    who wrote it, or None. All passages are read in one batch."""
    pieces = [p for text in texts for p in passages(text)]
    if not pieces:
        return None
    likelihoods = (judge or default_judge()).instructions([Turn(p, role) for p in pieces])
    for piece, likelihood in zip(pieces, likelihoods, strict=True):
        if likelihood >= INJECTION_CUT:
            return Finding("meaning", piece)
    return None


def detect(text: str, role: Role = "user") -> Finding | None:
    """What in `text` looks like an instruction to the model: one of the seed's phrasings
    (not in an assistant's reply), else a passage the judge reads as one."""
    if role != "assistant" and (found := detect_phrasing(text)) is not None:
        return found
    return detect_instruction([text], role)


def screen(text: str, *, instructs: bool = False, role: Role = "user") -> str:
    """`text` unchanged, or `InjectionRefused` naming the phrase that looks like an injection.
    `instructs`: the text is meant to instruct the agent (`instructs_the_agent`), so only a
    listed injection phrasing is refused, not what the judge reads as an instruction."""
    refuse(detect_phrasing(text) if instructs else detect(text, role))
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
