"""When a newer statement replaces an older one, beyond the attribute catalogue.

`attributes.replaces` reads the catalogue's attributes (residence, employer, phone, ...).
People also keep one value of many things the catalogue does not name: a landlord, a
child's coach, a gate code, a Discord handle, the head of their department. This module
reads those from the sentence's shape, "<my|our|the|Name's> <thing> is <value>": a later
statement that names the same thing of the same holder with a sign of change ("my new
landlord is ...", "Theo has a new coach this season, Ms. Adebayo", "Dr. Farah took over as
head of my department") and a value the older did not state, while the older value is no
longer said, replaces it. It also reads corrections the catalogue's cue misses ("Scratch
that, ...", "No wait, I had the digits mixed up, ..."), a new job that names the new role
("I have a new job, I'm at ABB now as a controls engineer"), and a retraining ("Ama
retrained and she's a health visitor now").

It also keeps facts that are all true at once apart when the catalogue would call them two
values of one attribute: "On weekdays I work the early shift at the bakery" / "On Saturdays
I do a late shift at the pub", "I have an old Land Rover for the farm" / "For the school run
I use a Toyota Yaris": each holds for its own days or purpose, and nothing says the older
one changed.

It reads a few families by their own words as well: a new employer named before or after the
notice, the old one by its kind ("As of last week I'm at Vantage Biolabs, after handing in my
notice at the robotics firm"); a shared thing upgraded to a new version ("upgrading the
production database to PostgreSQL 16", not "the staging database"); one sport, hobby or
instrument given up for another ("hung up my boots and joined a rowing club instead"); and a
correction of what a named pet or person is ("Correction: Juniper is an Australian
shepherd"). A fan's team or a favourite in another sport or genre ("In baseball I root for
the Mariners") never replaces one in the first. The place one exercises at is swapped for
another ("I ditched my gym for a CrossFit box", "I moved my membership to Gravity"); a job
ends, named by its work or what it is done with, and the newer says what the holder does now
("Tomas gave up driving his cab and now volunteers at the library"); and a new job after
training or qualifying replaces the old one, at the same workplace or none named ("I'm now a
sonographer at the same hospital"), unless another holder has it ("My son qualified as ...").
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Final

from mnemoledger.commands.llm.rules.attributes import (
    ADDITIVE,
    CHANGE,
    CORRECTION,
    ENDED,
    JOB_NOUNS,
    KIN,
    NOT_NAMES,
    ORG_WORDS,
    QUALIFIERS,
    ROUTINES,
    facts_of,
    holder_of,
    replaces,
    same_holder,
    values_of,
)
from mnemoledger.commands.llm.rules.text import overlap
from mnemoledger.commands.write.attribution import different_speakers, speaker_and_body

_I = re.IGNORECASE


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


MORE_CORRECTIONS: Final = re.compile(
    r"\b(?:scratch that|no wait|mix(?:ed|es)? (?:\w+ ){0,3}up|had (?:\w+ ){1,3}wrong"
    r"|got (?:\w+ ){1,3}wrong|misread|misheard|i misspoke|wrong (?:\w+ ){0,2}(?:code|time"
    r"|day|date|year|spelling|digits?)|let me fix|i should have said"
    r"|(?:typed|spelled|spelt|wrote|written|said|put|entered|gave you|told you|read)"
    r" (?:[\w']+ ){0,3}wrong|misspelled|misspelt|mistyped|mis-typed)\b",
    _I,
)
"""Ways of saying an earlier statement was wrong that the catalogue's cue does not list."""
MORE_CHANGES: Final = re.compile(
    r"\b(?:lately|recently|become|becomes|retired|renamed|sold|traded|former|previous"
    r"|(?:is|are|was) (?:now )?(?:gone|over)|these days|this (?:season|year|term|semester)"
    r"|took over|taken over|(?:has|have|got) a new|new one|pushed|brought forward|upped"
    r"|raised|lowered|increased|decreased|reduced|cut|put up)\b",
    _I,
)
"""Signs of change the catalogue's CHANGE does not list ("Lately X have become my favourite
band", "my old dentist retired")."""


PROSPECTIVE: Final = re.compile(
    r"\b(?:interviewing|applying|applied|thinking (?:of|about)|considering|planning to"
    r"|plan to|hoping to|hope to|want to|would like to|might|may be)\b",
    _I,
)
"""What may happen: not yet a new value."""


_LEADING_ADVERBIAL: Final = re.compile(
    r"^(?:ever since|since|after|when|now that|following)\b[^,;]*?\s(?=(?:i|we|i'm|we're|i've)\b)",
    _I,
)
"""A leading "Since moving to the Bay Area" before the speaker: the place it names is not
whose fact the sentence states."""


def is_correction(text: str) -> bool:
    return CORRECTION.search(text) is not None or MORE_CORRECTIONS.search(text) is not None


def _says_change(text: str) -> bool:
    return (
        is_correction(text)
        or CHANGE.search(text) is not None
        or MORE_CHANGES.search(text) is not None
    )


def supersedes(older: str, newer: str) -> bool:
    """Whether `newer` gives a newer value of what `older` states, so `older` may go."""
    old_speaker, old_body = speaker_and_body(older)
    new_speaker, new_body = speaker_and_body(newer)
    if new_speaker is not None and is_correction(f"{new_speaker}:"):
        new_speaker, new_body = None, newer  # "Correction: my parking space is B41"
    if different_speakers(old_speaker, new_speaker):
        return False
    if PROSPECTIVE.search(old_body) or PROSPECTIVE.search(new_body):
        return False  # "I'm interviewing with Northwind for a new job" changes nothing yet
    if in_other_domains(old_body, new_body):
        return False  # "In baseball I now root for the Mariners": not a new football team
    if replaces(older, newer) or replaces(older, _LEADING_ADVERBIAL.sub("", new_body)):
        if held_apart(old_body, new_body, _KINDS_OF_DAY) and not is_correction(new_body):
            return False  # "On weekends I've been waking up at 9 lately": other days
        if one_off(old_body, new_body):
            return False
        if _says_change(new_body):
            return True
        return not held_apart(old_body, new_body) and not other_things(old_body, new_body)
    if _renamed_by_a_move(old_body, new_body) and not upgraded_to(old_body, new_body):
        return False  # "My shop is called Petal & Stem" / "The shop moved to Marlow Street"
    return (
        slot_update(old_body, new_body)
        or moved_thing(old_body, new_body)
        or left_for_another(old_body, new_body)
        or moved_in(old_body, new_body)
        or value_gone(old_body, new_body)
        or same_opening_new_object(old_body, new_body)
        or new_job(old_body, new_body)
        or retrained(old_body, new_body)
        or now_a_job(old_body, new_body)
        or corrected_frame(old_body, new_body)
        or same_words_new_value(old_body, new_body)
        or not_the_old_value(old_body, new_body)
        or switched_kind(old_body, new_body)
        or left_and_started(old_body, new_body)
        or at_next_employer(old_body, new_body)
        or new_sport(old_body, new_body)
        or swapped_exercise_place(old_body, new_body)
        or ended_job(old_body, new_body)
        or corrected_named(old_body, new_body)
        or promoted(old_body, new_body)
        or corrected_value(old_body, new_body)
        or same_verb_new_place(old_body, new_body)
        or new_value_of_shared_thing(old_body, new_body)
        or upgraded_to(old_body, new_body)
        or new_partner(old_body, new_body)
    )


# --- a morning that went otherwise ------------------------------------------------------------

_ONE_OFF: Final = re.compile(
    r"\b(?:today|this morning|this evening|tonight|last night|yesterday|the other day"
    r"|for once|on (?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
    _I,
)
_HABIT: Final = re.compile(
    r"\b(?:now|these days|nowadays|lately|since|been|usually|always|every|from now on"
    r"|any ?more|started|start)\b",
    _I,
)


def one_off(older: str, newer: str) -> bool:
    """ "I get up at 6:30 on weekdays" / "I got up at 9 this morning": the time of a daily
    routine on one day, not a new routine."""
    if not {f.attribute for f in facts_of(older)} & ROUTINES:
        return False
    return any(_ONE_OFF.search(text) and not _HABIT.search(text) for text in (older, newer))


# --- facts held apart by their days or purpose --------------------------------------------

_SCOPE: Final = re.compile(
    r"\b(?:on|at|every|for|during)\s+(?:the\s+)?"
    r"((?:week(?:day|end)s?|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|mornings?|evenings?"
    r"|nights?|afternoons?|work|home|school|weekdays|holidays?|trips?)\b(?:\s+run)?"
    r"|(?:the\s+)?(?:farm|school run|commute|office|gym|garden|summer|winter))",
    _I,
)


_SEASON: Final = re.compile(r"\bin\s+(?:the\s+)?(summer|winter|spring|autumn|fall)\b", _I)
"""Seasons: "In winter I take the bus to work" is no new way to work."""

_DOMAIN_NAMES: Final = {
    "american football": "american football",
    "college football": "american football",
    "the nfl": "american football",
    "nfl": "american football",
    "australian rules(?: football)?": "australian rules",
    "gaelic football": "gaelic football",
    "fantasy football": "fantasy football",
    "football": "football",
    "soccer": "football",
    "the premier league": "football",
    "the prem": "football",
    "la liga": "football",
    "serie a": "football",
    "the bundesliga": "football",
    "the mls": "football",
    "rugby(?: union| league)?": "rugby",
    "the six nations": "rugby",
    "cricket": "cricket",
    "the ipl": "cricket",
    "basketball": "basketball",
    "the nba": "basketball",
    "the wnba": "basketball",
    "baseball": "baseball",
    "the mlb": "baseball",
    "(?:ice )?hockey": "hockey",
    "the nhl": "hockey",
    "field hockey": "field hockey",
    "tennis": "tennis",
    "golf": "golf",
    "f1": "f1",
    "formula (?:1|one)": "f1",
    "motor ?racing": "motor racing",
    "nascar": "nascar",
    "cycling": "cycling",
    "boxing": "boxing",
    "mma": "mma",
    "the ufc": "mma",
    "darts": "darts",
    "snooker": "snooker",
    "netball": "netball",
    "volleyball": "volleyball",
    "esports": "esports",
    "athletics": "athletics",
    "fantasy(?: books| novels| fiction)?": "fantasy",
    "sci-fi": "sci-fi",
    "science fiction": "sci-fi",
    "crime(?: fiction| novels| books)?": "crime",
    "horror(?: films| movies| books)?": "horror",
    "romance(?: novels| books)?": "romance",
    "thrillers": "thriller",
    "non-fiction": "non-fiction",
    "poetry": "poetry",
    "anime": "anime",
    "opera": "opera",
    "musicals": "musicals",
    "classical(?: music)?": "classical",
    "jazz": "jazz",
    "(?:rock|pop|hip[- ]hop|rap|country|folk|metal|indie|electronic|reggae|blues|soul)"
    "(?: music)?": "",
}
"""Sports, leagues and genres by which a fan's team or a favourite holds for one domain;
each with the domain it names ("the NFL": American football; "" keeps the words)."""
_DOMAIN_WORDS: Final = "|".join(sorted(_DOMAIN_NAMES, key=len, reverse=True))
_DOMAIN: Final = re.compile(
    rf"(?:\b(?:in|for|with|when it comes to|as for|as far as)\s+(?P<after>{_DOMAIN_WORDS})\b"
    rf"|\b(?P<before>{_DOMAIN_WORDS})(?:-wise\b|\s+(?:fan|team|club|supporter)s?\b))",
    _I,
)
"""A domain a fact holds in: "in American football", "for cricket", "a baseball fan"."""
_DOMAIN_PATTERNS: Final = [(re.compile(rf"^(?:{k})$", _I), v) for k, v in _DOMAIN_NAMES.items()]


