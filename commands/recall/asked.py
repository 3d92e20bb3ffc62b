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
same attributes. Where the catalogue reads nothing that a question kind needs, a small
reader here reads the user's own statements (`_USERS_OWN`): a job named by any occupation
the extraction knows ("I'm a sommelier at a wine bar"; the catalogue knows fewer), whom the
user lives with ("My flatmate Ravi ...", "I share a flat with ..."), who brought them up
("My aunt raised me"). A question may also narrow the value to a kind ("is the user
allergic to any animals"): then only a memory whose value is of that kind answers, and one
stating the attribute with a value of another kind ("allergic to birch pollen") loses the
keyword hit its shared words gave it (`outside`).

A question may name a kind of thing the user has ("what livestock does the user raise",
"which instrument", "what pets", "what crops"): a memory of the user's naming a member of
that kind answers ("I keep about 400 Texel sheep"). Side jobs ("does the user have a
part-time job": "I have a paper round", "I work weekends at ...") and plans ("what does the
user have coming up": "I'm going on a ski trip in February", "I've booked ...") are read on
the statement side here too. A question naming a part of the day ("in the morning") or a leg
of the school run ("take the kids to school") leaves out of the keyword list the memories in
another part of the day (a clock time: "3:15" said bare is an afternoon) or of the other leg
("I pick the kids up"), whether or not any memory answers.

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
from mnemoledger.commands.llm.rules.jobs import JOBS as _JOBS

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
    rf"({_RELATION})s?\b|\b(?:the user|they|he|she)\b|\b([A-Z][\w'-]+?)(?:'s)?\b",
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
            r"|\b(?:what|which) (?:(?:kind|sort|type|line) of )?(?:(?:main|day|current) )?"
            r"(?:job|profession|occupation|career|line of work|line of business|position|role"
            r"|work|trade) (?:does|do|did|is|has) X\b"
            r"|\bwhat (?:does|do|did) X do\b(?: for (?:a living|work|money))?"
            r"(?: (?:these days|nowadays|now))?\s*\??$"
            r"|\bwhat (?:does|do|did) X do (?:for (?:a living|work|money|a job|employment"
            r"|a career)|professionally)\b"
            r"|\bwhat (?:does|do) X work as\b|\bhow (?:does|do) X (?:earn|make) (?:a|their|his"
            r"|her) living\b|\bhow (?:does|do) X (?:earn|make) (?:money|an income)\b"
            r"|\bwhat is X'?s? (?:job|work|trade|line of business)\b"
            r"|\bwhat (?:is|was) X (?:working|employed) as\b"
            r"|\b(?:what|which) (?:field|industry|sector|area) (?:does|do) X work in\b"
            r"|^(?:is|are) X (?:employed|working)\s*\??$",
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
        (
            "co_resident",
            r"\bwho (?:does|do) X (?:live|share (?:a|the|their|his|her) (?:flat|house|home"
            r"|apartment|place|room)|room|flat-?share|house-?share) with\b"
            r"|\bwho (?:is|are) X (?:living|staying|sharing (?:a|the|their|his|her) \w+) with\b"
            r"|\bwho (?:else )?(?:lives|is living|stays) (?:with X\b|in X'?s? (?:flat|house|home"
            r"|apartment|place)\b)"
            r"|\bwho (?:shares|is sharing) (?:a|the|an?) (?:\w+ )?(?:flat|house|home|apartment"
            r"|place|room) with X\b"
            r"|\b(?:does|do) X live (?:alone|on (?:his|her|their) own|by (?:him|her|them)sel(?:f"
            r"|ves)|with)\b|\b(?:is|are) X living (?:alone|on (?:his|her|their) own|with)\b"
            r"|\bdoes X (?:have|live with) (?:an?|any)? ?(?:(?:flat|room|house)-?mates?"
            r"|lodgers?)\b"
            r"|\bX'?s? (?:living (?:situation|arrangements?)|household)\b"
            r"|\bwho (?:is|are) in X'?s? household\b",
        ),
        (
            "side_job",
            r"\b(?:does|do|did) X (?:have|hold|do) (?:an?|any) (?:(?:part|full)[- ]time|side"
            r"|weekend|saturday|sunday|evening|holiday|summer|second|casual|after-school)"
            r" (?:job|work|gig)s?\b"
            r"|\b(?:does|do|did) X (?:have|do) (?:an?|any) (?:job|side hustle|side gig"
            r"|(?:paid )?work)\b"
            r"|\b(?:does|do) X work (?:part[- ]time|(?:at |on )?(?:the )?weekends|(?:in the )?"
            r"evenings|(?:on )?saturdays|(?:on )?sundays|on the side)\b"
            r"|\bX'?s? (?:part[- ]time|side|weekend|saturday|sunday|evening|holiday|summer"
            r"|after-school) (?:job|work|gig)\b"
            r"|\b(?:what|which) (?:kind of |sort of )?(?:part[- ]time|side|weekend|saturday"
            r"|sunday|evening|holiday|summer|second|casual|after-school|other) (?:job|work|gig"
            r"|hustle)s? (?:does|do|did|is|has) X\b"
            r"|\bwhat (?:else )?(?:does|do) X do (?:on the side|for (?:extra|some extra"
            r"|a bit of extra) (?:money|cash|income))\b"
            r"|\b(?:does|do) X (?:have|do) (?:a |any )?(?:second|other|extra) (?:job|work)\b",
        ),
        (
            "plans",
            r"\bplans?\b[^?]*\bX\b|\bX'?s? (?:[\w-]+ )?plans?\b"
            r"|\b(?:does|do) X have (?:any )?(?:[\w-]+ )?plans?\b"
            r"|\bwhat (?:is|are) X planning\b|\bwhat (?:has|does|do) X (?:got |have )?"
            r"(?:planned|booked|lined up|scheduled|coming up)\b"
            r"|\bcoming up\b|\bupcoming\b|\blined up\b|\blooking forward to\b"
            r"|\bwhat (?:is|are) X (?:doing|up to) (?:next|this) (?:week|weekend|month|year"
            r"|summer|winter|spring|autumn|fall)\b|\bwhere is X going (?:next|this|on holiday)\b",
        ),
        (
            "upbringing",
            r"\bwho (?:brought|raised|reared|adopted) X\b(?!')|\bwho brought up X\b(?!')"
            r"|\bwho (?:looked after|took care of|took in) X\b(?!') (?:as an? (?:child|kid|baby)"
            r"|growing up|when)"
            r"|\b(?:who|whom) (?:was|were|is) X (?:raised|brought up|reared|adopted|fostered"
            r"|looked after) by\b|\bby whom (?:was|were) X (?:raised|brought up)\b"
            r"|\bwho did X grow up with\b|\bwho did X live with (?:as a (?:child|kid)|growing up"
            r"|when)|\bX'?s? (?:legal )?guardians?\b|\bX'?s? upbringing\b"
            r"|\bwho (?:were|are|was|is) X'?s? (?:foster|adoptive) (?:parents?|mum|mom|dad"
            r"|family)\b",
        ),
    )
)
"""(attributes of the catalogue a statement of the answer gives, how a question asks for
them), X standing for whoever the question is about."""

