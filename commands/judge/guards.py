"""General guards in front of the models: cases a linguist would name, which the models
are not asked because the answer does not depend on what the words mean.

- Another holder: two statements attributed to two different speakers ("Caroline: ..." /
  "Melanie: ...") are never one fact said twice or replaced; each speaker keeps their own.
"""

from __future__ import annotations

from mnemoledger.commands.judge.judgement import Relation
from mnemoledger.commands.judge.text import speaker_and_body


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