@lru_cache(maxsize=4096)  # each text is compared with several others
def _domains(text: str) -> frozenset[str]:
    """The sports, leagues or genres a statement scopes itself to ("In baseball I root for
    the Mariners": baseball), each by its domain ("the NFL", "American football": one)."""
    found = set()
    for match in _DOMAIN.finditer(text):
        words = " ".join((match.group("after") or match.group("before")).lower().split())
        name = next((v for p, v in _DOMAIN_PATTERNS if p.match(words)), "") or words
        found.add(name.removesuffix(" music"))
    return frozenset(found)


def in_other_domains(older: str, newer: str) -> bool:
    """ "I support the Packers in American football" / "In baseball I root for the
    Mariners": each holds in its own sport (or genre), whatever the words of change."""
    old, new = _domains(older), _domains(newer)
    return bool(old) and bool(new) and not old & new


def _scopes(text: str) -> set[str]:
    found = {m.group(1).lower().removesuffix("s") for m in _SCOPE.finditer(text)}
    return found | {m.group(1).lower() for m in _SEASON.finditer(text)} | _domains(text)


_KINDS_OF_DAY: Final = _word_set("weekday weekend holiday summer winter spring autumn fall")
"""Scopes that name a kind of day, never one day: "on Tuesdays" may be the value that
changed ("my spin class is on Thursdays now"), "on weekends" never is."""


def held_apart(older: str, newer: str, among: frozenset[str] | None = None) -> bool:
    """Both statements are scoped ("on weekdays", "for the farm") and by other scopes: two
    values that hold side by side. `among`: only these scopes count."""
    old_scopes, new_scopes = _scopes(older), _scopes(newer)
    if among is not None:
        old_scopes, new_scopes = old_scopes & among, new_scopes & among
    return bool(old_scopes) and bool(new_scopes) and not (old_scopes & new_scopes)


def other_things(older: str, newer: str) -> bool:
    """Each says "<the> <thing> is <value>" of another thing: "The school pickup is at 3:15"
    / "The school drop-off is at 8:45"."""
    old_slot, new_slot = _slot_of(older), _slot_of(newer)
    return old_slot is not None and new_slot is not None and old_slot[0] != new_slot[0]


# --- "<my|the|Name's> <thing> is <value>" ------------------------------------------------

_SLOT: Final = re.compile(
    r"(?:^|(?<=[,;:.!?]\s)|(?<=\band\s)|(?<=\bbut\s)|(?<=\bso\s)|(?<=\bnow\s)"
    r"|(?<=\bthen\s)|(?<=\balso\s))"
    r"(?P<det>my|our|the|his|her|(?-i:[A-Z][\w-]*)'s)\s+"
    r"(?P<phrase>(?:[\w'-]+\s+){0,4}?[\w'-]+)\s+(?:is|are|was)\s+"
    r"(?P<value>(?:[^,;.!?]|(?<=\b(?:dr|mr|ms|st))\.|(?<=\bmrs)\.|(?<=\bprof)\.)+)",
    _I,
)
_ADJECTIVES: Final = _word_set(
    "new old current usual regular main former previous own favourite favorite the a an my"
    " our his her their"
)
_SAME_HEAD: Final = {
    "username": "handle",
    "account": "handle",
    "gamertag": "handle",
    "tag": "handle",
    "nickname": "handle",
    "favorite": "favourite",
    "landlady": "landlord",
    "gp": "doctor",
    "pill": "medication",
    "tablet": "medication",
    "medicine": "medication",
    "med": "medication",
    "meds": "medication",
}
_NOT_SLOTS: Final = (KIN - frozenset({"landlord", "boss", "manager", "mentor"})) | frozenset(
    {"name", "it", "one", "thing", "plan", "idea", "problem", "favourite", "favorite"}
)
"""Heads that name a person or nothing in particular: what is said of them is not one
value of one thing ("My sister is a nurse", "My sister is 30")."""
_VALUE_STOP: Final = _word_set(
    "a an the my our his her their is are was now still also just really very at in on of"
    " to for from with and or called named dr mr mrs ms prof"
)
_NOT_VALUES: Final = _word_set(
    "so very really too such not never always quite pretty super kind sort best worst great"
    " good bad nice cool fun awesome amazing awful beautiful lovely special hard tough easy"
    " important fine ok okay true right wrong important crazy wild huge big small different"
    " same mine yours ours there here gone over done going getting being what how why open"
    " closed ready busy available happy sad excited tired proud glad sure"
)
"""How a thing is, not which it is: "is the best", "are so bright"."""
_PHRASE_PREPOSITIONS: Final = frozenset({"of", "at", "in", "for", "on"})
""""head of my department", "gate code at my building": the thing is the word before."""
_WORD: Final = re.compile(r"[A-Za-z0-9][\w'@.+-]*")


def _words(text: str) -> list[str]:
    return [w.lower().rstrip(".").removesuffix("'s") for w in _WORD.findall(text)]


def _head(word: str) -> str:
    word = word.lower().removesuffix("'s")
    word = _SAME_HEAD.get(word, word)
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def _slot_of(body: str) -> tuple[str, set[str], set[str], set[str]] | None:
    """The head of the thing, its qualifiers, its holder's names and the stated value's
    words, of the first "<det> <thing> is <value>" of `body`."""
    return next(iter(_slots_of(body)), None)


def _slots_of(body: str) -> list[tuple[str, set[str], set[str], set[str]]]:
    """Every "<det> <thing> is <value>" of `body`, read as `_slot_of` reads the first."""
    found = []
    for match in _SLOT.finditer(body):
        phrase = _words(match.group("phrase"))
        det = match.group("det")
        cut_at = [i for i, w in enumerate(phrase) if w in _PHRASE_PREPOSITIONS and i > 0]
        if cut_at:
            cut = cut_at[0]
            head_word, qualifiers = phrase[cut - 1] if cut else phrase[0], phrase[cut + 1 :]
            qualifiers += phrase[: max(cut - 1, 0)]
        else:
            head_word, qualifiers = phrase[-1], phrase[:-1]
        head = _head(head_word)
        if head in _NOT_SLOTS and not (head == "friend" and "best" in phrase):
            continue  # a relation, not a slot; but one's best friend is one at a time
        if not head.replace("-", "").isalpha():
            continue
        names = {w.lower().removesuffix("'s") for w in match.group("phrase").split() if _named(w)}
        if det.endswith("'s"):
            names.add(det[:-2].lower())
        value_words = _words(match.group("value"))
        value = {w for w in value_words if w not in _VALUE_STOP}
        if not value or len(value) > 6 or value_words[0] in _NOT_VALUES or value <= _NOT_VALUES:
            continue  # "the love around you is awesome", "the colours are so bright"
        quals = {w for w in qualifiers if w not in _ADJECTIVES} - names
        found.append((head, quals, names, value))
    return found


def _named(word: str) -> bool:
    bare = word.removesuffix("'s")
    return bare[:1].isupper() and bare.lower() not in _ADJECTIVES and bare.lower() not in KIN


def slot_update(older: str, newer: str) -> bool:
    """`older` says "<my|the|Name's> <thing> is <value>"; `newer` names the same thing of
    the same holder, says it changed, and states another value without the older one."""
    slot = _slot_of(older)
    if slot is None or (ADDITIVE.search(newer) and not is_correction(newer)):
        return False
    if other_qualifier(older, newer):
        return False  # "My postcode is ..." / "Sorry, my work postcode is ..."
    head, qualifiers, names, old_value = slot
    new_words = _words(newer)
    new_raw = _WORD.findall(newer)
    if not _says_change(newer):
        return False
    if old_value <= set(new_words) and not GONE.search(newer):
        # the older value is still said, unless the newer states the thing's value apart
        # ("Hannah went on maternity leave so my physio is Tom now")
        given = [value for other in _slots_of(newer) if other[0] == head for value in [other[3]]]
        if not any(value and not value & old_value for value in given):
            return False
    if any(name not in new_words for name in names):
        return False
    if not names and {w for w in new_words if w in KIN} - qualifiers - {head}:
        return False  # "my son's coach" is not "my daughter's coach"
    heads = {head} | (
        {_head(sorted(qualifiers)[0])} if head in _GENERIC and len(qualifiers) == 1 else set()
    )
    for at, word in enumerate(new_words):
        if _head(word) not in heads:
            continue
        if (
            at
            and not _DETERMINED.intersection(new_words[max(at - 4, 0) : at])
            and not any(raw.endswith("'s") for raw in new_raw[max(at - 4, 0) : at])
        ):
            continue  # "my new landlord", "Nell's best friend", not "switched trainers"
        before = _modifiers(new_words, at)
        other_kind = {
            w for w in before if w not in qualifiers and w not in names and w not in _FILLER
        }
        if other_kind and qualifiers:
            continue  # "my work phone" is not "my personal phone"
        told = set(new_words) - set(_words(older)) - _FILLER - _VALUE_STOP
        if told:
            return True
    return False


_DETERMINERS: Final = _word_set("the a an my our his her their your this that")
_DETERMINED: Final = _DETERMINERS | _word_set("as new to switched changed moved i we")
_BEFORE_PHRASE: Final = _word_set(
    "to at in on for with from of by is are was me him her them us i we he she they has have"
)
"""Words a noun phrase does not hold: where its modifiers end."""


