"""General guards in front of the models: cases a linguist would name, which the models
are not asked because the answer does not depend on what the words mean.

- Another holder: two statements attributed to two different speakers ("Caroline: ..." /
  "Melanie: ...") are never one fact said twice or replaced; each speaker keeps their own.
- Another value: two statements that each name someone or something, or a number, that the
  other does not ("My friend Ana plays the cello" / "My friend Ben plays the cello", "spin
  class on Tuesday" / "on Thursday") are not one fact said twice, however alike their words.
"""

from __future__ import annotations

import re
from typing import Final

from mnemoledger.commands.judge.judgement import Relation
from mnemoledger.commands.judge.text import speaker_and_body

_VALUE: Final = re.compile(r"(?<![\w'])(?:\d[\d.,:]*\w*|[A-Z][\w'-]*)")
"""A number (with its unit or ordinal) or a capitalised word: a name, a day, a place."""
_NOT_NAMES: Final = frozenset({"I", "I'm", "I've", "I'd", "I'll"})


def other_holders(older: str, newer: str) -> bool:
    """Both statements are attributed, to two different speakers."""
    a, b = speaker_and_body(older)[0], speaker_and_body(newer)[0]
    return a is not None and b is not None and a != b


def held_apart(relation: Relation) -> Relation:
    """The relation of two different holders' statements: side by side, never one."""
    beside = relation.adds + relation.unrelated
    if beside <= 0:
        return Relation(replaces=0.0, restates=0.0, adds=1.0, unrelated=0.0)
    return Relation(
        replaces=0.0,
        restates=0.0,
        adds=relation.adds / beside,
        unrelated=relation.unrelated / beside,
    )


def values(text: str) -> frozenset[str]:
    """The names and numbers a statement gives, the first word aside (capitalised because it
    opens the sentence): "My friend Ana moved on 3 May" -> {"Ana", "3", "May"}."""
    body = speaker_and_body(text)[1]
    words = [m.group(0) for m in _VALUE.finditer(body)]
    first = body.split(maxsplit=1)[0] if body.split() else ""
    found = {w.rstrip(".,") for w in words if w not in _NOT_NAMES}
    if first and first[0].isupper() and not first[0].isdigit():
        found.discard(first.rstrip(".,"))
    return frozenset(_key(w) for w in found)


def _key(value: str) -> str:
    """A value as compared: a number without its unit or ordinal ("14th", "100mg": 14, 100),
    a word by its first three letters ("Feb" / "February", "Mon" / "Monday")."""
    if value[0].isdigit():
        return re.sub(r"[^\d.,:].*$", "", value).rstrip(".,:")
    return value.lower()[:3]


def other_values(older: str, newer: str) -> bool:
    """Each statement names a value the other does not."""
    a, b = values(older), values(newer)
    return bool(a - b) and bool(b - a)


def not_restated(relation: Relation) -> Relation:
    """The relation of two statements that give different values: whatever it is, not the
    same fact said twice (what the model gave `restates` goes to `adds`)."""
    return Relation(
        replaces=relation.replaces,
        restates=0.0,
        adds=relation.adds + relation.restates,
        unrelated=relation.unrelated,
    )
