"""What a question asks for: which attribute of whom ("what is the user's profession": the
user's occupation; "where does Finn work": Finn's employer; "who is the user married to":
the user's spouse), and which memories state it.

A small embedder ranks "My name is Harriet" and "I have a cat named Pumpkin" almost
equally for "what is the user called", and a keyword search ranks whatever shares a word
with the question ("office", "work") first. A memory that states the very attribute the
question asks for, of the person it asks about, is the answer a careful reader picks: the
search gives such memories the weight of a keyword hit (`search.py`). The question side is
read by the patterns below; the statement side by the attribute catalogue the offline
update rules already use (`commands.llm.rules.attributes.facts_of`), so both sides read the
same attributes.

Only questions that ask *for* a value are read (a wh-question about the attribute, or a
yes/no question about it); a question that merely mentions one ("what does the user listen
to at the gym") asks for something else and is left to the retrievers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from mnemoledger.commands.llm.rules.attributes import KIN, facts_of

_I = re.IGNORECASE

RELATION_FAMILIES: Final = (
    frozenset({"husband", "wife", "spouse", "partner", "fiance", "fiancee", "fiancé"}),
    frozenset({"boyfriend", "girlfriend", "partner"}),
    frozenset({"mother", "mum", "mom", "mam", "mama", "mummy", "mommy"}),
    frozenset({"father", "dad", "daddy", "papa"}),
    frozenset({"son", "daughter", "kid", "kids", "child", "children"}),
    frozenset({"grandmother", "grandma", "granny", "nan", "nana"}),
    frozenset({"grandfather", "grandpa", "granddad", "grandad"}),
    frozenset({"boss", "manager", "supervisor", "lead"}),
    frozenset({"doctor", "gp", "physician"}),
    frozenset({"neighbour", "neighbor"}),
    frozenset({"roommate", "flatmate", "housemate"}),
    frozenset({"colleague", "coworker", "co-worker"}),
)
"""Words that name the same relation to the user ("the user's mother" is "my mum")."""

_MORE_RELATIONS: Final = frozenset(
    {"kids", "children", "sibling", "siblings", "in-laws", "team lead", "landlady", "housemate"}
)
_MARRIED: Final = frozenset({"husband", "wife", "spouse", "partner"})
"""Whom "married to" asks about."""

_RELATION: Final = "(?:{})".format(
    "|".join(
        re.escape(word)
        for word in sorted(
            KIN | {word for family in RELATION_FAMILIES for word in family} | _MORE_RELATIONS,
            key=len,
            reverse=True,  # "grandmother" before "grandma", "sons" before "son"
        )
    )
)
"""The relation words of the update rules' catalogue (`KIN`), their families and a few
plurals and roles it leaves out."""
_WHOSE: Final = re.compile(
    rf"\bthe user's (?:(?:older|younger|big|little|eldest|oldest|youngest|new|best|late) )?"
    rf"({_RELATION})\b|\b(?:the user|they|he|she)\b|\b([A-Z][\w'-]+?)(?:'s)?\b",
)
"""Whose attribute: a relation of the user's, the user (a pronoun too: the memories are one
user's), or a capitalised name."""