def _modifiers(words: list[str], at: int) -> set[str]:
    """The words between the determiner and the noun at `words[at]` ("my blood pressure
    pill": blood, pressure), adjectives left out."""
    found: set[str] = set()
    for word in reversed(words[max(at - 3, 0) : at]):
        if word in _DETERMINERS or word in _BEFORE_PHRASE:
            break
        if word not in _ADJECTIVES:
            found.add(word)
    return found


_GENERIC: Final = _word_set("number code id name")
"""Heads whose one qualifier names the thing as well ("my locker number": "locker 240")."""
GONE: Final = re.compile(
    r"\b(?:left|retired|moved away|quit|no longer|not|instead of|replaced|gone)\b", _I
)
"""Words by which the newer says the older value is over while still naming it."""

_FILLER: Final = _word_set(
    "i i'm i've we we're so and but has have had got get now new old this that these days"
    " lately recently since because as over took take taken become became retired sold"
    " renamed switched changed moved season year week month ago last instead no wait"
    " sorry actually correction oops scratch"
)


_MOVED_THING: Final = re.compile(
    r"\b(?:moved|switched|transferred|changed|took) (?:my|our) ((?:[\w'-]+ ){0,2}?[\w'-]+)"
    r" (?:over )?(?:to|with) ",
    _I,
)


def moved_thing(older: str, newer: str) -> bool:
    """ "I pick up my prescriptions at the CVS on Fifth Avenue" / "I moved my prescriptions to
    Walgreens": the newer moves a thing of the older's to another named place."""
    match = _MOVED_THING.search(newer)
    if match is None:
        return False
    head = _head(match.group(1).split()[-1])
    old_words = _words(older)
    if not any(
        _head(w) == head
        for at, w in enumerate(old_words)
        if at and old_words[at - 1] in {"my", "our"}
    ):
        return False
    old_values, new_values = values_of(older), values_of(newer)
    return bool(new_values - old_values) and not (old_values & new_values)


_GONE_AFTER_NAME: Final = re.compile(
    r"^(?:'s|has|had|have)?\s*(?:just |recently )?(?:retired|left|quit|resigned|stepped down"
    r"|moved (?:away|on|abroad|out)|went on (?:\w+ )?leave)\b",
    _I,
)


def value_gone(older: str, newer: str) -> bool:
    """ "My hairdresser is Shona at Cut Above" / "Shona moved away, so I go to Rico at Fade
    Studio now": the person the older names as the thing's value is gone, and the newer
    names who or what took their place."""
    slot = _slot_of(older)
    if slot is None:
        return False
    old_value = slot[3]
    named = [w for w in _WORD.findall(newer) if w.lower() in old_value and w[:1].isupper()]
    for name in named:
        after = newer[newer.find(name) + len(name) :]
        if _GONE_AFTER_NAME.match(after.lstrip()):
            return bool(_capitalised(newer) - _capitalised(older) - _TITLES - {name.lower()})
    return False


_TITLES: Final = _word_set("dr mr mrs ms prof st i i'm i've")


def _capitalised(text: str) -> set[str]:
    """Capitalised words after the first ("Mr. Addo teaches ...": mr, addo)."""
    return {
        w.lower().rstrip(".").removesuffix("'s") for w in _WORD.findall(text)[1:] if w[:1].isupper()
    }


_MOVED_IN: Final = re.compile(
    r"\bmoved in (?:with|together)\b.*?\b(?:in|to) (?P<place>(?-i:[A-Z])[\w'-]+)", _I
)


def moved_in(older: str, newer: str) -> bool:
    """ "My partner Dev lives in Bristol" / "Dev's moved in with me in Bath": the holder
    of the older residence moved in with someone, in another place."""
    old_facts = facts_of(older)
    if not old_facts or {f.attribute for f in old_facts} != {"residence"}:
        return False
    match = _MOVED_IN.search(newer)
    if match is None or match.group("place").lower() in values_of(older):
        return False
    names = {w for f in old_facts for w in f.holder if w not in KIN}
    subject = set(_words(newer[: match.start()]))
    if names:
        return names <= subject
    # the speaker's own residence: "I" or "we" moved in, not "my brother"
    return not old_facts[0].holder and bool(subject & {"i", "we"}) and not subject & KIN


_LEFT: Final = re.compile(
    r"\b(?:quit|left|resigned from|stopped working (?:at|for)|no longer (?:work|am) (?:at|with))"
    r" (?:my job (?:at|with) )?([A-Z][\w&.-]*)",
)


def left_for_another(older: str, newer: str) -> bool:
    """ "I'm a software tester at Ubisoft" / "I quit Ubisoft and I've been at Spotify since
    March": the newer names the employer the older states as one the speaker left."""
    old_facts = facts_of(older)
    if not old_facts or {f.attribute for f in old_facts} - {"employer", "occupation"}:
        return False
    if any(f.holder for f in old_facts):
        return False
    left = _LEFT.search(newer)
    if left is None or holder_of(newer, left.start(), left.end()):
        return False  # "My wife left Google and joined Meta"
    return left.group(1).lower() in values_of(older)


# --- a new job that names the new role, a retraining --------------------------------------

_JOB: Final = re.compile(rf"\bas an? (?:[\w-]+ ){{0,2}}(?:{JOB_NOUNS})\b", _I)
_RETRAINED: Final = re.compile(
    r"\b(?:retrained|requalified|qualified|changed careers?|career change|new career"
    r"|trained (?:up )?as)\b",
    _I,
)
_RETRAINED_AS: Final = re.compile(
    r"\b(?:retrained|requalified|qualified|trained(?: up)?) as an? [\w-]+", _I
)
_IS_NOW_A: Final = re.compile(
    r"\b(?:i'm|i am|he's|he is|she's|she is|they're|they are) (?:now )?an? [\w -]+", _I
)


def new_job(older: str, newer: str) -> bool:
    """ "I'm an electrical engineer at Siemens" / "I have a new job, I'm at ABB now as a
    controls engineer": the employer changed and the newer names the role as well."""
    old_attributes = {f.attribute for f in facts_of(older)}
    new_facts = {f.attribute: f for f in facts_of(newer)}
    if not old_attributes or not old_attributes <= {"employer", "occupation"}:
        return False
    if "employer" not in new_facts or _JOB.search(newer) is None:
        return False
    old_holders = {f.holder for f in facts_of(older)}
    return old_holders == {new_facts["employer"].holder} and _says_change(newer)


def retrained(older: str, newer: str) -> bool:
    """ "My wife Ama works as a midwife" / "Ama retrained and she's a health visitor now"."""
    old_facts = facts_of(older)
    if not old_facts or {f.attribute for f in old_facts} != {"occupation"}:
        return False
    change = _RETRAINED.search(newer)
    if change is None:
        return False
    if _IS_NOW_A.search(newer) is None and _RETRAINED_AS.search(newer) is None:
        return False
    holder = old_facts[0].holder
    if (holder_of(newer, change.start(), change.end()) & KIN) - holder:
        return False  # "Anya's husband qualified as a dentist"
    names = {w for w in holder if w not in KIN}
    new_words = set(_words(newer))
    if names:
        return names <= new_words
    return not holder and not ({"he's", "she's", "he", "she"} & new_words)


_NOW_A_JOB: Final = re.compile(
    r"\b(?:(?:is|am|'m|'s|are|'re) now|now (?:works?|working) as|(?:re)?qualified as"
    r"|(?:became|become) an?|now an?)\s+(?:an? )?"
    rf"(?P<job>(?:[\w-]+ ){{0,2}}(?:{JOB_NOUNS})s?)\b",
    _I,
)
"""A job one has now: "I'm now a radiographer", "Anya qualified as a dental hygienist"."""


def now_a_job(older: str, newer: str) -> bool:
    """ "I work as a kitchen porter" / "I finished my training and I'm now a radiographer at
    the same hospital", "My son Jamal is a porter at the Royal" / "Jamal qualified as a
    sonographer": the holder has a new job, at the same workplace or one not named."""
    old_facts = facts_of(older)
    old_attributes = {f.attribute for f in old_facts}
    if "occupation" not in old_attributes or old_attributes - {"employer", "occupation"}:
        return False
    if ADDITIVE.search(newer) or _BESIDE.search(newer):
        return False  # "I'm now also a union rep at the same hospital"
    old_words = {w.lower() for w in _words(older)}
    for match in _NOW_A_JOB.finditer(newer):
        new_holder = holder_of(newer, match.start(), match.end())
        if not all(same_holder(f.holder, new_holder) for f in old_facts):
            continue
        if any((new_holder & KIN) - f.holder for f in old_facts):
            continue  # "My son qualified as a radiographer"
        if not {w.lower() for w in _words(match.group("job"))} <= old_words:
            return True  # not the old job said again
    return False


# --- a correction that says the same thing with another value ------------------------------

SAME_FRAME_OVERLAP: Final = 0.3
"""Word overlap (Jaccard) from which a correction and an older statement are taken to be
about the same thing; the reconstruction's SAME_THING_OVERLAP."""


def corrected_frame(older: str, newer: str) -> bool:
    """ "I'm flying out to Lisbon on the 12th" / "Scratch that, I'm flying out to Lisbon on
    the 15th": a correction, words in common, and a value the older did not state (or an
    end of what the older said)."""
    if not (is_correction(newer) or ENDED.search(newer)):
        return False
    if facts_of(older) and facts_of(newer):
        return False  # the catalogue's attributes decide between those
    if (set(_words(newer)) & KIN) - set(_words(older)) or other_qualifier(older, newer):
        return False  # "Sorry, my mistake: my sister's employee ID is 48231"
    if overlap(older, newer) < SAME_FRAME_OVERLAP:
        return False
    return bool(values_of(newer) - values_of(older)) or ENDED.search(newer) is not None


# --- the same sentence with another value ---------------------------------------------------

_VALUE_WORD: Final = re.compile(
    r"^(?:\d[\w:./-]*|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|jan(?:uary)?|feb(?:ruary)?"
    r"|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?|noon|midnight"
    r"|morning|mornings|evening|evenings|afternoon|afternoons|am|pm|[a-z]\d\w*)$"
)


def same_words_new_value(older: str, newer: str) -> bool:
    """ "Our cleaner comes on Tuesdays" / "Our cleaner comes on Fridays now": the newer says
    the older's sentence again with another time, day, number or name, and says it
    changed."""
    if not _says_change(newer) or ADDITIVE.search(newer):
        return False
    names = values_of(older) | values_of(newer)
    old_words = [_plain(w, names) for w in _words(older) if w not in _AUXILIARY]
    new_words = [
        _plain(w, names)
        for w in _words(newer)
        if (w not in _FILLER and w not in _AUXILIARY) or _plain(w, names) in old_words
    ]
    gone = [w for w in old_words if w not in new_words]
    added = [w for w in new_words if w not in old_words]
    if not gone or not added or len(gone) > 2 or len(added) > 2:
        return False
    if not all(_VALUE_WORD.match(w) or w in names for w in gone + added):
        return False
    if all(_VALUE_WORD.match(w) for w in gone + added):
        return True
    # another name: "Lately I've been hanging out with Sarah" adds a friend, "now" replaces
    return CHANGE.search(newer) is not None or is_correction(newer)


