"""The judge's answers as the yes/no decisions the pipelines take.

    replaces("I live in Paris", "I moved to Berlin")           # True
    says_the_same("I'm allergic to peanuts", "I have a peanut allergy")  # True

A relation decides when it is the likeliest of the four, and "replaces" only from the
model's own cut (`Relation.replaces_cut`: a wrong replacement hides a true memory); one
statement replaces at most one older fact of those it is compared with (the likeliest).
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemoledger.commands.judge.judgement import Judge, Relation
from mnemoledger.commands.judge.learned import default_judge


def _relation(older: str, newer: str, judge: Judge | None) -> Relation:
    return (judge or default_judge()).relations([(older, newer)])[0]


def replaces(older: str, newer: str, judge: Judge | None = None) -> bool:
    """Whether `newer` gives a new value of what `older` states, so `older` may go."""
    return _relation(older, newer, judge).replacing


def says_the_same(older: str, newer: str, judge: Judge | None = None) -> bool:
    """Whether the two state one fact with the same value: one may be folded into the other."""
    return _relation(older, newer, judge).label == "restates"


def replacements(
    olders: Sequence[str],
    newers: Sequence[str],
    judge: Judge | None = None,
    closeness: Sequence[float] | None = None,
) -> dict[int, int]:
    """Which newer statement replaces which older one (older index -> newer index), asked
    in one batch. A newer statement replaces at most one older fact and an older fact goes
    at most once, the likeliest pairs first: one statement says one new value. `closeness`
    (each older's similarity to the new contents) weighs the likelihoods, so among olders
    the model reads as replaced alike, the one about the same thing goes."""
    pairs = [(o, n) for o in olders for n in newers]
    if not pairs:
        return {}
    answers = (judge or default_judge()).relations(pairs)
    ranked = sorted(
        (
            (answers[i * len(newers) + j].replaces * (closeness[i] if closeness else 1.0), i, j)
            for i in range(len(olders))
            for j in range(len(newers))
            if answers[i * len(newers) + j].replacing
        ),
        reverse=True,
    )
    found: dict[int, int] = {}
    taken: set[int] = set()
    for _, i, j in ranked:
        if i not in found and j not in taken:
            found[i] = j
            taken.add(j)
    return found
