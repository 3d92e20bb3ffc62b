"""How a statement, a memory beside a question, or a turn is shown to the models: the same
in fitting and in use."""

from __future__ import annotations

import re
from typing import Final

from mnemoledger.commands.judge.judgement import Role
from mnemoledger.commands.write.attribution import speaker_and_body

_SPACE: Final = re.compile(r"\s+")
_COORDINATION: Final = re.compile(r"\s*(?:;|,?\s+(?:and|but)\s+|,\s+)\s*", re.IGNORECASE)
"""Where two coordinated clauses meet: a semicolon, "and", "but" or a comma."""
OPAQUE_TOKEN: Final = re.compile(
    r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{8,}\b"
)
"""An identifier, hash or key ("3236c2d1464740939fd6668686cac3f6", "user_42abc9"): letters
and digits mixed, eight characters or more. It means nothing to a reader, yet its subword
pieces can push a short note anywhere; the turn model reads it as one placeholder."""
OPAQUE_PLACEHOLDER: Final = "ID"


def statement(text: str) -> str:
    """What a statement says, on one line, without its attribution: a shared "[date]
    Speaker:" would make any two statements of one speaker look alike."""
    return _SPACE.sub(" ", speaker_and_body(text)[1]).strip()


def passage(text: str) -> str:
    """A memory as the relevance model reads it beside a question: on one line, its speaker
    kept ("Jon: I bought a kite", for "what did Jon buy") and its date left out (every turn
    of a conversation has one: it tells the memories apart no better than noise)."""
    speaker, body = speaker_and_body(text)
    said = _SPACE.sub(" ", body).strip()
    return f"{speaker}: {said}" if speaker else said


def coordinated(text: str) -> list[str]:
    """The statement and, when it joins several clauses ("I live in Paris and work as a
    nurse"), each of them: a newer statement may replace one clause and leave the rest."""
    said = statement(text)
    parts = [p for p in _COORDINATION.split(said) if len(p.split()) >= 2]
    return [said, *parts] if len(parts) > 1 else [said]


def turn(text: str, role: Role) -> str:
    """A turn as the turn model reads it: its role, then its words."""
    words = OPAQUE_TOKEN.sub(OPAQUE_PLACEHOLDER, _SPACE.sub(" ", text).strip())
    return f"[{role}] {words}"