_NOT_COMPOUND: Final = r"(?!'?s?\s+(?:appointment|visit|surgery|office|practice|bill|check))"
"""After a person's role: "the user's dentist" asks who; "the user's dentist appointment"
asks about an appointment."""
_ASKS: Final = tuple(
    (frozenset(attributes.split()), re.compile(pattern, _I))
    for attributes, pattern in (
        (
            "residence",
            r"\bwhere (?:does|do|did|is) X (?:live|living|reside|stay|staying|based|settled)\b"
            r"|\b(?:what|which) (?:city|town|country|neighbou?rhood|area|suburb|state)"
            r" (?:does|do|is) X (?:live|living|based|reside|call home|in)\b"
            r"|\bX'?s? (?:home (?:city|town)|current city|city of residence)\b"
            r"|\bwhere (?:does|did) X (?:move|relocate)\b(?! from)|\bwhere is X'?s? home\b",
        ),
        (
            "hometown",
            r"\bwhere (?:did|does) X (?:grow up|come from|originally come from)\b"
            r"|\bwhere is X (?:originally )?from\b|\bX'?s? (?:hometown|home town)\b"
            r"|\bwhere was X (?:born|raised)\b",
        ),
        (
            "employer work_location",
            r"\bwhere (?:does|do|did|is) X (?:work|working|employed)\b(?! out)"
            r"|\b(?:who|which (?:company|firm|organi[sz]ation|business|employer))"
            r" (?:does|do|is) X (?:work|working) (?:for|at)\b"
            r"|\bX'?s? (?:employer|company|workplace|place of work)\b"
            r"|\bwho employs X\b|\bwho is X'?s? employer\b",
        ),
        (
            "occupation employer work_hours",
            r"\bX'?s? (?:(?:main|day|current|new) )?(?:job|profession|occupation|career"
            r"|line of work|job title|title|position|role)\b"
            r"|\b(?:what|which) (?:(?:main|day|current) )?(?:job|profession|occupation|career"
            r"|line of work|position|role|kind of work|sort of work|type of work)"
            r" (?:does|do|did|is|has) X\b"
            r"|\bwhat (?:does|do|did) X do\b(?: for (?:a living|work|money))?\s*\??$"
            r"|\bwhat (?:does|do|did) X do for (?:a living|work|money)\b"
            r"|\bwhat (?:does|do) X work as\b|\bhow does X (?:earn|make) (?:a|their|his|her)"
            r" living\b|\bwhat is X'?s? (?:job|work)\b",
        ),
        (
            "name",
            r"^(?:what|how) (?:is|'s) X (?:called|named)\b|^what (?:is|'s) X'?s? (?:full |first "
            r"|last |sur)?name\b|\bwhat (?:name )?(?:does|do) X go by\b"
            r"|\bwhat should (?:i|we|one|you) call X\b|\bwhat name does X use\b",
        ),
        (
            "phone",
            r"\bX'?s? (?:(?:personal|private|work|office|home|new|main) )?(?:(?:phone|mobile|cell"
            r"|contact|telephone|landline) )?(?:number|phone)\b"
            r"|\bhow (?:can|do) (?:i|we|you|one) (?:reach|call|phone|text) X\b"
            r"|\bwhat number (?:can|should|do) (?:i|we|you|one )?(?:reach|call|text"
            r"|X be reached)\b",
        ),
        ("email", r"\bX'?s? (?:\w+ )?e-?mail\b|\b(?:what|which) e-?mail\b"),
        (
            "diet",
            r"\bX'?s? diet\b|\b(?:what|which) diet\b|\bis X (?:a )?(?:vegetarian|vegan"
            r"|pescatarian)\b|\bdoes X eat (?:meat|fish|pork|beef|dairy|animal)\b"
            r"|\bwhat (?:does|doesn't|does not|can't|cannot|won't) X eat\b"
            r"|\bdietary\b|\bfood restrictions?\b",
        ),
        (
            "relationship",
            r"\bis X (?:married|single|dating|engaged|divorced|in a relationship|seeing"
            r" (?:someone|anyone))\b|\bX'?s? (?:relationship|marital) status\b",
        ),
        (
            "car",
            r"\b(?:what|which) (?:kind of |sort of |type of |make of |model of )?"
            r"(?:car|vehicle|motor|truck|van|motorbike|motorcycle)\b[^?]*\bX\b"
            r"|\bX'?s? (?:car|vehicle|truck|van|motorbike|motorcycle)\b|\bwhat does X drive\b"
            r"|\bdoes X (?:have|own|drive) an? (?:car|truck|van|motorbike|motorcycle)\b",
        ),
        (
            "commute",
            r"\bhow (?:does|do|did) X (?:get|travel|go|commute|come)"
            r" (?:to|into|in to|around)\b|\bX'?s? (?:commute|route to)\b"
            r"|\bhow (?:does|do) X commute\b|\bwhat (?:route|way) (?:does|do) X take\b",
        ),
        ("timezone", r"\btime ?zone\b"),
        ("doctor", rf"\bX'?s? (?:family )?(?:doctor|gp|physician)\b{_NOT_COMPOUND}"),
        ("dentist", rf"\bX'?s? dentist\b{_NOT_COMPOUND}"),
        ("therapist", rf"\bX'?s? (?:therapist|counsel+or)\b{_NOT_COMPOUND}"),
        ("airport", r"\bairport\b[^?]*\bX\b|\bX'?s? (?:home )?airport\b"),
        (
            "birthday",
            r"\bX'?s? (?:birthday|date of birth)\b|\bwhen (?:is|was) X born\b"
            r"|\bwhen is X'?s? birthday\b",
        ),
        ("pronouns", r"\bpronouns\b"),
        ("native_language", r"\b(?:native|first) language\b|\bmother tongue\b"),
        ("editor", r"\b(?:code )?editor\b|\bIDE\b"),
        ("browser", r"\bbrowser\b"),
        (
            "laptop",
            r"\bX'?s? (?:work )?(?:laptop|computer)\b|\b(?:what|which) (?:laptop|computer)\b",
        ),
        ("age", r"\bhow old (?:is|was) X\b|\bX'?s? age\b"),
        ("rent", r"\brent\b"),
        ("salary", r"\bX'?s? (?:salary|income|pay)\b|\bhow much (?:does|do) X (?:earn|make)\b"),
        ("phone_model", r"\b(?:what|which) (?:kind of |model of |make of )?(?:phone|smartphone)\b"),
        ("operating_system", r"\boperating system\b|\b(?:what|which) os\b"),
        (
            "gym",
            r"\b(?:what|which) gym\b|\bX'?s? gym\b|\bwhere (?:does|do) X (?:work out|train"
            r"|exercise|go to the gym|lift)\b",
        ),
        ("shoe_size", r"\bshoe size\b|\bsize shoes?\b"),
        ("weight", r"\bhow (?:much|heavy) (?:does|is) X(?: weigh)?\b|\bX'?s? weight\b"),
        ("smoking", r"\bdoes X smoke\b|\bis X a smoker\b|\bX (?:still )?smokes?\b"),
        (
            "bedtime",
            r"\bwhen (?:does|do) X (?:go to bed|go to sleep|turn in)\b|\bX'?s? bedtime\b"
            r"|\bwhat time (?:does|do) X (?:go to bed|go to sleep|turn in)\b",
        ),
        (
            "wake_time",
            r"\b(?:when|what time) (?:does|do) X (?:wake|get up|get out of bed|rise|start"
            r" (?:the|their|his|her) day)\b|\bX'?s? alarm\b",
        ),
        (
            "work_end",
            r"\b(?:when|what time) (?:does|do|did) X (?:usually |normally )?(?:(?:finish|leave"
            r"|stop) work|log off|clock off|clock out|knock off|finish for the day)\b",
        ),
        (
            "work_start",
            r"\b(?:when|what time) (?:does|do|did) X (?:usually |normally )?(?:(?:start|begin)"
            r" work|log on|clock in|clock on)\b",
        ),
        (
            "leave_for_work",
            r"\b(?:when|what time) (?:does|do|did) X (?:usually |normally )?(?:leave|head out"
            r"|set off|set out) (?:for|to) (?:work|the office)\b|\bwhen does X leave the house\b",
        ),
        *(
            (
                f"{meal}_time",
                r"\b(?:when|what time) (?:does|do|did) X (?:usually |normally )?(?:have|eat|take"
                rf"|grab) (?:(?:his|her|their) )?{meal}\b",
            )
            for meal in ("breakfast", "lunch", "dinner", "supper")
        ),
        (
            "school",
            r"\b(?:what|which) (?:school|college|university|academy|nursery)\b[^?]*\bX\b"
            r"|\bX'?s? school\b|\bwhere (?:does|do|did) X (?:go to school|study|attend)\b",
        ),
        (
            "study_subject",
            r"\bwhat (?:does|do|did|is) X (?:study|studying|major in|majoring in)\b"
            r"|\bX'?s? (?:major|degree|subject)\b"
            r"|\b(?:what|which) (?:degree|course|qualification|programme|program)\b[^?]*\bX\b",
        ),
        ("work_location", r"\bdoes X work (?:from home|remotely|in the office)\b"),
        ("work_hours", r"\bdoes X work (?:full|part)[- ]time\b|\bX'?s? (?:working|work) hours\b"),
        ("shift", r"\bX'?s? shifts?\b|\b(?:what|which) shifts?\b|\bdoes X work nights\b"),
        (
            "sports_team",
            r"\b(?:what|which) (?:(?:football|soccer|baseball|basketball|hockey|rugby|cricket"
            r"|sports?) )?(?:team|club|side)\b[^?]*\bX (?:support|follow|root for|cheer"
            r" for|play for)\b|\bX'?s? (?:favou?rite )?(?:football|soccer|baseball|basketball"
            r"|hockey|rugby|cricket|sports?) (?:team|club)\b",
        ),
        ("bank", r"\b(?:what|which) bank\b|\bX'?s? bank\b|\bwho does X bank with\b"),
        ("main_language", r"\bprogramming language\b|\bwhat (?:does|do) X code in\b"),
        ("address", r"\baddress(?:es)?\b"),
        ("username", r"\b(?:user ?name|handle|gamertag|screen ?name)\b"),
        ("password", r"\b(?:password|passcode|passphrase)\b"),
        ("school_year", r"\bwhat (?:year|grade) is X in\b|\bX'?s? (?:year|grade)\b"),
        (
            "allergy",
            r"\ballerg\w*\b|\bintoleran\w*\b|\bis X allergic\b|\bwhat (?:is|are) X allergic\b",
        ),
        (
            "language",
            r"\b(?:what|which) languages?\b[^?]*\bX (?:speak|know|learning|study)\b"
            r"|\bdoes X speak\b|\bX'?s? languages\b|\bwhat languages? (?:does|do|can) X\b"
            r"|\b(?:what|which) languages? (?:is|are) X (?:learning|studying)\b",
        ),
        (
            "favourite",
            r"\bX'?s? favou?rite\b|\bfavou?rite\b[^?]*\bX\b|\bdoes X (?:like|love|enjoy)"
            r" (?:best|most)\b|\bX (?:likes?|loves?|enjoys?) (?:best|most)\b",
        ),
    )
)
"""(attributes of the catalogue a statement of the answer gives, how a question asks for
them), X standing for whoever the question is about."""

