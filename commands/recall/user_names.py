"""Who "the user" is by name: a question that names the user is searched as one about the user.

    names = UserNames(layers, default_judge().facts)
    names.asked("Which antibiotic should Priya avoid?", "priya-01")
    # "Which antibiotic should the user avoid?" once a memory says "Hi, I'm Priya ..."

Memories say "I" and "my"; the search reads "the user" as "I" (`search.in_first_person`). A
question that calls the user by name ("What does Toby's wife do?") otherwise finds whatever
memory holds the name ("Toby works at a boatyard") before the one that answers, which does
not ("my wife Anneliese is a speech therapist"). A name is the user's when the facts model
reads it as the user giving their own name in one of the memories holding it ("I'm Priya",
"my names jayden", "User's name is Tobias Renner; goes by Toby"); a name a memory quotes as
its speaker ("Caroline: ...") stays a person of its own (`search.as_said_by` asks it).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Final, Protocol

from mnemoledger.commands.judge.facts import StatedFact
from mnemoledger.commands.recall.search import bounded_query, named_people

READ_MEMORIES: Final = 16
"""Memories holding a name that the facts model reads to learn whether it is the user's,
oldest first (where people introduce themselves)."""
MAX_NAMES: Final = 4
"""Names of one question looked up, in order: a question names a few people; a long text
full of capitalised words must not cost a lookup each."""
MAX_CACHED: Final = 100_000
"""(user, name) answers a process keeps; past it the cache starts over (answers are cheap)."""
MAX_READ_TEXTS: Final = 20_000
"""Memory texts whose reading a process keeps; past it the cache starts over."""

ReadFacts = Callable[[Sequence[tuple[str, str]]], list[list[StatedFact]]]
"""The facts model: each (text, the turn before it) read as the facts it states."""


class _Layers(Protocol):
    def position(self) -> int: ...
    def holding_word(self, user_id: str, word: str, k: int) -> list[str]: ...
    def quoted_speakers(self, user_id: str, names: Sequence[str]) -> list[str]: ...


class UserNames:
    """Which names a user's memories give as the user's own, learned per (user, name) on the
    first question that names it and looked at again once the read model has moved on (a
    memory forgotten or erased takes its name with it)."""

    def __init__(self, layers: _Layers, read_facts: ReadFacts) -> None:
        self.layers = layers
        self.read_facts = read_facts
        self._answers: dict[tuple[str, str], tuple[bool, int]] = {}
        """(user, name) -> (the user's own, the read model's position when looked at)."""
        self._given: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()

    def asked(self, query: str, user_id: str, *, known_only: bool = False) -> str:
        """`query` with each name of the user's said as "the user" (`as_asked_of_the_user`);
        `known_only`: as last looked at, without looking again (before the read models
        have caught up; the caller compares it with the answer after)."""
        query = bounded_query(query)  # what the search reads, so what it looks up
        names = named_people(query)[:MAX_NAMES]
        if not names:
            return query
        own = self.known(user_id, names) if known_only else self.of(user_id, names)
        return as_asked_of_the_user(query, own)

    def known(self, user_id: str, names: Sequence[str]) -> list[str]:
        """Those of `names` found to be the user's when last looked at."""
        with self._lock:
            return [n for n in names if self._answers.get((user_id, n), (False, 0))[0]]

    def of(self, user_id: str, names: Sequence[str]) -> list[str]:
        """Those of `names` that the user's memories give as the user's own, in order."""
        position = self.layers.position()
        with self._lock:
            stale = [
                n for n in names if self._answers.get((user_id, n), (False, -1))[1] != position
            ]
        if stale:
            speakers = set(self.layers.quoted_speakers(user_id, stale))
            found = {n: n not in speakers and self._gives_own(user_id, n) for n in stale}
            with self._lock:
                if len(self._answers) + len(found) > MAX_CACHED:
                    self._answers.clear()
                self._answers.update({(user_id, n): (own, position) for n, own in found.items()})
        return self.known(user_id, names)

    def _gives_own(self, user_id: str, name: str) -> bool:
        """Whether a memory holding `name` reads as the user giving it as their name."""
        texts = self.layers.holding_word(user_id, name, READ_MEMORIES)
        word = name.casefold()
        return any(word in given for given in self._names_given(texts))

    def _names_given(self, texts: Sequence[str]) -> list[frozenset[str]]:
        """The words of the names each text gives as its writer's own, each text read by
        the facts model once (a search after a write reads only what is new)."""
        with self._lock:
            unread = [t for t in dict.fromkeys(texts) if t not in self._given]
        if unread:
            read = self.read_facts([(text, "") for text in unread])
            with self._lock:
                if len(self._given) + len(unread) > MAX_READ_TEXTS:
                    self._given.clear()
                for text, facts in zip(unread, read, strict=True):
                    self._given[text] = frozenset(
                        w
                        for f in facts
                        if f.attribute == "name" and f.positive
                        for w in _words(f.value)
                    )
        with self._lock:
            return [self._given.get(text, frozenset()) for text in texts]


def as_asked_of_the_user(query: str, names: Sequence[str]) -> str:
    """`query` with each run of `names` said as "the user" ("What does Toby's wife do?" ->
    "What does the user's wife do?"; "Tobias Renner" -> "the user")."""
    if not names:
        return query
    name = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    run = re.compile(rf"\b(?:{name})(?:\s+(?:{name}))*\b(?P<owner>'s|\u2019s|'|\u2019)?(?!\w)")
    return run.sub(lambda m: "the user's" if m.group("owner") else "the user", query)


def _words(value: str) -> set[str]:
    """The words of a name the facts model read, as `named_people` cuts a question's."""
    return {_POSSESSIVE.sub("", w).casefold() for w in _NAME_WORD.findall(value)}


_NAME_WORD: Final = re.compile(r"\w+(?:[-'\u2019]\w+)*")
_POSSESSIVE: Final = re.compile(r"(?:'s|\u2019s)$")
