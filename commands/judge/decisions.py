"""The judge's answers as the yes/no decisions the pipelines take.

    replaces("I live in Paris", "I moved to Berlin")           # True
    says_the_same("I'm allergic to peanuts", "I have a peanut allergy")  # True

A relation decides when it is the likeliest of the four, and "replaces" only from the
model's own cut (`Relation.replaces_cut`: a wrong replacement hides a true memory); one
statement replaces at most one older fact of those it is compared with (the likeliest).
An older statement that coordinates clauses ("I live in Paris and work as a nurse") may be
replaced in part: the clause the newer gives a new value of goes, the others stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mnemoledger.commands.judge.judgement import Judge, Relation
from mnemoledger.commands.judge.learned import default_judge
from mnemoledger.commands.judge.text import clauses, remaining

_APART = ("adds", "unrelated")
"""Relations of a clause the newer statement leaves true."""


@dataclass(frozen=True)
class Replacement:
    """Which newer statement replaces an older one, and what of the older stays."""

    newer: int
    """The position of the newer statement."""
    kept: str = ""
    """The older's clauses the newer leaves true, as one statement ("I work as a nurse");
    "" when the older is replaced whole."""


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
    by_clause: bool = False,
) -> dict[int, Replacement]:
    """Which newer statement replaces which older one (older index -> the replacement),
    asked in one batch. A newer statement replaces at most one older fact and an older
    fact goes at most once, the likeliest pairs first: one statement says one new value.
    `closeness` (each older's similarity to the new contents) weighs the likelihoods, so
    among olders the model reads as replaced alike, the one about the same thing goes.

    `by_clause`: an older statement that coordinates clauses, which the newer does not
    replace read whole, is also read clause by clause; when the newer replaces one of them
    and leaves another true (adds to it, or is about something else), the older is replaced
    in part, and `kept` says what stays."""
    pairs = [(o, n) for o in olders for n in newers]
    if not pairs:
        return {}
    parts = [clauses(o) if by_clause else [] for o in olders]
    asked = pairs + [(c, n) for cut in parts for c in cut for n in newers]
    answers = (judge or default_judge()).relations(asked)
    whole = answers[: len(pairs)]
    by_part = iter(answers[len(pairs) :])
    read = [[[next(by_part) for _ in newers] for _ in cut] for cut in parts]
    ranked: list[tuple[float, int, int, str]] = []
    for i in range(len(olders)):
        for j in range(len(newers)):
            answer = whole[i * len(newers) + j]
            of_clauses = [row[j] for row in read[i]]
            gone = {k for k, a in enumerate(of_clauses) if a.replacing}
            stays = any(a.label in _APART for k, a in enumerate(of_clauses) if k not in gone)
            # read whole, the model sees each clause in its context: its "replaces" stands;
            # only an older it leaves beside is replaced in part
            partly = not answer.replacing and bool(gone) and stays
            if not (answer.replacing or partly):
                continue
            likelihood = (
                answer.replaces if answer.replacing else max(of_clauses[k].replaces for k in gone)
            )
            kept = remaining(olders[i], gone) if partly else ""
            weight = closeness[i] if closeness else 1.0
            ranked.append((likelihood * weight, i, j, kept))
    found: dict[int, Replacement] = {}
    taken: set[int] = set()
    for _, i, j, kept in sorted(ranked, key=lambda r: (r[0], -r[1], -r[2]), reverse=True):
        if i not in found and j not in taken:
            found[i] = Replacement(j, kept)
            taken.add(j)
    return found