_WHO_IS_RELATION: Final = re.compile(
    rf"^(?:who|what) (?:is|'s|are|was|were) X'?s? (?:(?:older|younger|big|little|eldest"
    rf"|oldest|youngest|new|best|late) )?({_RELATION})\b"
    rf"|^what (?:is|'s|are|was|were) the names? of X'?s? (?:(?:older|younger|big|little"
    rf"|eldest|oldest|youngest|new|best|late) )?({_RELATION})\b"
    r"|^who (?:is|was) X (married|engaged) to\b|^whom did X marry\b",
    _I,
)
"""Who someone's relation is: a memory that names that relation of theirs answers."""


@dataclass(frozen=True)
class Asked:
    """What a question asks for."""

    attributes: frozenset[str]
    """Attributes of the catalogue; empty: a relation is asked for (`relation`)."""
    holder: frozenset[str]
    """Whose: empty for the user, else the words that name them (a name, or a relation
    word and the words of its family)."""
    relation: frozenset[str] = frozenset()
    """The words naming the relation asked for ("who is the user's mother": mother, mum,
    mom, ...); empty when an attribute is asked for."""


def _family(word: str) -> frozenset[str]:
    word = word.lower()
    if word in ("married", "engaged"):
        return _MARRIED | {"fiance", "fiancee", "fiancé"}
    found = {word, word.removesuffix("s")}
    for family in RELATION_FAMILIES:
        if word in family or word.removesuffix("s") in family:
            found |= family
    return frozenset(found)