_AUXILIARY: Final = _word_set(
    "be been being am is are was were have has having do does usually normally generally"
    " typically always often"
)
"""Words of a tense or a habit: "I've been walking the dog at 6" says "I walk the dog at 7"
again."""
_SUBJECT_FORMS: Final = {"i'm": "i", "i've": "i", "we're": "we", "we've": "we"}


def _plain(word: str, names: set[str]) -> str:
    """A word without its tense or number ("walking", "walks": walk), values and names as
    they are."""
    if word in names or _VALUE_WORD.match(word):
        return word
    word = _SUBJECT_FORMS.get(word, word)
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]  # the number first: "bookings" and "booking" are both book
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            stem = word[: -len(ending)]
            return stem[:-1] if stem[-1] == stem[-2] and stem[-1] not in "ls" else stem
    return word.removesuffix("e") if len(word) > 3 else word  # "leaves", "leaving": leav


def _value_words(text: str) -> set[str]:
    words = {w.removesuffix("s") for w in _words(text) if _VALUE_WORD.match(w)}
    return words | values_of(text)


def states_another_value(older: str, newer: str) -> bool:
    """Each states a time, day or number the other does not: "My spin class is on
    Tuesday evenings" / "... on Thursday evenings now" are not one fact said twice."""
    # what is said, not when: "[8 May 2023] Caroline: ..." carries its date
    old_values = _time_words(speaker_and_body(older)[1])
    new_values = _time_words(speaker_and_body(newer)[1])
    return bool(old_values - new_values) and bool(new_values - old_values)


def _time_words(text: str) -> set[str]:
    """Days, dates, times and numbers (`values_of` reads names and numbers, not weekdays)."""
    found = set()
    for word in _words(text):
        word = _NUMBER_WORDS.get(word, word)
        if _VALUE_WORD.match(word):
            word = word[:3] if _MONTH.match(word) else _ORDINAL.sub(r"\1", word)
            found.add(word.removesuffix("s"))
    return found