_WHO_IS_RELATION: Final = re.compile(
    rf"^(?:who|what) (?:is|'s|are|was|were) X'?s? (?:(?:older|younger|big|little|eldest"
    rf"|oldest|youngest|new|best|late) )?({_RELATION})s?\b"
    rf"|^what (?:is|'s|are|was|were) the names? of X'?s? (?:(?:older|younger|big|little"
    rf"|eldest|oldest|youngest|new|best|late) )?({_RELATION})s?\b"
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
    category: str = ""
    """The kind of value asked about, a key of `_MEMBERS` ("is the user allergic to any
    animals": animals; "what livestock does the user raise": livestock); empty for any."""
    day_part: str = ""
    """The part of the day the question names ("in the morning": morning), or empty."""
    leg: str = ""
    """Which leg of a school run the question asks about ("take the kids to school": to,
    "collect the children": from), or empty."""


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
    category = ""
    if attributes & _BY_CATEGORY:
        category = next((name for name, words in _CATEGORY_ASKED if words.search(placed)), "")
    else:
        category = next((name for name, words in _KIND_ASKED if words.search(placed)), "")
    parts = _day_parts(text, _QUESTION_PARTS)
    day_part = next(iter(parts)) if len(parts) == 1 else ""
    legs = _legs(text)
    leg = next(iter(legs)) if len(legs) == 1 else ""
    if not (attributes or category or day_part or leg):
        return None
    return Asked(attributes, holder, category=category, day_part=day_part, leg=leg)


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
        if any(word in question.relation or word[:-1] in question.relation for word in named):
            return True
        # "who are the user's flatmates": "I share a house with two postgrads"
        return bool(question.relation & _SHARERS) and _shares_home(statement, partner=False)
    if not question.holder and any(
        reader(statement) for name, reader in _USERS_OWN.items() if name in question.attributes
    ):
        return True
    if question.category in _OWNED and _owns(question, statement):
        return True
    for fact in facts_of(statement):
        attribute = fact.attribute.split(":", 1)[0]
        if attribute not in question.attributes:
            continue
        if attribute == "occupation" and _A_SKILL.search(statement):
            continue  # "I'm a terrible cook": a skill, not a job
        if (
            question.category
            and attribute in _BY_CATEGORY
            and not _MEMBERS[question.category].search(statement)
        ):
            continue  # "allergic to any animals": not the pollen one
        if not question.holder and not fact.holder:
            return True
        if question.holder and fact.holder & question.holder:
            return True
    return False


def outside(question: Asked, statement: str) -> bool:
    """Whether `statement` states the attribute asked for, of whom it asks, but a value of
    another kind than the one asked about ("is the user allergic to any animals": "I'm
    allergic to birch pollen"), or falls in another part of the day than the question names
    ("in the morning": "at 3:15"), or is the other leg of a school run ("take the kids to
    school": "I pick the kids up"). It shares the question's words, and is not its answer."""
    if question.day_part:
        parts = _day_parts(statement, _STATEMENT_PARTS)
        if parts and question.day_part not in parts:
            return True
    if question.leg:
        legs = _legs(statement)
        if legs and question.leg not in legs:
            return True
    if not question.category or not question.attributes & _BY_CATEGORY:
        return False
    return any(
        fact.attribute.split(":", 1)[0] in question.attributes & _BY_CATEGORY
        and (bool(fact.holder & question.holder) if question.holder else not fact.holder)
        for fact in facts_of(statement)
    ) and not _MEMBERS[question.category].search(statement)


# --- the statement side the catalogue does not read -----------------------------------------

_SKILL_WORDS: Final = frozenset(
    re.findall(
        r"[\w-]+",
        "good great decent terrible bad awful keen avid amateur hobby hobbyist aspiring wannabe"
        " would-be budding former ex passionate enthusiastic proud lousy poor excellent better"
        " best fast slow hard messy picky fussy nervous confident competent self-taught"
        " fair-weather natural born big huge massive occasional reluctant",
    )
)
"""Words that make an occupation's noun a skill or a hobby: "a terrible cook", "a keen
amateur astronomer", "a former nurse"."""
_A_SKILL: Final = re.compile(
    r"\bI(?:'m| am) (?:an? )(?:[\w-]+ ){0,2}?(?:"
    + "|".join(sorted(_SKILL_WORDS))
    + rf") (?:[\w-]+ ){{0,2}}?(?:{_JOBS})s?\b",
    _I,
)
_BUSINESS: Final = frozenset(
    re.findall(
        r"\w+",
        "business shop restaurant cafe bar salon company gallery bakery store pub studio firm"
        " agency farm hotel garage",
    )
)
"""What an owner owns for it to be a job ("a shop owner", not "a proud dog owner")."""
_USER_JOB: Final = re.compile(
    rf"\bI(?:'m| am|'ve been| have been) (?:(?:now|currently|still|also|actually|basically"
    rf"|really|mostly|mainly|full-time|part-time|qualified) )?(?:an?|the) "
    rf"(?P<before>(?:[\w-]+ ){{0,3}}?)(?P<job>{_JOBS})(?:e?s)?"
    rf"(?=\s*(?:[,.;:!?)]|$)| (?:at|in|for|with|since|on|and|who|by|based|here|there)\b"
    rf"| of (?!(?:an?|my|our|the|two|three|four|five|several)\b))"
    rf"|\bI(?:'m| am)? (?:(?:now|currently|still|also|mainly|mostly) )?(?:work|working)"
    rf"(?: [\w'-]+){{0,3}}? as (?:an?|the) (?P<as_before>(?:[\w-]+ ){{0,3}}?)(?P<as_job>{_JOBS})\b",
    _I,
)
"""The user's job said as "I'm a <occupation>" or "I work as a <occupation>", with the
occupations the extraction knows (`user_facts`), more than the update rules' catalogue."""


def _states_a_job(statement: str) -> bool:
    for found in _USER_JOB.finditer(statement):
        before = (found["before"] or found["as_before"] or "").lower().split()
        job = (found["job"] or found["as_job"]).lower()
        if _SKILL_WORDS & set(before):
            continue
        if job == "owner" and not _BUSINESS & set(before):
            continue
        return True
    return False


_PARTNER: Final = re.compile(
    r"\b(?:my|our) (?:husband|wife|partner|spouse|fianc[eé]e?|boyfriend|girlfriend)\b", _I
)
_SHARERS: Final = frozenset({"roommate", "flatmate", "housemate"})
_NOT_COMPANY: Final = (
    r"(?!(?:\w+ )?(?:chronic|constant|pain|it|that|this|regret|guilt|anxiety|depression"
    r"|diabetes|asthma|arthritis|migraines?|tinnitus|adhd|autism|epilepsy|ibs|eczema"
    r"|psoriasis|disease|condition|illness|disorder|the (?:fact|pain|guilt|consequences))\b)"
)
_SHARES_HOME: Final = re.compile(
    r"\b(?:flat|room|house)-?mates?\b|\blodgers?\b"
    r"|\b(?:I|we)(?:'m|'ve|'d| am| have| had| are|'re)? (?:(?:still|now|currently|also|both"
    r"|just|recently|actually) )?(?:live|lived|living|stay|staying|moved in|move in|moving in"
    r"|share|sharing|shared|rent(?:ing)? a room|room|rooming)(?: (?:a|the|my|our|an?"
    r" \w+) (?:flat|house|home|apartment|place|room|bedroom|studio|cottage|unit|condo))?"
    rf" with {_NOT_COMPANY}"
    r"|\b(?:live|living|moved in) together\b|\blives? with me\b"
    r"|\bI (?:still |now )?live (?:alone|on my own|by myself)\b",
    _I,
)


def _shares_home(statement: str, partner: bool = True) -> bool:
    """Whether the user says whom they live with (a flatmate, "I live with my gran", a
    partner) or that they live alone."""
    return bool(_SHARES_HOME.search(statement) or (partner and _PARTNER.search(statement)))


_BROUGHT_UP: Final = re.compile(
    r"\b(?:raised|reared|brought) me\b|\bbrought me up\b|\badopted me\b|\btook me in\b"
    r"|\b(?:looked after|took care of) me (?:as a|when|from|after|growing up)\b"
    r"|\bI was (?:\w+ )?(?:raised|brought up|reared|adopted|fostered)(?: \w+)? by\b"
    r"|\bI (?:was|am|'m) (?:adopted|fostered)\b|\b(?:legal )?guardians?\b"
    r"|\bfoster (?:mum|mom|mother|dad|father|parents?|family|carers?|home|care)\b"
    r"|\bgrew up with (?:(?:my|our|an?|two|three|four|both) (?!(?:\w+ )?(?:dogs?|cats?|pets?"
    r"|horses?|animals?)\b)|(?-i:[A-Z]))",
    _I,
)
"""Who brought the user up: "My aunt raised me", "I was brought up by my gran"."""


def _brought_up(statement: str) -> bool:
    return _BROUGHT_UP.search(statement) is not None


_USERS_OWN: Final = {
    "occupation": _states_a_job,
    "co_resident": _shares_home,
    "upbringing": _brought_up,
}
"""Readers of the user's own statements for what the catalogue (`facts_of`) does not read:
a job named by an occupation only the extraction knows, whom the user lives with, who
brought them up."""

_BY_CATEGORY: Final = frozenset({"allergy"})
"""Attributes a question may narrow to a kind of value ("allergic to any animals")."""
_CATEGORY_ASKED: Final = tuple(
    (name, re.compile(pattern, _I))
    for name, pattern in (
        ("animals", r"\b(?:animals?|pets?|furry|fur|dander)\b"),
        ("foods", r"\b(?:foods?|eat|eating|edible|ingredients?)\b"),
        ("medicines", r"\b(?:medicines?|medications?|drugs?|meds|antibiotics?|painkillers?)\b"),
        ("plants", r"\b(?:plants?|pollens?|trees|flowers?|grass(?:es)?|hay ?fever|seasonal)\b"),
        ("insects", r"\b(?:insects?|bugs?|stings?|bites?)\b"),
    )
)
"""How a question names a kind of value."""
_PETS: Final = (
    r"cats?|kittens?|dogs?|pupp(?:y|ies)|rabbits?|bunn(?:y|ies)|hamsters?|guinea pigs?|gerbils?"
    r"|ferrets?|parrots?|budgies?|goldfish|tortoises?|turtles?|snakes?|lizards?|geckos?"
    r"|chinchillas?|rats?|mice|spaniel|terrier|labrador|retriever|collie|greyhound|poodle"
)
_LIVESTOCK: Final = (
    r"sheep|ewes?|lambs?|rams?|cows?|cattle|calves|heifers?|bullocks?|pigs?|sows?|goats?"
    r"|chickens?|hens?|ducks?|geese|turkeys?|alpacas?|llamas?|horses?|pon(?:y|ies)"
)
_MEMBERS: Final = {
    name: re.compile(rf"\b(?:{pattern})\b", _I)
    for name, pattern in (
        (
            "animals",
            # not every kind of livestock: "allergic to chicken" is a food allergy
            rf"{_PETS}|horses?|pon(?:y|ies)|cows?|sheep|goats?|mouse|birds?|feathers?|fur"
            r"|dander|animals?|pets?",
        ),
        (
            "foods",
            r"(?:pea|tree |pine )?nuts?|almonds?|cashews?|walnuts?|hazelnuts?|pecans?|pistachios?"
            r"|shellfish|seafood|prawns?|shrimps?|crabs?|lobsters?|mussels?|oysters?|fish|milk"
            r"|dairy|lactose|eggs?|wheat|gluten|soy|soya|sesame|strawberr(?:y|ies)|kiwis?"
            r"|bananas?|tomato(?:es)?|celery|mustard|lupin|sul(?:ph|f)ites?|corn|chocolate"
            r"|avocados?|apples?|peach(?:es)?|coconuts?|foods?",
        ),
        (
            "medicines",
            r"penicillin|amoxicillin|antibiotics?|aspirin|ibuprofen|codeine|morphine|sul(?:ph|f)a"
            r"|sul(?:ph|f)onamides?|paracetamol|acetaminophen|naproxen|nsaids?|an(?:a)?esthetics?"
            r"|erythromycin|cephalosporins?|tetracycline|opioids?|opiates?|contrast dye|iodine"
            r"|tramadol|medicines?|medications?|drugs?",
        ),
        (
            "plants",
            r"pollens?|birch|grass(?:es)?|ragweed|hay ?fever|oak|alder|hazel|olive trees?"
            r"|lil(?:y|ies)|flowers?|plants?|trees|cedar|mugwort|nettles?|ivy|daisies"
            r"|chrysanthemums?|sunflowers?",
        ),
        (
            "insects",
            r"bees?|wasps?|hornets?|insects?|stings?|mosquito(?:es)?|(?:fire )?ants?|bites?",
        ),
    )
}
"""A short list of the members of each kind: enough to tell "allergic to cats" (an animal)
from "allergic to birch pollen" (a plant)."""


# --- a member of a kind, a side job, a plan; parts of the day and legs of a school run -----

_KIND_ASKED: Final = tuple(
    (
        name,
        re.compile(
            rf"^(?:what|which|how many)\b[^?]*?\b(?:{kind})\b[^?]*\bX\b"
            rf"|\b(?:does|do|did) X (?:\w+ ){{0,2}}(?:any|an?|some) (?:{kind})\b"
            rf"|\bX'?s? (?:{kind})\b",
            _I,
        ),
    )
    for name, kind in (
        ("livestock", r"livestock|farm animals|stock|herds?|flocks?"),
        ("pets", r"pets?"),
        ("kept_animals", r"animals?"),
        ("instruments", r"(?:musical )?instruments?"),
        ("vehicles", r"vehicles?|wheels|transport"),
        ("crops", r"crops?|vegetables?|veg|fruits?|produce"),
    )
)
"""How a question names a kind of thing the user has, keeps, plays or grows ("what
livestock does the user raise")."""
_OWNED: Final = frozenset(name for name, _ in _KIND_ASKED)
_OWN_SAYING: Final = re.compile(r"\b(?:I|we|We)\b|\b(?:my|our)\b", _I)
_NOT_OWNED: Final = re.compile(
    r"\ballerg\w*|\bafraid\b|\bscared\b|\bfear\b|\bphobi\w*|\bhate\b|\bcan't stand\b"
    r"|\b(?:don't|do not|never) (?:have|own|keep|play|grow|drive)\b"
    r"|\b(?:my|our) (?:neighbou?rs?|friends?|sister|brother|mum|mom|dad|parents|boss|cousin)\b",
    _I,
)
"""A member named, not had: "I'm allergic to cats", "my neighbour has a parrot"."""
_MEMBERS.update(
    {
        name: re.compile(rf"\b(?:{pattern})\b", _I)
        for name, pattern in (
            ("pets", _PETS),
            ("livestock", _LIVESTOCK),
            ("kept_animals", f"{_PETS}|{_LIVESTOCK}"),
            (
                "instruments",
                r"guitars?|bass|cellos?|violins?|violas?|pianos?|keyboards?|drums?|drum kit"
                r"|saxophones?|sax|trumpets?|trombones?|flutes?|clarinets?|oboes?|ukuleles?"
                r"|banjos?|harps?|mandolins?|accordions?|harmonicas?|fiddles?|tubas?|bagpipes",
            ),
            (
                "vehicles",
                r"cars?|vans?|trucks?|pick-?ups?|motorbikes?|motorcycles?|scooters?|vespa|mopeds?"
                r"|bikes?|bicycles?|quad bikes?|tractors?|camper ?vans?|caravans?|jeeps?|suvs?"
                r"|hatchbacks?|estates?",
            ),
            (
                "crops",
                r"wheat|barley|oats|maize|corn|potato(?:es)?|tomato(?:es)?|carrots?|onions?"
                r"|beans?|peas|lettuces?|courgettes?|zucchinis?|cucumbers?|peppers?|chill(?:i|ie)s"
                r"|strawberr(?:y|ies)|raspberr(?:y|ies)|apples?|grapes?|pumpkins?|squash(?:es)?"
                r"|rapeseed|herbs|kale|cabbages?|leeks?|garlic|beetroots?|vegetables?|veg",
            ),
        )
    }
)
"""Short lists of the members of the kinds a question names."""


def _owns(question: Asked, statement: str) -> bool:
    """Whether `statement` names a member of the kind `question` asks about, as had by
    whom it asks about ("I keep about 400 Texel sheep", not "I'm allergic to cats")."""
    if not _MEMBERS[question.category].search(statement):
        return False
    if question.holder:
        return bool(question.holder & set(re.findall(r"[\w-]+", statement.lower())))
    return _OWN_SAYING.search(statement) is not None and not _NOT_OWNED.search(statement)


_OFF_HOURS: Final = (
    r"(?:(?:on|at) (?:the )?weekends?|(?:on )?(?:saturdays|sundays)|(?:in the |on \w+ )?"
    r"evenings|(?:on \w+ )?nights|in the (?:school |summer )?holidays|on the side)"
)
_PAID: Final = (
    r"(?:work|teach|tutor|coach|instruct|babysit|nanny|deliver|drive for|serve|bartend"
    r"|wait tables|freelance|lifeguard|referee|umpire|sell|do shifts|do deliveries|pull pints"
    r"|walk dogs|dog-?walk|stack shelves)(?:e?s|ing)?"
)
"""Work done off hours: "On weekends I also teach swimming", "I pull pints on Friday
nights"."""
_SIDE_JOB: Final = re.compile(
    r"\bI(?:'ve got| have got| have| do| also have| also do)"
    r" (?:an? |some |the |a few )?(?:paper ?round|(?:(?:part|full)[- ]time|saturday|sunday"
    r"|weekend|evening|holiday|summer|side|casual|second|after-school|weekday) (?:job|work|gig)"
    r"|side hustle|job (?:at|in|with)\b|(?:weekend |evening |night |morning )?shifts? (?:at|in"
    r"|for|on)\b)"
    r"|\bI (?:also )?work (?:(?:at |on )?(?:the )?weekends|(?:on )?saturdays|(?:on )?sundays"
    r"|evenings|nights|part[- ]time|(?:a few|one|two|three|four) (?:days|shifts|evenings"
    r"|mornings|nights) a week)\b"
    r"|\bI(?:'m| am) (?:an? )?part[- ]time [\w-]+"
    rf"|\b{_OFF_HOURS},? I (?:also |sometimes |still )?{_PAID}\b"
    rf"|\bI (?:also |sometimes |still )?{_PAID}\b(?: [\w'-]+){{0,6}}? {_OFF_HOURS}\b",
    _I,
)
"""The user's side or part-time work: "I have a paper round", "I work weekends at a bakery"."""


def _has_side_job(statement: str) -> bool:
    return _SIDE_JOB.search(statement) is not None


_MONTHS: Final = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
)
_AHEAD: Final = (
    r"next (?:week|weekend|month|year|summer|spring|autumn|winter|term|\w+day)"
    r"|this (?:coming )?(?:week|weekend|month|year|summer|spring|autumn|winter|term|christmas"
    rf"|easter)|tomorrow|soon|later this (?:week|month|year)|in (?:{_MONTHS})"
    r"|in (?:a|two|three|four|a few|\d+) (?:days?|weeks?|months?)|at (?:christmas|easter)"
)
_PLAN: Final = re.compile(
    r"\b(?:I|we)(?:'m| am|'re| are) (?:(?:also|still|really|finally) )?(?:going to"
    r" (?!(?:the|a|an|my|our|work|school|church|bed)\b)|planning\b|hoping to\b|about to\b"
    r"|due to\b|booked\b|signed up\b|registered\b|scheduled\b|entered\b|looking forward)"
    r"|\b(?:I|we)(?:'ll| will| plan to| intend to| hope to|'ve booked| have booked"
    r"|'ve signed up| have signed up|'ve registered| have registered|'ve entered"
    r"| have entered)\b"
    r"|\bI(?:'m| am) going on (?:an? )?(?:[\w-]+ )?(?:holiday|trip|vacation|cruise|honeymoon"
    r"|retreat|safari|tour|break|getaway)\b"
    rf"|\b(?:I|we)(?:'m| am|'re| are) (?:[\w-]+ )?[\w-]+ing\b[^.]*?\b(?:{_AHEAD})\b",
    _I,
)
"""A statement of the user's future: "I'm planning to", "I've booked", "I'm going on a
ski trip", a doing with a time ahead ("I'm sitting my GCSEs this summer")."""