@lru_cache(maxsize=4096)
def asked(question: str) -> Asked | None:
    """What `question` asks for, or None when it asks for no attribute this reads."""
    text = _CONTRACTED.sub(r"\1 is", re.sub(r"\s+", " ", question).strip())
    relation = _WHO_IS_RELATION.search(_THE_USER.sub("X", text))
    if relation is not None:
        return Asked(frozenset(), frozenset(), _family(next(g for g in relation.groups() if g)))
    whose = next(
        (
            m
            for m in _WHOSE.finditer(text)
            if m.group(2) is None
            or (text[: m.start()].strip() and m.group(2).lower() not in _NOT_A_NAME)
        ),
        None,
    )
    holder: frozenset[str] = frozenset()
    if whose is None:  # "what is the wifi password": the user's, as the memories say "our"
        placed = text
    else:
        if whose.group(1) is not None:
            holder = _family(whose.group(1))
        elif whose.group(2) is not None:
            holder = frozenset({whose.group(2).lower()})
        placed = f"{text[: whose.start()]}X{text[whose.end() :]}"
    attributes = frozenset(
        attribute for names, pattern in _ASKS if pattern.search(placed) for attribute in names
    )
    return Asked(attributes, holder) if attributes else None


_CONTRACTED: Final = re.compile(r"\b(what|who|where|when|how|which)'s\b", _I)
_THE_USER: Final = re.compile(r"\bthe user\b", _I)
_NOT_A_NAME: Final = frozenset(
    re.findall(r"\w+", "what which where who whom when how does did is are i can do should")
) | frozenset(re.findall(r"\w+", "would will has have was were"))
"""Capitalised words of a question that name no one."""

_OWN_RELATION: Final = re.compile(r"\b(?:my|our)\s+([\w-]+)(?:\s+([\w-]+))?", _I)
"""The (up to two) words after "my": "my husband", "my late wife"."""


def answers(question: Asked, statement: str) -> bool:
    """Whether `statement` states what `question` asks for, of whom it asks."""
    if question.relation:
        if question.holder:
            return False  # "who is Maya's husband": the user's memories name Maya's rarely
        named = (w.lower() for m in _OWN_RELATION.finditer(statement) for w in m.groups() if w)
        return any(word in question.relation for word in named)
    for fact in facts_of(statement):
        if fact.attribute.split(":", 1)[0] not in question.attributes:
            continue
        if not question.holder and not fact.holder:
            return True
        if question.holder and fact.holder & question.holder:
            return True
    return False