_MONTH: Final = re.compile(r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*$")
_ORDINAL: Final = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_NUMBER_WORDS: Final = {
    word: str(number)
    for number, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}


_NOT_VALUE: Final = re.compile(r"\bnot (?:the |on |at |in )?([\w'-]+)", _I)


def not_the_old_value(older: str, newer: str) -> bool:
    """ "My new address is 12 Rowan Close" / "Oops, it's 21 Rowan Close, not 12": the newer
    puts a value of its own in place of one the older states, about the same thing."""
    if not is_correction(newer) and ", not " not in newer:
        return False
    old_values = _value_words(older)
    denied = {m.group(1).lower().removesuffix("s") for m in _NOT_VALUE.finditer(newer)}
    if not denied & old_values or not (_value_words(newer) - old_values - denied):
        return False
    return overlap(older, newer) >= SAME_FRAME_OVERLAP / 2


_PREPOSITION_ENDS: Final = _word_set("at in on to with from for by")
MIN_SHARED_OPENING: Final = 3
"""Words the two sentences must open with, the last a preposition (before any article):
"Our book group meets at (the)"."""


def same_opening_new_object(older: str, newer: str) -> bool:
    """ "Our book group meets at the Red Lion" / "Our book group meets at the library now":
    the same opening up to a preposition, another place or thing after it, and a word
    that says it changed."""
    if not _says_change(newer) or ADDITIVE.search(newer):
        return False
    old_words, new_words = _words(older), _words(newer)
    shared = 0
    while shared < min(len(old_words), len(new_words)) and old_words[shared] == new_words[shared]:
        shared += 1
    opening = [w for w in old_words[:shared] if w not in _ARTICLES]
    if len(opening) < MIN_SHARED_OPENING or opening[-1] not in _PREPOSITION_ENDS:
        return False
    if opening[0] not in _OWNERS and not older.split()[0].endswith("'s"):
        return False  # a thing's ("Our book group meets at"), not what someone did or does
    old_tail = set(old_words[shared:]) - _FILLER
    new_tail = set(new_words[shared:]) - _FILLER
    return bool(old_tail - new_tail) and bool(new_tail - old_tail) and not old_tail <= new_tail


_ARTICLES: Final = _word_set("a an the")
_OWNERS: Final = _word_set("my our the his her their")


# --- "I switched gyms": a place of that kind the older names ---------------------------------

KINDS_OF_PLACE: Final = {
    "gym": _word_set("gym gyms fitness leisure crossfit"),
    "school": _word_set("school primary academy college high nursery kindergarten"),
    "surgery": _word_set("surgery practice clinic medical"),
    "dentist": _word_set("dental dentist dentistry"),
    "bank": _word_set("bank"),
    "pharmacy": _word_set("pharmacy chemist pharmacist"),
    "church": _word_set("church chapel parish"),
    "club": _word_set("club"),
}
"""Words by which a place's name says its kind ("Anytime Fitness" is a gym, "St Mary's
Primary" a school)."""
_SWITCHED_KIND: Final = re.compile(
    r"\b(?:switched|changed|moved|swapped)\s+(?P<kind>[a-z]+?)e?s\b", _I
)


def switched_kind(older: str, newer: str) -> bool:
    """ "I go to Anytime Fitness on Main Street" / "I switched gyms, I'm a member at Gold's
    Gym now": the newer changed its place of a kind, and the older names one of that kind
    for the same person."""
    match = _SWITCHED_KIND.search(newer)
    if match is None:
        return False
    kind = match.group("kind").lower()
    kind_words = KINDS_OF_PLACE.get(kind) or KINDS_OF_PLACE.get(kind + "e")
    if kind_words is None:
        return False
    named = [w for w in _WORD.findall(older)[1:] if w[:1].isupper()]
    if not any(w.lower().rstrip(".") in kind_words for w in named):
        return False  # the older names no place of that kind
    old_names = {w for w in _capitalised(older) if w not in kind_words} - _TITLES
    new_names = _capitalised(newer) - _TITLES
    holders = old_names & {w for w in _words(newer[: match.start()])}
    people = {w for w in old_names if w in _capitalised(newer[: match.start()])}
    if not (new_names - _capitalised(older)) or (old_names & new_names) - holders - people:
        return False
    old_speaker = not any(w in KIN for w in _words(older)) and bool(
        {"i", "i'm", "we", "my", "our"} & set(_words(older))
    )
    return old_speaker == (not holders and not people)


# --- leaving a job and starting at another ---------------------------------------------------

_LEAVING: Final = re.compile(
    r"\b(?:(?:hand|hands|handed|handing|put|puts|putting|gave|give|gives|given|giving|turned"
    r"|turn|turning) in (?:my|his|her|their) (?:notice|resignation)|(?:gave|give|given|giving"
    r"|served|serving|working) (?:(?:my|his|her|their) )?notice|resign(?:s|ed|ing)?|quit|left"
    r"|(?:after|since) leaving|having left"
    r"|moved on from|stepped down)\b",
    _I,
)
_NEXT_EMPLOYER: Final = re.compile(
    r"\b(?:start|starts|started|starting|began|begun|begin|beginning|joined|joining|now|am|'m"
    r"|is|'s|are|'re|been)(?: (?:now|work|working|\w+ing))* (?:(?:at|with|for) )?"
    r"(?:the )?(?-i:[A-Z])",
    _I,
)
"""Where the leaver went: "started at the Mayo Clinic", "now I'm at KPMG", "is now cooking
at Nobu"."""


_NEXT_WORKPLACE: Final = re.compile(
    r"\b(?:start|starts|started|starting|began|begun|joined|joining|now at|moved to|went to)"
    rf" (?:at |with )?(?:a|an|the) (?:[\w-]+ ){{0,2}}(?:{ORG_WORDS})\b",
    _I,
)
"""An unnamed next workplace: "joined a private clinic", "started at a startup"."""


def left_and_started(older: str, newer: str) -> bool:
    """ "I'm a nurse at Westbrook General Hospital" / "I handed in my notice and started at the
    Mayo Clinic": the holder of the older job left a job and names where they went."""
    old_facts = facts_of(older)
    if not old_facts or {f.attribute for f in old_facts} - {"employer", "occupation"}:
        return False
    if "employer" not in {f.attribute for f in old_facts} or ADDITIVE.search(newer):
        return False
    leaving = _LEAVING.search(newer)
    if leaving is None:
        return False
    went = _NEXT_EMPLOYER.search(newer, leaving.end()) or _NEXT_WORKPLACE.search(
        newer, leaving.end()
    )
    if went is None and not _went_before(older, newer[: leaving.start()]):
        return False
    holder = holder_of(newer, leaving.start(), leaving.end())
    return all(same_holder(f.holder, holder) for f in old_facts)


_AT_NEXT: Final = re.compile(
    r"\b(?:i'm|i am|i've been|i have been|we're|he's|she's|he is|she is|is|been|now)"
    r"(?: now)? (?:at|with|for) (?:the )?(?P<name>(?-i:[A-Z])[\w&.'-]*)",
    _I,
)


_NEW_JOB_SIGN: Final = re.compile(
    r"\b(?:as of|these days|nowadays|new job|changed (?:jobs|employers|companies)"
    r"|since (?:(?:last|the|this) )?(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
    r"|spring|summer|autumn|fall|winter|week|month|year|new year|start of|\d{4})"
    r"|switched (?:jobs|employers|companies)|moved (?:jobs|companies))\b",
    _I,
)
"""Words by which "I'm at <Org>" says where one works now, not where one is today."""


def at_next_employer(older: str, newer: str) -> bool:
    """ "I'm a software tester at Kestrel Robotics" / "As of June I'm at Vantage Biolabs": the
    same holder is at another named employer, and says since when or that the job is new
    (the older's role goes with the older employer)."""
    old_facts = facts_of(older)
    if not old_facts or {f.attribute for f in old_facts} - {"employer", "occupation"}:
        return False
    new_facts = facts_of(newer)
    if [f.attribute for f in new_facts] != ["employer"] or "employer" not in {
        f.attribute for f in old_facts
    }:
        return False
    if ADDITIVE.search(newer) or _NEW_JOB_SIGN.search(newer) is None or _ONE_OFF.search(newer):
        return False
    if not all(same_holder(f.holder, new_facts[0].holder) for f in old_facts):
        return False
    return _went_before(older, newer)


def _went_before(older: str, before: str) -> bool:
    """ "As of last week I'm at Vantage Biolabs, after handing in my notice at the robotics
    firm": the next employer named before the leaving, one the older does not name."""
    old_values = values_of(older)
    return any(
        m.group("name").lower().removesuffix("'s") not in old_values
        and m.group("name").lower() not in NOT_NAMES
        for m in _AT_NEXT.finditer(before)
    )


# --- one sport or hobby given up for another -------------------------------------------------

_ACTIVITY_WORDS: Final = {
    "rugby": "rugby",
    "football": "football",
    "soccer": "football",
    "five-a-side": "football",
    "cricket": "cricket",
    "tennis": "tennis",
    "table tennis": "table tennis",
    "ping pong": "table tennis",
    "badminton": "badminton",
    "squash": "squash",
    "padel": "padel",
    "pickleball": "pickleball",
    "golf": "golf",
    "hockey": "hockey",
    "netball": "netball",
    "basketball": "basketball",
    "volleyball": "volleyball",
    "baseball": "baseball",
    "softball": "softball",
    "lacrosse": "lacrosse",
    "handball": "handball",
    "water polo": "water polo",
    "darts": "darts",
    "snooker": "snooker",
    "bowling": "bowling",
    "rowing|rower|row": "rowing",
    "swimming|swimmer|swim": "swimming",
    "cycling|cyclist|cycle": "cycling",
    "running|runner|run|jogging|jogger|jog": "running",
    "climbing|climber|climb|bouldering": "climbing",
    "judo": "judo",
    "karate": "karate",
    "boxing|boxer|box": "boxing",
    "kickboxing": "kickboxing",
    "taekwondo": "taekwondo",
    "jiu-jitsu|jujitsu": "jiu-jitsu",
    "martial arts": "martial arts",
    "fencing|fencer": "fencing",
    "archery": "archery",
    "sailing": "sailing",
    "kayaking|canoeing": "kayaking",
    "surfing|surfer|surf": "surfing",
    "skiing|skier|ski": "skiing",
    "snowboarding": "snowboarding",
    "skating|skater|skate": "skating",
    "dancing|dancer|dance|ballet|salsa": "dancing",
    "yoga": "yoga",
    "pilates": "pilates",
    "crossfit": "crossfit",
    "triathlon|triathlons|triathlete": "triathlon",
    "athletics": "athletics",
    "gymnastics": "gymnastics",
    "hiking|hiker|hike": "hiking",
    "horse riding|riding": "riding",
    "knitting|knitter|knit": "knitting",
    "crochet|crocheting": "crochet",
    "sewing|sew": "sewing",
    "quilting": "quilting",
    "painting|painter|paint": "painting",
    "drawing|sketching": "drawing",
    "pottery|ceramics|potter": "pottery",
    "photography|photographer": "photography",
    "woodworking|woodwork": "woodworking",
    "gardening|gardener": "gardening",
    "baking|baker|bake": "baking",
    "chess": "chess",
    "guitar": "guitar",
    "piano": "piano",
    "violin": "violin",
    "drums|drum kit": "drums",
    "trumpet": "trumpet",
    "trombone": "trombone",
    "tuba": "tuba",
    "cornet": "cornet",
    "french horn": "french horn",
    "saxophone|sax": "saxophone",
    "clarinet": "clarinet",
    "flute": "flute",
    "oboe": "oboe",
    "bassoon": "bassoon",
    "cello": "cello",
    "viola": "viola",
    "double bass": "double bass",
    "harp": "harp",
    "ukulele": "ukulele",
    "bass guitar": "bass guitar",
    "singing|singer|sing|choir": "singing",
    "birdwatching|birding": "birdwatching",
    "fishing|angling|angler|fish": "fishing",
}
"""Sports and hobbies one does, by their names and their doers' ("a rower", "I swim")."""
_VERB_FORMS: Final = _word_set(
    "row swim cycle run jog climb box surf ski skate dance hike knit sew paint bake sing fish"
)
"""Activity words that only name the activity as the speaker's verb ("I row", not "a row")."""
_ACTIVITY: Final = re.compile(
    r"\b(?P<word>"
    + "|".join(sorted((w for k in _ACTIVITY_WORDS for w in k.split("|")), key=len, reverse=True))
    + r")\b",
    _I,
)
_ACTIVITY_NAMES: Final = {
    word: name for key, name in _ACTIVITY_WORDS.items() for word in key.split("|")
}
_FAN: Final = re.compile(r"\b(?:support|root|cheer|fan|follow|watch|watching)\w*\b", _I)
_DOER: Final = re.compile(r"\b(?:i|i'm|i've|i am|i have|we|we're|we've)\b", _I)
_GIVEN_UP: Final = re.compile(
    r"\b(?:(?:gave|give|given|giving) up(?: on)?|quit|quitting|stopped|dropped|packed in"
    r"|packed up|retired from|done with|(?:no longer|don't|do not|doesn't|does not)"
    r" (?:play|do|go)|swapped|traded|exchanged"
    r"|switched from|instead of)\s+(?P<object>(?:[\w'-]+\s*){1,3})"
    r"|\bhung up (?:my|his|her|their) (?:boots|gloves|racket|racquet|skates|spikes|bat|clubs"
    r"|trainers|cleats|stick|needles|brushes|oars)\b"
    r"|\binstead\b(?! of)",
    _I,
)
"""Ways of saying one gave something up: with what was given up ("gave up hockey",
"swapped football for swimming", "instead of netball"), or with it implied ("hung up my
boots", "... instead")."""


_KINDS_OF_ACTIVITY: Final = {
    "brass": frozenset({"trumpet", "trombone", "tuba", "cornet", "french horn"}),
    "woodwind": frozenset({"saxophone", "clarinet", "flute", "oboe", "bassoon"}),
    "string": frozenset({"violin", "viola", "cello", "double bass", "harp", "guitar"}),
    "strings": frozenset({"violin", "viola", "cello", "double bass", "harp", "guitar"}),
    "racket": frozenset({"tennis", "badminton", "squash", "padel", "pickleball"}),
    "martial": frozenset({"judo", "karate", "taekwondo", "jiu-jitsu", "kickboxing", "boxing"}),
    "instrument": frozenset(),
}
"""Kinds by which one names what one gave up ("his brass lessons": a trumpet)."""
_OBJECT_END: Final = re.compile(r"\b(?:for|to|and|but|so|with|because|after|when)\b", _I)


@lru_cache(maxsize=4096)  # each text is compared with several others
def _activities(text: str, verbs: bool = True) -> frozenset[str]:
    """The sports and hobbies a text names; `verbs`: with "I swim", "I knit" counted."""
    found = set()
    for match in _ACTIVITY.finditer(text):
        word = match.group("word").lower()
        if word in _VERB_FORMS:
            before = _words(text[: match.start()])[-2:]
            if not verbs or not before or not {"i", "we"} & set(before):
                continue
        found.add(_ACTIVITY_NAMES[word])
    return frozenset(found)


def new_sport(older: str, newer: str) -> bool:
    """ "I play rugby for a local amateur club" / "After my knee injury I hung up my boots and
    joined a rowing club instead", "My son Teodor plays the trumpet" / "Teodor has given up his
    brass lessons and switched to drums": the holder does one sport, hobby or instrument, and
    the newer gives it up (by name, by its kind, or implied) for another."""
    old = _activities(older)
    if len(old) != 1 or _FAN.search(older) or ADDITIVE.search(newer) or _BESIDE.search(newer):
        return False
    new = _activities(newer) - old
    if not new or _FAN.search(newer):
        return False
    doing = _ACTIVITY.search(older)
    old_holder = holder_of(older, doing.start(), doing.end()) if doing else frozenset()
    if not old_holder and not _DOER.search(older):
        return False
    for match in _GIVEN_UP.finditer(newer):
        new_holder = holder_of(newer, match.start(), match.end())
        if not same_holder(old_holder, new_holder) or (new_holder & KIN) - old_holder:
            continue  # "My son hung up his boots ...", "Teo's friend gave up the cello ..."
        given = match.group("object")
        if given is not None:
            given = _OBJECT_END.split(given)[0]  # "swapped football for swimming": football
        if given is None or _activities(given, verbs=False) == old:
            return True  # "hung up my boots", "gave up hockey", "instead of netball"
        kinds = {w for w in _words(given) if w in _KINDS_OF_ACTIVITY}
        if not _activities(given, verbs=False) and any(
            old <= _KINDS_OF_ACTIVITY[kind] for kind in kinds
        ):
            return True  # "given up his brass lessons" after "plays the trumpet"
    return False


# --- the place one exercises at swapped for another -----------------------------------------

_EXERCISE_PLACES: Final = (
    r"gym|pool|lido|leisure cent(?:re|er)|(?:climbing|bouldering) (?:cent(?:re|er)|wall|gym)"
    r"|studio|club|box|dojo|fitness|crossfit|wall"
)
_EXERCISE_AT: Final = re.compile(
    r"\b(?:train|swim|climb|boulder|lift|exercis|work(?:s|ing|ed)? out|member|go|goes|going"
    r"|do|does|doing)\w* (?:[\w'-]+ ){0,2}?(?:at|of|to) (?P<place>(?:[\w'&-]+ ){0,4}?"
    rf"(?:{_EXERCISE_PLACES}|(?-i:[A-Z])[\w'&-]*)s?)\b",
    _I,
)
"""Where one exercises: "I swim at the Kelvin Hall pool", "I'm a member at PureGym"."""
_SWAPPED_PLACE: Final = re.compile(
    r"\b(?:swap|swapped|swapping|trade|traded|trading|ditch|ditched|ditching|dropped"
    r"|exchanged|replaced) (?P<place>(?:[\w'&-]+ ){1,4}?)(?:for|with) "
    r"|\b(?:moved|moving|switched|switching|transferred) (?:my|our|his|her|their)"
    r" (?:gym )?membership (?:over )?to\b",
    _I,
)
"""Ways of saying one swapped a place for another: "swapped the gym for", "ditched my gym
for", "traded the Arches for", "moved my membership to"."""
_EXERCISE_PLACE: Final = re.compile(rf"\b(?:{_EXERCISE_PLACES})s?\b", _I)


def swapped_exercise_place(older: str, newer: str) -> bool:
    """ "I train at Anytime Fitness" / "I've swapped the gym for a climbing wall", "I'm a
    member at the Castle bouldering centre" / "I moved my membership to Gravity": the holder
    exercises at one place, and the newer swaps that place (by its kind or name) for another."""
    at = _EXERCISE_AT.search(older)
    if at is None and "gym" not in {f.attribute for f in facts_of(older)}:
        return False
    if _BESIDE.search(newer):
        return False
    old_holder = holder_of(older, at.start(), at.end()) if at else frozenset()
    old_place = set(_words(at.group("place").lower())) if at else set()
    for match in _SWAPPED_PLACE.finditer(newer):
        new_holder = holder_of(newer, match.start(), match.end())
        if not same_holder(old_holder, new_holder) or (new_holder & KIN) - old_holder:
            continue  # "My husband swapped the gym for ...", "Ravi" / "I ditched my gym"
        place = match.group("place")
        if place is None:
            return True  # "moved my membership to"
        if _EXERCISE_PLACE.search(place) or set(_words(place.lower())) & old_place - _DETERMINERS:
            return True
    return False


# --- a job ended, named by its work or its tools, with what the holder does now --------------

_WORK_OF_JOB: Final = {
    "taxi|cab|cabbie|minicab|uber": "taxi taxis cab cabs minicab driving",
    "lorry|truck|trucker|hgv|haulage": "lorry lorries truck trucks trucking hgv haulage driving",
    "bus|coach": "bus buses coach coaches driving",
    "hairdresser|barber|stylist": "hair hairdressing barbering salon barbershop",
    "teacher|teaches|teach|teaching|lecturer|tutor": "teaching classroom tutoring lecturing",
    "chef|cook": "cooking kitchen kitchens",
    "fisherman|fisherwoman|fisher": "fishing boat trawler",
    "farmer": "farming farm",
    "pilot": "flying",
    "postman|postwoman|postie": "post round mail",
    "builder|bricklayer": "building bricklaying",
    "plumber": "plumbing",
    "cleaner": "cleaning",
    "nanny|childminder": "childcare childminding",
    "mechanic": "garage repairs",
    "baker": "baking bakery",
    "doctor|gp|physician": "medicine practising",
    "lawyer|solicitor|barrister": "law practising",
    "nurse|midwife": "nursing midwifery",
    "accountant": "accounting accountancy",
    "journalist|reporter": "journalism reporting",
}
"""What a job is done with or by: "gave up driving his cab" ends a taxi driver's job."""
_JOB_WORK: Final = {
    key: frozenset(words.split()) for keys, words in _WORK_OF_JOB.items() for key in keys.split("|")
}
_JOB_ENDED: Final = re.compile(
    r"\b(?:(?:gave|give|given|giving) up|quit|quitting|stopped|stopping|retired from"
    r"|retiring from|packed in|packed up|hung up|sold|no longer (?:works? as|(?:is|am) an?))"
    r"\s+(?P<object>(?:[\w'-]+\s*){1,4})",
    _I,
)
_JOB_WORDS: Final = re.compile(rf"\b(?:{JOB_NOUNS}|{'|'.join(_JOB_WORK)})s?\b", _I)
_NOW_DOES: Final = re.compile(r"\b(?:now|these days|nowadays|instead)\b", _I)
_NOT_THE_JOB_AFTER: Final = _word_set(
    "at on during for nights weekends evenings mornings part-time so as"
)
"""After "driving": not the job but some of its hours ("stopped driving at night")."""
_DOING: Final = _word_set("driving teaching nursing cooking fishing farming flying cleaning")


def ended_job(older: str, newer: str) -> bool:
    """ "My dad Tomas works as a taxi driver" / "Tomas gave up driving his cab and now
    volunteers at the library", "My aunt Rosa works as a hairdresser" / "Rosa stopped cutting
    hair and now runs a cafe": the holder's job ends, named by the work or what it is done
    with, and the newer says what the holder does now."""
    if "occupation" not in {f.attribute for f in facts_of(older)}:
        return False
    if _JOB_ENDED.search(older) or ENDED.search(older) or ADDITIVE.search(newer):
        return False
    jobs = list(_JOB_WORDS.finditer(older))
    job_words = {m.group().lower() for m in jobs} | {m.group().lower()[:-1] for m in jobs}
    work = frozenset().union(*(_JOB_WORK.get(w, frozenset()) for w in job_words))
    if not jobs or not work:
        return False
    job = jobs[-1]
    old_holder = holder_of(older, job.start(), job.end())
    for match in _JOB_ENDED.finditer(newer):
        if not _NOW_DOES.search(newer, match.start("object")):
            continue  # nothing the holder does now
        new_holder = holder_of(newer, match.start(), match.end())
        if not same_holder(old_holder, new_holder) or (new_holder & KIN) - old_holder:
            continue  # "My uncle Ryo gave up his cab ..."
        given = [w.lower() for w in _words(match.group("object"))]
        for at, word in enumerate(given):
            if word in work - _DOING or word.removesuffix("s") in job_words:
                return True  # "driving his cab", "cutting hair", "quit being a chef"
            if word in work and (at + 1 == len(given) or given[at + 1] == "and"):
                return True  # "gave up driving and now ..."
            if word in work and given[at + 1] not in _NOT_THE_JOB_AFTER:
                return True  # "retired from teaching in May"
    return False


# --- a promotion ----------------------------------------------------------------------------

_PROMOTED: Final = re.compile(
    r"\b(?:promoted|bumped up|moved up|stepped up|made up|became|become"
    r"|(?:job )?title is now|(?:is|am|'m|'s) now)\b",
    _I,
)


def promoted(older: str, newer: str) -> bool:
    """ "I'm a sous chef at a bistro in Lyon" / "I got promoted to head chef last month": the
    same holder has a new title, the older's workplace unnamed (nothing says it changed)."""
    old_facts = facts_of(older)
    old_attributes = {f.attribute for f in old_facts}
    if "occupation" not in old_attributes or old_attributes - {"employer", "occupation"}:
        return False
    new_facts = [f for f in facts_of(newer) if f.attribute in {"employer", "occupation"}]
    if [f.attribute for f in new_facts] != ["occupation"] or ADDITIVE.search(newer):
        return False
    if not all(same_holder(f.holder, new_facts[0].holder) for f in old_facts):
        return False
    return _PROMOTED.search(newer) is not None


def other_qualifier(older: str, newer: str) -> bool:
    """The newer names a kind of the thing the older does not: "my work postcode", "my home
    number" after "my postcode", "my number"."""
    return any(p.search(newer) and not p.search(older) for p in QUALIFIERS.values())


# --- a value corrected letter by letter ------------------------------------------------------

_SPELLED_WORDS: Final = r"\b(?:spell|spells|spelled|spelt|spelling)\b"
_SPELLED: Final = re.compile(_SPELLED_WORDS, _I)
_SPELLING: Final = re.compile(
    _SPELLED_WORDS + r"|\bwith (?:an?|one|a single) [A-Za-z]\b(?!')"
    r"|\bwith (?:two|double|a double) [A-Za-z]'?s?\b"
    r"|\bwithout (?:the |an? )?[A-Za-z]\b(?!')",
    _I,
)
"""How a name is spelled: "with a C", "spelled with two Ls", "without the p"."""
_CODE_OR_NAME: Final = re.compile(r"\b(?:[A-Za-z]*\d[\w:./-]*|[A-Z][\w&-]*)")
_POSSESSED: Final = re.compile(
    r"\b(?:my|our|his|her|their|(?!(?:it|that|he|she|there|what|who|here|let|where)'s)\w+'s)"
    r"\s+((?:[\w-]+\s+){0,2}?[\w-]+)"
    r"(?=\s+(?:is|are|was|were|spells?|spelled|wrong)\b)",
    _I,
)
SPELLED_RATIO: Final = 0.5
"""The similarity that suffices when the newer says how the name is spelled ("Siobhan" /
"Correction: it's spelled Shivaun": 0.57)."""
_AFTER_TITLE: Final = re.compile(r"\b(?:mr|mrs|ms|dr|prof|st)\.$", _I)
MAX_BARE_CORRECTION_WORDS: Final = 12
"""A correction that names no thing ("It's Steven with a v, sorry") is about the older
statement only when it says little else."""
NEAR_VALUE_RATIO: Final = 0.65
"""Similarity (difflib ratio, 0-1) from which a corrected value is a respelling or a retyping of
the older one ("Katherine" / "Catherine": 0.89, "XRW" / "XRV": 0.67, "48213" / "48231": 0.8)."""


def _tokens(text: str, openers: bool = True) -> dict[str, str]:
    """Codes, numbers and names, not the letters of a spelling ("with a C"); without
    `openers`, not the capitalised words that open a sentence ("Wow, Caroline")."""
    text = _SPELLING.sub(" ", text)
    found = {}
    for match in _CODE_OR_NAME.finditer(text):
        token = match.group(0).rstrip(".").removesuffix("'s")
        before = text[: match.start()].rstrip()
        opens = not before or (before[-1] in ".!?" and not _AFTER_TITLE.search(before))
        if opens and not openers and not any(c.isdigit() for c in token):
            continue
        if len(token) > 1 and token.lower() not in NOT_NAMES and token.lower() not in _TITLES:
            found[token.lower()] = token
    return found


def _near(old: str, new: str, ratio: float) -> bool:
    if old == new or abs(len(old) - len(new)) > 2:
        return False
    if any(c.isdigit() for c in old) != any(c.isdigit() for c in new):
        return False
    return SequenceMatcher(None, old, new).ratio() >= ratio


def corrected_value(older: str, newer: str) -> bool:
    """ "My niece is called Katherine" / "Oops, it's Catherine with a C, that's how my niece
    spells it"; "My car's licence plate is KT19 XRW" / "I typed that wrong, my number plate is
    actually KT19 XRV": a correction (or a spelling) whose value is a near copy of the
    older's, of the same thing of the same person."""
    if not is_correction(newer) and not _SPELLING.search(newer):
        return False
    old_tokens, new_tokens = _tokens(older), _tokens(newer)
    gone = [t for t in _tokens(older, openers=False) if t not in new_tokens]
    added = [t for t in _tokens(newer, openers=False) if t not in old_tokens]
    ratio = SPELLED_RATIO if _SPELLED.search(newer) else NEAR_VALUE_RATIO
    near = {new for new in added if any(_near(old, new, ratio) for old in gone)}
    if not near:
        return False
    old_words, new_words = set(_words(older)), set(_words(newer))
    if (new_words & KIN) - old_words or other_qualifier(older, newer):
        return False  # "Sorry, my nephew is called Kevin", "my work postcode is ..."
    if {t for t in added if t not in near and not any(c.isdigit() for c in t)}:
        return False  # another person named ("Actually, Alice's number is 555-0124")
    things = {_head(m.group(1).split()[-1]) for m in _POSSESSED.finditer(newer)}
    if things:
        return bool(things & {_head(w) for w in old_words})
    return len(new_words) <= MAX_BARE_CORRECTION_WORDS  # "It's Steven with a v, sorry"


# --- a named pet's or person's attribute corrected ---------------------------------------------

_NAMED_IS: Final = re.compile(
    r"(?<![\w'])(?P<name>(?-i:[A-Z])[\w-]+)(?: (?:is|was)| ?'s(?= (?:a|an|actually|really|\d)))"
    r"(?: (?:actually|really|in fact|now))? (?P<value>(?:(?!\s(?:from|in|at|with|who|that"
    r"|which|for|and|but|since|because|like|not)\b)[^,;.!?:])+)",
    _I,
)
"""'Juniper is a border collie', 'Biscuit is actually three'."""
_COLOURS: Final = _word_set(
    "black white brown grey gray ginger tabby tortoiseshell golden cream tan chocolate red"
    " blue silver brindle merle tricolour tricolor spotted fawn sable blonde blond auburn"
    " dark light and with patches"
)
_AGE_WORDS: Final = _word_set("year years month months old")
_NAMED_NOT_NAMES: Final = _word_set("it that this there here what who she he")


def _named_values(text: str) -> dict[str, tuple[str, set[str]]]:
    """What a text says each named one is, with the kind of value: a number (an age), a
    colour or an "a/an ..." phrase (a breed, a job)."""
    found: dict[str, tuple[str, set[str]]] = {}
    for match in _NAMED_IS.finditer(text):
        name = match.group("name").lower()
        if match.group("name").isupper():
            continue  # "My employee ID is 48213": a thing, not someone
        if name in NOT_NAMES or name in _NAMED_NOT_NAMES or name in _TITLES:
            continue
        words = _words(match.group("value"))
        if not words or words[0] in _NOT_VALUES:
            continue  # "Juniper is a great swimmer" says how, not which
        bare = [w for w in words if w not in ("a", "an", "the")]
        if not bare or bare[0] in _NOT_VALUES:
            continue
        if bare[0][0].isdigit() or bare[0] in _NUMBER_WORDS:
            kind, value = "number", {_NUMBER_WORDS.get(bare[0], bare[0])}
        elif set(bare) <= _COLOURS:
            kind, value = "colour", set(bare) - {"and", "with"}
        elif words[0] in ("a", "an") and len(bare) <= 4:
            kind, value = "phrase", set(bare) - _AGE_WORDS
        else:
            continue
        found.setdefault(name, (kind, value))
    return found


def corrected_named(older: str, newer: str) -> bool:
    """ "My dog Juniper is a border collie" / "Correction: Juniper is an Australian shepherd, I
    always mix the breeds up": a correction that says again what a named pet or person is,
    with another value of the same kind (a breed or job for a breed or job, an age for an
    age, a colour for a colour)."""
    if not is_correction(newer):
        return False
    plainly = CORRECTION.search(_APOLOGY.sub(" ", newer)) or MORE_CORRECTIONS.search(newer)
    old_values, new_values = _named_values(older), _named_values(newer)
    for name, (kind, value) in new_values.items():
        if name not in old_values or old_values[name][0] != kind:
            continue
        old_value = old_values[name][1]
        if not (value - old_value and old_value - value):
            continue
        if kind != "phrase" or plainly or _named_kind(newer, name):
            return True
    return False


_JOB_OR_KIND: Final = re.compile(rf"\b(?:{JOB_NOUNS})s?\b|\b(?-i:[A-Z])", _I)


def _named_kind(text: str, name: str) -> bool:
    """ "Actually, Juniper is a Labrador", "Sorry, Priya is a paramedic": after a bare
    "actually" or "sorry" only a breed's name or a job counts, not "a troublemaker"."""
    for match in _NAMED_IS.finditer(text):
        if match.group("name").lower() == name:
            value = match.group("value")
            return any(
                m.group(0)[:1].islower() or m.start() > 0 for m in _JOB_OR_KIND.finditer(value)
            )
    return False


# --- the same activity at another place -------------------------------------------------------

_AT_PLACE: Final = re.compile(
    r"\b(?P<key>[a-z][\w'-]*)\s+(?:at|from)\s+(?:the\s+)?"
    r"(?P<place>[A-Z][\w'&-]*(?:\s+(?:&\s+|of\s+)?[A-Z][\w'&-]*)*)"
)
"""'swim at the Oasis Centre', 'get my hair cut at Toni & Guy': the word before the place
says what one does there."""


_PAST: Final = _word_set(
    "went had was were saw met got took made did came left played visited stayed spent ate"
    " bought found gave"
)
"""What happened once ("I played at the Blue Note"), not what one does."""
_NOW_HABIT: Final = re.compile(r"\b(?:been|keep|always|usually|every)\b", _I)


def _places(text: str) -> list[tuple[str, set[str], frozenset[str]]]:
    """What one does at which named place, and who does it; events in the past left out."""
    names = values_of(text)
    return [
        (
            _plain(m.group("key").lower(), names),
            {w.lower() for w in m.group("place").split()} - {"&", "of"},
            holder_of(text, m.start(), m.end("key")),
        )
        for m in _AT_PLACE.finditer(text)
        if m.group("key").lower() not in _PAST and not m.group("key").lower().endswith("ed")
    ]


def same_verb_new_place(older: str, newer: str) -> bool:
    """ "I swim at the Oasis leisure centre" / "These days I swim at Kings Hall instead": the
    same holder does the same thing at another named place, and the newer says it changed."""
    if ADDITIVE.search(newer):
        return False
    if CHANGE.search(newer) is None and not (
        MORE_CHANGES.search(newer) and _NOW_HABIT.search(newer)
    ):
        return False  # "Recently I played at the Jazz Cafe" is an event
    new_places = _places(newer)
    for key, place, holder in _places(older):
        for new_key, new_place, new_holder in new_places:
            if key == new_key and not place & new_place and same_holder(holder, new_holder):
                return True
    return False


# --- a new value of something both name -------------------------------------------------------

_MONEY_OR_AMOUNT: Final = re.compile(
    r"(?P<currency>[$€£¥])?(?P<number>\d[\d,.:]*)(?P<suffix>[a-zA-Z%]+)?(?:\s+(?P<unit>[a-zA-Z]+))?"
)
_UNITS: Final = _word_set(
    "minute minutes min mins hour hours hr hrs second seconds day days week weeks month months"
    " year years kilo kilos kg kgs pound pounds lb lbs mile miles km kilometre kilometres"
    " kilometer kilometers metre metres meter meters cm inch inches mg ml percent am pm"
    " dollars euros quid bucks times"
)
_NOT_THINGS: Final = _word_set(
    "the a an and but or so to of in on at for with from by over into about than then this that"
    " these those there here it its it's i i'm i've i'd i'll me my mine we we're we've our ours"
    " you your he she his her they them their who what which when where how all any some"
    " every each just about really finally actually now new old still also not no never"
    " is am are was were be been being have has had having do does did get got gets getting"
    " go goes going went gone take takes took taken make made use used using like likes"
    " live lives lived living work works worked working need needs say said tell told"
    " day days week weeks month months year years time times night nights morning mornings"
    " evening evenings today tonight tomorrow yesterday spring summer autumn fall winter"
    " since instead moved move switched switch changed change started start starting stopped"
    " left quit sorry correction wrong fix right way each out off back away down"
)
"""Words too common to say two statements are about the same thing."""
_IS_DAY: Final = re.compile(
    r"^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*$|^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov"
    r"|dec)[a-z]*$",
    _I,
)
MORE_SWAPS: Final = re.compile(
    r"\b(?:rewrote|rewritten|rebuilt|migrated|upgraded|downgraded|split up|broke up|given up"
    r"|went up|gone up|went down|gone down|put (?:\w+ ){1,2}up|down to|up to|fix that"
    r"|had (?:\w+ ){1,3}wrong|as of (?:this|today|now|next|last|[a-z]+day|(?-i:[A-Z])[a-z]+)"
    r"|ditched|dumped|gone with|went with|ended up|done with)\b",
    _I,
)
"""Changes a new value of the same thing is said with ("I rewrote Ladle's backend in
FastAPI", "the landlord put the rent up")."""
_BESIDE: Final = re.compile(r"\b(?:also|too|as well|in addition|besides|second|both)\b", _I)


def _amounts(text: str) -> dict[str, set[str]]:
    """Numbers by their unit ("$1,450 a month": $, "20mg": mg, "40 minutes": minute)."""
    found: dict[str, set[str]] = {}
    for match in _MONEY_OR_AMOUNT.finditer(text):
        number = match.group("number").rstrip(".,:").replace(",", "")
        unit = match.group("currency") or (match.group("suffix") or "").lower()
        if not unit and (match.group("unit") or "").lower() in _UNITS:
            unit = match.group("unit").lower().removesuffix("s")
        if ":" in number or unit in ("am", "pm", "a.m", "p.m"):
            unit = "time"
        found.setdefault(unit.removesuffix("s"), set()).add(number)
    return found


_NOT_THING_STEMS: Final = frozenset(_plain(w, set()) for w in _NOT_THINGS)
_SUBJECTS: Final = _word_set("i we you he she they i'm we're i've we've been")


def _things(text: str) -> dict[str, str]:
    """The specific words of a statement, without tense or number, each with the word before
    it: names and nouns that can say two statements are about one thing ("Ladle", "backend",
    "five-a-side", "rent"), not what the speaker does ("I buy", "I've been hanging")."""
    words = _words(text)
    found: dict[str, str] = {}
    for at, word in enumerate(words):
        before = words[at - 1] if at else ""
        if len(word) <= 2 or word in _NOT_THINGS or _IS_DAY.match(word) or word[0].isdigit():
            continue
        thing = _plain(word, set())
        if thing not in _NOT_THING_STEMS:
            found.setdefault(thing, "" if before in _SUBJECTS else before)
    return found


def _shared_things(older: str, newer: str) -> set[str]:
    """Things both name, where neither is what a speaker does and no two other kinds of the
    thing are meant ("my car insurance" / "my pet insurance")."""
    old_things, new_things = _things(older), _things(newer)
    shared = set()
    for thing in old_things.keys() & new_things.keys():
        old_before, new_before = old_things[thing], new_things[thing]
        if (
            _plain(old_before, set()) != _plain(new_before, set())
            and old_before not in _NOT_THINGS
            and new_before not in _NOT_THINGS
        ):
            continue
        shared.add(thing)
    return {t for t in shared if not _after_subject(older, t) and not _after_subject(newer, t)}


def _after_subject(text: str, thing: str) -> bool:
    words = _words(text)
    return any(
        _plain(w, set()) == thing and at and words[at - 1] in _SUBJECTS
        for at, w in enumerate(words)
    )


_OWNED: Final = re.compile(r"\b(?:my|our|his|her|their)\s+([\w-]+)(?:\s+([\w-]+))?", _I)


def _kin_holders(text: str) -> set[str]:
    """The speaker's people a statement names ("my wife", "our eldest son"), not "the
    landlord"."""
    owned = {w.lower() for m in _OWNED.finditer(text) for w in m.groups() if w}
    return owned & KIN


def _holders(text: str) -> set[str]:
    return {m.group(1).lower() for m in re.finditer(r"\b([A-Z][\w-]+)'s\b", text)}


_NAMING: Final = re.compile(
    r"\b(?:called|named|name is|name's|names are)\b|\b(?:is|'s) (?:now )?(?-i:[A-Z])", _I
)
"""A statement of what someone or something is called ("our new nanny is Agnieszka")."""
_CHANGED_MY: Final = re.compile(
    r"\b(?:changed|switched|swapped|replaced|moved)\s+(?:my|our)\s+((?:[\w-]+\s+){0,2}[\w-]+)", _I
)
_PARTNERS: Final = _word_set(
    "partner girlfriend boyfriend husband wife fiance fiancee fiancé fiancée spouse"
)
_BREAKUP: Final = re.compile(
    r"\b(?:split up|broke up|break up|separated|divorced|we're over|ended things)\b", _I
)
_NEW_PARTNER: Final = re.compile(
    r"\b(?:dating|seeing|with|married|engaged to|partner is|girlfriend is|boyfriend is)\b"
    r"[^.;]*?\b[A-Z][a-z]+",
)


_MOVED: Final = re.compile(r"\b(?:moved|relocated|moving|relocating)\b", _I)


def _renamed_by_a_move(older: str, newer: str) -> bool:
    """The older says what something is called, the newer where it moved: "My shop is called
    Petal & Stem" / "The shop moved to a bigger unit on Marlow Street" (the name stays)."""
    moved = _MOVED.search(newer)
    if moved is None or _NAMING.search(older) is None or _NAMING.search(newer) is not None:
        return False
    mover = newer[: moved.start()].split()[-1:]
    if mover and mover[0].lower().removesuffix("'s") in _capitalised(older):
        return False  # "Shona moved away": the one named moved, not the thing
    return not is_correction(newer)


_APOLOGY: Final = re.compile(r"\b(?:sorry|actually)\b", _I)
_ONCE: Final = re.compile(
    r"\b(?:last (?:week|weekend|night|month|year|time|[a-z]+day)|yesterday|ago|the other day"
    r"|went|visited|attended|saw)\b",
    _I,
)
"""What happened once: no standing value to replace."""
_ADDRESSED: Final = re.compile(
    r"(?:\b(?:hey|hi|hello|thanks|thank you|glad|congrats|bye)\b[^.!?]*?|,\s*)"
    r"\b([A-Z][a-z]+)\b(?=\s*[,!?.]|$)"
)
"""A name the speaker addresses ("Hey Caroline,", "Glad it helped, Melanie!")."""


def _says_a_new_value(text: str) -> bool:
    """A change or a correction, an apology alone not counted ("sorry about the hike")."""
    return (
        CHANGE.search(text) is not None
        or MORE_CHANGES.search(text) is not None
        or MORE_SWAPS.search(text) is not None
        or MORE_CORRECTIONS.search(text) is not None
        or CORRECTION.search(_APOLOGY.sub(" ", text)) is not None
    )


def _addressed(text: str) -> set[str]:
    return {m.group(1).lower() for m in _ADDRESSED.finditer(text)}


def new_partner(older: str, newer: str) -> bool:
    """ "My partner's name is Svetlana" / "We split up over the summer, and now I'm dating a
    woman called Ruth": the relationship the older names ended and the newer names another."""
    if not _BREAKUP.search(newer) or not _NEW_PARTNER.search(newer):
        return False
    old_words = set(_words(older))
    return bool(old_words & _PARTNERS) and not _kin_holders(older) - _PARTNERS


_UPGRADED: Final = re.compile(
    r"\b(?:upgrad|updat|migrat|bump|port|convert|switch|mov)(?:e|es|ed|ing|s)?"
    r"(?: (?:over|across|up))?\s+(?:(?:the|our|my|his|her|their|its|all (?:the|our))\s+)?"
    r"(?P<object>(?:[\w'.-]+\s+){0,4}?)(?:over\s+|across\s+|up\s+)?(?:to|onto)\s+"
    r"(?P<value>[^,;!?]+?)(?=[,;!?]|\.(?:\s|$)|$)",
    _I,
)
"""'upgrading the production database to PostgreSQL 16', 'bumped CI to Node 20': a thing
given a new version or value."""
_UPGRADE_VERB: Final = re.compile(r"^(?:upgrad|updat|migrat|bump)", _I)
_VERSIONED: Final = re.compile(r"\b([A-Za-z][\w+#-]*)\s+v?(\d+(?:\.\d+)*)\b")
_OBJECT_FILLER: Final = _word_set(
    "finally just all both new old current main whole entire everything everyone"
)


_SHORT: Final = {
    "prod": "production",
    "db": "database",
    "dbs": "database",
    "dev": "development",
    "k8s": "kubernetes",
    "repo": "repository",
    "repos": "repository",
    "os": "operating system",
    "ci/cd": "ci",
    "pc": "computer",
}
"""Short words for the things one upgrades ("the prod DB": the production database)."""


def _versions(text: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for match in _VERSIONED.finditer(text):
        name = match.group(1).lower()
        if name not in _NOT_THINGS or name == "version":
            found.setdefault(name, set()).add(match.group(2))
    return found


def upgraded_to(older: str, newer: str) -> bool:
    """ "Our production database runs PostgreSQL 13" / "We finally got round to upgrading the
    production database to PostgreSQL 16": the newer gives a thing the older names (by the
    same words, no other kind of it) a new version or value; with no thing named, the same
    product at another version ("We've upgraded to PostgreSQL 16")."""
    if _BESIDE.search(newer) or ADDITIVE.search(newer):
        return False
    if _kin_holders(newer) - set(_words(older)):
        return False  # "My brother upgraded his laptop to Windows 11"
    old_plain = {_plain(_SHORT.get(w, w), set()) for w in _words(older)}
    old_versions = _versions(older)
    for match in _UPGRADED.finditer(newer):
        thing = [
            _SHORT.get(w.removesuffix("'"), w.removesuffix("'"))
            for w in _words(match.group("object"))
            if w not in _OBJECT_FILLER and w not in _ARTICLES
        ]
        value = match.group("value")
        new_versions = _versions(value)
        if thing:
            head, modifiers = _plain(thing[-1], set()), {_plain(w, set()) for w in thing[:-1]}
            if head not in old_plain or not modifiers <= old_plain:
                continue  # "the staging database", "the servers' RAM"
        shared = old_versions.keys() & new_versions.keys()
        if shared:
            if any(old_versions[n] != new_versions[n] for n in shared):
                return True
            continue
        if not thing or (old_versions and new_versions):
            continue  # another product ("the app's Django to 4.2" after "Python 3.9")
        old_numbers = {n for numbers in old_versions.values() for n in numbers}
        new_numbers = {n for numbers in _amounts(value).values() for n in numbers}
        if old_numbers and new_numbers - old_numbers:
            return True
        old_names = _capitalised(older) - _capitalised(newer[: match.start()]) - _TITLES
        new_names = {
            w.lower() for w in _WORD.findall(value) if w[:1].isupper() and w.lower() not in _TITLES
        }
        if (new_names - old_names - old_plain) and (old_names - new_names - {thing[-1]}):
            return True
    return False


def _upgrade_elsewhere(older: str, newer: str) -> bool:
    """The newer upgrades or migrates a thing, but not one the older states."""
    return any(
        _UPGRADE_VERB.match(m.group(0)) for m in _UPGRADED.finditer(newer)
    ) and not upgraded_to(older, newer)


def new_value_of_shared_thing(older: str, newer: str) -> bool:
    """ "Ladle's backend is written in Django" / "I rewrote Ladle's backend in FastAPI", "My
    rent is $1,450 a month" / "the landlord put the rent up, I'm paying $1,600": the newer says
    it changed, both name the same specific thing, and the newer puts a value of the same
    kind (a number in the same unit, a day, a name) where the older's was."""
    if not _says_a_new_value(newer) or _BESIDE.search(newer):
        return False
    if _upgrade_elsewhere(older, newer):
        return False  # "We upgraded the staging database to PostgreSQL 16"
    if _ONCE.search(older) or _ONCE.search(newer):
        return False  # "Last week I went to a pride parade": what happened, not what holds
    old_scopes = {s for s in _scopes(older) if not _IS_DAY.match(s)}
    new_scopes = {s for s in _scopes(newer) if not _IS_DAY.match(s)}
    if (old_scopes and new_scopes and not old_scopes & new_scopes) or other_things(older, newer):
        return False  # "my work phone" / "my home phone"; a day may be the new value
    if _kin_holders(newer) - set(_words(older)):
        return False  # "I work for Google" / "My wife left Google and joined Meta"
    old_holders, new_holders = _holders(older), _holders(newer)
    if old_holders and new_holders and not old_holders & new_holders:
        return False  # "Jake's school starts at 8:15" / "Mia's school starts at 8:40 now"
    if other_qualifier(older, newer):
        return False
    shared = _shared_things(older, newer) - _addressed(older) - _addressed(newer)
    if not shared:
        return False
    if _renamed_by_a_move(older, newer):
        return False
    for match in _CHANGED_MY.finditer(newer):
        if {_plain(w.lower(), set()) for w in match.group(1).split()} & shared:
            return True  # "I changed my major this semester"
    old_amounts, new_amounts = _amounts(older), _amounts(newer)
    for unit in old_amounts.keys() & new_amounts.keys():
        old, new = old_amounts[unit], new_amounts[unit]
        if old - new and new - old:
            return True
    old_days = {w[:3] for w in _words(older) if _IS_DAY.match(w)}
    new_days = {w[:3] for w in _words(newer) if _IS_DAY.match(w)}
    if old_days - new_days and new_days - old_days:
        return True
    old_names = _capitalised(older) - shared - _TITLES - {d for d in old_days}
    new_names = _capitalised(newer) - shared - _TITLES
    old_names = {n for n in old_names if not _IS_DAY.match(n)}
    new_names = {n for n in new_names if not _IS_DAY.match(n)}
    return bool(old_names - set(_things(newer))) and bool(new_names - set(_things(older)))