def _states_a_plan(statement: str) -> bool:
    return _PLAN.search(statement) is not None


_USERS_OWN.update({"side_job": _has_side_job, "plans": _states_a_plan})

_QUESTION_PARTS: Final = (
    ("morning", re.compile(r"\bmornings?\b", _I)),
    ("afternoon", re.compile(r"\bafternoons?\b", _I)),
    ("evening", re.compile(r"\b(?:evenings?|nights?|tonight)\b", _I)),
)
"""How a question names a part of the day (evening and night are one)."""
_STATEMENT_PARTS: Final = (
    ("morning", re.compile(r"\bmornings?\b|\bbreakfast\b|\bdawn\b|\bbefore (?:work|school)\b", _I)),
    ("afternoon", re.compile(r"\bafternoons?\b|\blunch(?:time)?\b|\bafter school\b", _I)),
    (
        "evening",
        re.compile(
            r"\b(?:evenings?|nights?|tonight|dinner|supper|bedtime|midnight)\b|\bafter work\b",
            _I,
        ),
    ),
)
_CLOCK: Final = re.compile(
    r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\b\.?|\b(\d{1,2}):(\d{2})\b", _I
)


def _hour_part(hour: int, half: str) -> str:
    """The part of the day of `hour` ("a"m, "p"m, or "" for a bare clock time)."""
    if half:
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    elif 1 <= hour <= 4:
        hour += 12  # "at 3:15": said bare, an afternoon
    elif 5 <= hour <= 7:
        return ""  # "6:30": a waking or a supper
    if 5 <= hour < 12:
        return "morning"
    if 12 <= hour < 17:
        return "afternoon"
    return "evening"


