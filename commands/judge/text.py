"""How a statement, a memory beside a question, or a turn is shown to the models: the same
in fitting and in use."""

from __future__ import annotations

import re
from typing import Final

from mnemoledger.commands.judge.judgement import Role
from mnemoledger.commands.write.attribution import speaker_and_body

_SPACE: Final = re.compile(r"\s+")
_CLAUSE_JOIN: Final = re.compile(r"\s*;\s*|,?\s+(?:and|but)\s+", re.IGNORECASE)
"""Where two coordinated clauses of one statement meet: a semicolon, "and" or "but" (a bare
comma more often joins the items of a list)."""


def _closed(words: str) -> frozenset[str]:
    """A closed class of words, written as one string."""
    return frozenset(words.split())


_NOUN_PHRASE_OPENERS: Final = _closed(
    "a an the this that these those my your his her its our their some any no every each "
    "another both all one two three four five six seven eight nine ten"
)
"""Closed-class words that open a noun phrase, not a clause: "a cat" in "I have a dog and
a cat" is a second item, not a second statement."""
_SUBJECT_PRONOUNS: Final = _closed("i we you he she they")
_POSSESSIVES: Final = _closed("my your his her its our their")
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


def clauses(text: str) -> list[str]:
    """The clauses a statement coordinates with "and", "but" or a semicolon, each of three
    words or more, the later ones opening with a subject pronoun or a verb, not a noun
    phrase or a name ("I live in Paris and work as a nurse" -> "I live in Paris", "work as
    a nurse"); [] when it coordinates none (a list of items: "I have a dog and a cat",
    "I like salt and pepper", "comes Tuesdays and Fridays, around ten")."""
    parts = [p.strip(" .,") for p in _CLAUSE_JOIN.split(statement(text))]
    if len(parts) < 2 or any(len(p.split()) < 3 for p in parts):
        return []
    if any(_first_word(p) in _NOUN_PHRASE_OPENERS or _named(p) for p in parts[1:]):
        return []
    subject = _subject(parts[0])
    said = parts[0].split()[len(subject.split()) :]
    if not any(w[:1].islower() for w in said):  # "My sister Ingrid and I ...": no clause
        return []
    return parts


def remaining(text: str, gone: set[int]) -> str:
    """What `text` still says without its clauses at the positions `gone` (of `clauses`),
    the kept ones joined with "and"; a kept clause that shares the first one's subject
    without saying it ("work as a nurse") gets that subject again ("I work as a nurse")."""
    parts = clauses(text)
    kept = [p for i, p in enumerate(parts) if i not in gone]
    if not kept:
        return ""
    if 0 in gone and not _has_subject(kept[0]):
        subject = _subject(parts[0])
        if subject:
            kept[0] = f"{subject} {kept[0]}"
    said = " and ".join(kept)
    return said[0].upper() + said[1:]


def _first_word(text: str) -> str:
    words = text.split()
    return words[0].casefold().replace("’", "'").split("'")[0] if words else ""


def _named(part: str) -> bool:
    """A part that opens with a capitalised word other than "I": a name, a day, a place;
    without a parser, as likely a list's next item ("Tuesdays and Fridays, around ten") as
    another person's clause."""
    first = part.split()[0]
    return first[:1].isupper() and _first_word(part) != "i"


def _has_subject(clause: str) -> bool:
    """A later clause that opens with a subject pronoun says who it is about (one opening
    with a name is no clause: `_named`)."""
    return _first_word(clause) in _SUBJECT_PRONOUNS


def _subject(clause: str) -> str:
    """The subject a first clause opens with: a pronoun ("I'm" -> "I"), a possessive and
    its noun ("my sister"), or a name; "" when it opens otherwise."""
    words = clause.split()
    first = _first_word(clause)
    if first in _SUBJECT_PRONOUNS:
        return "I" if first == "i" else first
    if first in _POSSESSIVES and len(words) > 1:
        return f"{words[0]} {words[1]}"
    if words[0][:1].isupper() and first not in _NOUN_PHRASE_OPENERS:
        return words[0]
    return ""


def turn(text: str, role: Role) -> str:
    """A turn as the turn model reads it: its role, then its words."""
    words = OPAQUE_TOKEN.sub(OPAQUE_PLACEHOLDER, _SPACE.sub(" ", text).strip())
    return f"[{role}] {words}"