def _day_parts(text: str, words: tuple[tuple[str, re.Pattern[str]], ...]) -> set[str]:
    """The parts of the day `text` names, in words or (a statement) clock times."""
    parts = {name for name, pattern in words if pattern.search(text)}
    if words is _STATEMENT_PARTS:
        for found in _CLOCK.finditer(text):
            hour = int(found[1] or found[4])
            part = _hour_part(hour, found[3] or "") if hour < 24 else ""
            if part:
                parts.add(part)
    return parts


_RUN: Final = re.compile(
    r"\b(?:kids?|children|child|sons?|daughters?|twins|school|nursery|daycare|creche"
    r"|kindergarten|preschool|childminder)\b",
    _I,
)
_LEGS: Final = (
    (
        "to",
        re.compile(
            r"\b(?:take|drop|drive|walk|bring)s?\b[^?.]*?\b(?:to|off|at) (?:the )?(?:school"
            r"|nursery|daycare|creche|kindergarten|preschool|childminder)\b"
            r"|\bdrop(?:s|ping)? (?:[\w-]+ ){0,2}?off\b|\bdrop(?:s|ping)? off\b",
            _I,
        ),
    ),
    (
        "from",
        re.compile(
            r"\bpick(?:s|ing)? (?:[\w-]+ ){0,3}?up\b|\b(?:collect|fetch)(?:s|es|ing)?\b", _I
        ),
    ),
)
"""The legs of a school run: taking the children there, picking them up."""


def _legs(text: str) -> set[str]:
    if not _RUN.search(text):
        return set()
    return {name for name, pattern in _LEGS if pattern.search(text)}
