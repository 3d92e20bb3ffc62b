"""What a user says about themselves, read by words: the offline extraction's plain facts.

Each statement becomes one `Stated`: an attribute (name, occupation, employer, location,
hometown, diet, allergy, language, schedule, deadline, tool), its value as a short phrase,
and its polarity. The same fact in other words gives the same key and the same value ("I'm
vegetarian", "As a vegetarian, ...", "I don't eat meat" are all `diet: vegetarian`), so a
repeated statement reinforces one memory instead of adding a copy. Negations and contrasts
keep their side: "I'm not vegetarian" is `diet: not vegetarian`, "I use Linux, not macOS"
gives `tool: Linux` and `tool: does not use macOS`.

Which attributes the profile keeps, the job nouns, and the cues that name a value come from
the one attribute catalogue, `commands.llm.rules.attributes` (which also decides that a newer
statement updates an older one); this module adds the wordings only extraction needs.

Only statements whose subject is the user count ("I", "my", an implied "I" at the start of a
turn such as "work at Sony as a sound engineer"); "My sister is a doctor" is not the user's
occupation.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import takewhile
from pathlib import Path
from typing import Final

from mnemoledger.commands.llm.rules.attributes import ATTRIBUTES, ENDED, facts_of
from mnemoledger.commands.llm.rules.jobs import JOBS as _JOBS
from mnemoledger.commands.llm.rules.text import slug

_I = re.IGNORECASE


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Stated:
    """One fact the user states about themselves."""

    attribute: str
    value: str
    """The memory's content: the value as a short phrase ("Maya", "not vegetarian")."""
    item: str | None = None
    """Which one, for attributes with several values (a tool, a schedule's activity)."""
    positive: bool = True

    @property
    def key(self) -> str:
        """`user/<attribute>`, `user/<attribute>/<item>` for one of several values, and
        `user/<attribute>/not-<value>` for a single-valued attribute said not to hold."""
        if self.item is not None and self.attribute in _ACTIVITIES:
            return f"user/{self.attribute}/{_key_words(' '.join(map(stem, self.item.split())))}"
        if self.item is not None:
            return f"user/{self.attribute}/{_key_words(self.item)}"
        if not self.positive:
            return f"user/{self.attribute}/{_key_words(self.value)}"
        return f"user/{self.attribute}"


_ACTIVITIES: Final = ("schedule", "deadline")
"""Attributes whose item is an activity: its key words are stemmed ("running", "a run")."""


def stem(word: str) -> str:
    """'running', 'runs': run."""
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
        return word[:-1] if word[-1] == word[-2] else word
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _key_words(text: str) -> str:
    """An item's key words, so that "peanut" and "peanuts" are one item."""
    words = slug(text.replace("-", ""), max_words=4).split("-")
    return "-".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words) or "x"


# --- text clean-up ---------------------------------------------------------------------------


def _progressive(match: re.Match[str]) -> str:
    """'I am not liking': "I don't like" (a stative verb in the progressive)."""
    stem = match.group(2)
    verb = stem + ("e" if stem in {"lik", "lov", "hat"} else "")
    return f"I don't {verb}" if match.group(1) else f"I {verb}"


_CASUAL_SPELLINGS: Final = (
    (re.compile(r"\bi\b"), "I"),
    (re.compile(r"\b[Ii]m\b"), "I'm"),
    (re.compile(r"\bi'm\b"), "I'm"),
    (re.compile(r"\b[Ii]ve\b"), "I've"),
    (re.compile(r"\bi've\b"), "I've"),
    (re.compile(r"\bi'd\b"), "I'd"),
    (
        re.compile(r"\b(do|does|did|can|is|are|was|were|have|has|would|could|should)nt\b", _I),
        r"\1n't",
    ),
    (re.compile(r"\bdont\b", _I), "don't"),
    (re.compile(r"\bcant\b", _I), "can't"),
    (re.compile(r"\btho\b", _I), "though"),
    (re.compile(r"\bu\b"), "you"),
    (re.compile(r"\s*[\U0001f300-\U0001faff\u2600-\u27bf\ufe0f\u200d]+"), ""),
    (re.compile(r"\bwrk\b", _I), "work"),
    (re.compile(r"(?<=[a-z]) n (?=[a-z])"), " and "),
    (re.compile(r"(?<=\w) @ ?(?=[A-Za-z])"), " at "),
    (re.compile(r"\bI am (not )?(lik|lov|hat|prefer|enjoy)ing\b"), _progressive),
    (re.compile(r"[\u2018\u2019]"), "'"),
)


_LIST_BREAK: Final = re.compile(
    r"\s+[/|]\s+|(?:^|\n)\s*(?:[-*\u2022\u25aa\u00b7\u2013]|\d{1,2}[.)])\s+"
    r"|\s+[\U0001f300-\U0001faff\u2600-\u27bf\ufe0f\u200d]+\s+(?=\w)"
)
"""Where a list goes on to its next item: a line's bullet or number, " / ", " | "."""


def list_items(text: str) -> str:
    """A turn with each list item on a line of its own ("- Vegetarian", "job: x / city: y")."""
    return _LIST_BREAK.sub("\n", text)


def clean(sentence: str) -> str:
    """Casual spellings made regular ("im" -> "I'm", "dont" -> "don't")."""
    for pattern, replacement in _CASUAL_SPELLINGS:
        sentence = pattern.sub(replacement, sentence)
    return sentence


_CLAUSE_BREAK: Final = re.compile(
    r"\s*(?:[,;:](?=\s|$)\s*(?:(?:but|and|though|although|however|so)\b)?|\s+[-\u2013\u2014]+\s+|\s+but\s+|\s+though\b|\s+although\s+"
    r"|\s+however\b|\s+rather than\s+|\s+instead of\s+"
    r"|\s+and\s+(?=(?:(?:now|then|currently|these days|today),? )?(?:I\b|I'm\b|we\b|my\b)))\s*",
    _I,
)
_CONTRAST_BREAK: Final = re.compile(r"\s+(?:rather than|instead of)\s+", _I)


def clauses(sentence: str) -> list[str]:
    """The sentence's clauses; "rather than X" and "instead of X" become "not X"."""
    sentence = _CONTRAST_BREAK.sub(", not ", sentence)
    pieces = (c.strip().rstrip(".!?").strip() for c in _CLAUSE_BREAK.split(sentence) if c)
    return [c for c in pieces if c]


NEGATION: Final = re.compile(
    r"\b(?:no|not|don't|do not|doesn't|does not|never|without|stop|skip|less|avoid|nothing"
    r"|can't stand|cannot stand|hate|hates|hated|dislike|loathe|detest|despise|abhor|isn't"
    r"|aren't|won't)\b|n't\b",
    _I,
)


_RELATIVES: Final = (
    r"(?:sister|brother|wife|husband|partner|mum|mom|mother|dad|father|son|daughter|friend|boss"
    r"|colleague|coworker|kids?|children|cousin|aunt|uncle|grand\w+|girlfriend|boyfriend"
    r"|fianc\w*|roommate|flatmate|neighbou?r|manager|landlord|parents?|family|team|wife's"
    r"|husband's)"
)
_SOMEONE_ELSE: Final = re.compile(
    rf"^(?:(?:my|our|his|her|their) (?:\w+ )?{_RELATIVES}\b|(?:he|she|they|he's|she's"
    rf"|they're|his|her|their)\b)",
    _I,
)
"""A clause whose subject is someone else ("my wife works at ...", "she's in London")."""


def negated_before(clause: str, position: int) -> bool:
    """Whether a negation comes before `position` in the clause."""
    return NEGATION.search(clause[:position]) is not None


# --- shared vocabulary -----------------------------------------------------------------------

_NAME: Final = r"[A-Z][a-zA-Z'\u00c0-\u017f-]+"
_ORG: Final = (
    r"(?P<org>(?:St\.? )?[A-Z][\w&'.\u00c0-\u017f-]*"
    r"(?:(?: (?:of|de|du|and|&|\+))? [A-Z][\w&'.\u00c0-\u017f-]*)*)"
)
_PLACE: Final = (
    r"(?P<place>[A-Z][\w'.\u00c0-\u017f-]*(?:[ -](?:(?:de|da|do|dos|das|del|la|le|upon|on|am"
    r"|im|sur|en) )?(?!(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day)[A-Z][\w'.\u00c0-\u017f-]*)*)"
)
_ORG_NOUNS: Final = (
    r"council|hospital|university|college|school|bank|ministry|library|museum|agency|government"
    r"|department|police|army|navy|air force|nhs|post office|city|county|state|municipality"
    r"|newspaper|paper|charity|church|zoo|airport|airline|railway|factory|warehouse|mine"
    r"|supermarket|bakery|cafe|restaurant|hotel|pharmacy|clinic|practice|firm|lab|studio"
)
_THE_ORG: Final = (
    rf"the (?P<org_lower>(?:(?!(?:in|at|for|with|on)\b)[\w-]+ ){{0,2}}(?:{_ORG_NOUNS}))\b"
)
"""An employer named by what it is ("the city council"): only with "the"."""
_ADVERB: Final = (
    r"(?:(?:currently|now|still|also|just|really|actually|myself|mostly|mainly|usually"
    r"|always|recently|happily|full-time|part-time|remotely|already|basically|only|like"
    r"|kinda|\w+ly) )?"
)
_NOT_NAMES: Final = _word_set(
    "I I'm OK Okay Thanks Sorry Fine Good Great Back Here There Done Ready Sure Happy Not"
    " Just Also Still Really Currently Monday Tuesday Wednesday Thursday Friday Saturday"
    " Sunday January February March April May June July August September October November"
    " December The A An In On At From Your You My We Our It This That So Well Yes No Hey"
    " Hi Hello English French German Spanish Italian Portuguese Dutch Chinese Japanese"
    " And But Or Same Always Never Right Look Looky Over Out Up Down Come Oh Wow Cool Nice"
    " Me Us Everyone Everybody Someone Somebody Nobody Anyone Anybody Who What Glad Welcome"
)
_WEEKDAY: Final = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_MONTH: Final = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_CLOCK: Final = r"(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|noon|midday|midnight)"
_PART_OF_DAY: Final = r"(?:morning|afternoon|evening|night|lunch(?:time)?)s?"
_DAY: Final = (
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|mon|tue|tues|wed|weds|thu|thur|thurs|fri"
    r"|sat|sun)\.?"
)
_DAYS: Final = rf"{_DAY}(?:\s*(?:/|,|&|\+|and|-|to|through|till|until|\s)\s*{_DAY})*"
"""Days as a list may write them: "mon wed fri", "Mon/Wed", "tues-thurs"."""
_HOUR: Final = (
    r"(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|\d{1,2}(?::\d{2})?\s*-\s*\d{1,2}"
    r"(?::\d{2})?(?:\s*(?:am|pm))?|at \d{1,2}(?:[:.]\d{2})?|noon|midnight|midday)"
)
"""A time of day written as one: "6am", "9:15", "9-5", "at 10"."""


def _title(name: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in name.split())


_A_JOB_NOUN: Final = re.compile(rf"(?i:{_JOBS})")


def _is_name(word: str) -> bool:
    return (
        word not in _NOT_NAMES
        and not re.search(r"(?:ian|ese|ish)$", word)
        and word[:1].isupper()
        and word.lower() not in {"vegetarian", "vegan", "pescatarian"}
        and not _A_JOB_NOUN.fullmatch(word)
    )


# --- name ------------------------------------------------------------------------------------

_TITLES: Final = _word_set("Dr Dr. Mr Mr. Mrs Mrs. Ms Ms. Prof Prof. Professor Miss Sir Madam")
_TITLE: Final = r"(?:Dr|Mr|Mrs|Ms|Prof|Professor)\.?"
"""A title before a name, which the name leaves out ("I am Dr. Helena Varga")."""
_NAME_IS: Final = re.compile(
    r"(?:^(?i:(?:hi|hello|hey|yo)[\s,!.]+)?|\b(?i:my|the) )(?i:(?P<full>full |real |first |given )?"
    r"name(?:'s| is))\s+(?P<name>[^\W\d_][^\W\d_'-]*(?:['-][^\W\d_]+)*(?: [A-Z][^\W\d_'-]*"
    r"(?:['-][^\W\d_]+)*){0,2})"
)
"""'My name is Bilal', 'name's Bilal', 'my full name is Kofi Mensah', "Tran Van Minh"."""
_CALL_ME: Final = re.compile(
    rf"\b(?i:call me|I go by|people call me|everyone calls me|you can call me|address me as"
    rf"|refer to me as|I'm called|I am called|I am call|my friends call me)\s+"
    rf"(?P<name>(?:(?:Dr|Mr|Mrs|Ms|Miss|Prof|Professor)\.? )?{_NAME}(?: {_NAME})?)"
)
"""'Call me Sam', 'please address me as Ms. Tanaka' (the surname), 'I am called Wei'."""
_I_AM_NAME: Final = re.compile(
    rf"^(?:(?:hi|hello|hey|yo|oh|hallo|hola|ciao|salut|bonjour)(?: there| all| everyone)?[\s,!.]+)?"
    rf"(?:I'm|I am|ich bin|je suis|soy|sono|ik ben|eu sou|jag är|jeg er|me llamo|mi chiamo"
    rf"|je m'appelle|ich heiße|ich heisse)\s+(?:(?-i:{_TITLE}) )?"
    rf"(?P<name>{_NAME}(?: {_NAME}){{0,2}})(?=\b)"
    rf"(?=\s*(?:[,.!;]|$|here\b|btw\b|by the way|and\b|from\b"
    rf"|I'm\b|I\b|(?:[\w-]+ ){{0,2}}(?:{_JOBS})\b))"
    rf"|^(?:hi|hello|hey|yo|oh)(?: there| all| everyone)?[\s,!.]+(?:it's|its|this is)"
    rf"\s+(?P<name2>{_NAME}(?: {_NAME})?)(?=\s*(?:[,.!;]|$|here\b|again\b|btw\b))"
    rf"|^(?:it's|its|this is)\s+(?P<name3>{_NAME})(?=\s*(?:,\s*(?:in case|remember|again|btw"
    rf"|by the way)|here\b|again\b|btw\b|speaking\b|writing\b))",
    _I,
)
"""'I'm Maya', 'Hey, it's Jordan', 'It's Jordan, in case you forgot'; not 'It's Shia
Labeouf!' nor 'this is Max!' (someone shown, not the speaker)."""
_NAME_HERE: Final = re.compile(
    rf"^(?:(?:hi|hello|hey|yo)[\s,!.]+)?(?:it's |its )?(?P<name>{_NAME}) here\b(?!'s| to\b)",
    _I,
)


_MYSELF: Final = re.compile(
    rf"^(?:(?i:hi|hello|hey|dear all)[\s,!.]+)?(?i:myself|this side)"
    rf"\s+(?P<name>{_NAME}(?: {_NAME})?)"
)
"""'myself Rahul, working in Infosys': an introduction in Indian English."""
_NAME_FIELD: Final = re.compile(rf"^(?i:name)\s*:\s*(?P<name>{_NAME}(?: {_NAME})?)[.!]?\s*$")


def _name(sentence: str) -> Iterator[Stated]:
    full = _NAME_IS.search(sentence)
    first = (_NAME_IS,) if full is not None and full.group("full") else ()
    for pattern in (*first, _CALL_ME, _NAME_IS, _I_AM_NAME, _NAME_HERE, _NAME_FIELD, _MYSELF):
        match = pattern.search(sentence)
        if match is None:
            continue
        groups = match.groupdict()
        name = groups.get("name") or groups.get("name2") or groups.get("name3") or ""
        words = name.split()
        if pattern is _CALL_ME and words[0].rstrip(".") in _TITLES:
            words = words[1:] or words  # "call me Dr. Osei": the surname
        if pattern is not _NAME_IS:
            words = list(takewhile(_is_name, words))  # "I'm Priya btw"
        if not words:
            continue
        if pattern is _NAME_IS and words[0].lower() in {"not", "actually", "spelled"}:
            continue
        if pattern is _I_AM_NAME and words[0].casefold() in _NOT_LOWER_CASE_NAMES:
            continue  # "I am NOT ready for it"
        yield Stated("name", _title(" ".join(words)))
        return


# --- occupation and employer -----------------------------------------------------------------

_JOB_PHRASE: Final = (
    rf"(?P<job>(?:[\w-]+ ){{0,4}}?(?:\w+-)?(?:{_JOBS})(?: (?:{_JOBS}))?(?: of (?-i:[A-Z]\w+)"
    rf"(?: (?-i:[A-Z]\w+))*)?)s?\b"
)
_I_AM_A_JOB: Final = re.compile(
    rf"(?:\bI(?:'m| am|'ve been| have been)|^[Bb]een) ?{_ADVERB}"
    rf"(?:working as |employed as )?"
    rf"(?:an? |the )(?!fan\b){_JOB_PHRASE}"
    rf"|\bI(?:'m| am) (?P<bare>(?:[\w-]+ )?(?:{_JOBS}))(?= (?:at|in|for|with|since)\b|[,.;!]|$)",
    _I,
)
"""'I'm a nurse'; without the article only right before where or since ("I am nurse in Lyon")."""
_ANY_JOB_AT: Final = re.compile(
    r"\bI(?:'m| am) (?:an?|the) (?P<job>(?:[\w-]+ ){0,3}?[\w-]+) (?:at|for|with) "
    r"(?:the )?(?:(?:an?|this|that|the) (?:[\w-]+ ){0,5}?(?:(?:called|named)|(?:firm|company|place"
    r"|shop|startup|agency|bank|clinic|hospital|school|studio|restaurant|bar|cafe),) )?" + _ORG
)
"""A job named by where it is done ("I'm a line cook at Nopa"), whatever the job's noun."""
_NOT_JOBS: Final = _word_set(
    "fan member customer client user patient regular guest friend big huge lot bit part"
)
_APPOSITIVE_JOB: Final = re.compile(
    rf"\bI'm (?-i:{_NAME})(?:, (?:an? )| (?:an? )?){_JOB_PHRASE}", _I
)
_WORK_AS: Final = re.compile(
    r"(?:\bI|^)\s*(?:'m )?" + _ADVERB + r"(?:work|working|am working|employed)"
    r"(?: [\w'-]+){0,4}? as (?:an? |the )?(?P<job>[\w -]+?)(?=\s+(?:at|for|in|with|on)\b"
    r"|[,.;!?]|$)",
    _I,
)
_WORK_LIKE: Final = re.compile(
    r"(?:\bI|^)\s*(?:'m |am )?" + _ADVERB + r"(?:work|working|employed)(?: [\w'-]+){0,4}? like "
    rf"(?:an? )?(?P<job>(?:[\w-]+ ){{0,2}}?(?:{_JOBS}))\b",
    _I,
)
"""'I am working like accountant': "like" for "as", only before a job's noun."""
_RUN_A: Final = re.compile(
    r"\bI (?P<verb>manage|run|own|co-own|lead|head|direct|coordinate) (?P<what>(?:an? |the |our )?"
    r"[\w&' -]+?)(?: in (?:the )?" + _PLACE + r")?$",
    _I,
)
"""What the user runs is their job: "I manage a hotel in Cusco", "I run a small bakery"."""
_FARM: Final = re.compile(
    r"\bI (?P<verb>farm|breed|raise|fish for|grow) (?P<what>[a-z]+(?: [a-z]+)?)"
    r"(?= in\b| on\b|[,.;!]|$)",
    _I,
)
"""'I farm sheep in Wicklow': what the user raises or grows for a living."""
_FOR_A_LIVING: Final = re.compile(
    r"\bI (?:\w+ly )?(?!(?:live|move|moved|travel|came|come)\b)(?P<verb>[a-z]+) (?P<what>[\w' -]+?)"
    r" (?:for a living|professionally)\b",
    _I,
)
"""'I translate books from Polish into English for a living'."""
_RUN_VERBS: Final = {"run": "runs", "own": "owns", "co-own": "co-owns", "manage": "manages"}
_TEACH: Final = re.compile(
    r"\bI(?:'ve been|'m| have been| am)? "
    + _ADVERB
    + r"(?P<verb>teach|lecture|teaching|lecturing)(?P<prep> in| on)?"
    r" (?!(?:now|here|there|online|again|too|also)\b)(?P<subject>[a-z]+(?: [a-z]+){0,2}?)"
    r"(?: here)?(?: at\b| for \w+ (?:years|months)\b| in [A-Z]|[,.;!]|$)",
    _I,
)
_TEACHER_NOUNS: Final = {"teaches": "teacher", "lectures": "lecturer"}
_STUDY: Final = re.compile(
    r"\bI(?:'m| am) " + _ADVERB + r"(?:doing|studying for|taking|pursuing|in the middle of)"
    r" (?:an? |my )?(?P<degree>masters?|master's|ph\.?d|doctorate|mba|bachelor'?s|undergrad"
    r"|degree|msc|bsc|ma|ba|mphil|mres|llm|pgce|meng|beng)\b"
    r"(?: (?:degree )?in (?P<subject>[a-z]+(?: (?!at\b|for\b|with\b)[a-z]+)?))?"
    r"|(?:\bI(?:'m| am) |^)(?:doing|studying for|taking) (?:an? |my )?(?P<subject2>[a-z]+)"
    r" (?P<degree2>degree|course|diploma|apprenticeship)\b",
    _I,
)
"""A degree the user is doing is their occupation: "I'm doing a masters in economics"."""
_STUDYING: Final = re.compile(
    r"(?:\bI(?:'m| am) |\bI |^)(?:studying|reading|majoring in|study|major in)"
    r" (?P<subject>[a-z]+(?: [a-z]+)?) (?:at|in) [A-Z]"
)
"""'studying law at Trinity': the subject is the user's occupation."""
_I_STUDY: Final = re.compile(
    r"\bI(?: am| 'm|'m)? (?:study|studying|studies) (?!(?:hard|a|every|at|in|for|with|on|from"
    r"|when|because|late|early|all|most|best|better|alone|together|abroad|online|it|them"
    r"|this|that|too|more|less|there|here|now|daily)\b)"
    r"(?P<subject>[a-z]+(?: (?!at\b|in\b|for\b|part\b|full\b|and\b|with\b)[a-z]+)?)"
    r"(?= (?:at|in|part-time|full-time|as)\b|[,.;!]|$)"
)
"""'I study physiotherapy part-time', "I am study nursing in university": what the user is
studying is their occupation."""
_COORDINATE: Final = re.compile(
    r"\bI " + _ADVERB + r"(?P<verb>coordinate|manage|supervise|lead|train|mentor|organi[sz]e)"
    r" (?P<what>[a-z][\w-]*s(?: [a-z][\w-]*s)?) (?:at|for) ",
    _I,
)
"""Whom the user looks after at a place is their job: "I coordinate volunteers at a food bank"."""
_MY_JOB: Final = re.compile(
    r"\bmy (?:job|role|position|title|work|profession|occupation) is (?:an? )?(?P<job>[\w -]+)", _I
)
_FIELDS_OF_WORK: Final = (
    r"(?:IT |customer |tech )?support|marketing|sales|finance|IT|HR|tech|healthcare|retail"
    r"|education|hospitality|construction|logistics|insurance|banking|PR|public relations|design"
    r"|engineering|research|consulting|publishing|media|law|accounting|recruitment|recruiting"
    r"|customer service|operations|real estate|admin|administration|fintech|journalism|advertising"
    r"|software|cybersecurity|security|data|analytics|pharma|biotech|manufacturing|aviation"
    r"|film|tv|television|radio|fashion|events|tourism|social care|social work|nursing|policy"
    r"|government|the public sector|the nonprofit sector|nonprofits|charity|ngos?|academia"
)
"""Fields of work ("I work in marketing"): a general lexicon, never a town. The labelled sets
do not count a field as an occupation."""
_BY_TRADE: Final = re.compile(
    rf"^(?:an? )?(?P<job>(?:[\w-]+ ){{0,2}}?(?i:{_JOBS}))s? by (?:trade|profession|training)\b", _I
)
"""'accountant by trade'."""
_AS_A_JOB: Final = re.compile(
    rf"(?:^|\bI(?:'m| am) (?:\w+ )?|\bI (?!(?:started|began|used|was|were|worked|once)\b)\w+"
    rf"(?: (?!as\b)\w+){{0,3}} )as an? (?P<job>(?:[\w-]+ ){{0,2}}?(?:{_JOBS}))s?\b",
    _I,
)
"""'As a nurse, ...', "I'm happy as a graphic designer": the user in their job."""
_A_JOB_AS: Final = re.compile(
    r"\b(?:a|my|the) (?:job|position|role|post|work)"
    r"(?: (?:at|with|for) (?-i:[A-Z][\w&'-]*(?: [A-Z][\w&'-]*)*))? as (?:an? )?(?P<job>[\w -]+?)"
    r"(?= (?:at|for|in|by|with|since)\b|[,.;!?]|$)",
    _I,
)
"""'I have since three years a job as electrician by Siemens'."""
_KIND: Final = (
    r"(?i:bank|company|firm|startup|agency|hospital|store|chain|brand|group|studio|clinic)"
)
"""What an employer is, said before its name ("for bank Santander", "in IT company EPAM")."""
_WORK_AT: Final = re.compile(
    r"(?:\bI|\b[Ww]e|^)(?:'m|'ve been| am| have been)? ?"
    + _ADVERB
    + r"(?:work|works|working|employed|interning|intern|do [\w-]+(?: [\w-]+)?|teach|teaching"
    r"|doing [\w-]+(?: [\w-]+)?|studying|study|lecture|lecturing"
    r"|coordinate [\w-]+|manage [\w-]+|drive|driving|deliver|delivering|write|writing"
    r"|freelance|freelancing|consult|consulting|cook|cooking)\b"
    r"(?:,? [\w'-]+){0,7}?,? (?:(?:at|for|by) |in (?=(?:an? |the )?(?:[\w-]+ )?"
    + _KIND
    + r" [A-Z]))"
    r"(?:" + _THE_ORG + r"|(?:the |an? (?=[A-Z]{2,}\b))?(?:an? (?:[\w-]+ ){0,2}(?:called|named) )?"
    r"(?:(?:an? |the )?(?:[\w-]+ )?" + _KIND + r" (?=[A-Z]))?" + _ORG + r")",
)
_A_JOB_AT: Final = re.compile(
    r"\b(?i:a|my) (?i:job|position|role|post)(?: (?i:as) (?:an? )?[\w -]+?)? (?i:at|by|with|for) "
    r"(?:the )?" + _ORG
)
"""'I have since two years a job as cook by Hilton'."""
_JOB_OF: Final = re.compile(
    rf"\bI(?:'m| am) (?:the|an?) (?:[\w-]+ ){{0,2}}?(?i:{_JOBS}) (?:of|for|at) (?:the )?" + _ORG
)
_AM_A_JOB_AT: Final = re.compile(
    rf"\bI(?:'m| am) {_ADVERB}(?:(?:an?|the) (?:[\w-]+ ){{0,4}}?(?i:{_JOBS})s? "
    rf"(?:(?:in|of) [\w -]+? )?)?(?:at|with) "
    rf"(?:{_THE_ORG}|(?:the )?(?:an? (?:[\w-]+ ){{0,3}}(?:called|named) )?{_ORG})"
)
_I_RUN_CALLED: Final = re.compile(
    r"\bI (?:run|own|co-own|manage|started|founded|co-founded) (?:an?|the|my|our) [\w -]*?"
    r"(?:called|named) "
    + _ORG
    + r"|\b(?i:my|our) own [\w -]*?(?:called|named) "
    + _ORG.replace("org>", "org2>")
)
"""'I run a cafe in Hackney called Bean There': the place the user runs employs them."""
_JOINED: Final = re.compile(r"\bI(?:'ve| have)? (?:just |recently )?joined (?:the )?" + _ORG)
_MY_EMPLOYER: Final = re.compile(
    r"\b(?i:my (?:employer|company) is|I(?:'m| am) employed by) (?:the )?"
    + _ORG
    + r"|^(?:the )?"
    + _ORG.replace("org>", "org2>")
    + r" (?i:is my (?:employer|company))\b"
)
_BEEN_WITH: Final = re.compile(
    r"(?:^|\bI've |\bI have )(?i:been) (?:with|at) (?:the )?"
    + _ORG
    + r"|\b(?i:(?:the|my|our) (?:company|startup|business|firm|shop|studio|agency|practice)"
    r" is (?:called|named)) " + _ORG.replace("org>", "org2>")
)
_MY_JOB_AT: Final = re.compile(
    r"\b(?i:my) (?:(?i:current|day|full-time|part-time) )?(?i:job|position|role) (?:at|with) "
    + _ORG
)
"""'my job at Deloitte': the user's employer, whatever else the sentence wonders."""
_LOST_JOB: Final = re.compile(
    r"\b(?:lost|left|quit|was fired from|got fired|laid off|let go|used to|resigned)\b", _I
)
"""An employer the user no longer has ("I lost my job at Door Dash")."""
_NOW_AT: Final = re.compile(
    r"^(?i:currently|now|still|these days) (?:at|with) (?:the )?" + _ORG + r"$"
    r"|^(?:(?i:currently|now|these days),? )?I(?:'m| am) (?:(?i:now|currently|still) )?(?:at|with)"
    r" an? (?:[\w-]+ ){0,2}(?:called|named) " + _ORG.replace("org>", "org2>")
)
"""'Now at Klarna'; "Now I'm at a startup called Loop"."""
_AT_A_PLACE_CALLED: Final = re.compile(
    r"^(?:at|for) (?:an? |the )?(?:[\w-]+ ){0,2}(?:called|named) " + _ORG
)
_IN_TOWN: Final = re.compile(r" in " + _PLACE + r"\s*(?:[,.;!?]|$)")
_JOB_MODIFIERS: Final = frozenset(
    {"currently", "now", "still", "also", "just", "really", "actually", "working", "employed"}
)
_NOT_ORGS: Final = frozenset(
    {"I", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)


def _job(text: str) -> str:
    words = [w for w in text.split() if w.lower() not in _JOB_MODIFIERS]
    return " ".join(words).strip(" ,.")


_IN_A_DEPARTMENT: Final = re.compile(
    r"(?:\bI|^)(?:'m| am)? ?" + _ADVERB + r"(?i:work|working)(?: for| at| with) (?:the )?"
    r"[A-Z][\w&'.-]*(?: [A-Z][\w&'.-]*)* in (?P<field>[a-z]+(?: [a-z]+)?)$"
)
"""The part of the employer the user works in is what they do: "I work for HSBC in risk"."""
_NOT_DEPARTMENTS: Final = _word_set(
    "town city office person house home general particular fact charge shifts summer winter"
    " spring autumn fall london the a an my our some total full part both"
)


def _occupation(sentence: str, clause: str) -> Iterator[Stated]:
    if _SOMEONE_ELSE.search(clause):
        return
    for pattern in (
        _APPOSITIVE_JOB,
        _WORK_AS,
        _I_AM_A_JOB,
        _MY_JOB,
        _BY_TRADE,
        _AS_A_JOB,
        _A_JOB_AS,
    ):
        match = pattern.search(clause) or (
            pattern.search(sentence) if pattern is _APPOSITIVE_JOB else None
        )
        if match is not None and negated_before(match.string, match.end()):
            continue  # "I'm not a nurse"; but "I'm a sales rep not an engineer" is a job
        if match is not None:
            job = _job(match.group("job") or match.groupdict().get("bare") or "")
            if job and not re.search(r"\b(?:fan|person|lot|bit)\b", job, _I):
                yield Stated("occupation", job)
                return
    if NEGATION.search(clause):
        return
    department = _IN_A_DEPARTMENT.search(clause)
    if department is not None and not _NOT_DEPARTMENTS & set(department["field"].split()):
        yield Stated("occupation", department["field"])  # "I work for RBC in compliance"
        return
    living = _FOR_A_LIVING.search(clause)
    if living is not None:
        yield Stated("occupation", f"{living.group('verb').lower()} {living.group('what')}")
        return
    farm = _FARM.search(clause)
    if farm is not None:
        yield Stated("occupation", f"{farm.group('verb').split()[0].lower()}s {farm.group('what')}")
        return
    run = _RUN_A.search(clause)
    if run is not None and run.group("what").split()[0].lower() in {"a", "an", "the", "our"}:
        verb = run.group("verb").lower()
        yield Stated("occupation", f"{_RUN_VERBS.get(verb, verb + 's')} {run.group('what')}")
        return
    any_job = _ANY_JOB_AT.search(clause)
    if any_job is not None and not _NOT_JOBS & set(any_job.group("job").lower().split()):
        yield Stated("occupation", _job(any_job.group("job")))
        return
    teach = _TEACH.search(clause)
    if teach is not None:
        verb, subject = teach.group("verb").lower(), teach.group("subject")
        verb = {"teach": "teaches", "teaching": "teaches", "lecturing": "lectures"}.get(
            verb, f"{verb}s"
        )
        teacher = _TEACHER_NOUNS[verb]  # the job noun too: "I teach science" is a teacher
        yield Stated("occupation", f"{teacher}, {verb}{teach.group('prep') or ''} {subject}")
        return
    like = _WORK_LIKE.search(clause)
    if like is not None:
        yield Stated("occupation", _job(like.group("job")))
        return
    subject = _STUDYING.search(clause) or _I_STUDY.search(clause)
    if subject is not None:
        yield Stated("occupation", f"studies {subject.group('subject')}")
        return
    study = _STUDY.search(clause)
    if study is not None and study.group("subject2"):
        yield Stated("occupation", f"{study.group('subject2')} {study.group('degree2')} student")
        return
    if study is not None:
        subject = f" in {study.group('subject')}" if study.group("subject") else ""
        yield Stated("occupation", f"{study.group('degree')} student{subject}")
        return
    coordinate = _COORDINATE.search(clause)
    if coordinate is not None:
        verb = coordinate.group("verb").lower()
        yield Stated("occupation", f"{verb}s {coordinate.group('what')}")


def _employer(clause: str) -> Iterator[Stated]:
    if NEGATION.search(clause) or _LOST_JOB.search(clause) or _SOMEONE_ELSE.search(clause):
        return
    for pattern in (
        _MY_EMPLOYER,
        _I_RUN_CALLED,
        _WORK_AT,
        _A_JOB_AT,
        _JOB_OF,
        _AM_A_JOB_AT,
        _ANY_JOB_AT,
        _JOINED,
        _BEEN_WITH,
        _NOW_AT,
        _AT_A_PLACE_CALLED,
    ):
        match = pattern.search(clause)
        if match is None:
            continue
        groups = match.groupdict()
        org = (groups.get("org") or groups.get("org2") or groups.get("org_lower") or "").strip(" .")
        if not org:
            continue
        if org.split()[0] in _NOT_ORGS:
            continue
        yield Stated("employer", org)
        town = _IN_TOWN.match(clause, match.end())
        if town is not None and town.group("place").split()[0] not in _NOT_NAMES:
            yield Stated("location", town.group("place"))  # "I work at Arup in Lagos"
        return


# --- where -----------------------------------------------------------------------------------

_LIVE_IN: Final = re.compile(
    r"(?:\bI|\b[Ww]e|^)(?:'m| am|'re| are|'ve| have)? ?"
    + _ADVERB
    + r"(?:[Ll]ive|[Ll]iving|[Rr]eside|[Rr]esiding|settled)(?: \w+)? in (?:the )?"
    r"(?:rural |central |northern |southern |eastern |western |downtown |suburban |upstate"
    r" |greater |outer |inner |north |south |east |west )?" + _PLACE
)
_BASED_IN: Final = re.compile(
    r"(?:(?:\bI|\b[Ww]e)(?:'m| am| are|'re)? ?"
    + _ADVERB
    + r"|^)(?:[Bb]ased|[Ll]iving) (?:in |out of |(?=[A-Z]))"
    + _PLACE
    + r"|(?:\bI(?:'m| am)? |^)(?i:write|writing|message|messaging|text|texting|type|typing)"
    r" (?:(?:to )?you |this )?from " + _PLACE.replace("place>", "place2>")
)
"""'Based in X'; 'I write from Hanoi' (where the user is as they write)."""
_MOVED_TO: Final = re.compile(
    r"(?:\b(?:I|[Ww]e)(?:'ve| have)? |^)(?:just |recently |finally )?(?:[Mm]oved|[Rr]elocated)"
    r" (?:back |here |over )?(?:(?:from|out of) (?:the )?[A-Z][\w'.\u00c0-\u017f-]*"
    r"(?: [A-Z][\w'.-]*)* (?:back |over )?)?to " + _PLACE
)
"""'We moved to Leeds', "we moved from Dublin to Galway" (where they are now)."""
_BORN_BASED: Final = re.compile(
    r"^(?:(?:I'm|I am|I was) )?(?P<home>"
    + _PLACE.removeprefix("(?P<place>")
    + r" (?i:born(?: and (?:bred|raised))?)(?: (?P<based>[A-Z][\w'.\u00c0-\u017f-]*"
    r"(?: [A-Z][\w'.-]*)*) based)?"
    r"|^(?:(?:I'm|I am|but|now|and) )*(?P<town>[A-Z][\w'.\u00c0-\u017f-]*(?: [A-Z][\w'.-]*)*)"
    r" based(?: (?i:now|these days|nowadays|currently|at the moment))?$"
)
"""A note of where the user comes from and is: "Lagos born, London based"."""
_NOW_IN: Final = re.compile(
    r"\b(?i:now|currently|these days),? I(?:'m| am) (?:living |based )?in "
    + _PLACE
    + r"|\bI(?:'m| am) (?i:now|currently) (?:living |based )?in "
    + _PLACE.replace("place>", "place2>")
    + r"|^I(?:'m| am) (?:an? |the )[^,]*?\b(?i:living|based) in "
    + _PLACE.replace("place>", "place3>")
)
_WORK_IN_TOWN: Final = re.compile(
    r"^I(?:'m| am| work)\b[^,]*? (?:at|for) an? [^,]*? in " + _PLACE + r"$"
    r"|^I (?:teach|lecture|study|volunteer|intern|coordinate|nurse|cook|serve)\b[^,]*? (?:at|for)"
    r" (?:an?|the) [^,]*? in " + _PLACE.replace("place>", "place4>") + r"$"
    r"|^I "
    + _ADVERB
    + r"(?:work|working) (?:from home|remotely|freelance) (?:in|from) "
    + _PLACE.replace("place>", "place5>")
    + r"|^(?:fully |mostly |working )?remote(?:ly)? from "
    + _PLACE.replace("place>", "place6>")
    + r"|^I (?i:manage|run|own|co-own|lead|head|direct|coordinate) (?:an?|the|our) [^,]*? in "
    + _PLACE.replace("place>", "place2>")
    + r"$"
    + rf"|^I(?:'m| am) (?:an?|the) (?:[\w-]+ ){{0,3}}(?i:{_JOBS}) in "
    + _PLACE.replace("place>", "place3>")
    + r"$"
)
"""Where a job is done is where the user is: "I'm a chef at a tapas bar in Barcelona"."""
_WE_ARE_IN: Final = re.compile(
    r"^(?:(?i:for now|now|currently|at the moment|these days|right now|still),? )?"
    r"(?:I'm|I am|[Ww]e're|[Ww]e are) in " + _PLACE + r"(?:, [A-Z][\w ]+)?"
    r"(?: (?i:for now|now|at the moment|these days|currently|right now|this year|btw|though"
    r"|lol|atm|rn|by the way))*$"
)
_HOME_IS: Final = re.compile(
    r"\b(?i:home (?:for me )?is) (?:now )?(?:in )?"
    + _PLACE
    + r"|^"
    + _PLACE.replace("place>", "place2>")
    + r" (?i:is (?:where I live|home|my home))\b"
)
_FROM: Final = re.compile(
    r"(?:\b(?:I'm|I am) (?:originally |coming |"
    + _NAME
    + r" )?|\bI (?:originally )?come )from "
    + _PLACE
    + r"|(?:\bI |^)(?i:grew up|was born(?: and raised)?|born(?: and raised)?|raised) in "
    + _PLACE.replace("place", "place2")
)

_PLACE_GROUPS: Final = ("place", "place2", "place3", "place4", "place5", "place6")


_ANSWER_NO: Final = re.compile(r"^(?i:no|nope|nah)[,!.]? (?=I'm |I am |we're |we are )")
"""'No I'm in Toronto, not Vancouver': the answer word denies what the assistant said."""


def _where(clause: str) -> Iterator[Stated]:
    clause = _ANSWER_NO.sub("", clause)
    if NEGATION.search(clause):
        return
    noted = _BORN_BASED.match(clause)
    if noted is not None:
        if noted.group("home") and noted.group("home").split()[0] not in _NOT_NAMES:
            yield Stated("hometown", noted.group("home"))
        town = noted.group("based") or noted.group("town")
        if town and town.split()[0] not in _NOT_NAMES:
            yield Stated("location", town)
        return
    for pattern in (_LIVE_IN, _BASED_IN, _MOVED_TO, _NOW_IN, _HOME_IS, _WE_ARE_IN, _WORK_IN_TOWN):
        match = pattern.search(clause)
        groups = match.groupdict() if match else {}
        place = next((groups[g] for g in _PLACE_GROUPS if groups.get(g)), None)
        place = place.removesuffix(".") if place else place
        if place and _is_tool_name(place) and not known_place(place):
            return  # "I live in Figma"
        if place and place.split()[0] not in _NOT_NAMES:
            yield Stated("location", place)
            break
    else:
        match = _FROM.search(clause)
        if match is not None:
            place = match.group("place") or match.group("place2")
            if (
                "originally" in clause.lower()
                or match.group("place2")
                or "now" not in clause.lower()
            ):
                yield Stated("hometown", place)
        return
    match = _FROM.search(clause)
    if match is not None and match.group("place2"):  # "I grew up in Accra and moved to Toronto"
        yield Stated("hometown", match.group("place2"))


# --- diet and allergies --------------------------------------------------------------------

FOOD_GROUPS: Final = (
    r"dairy|gluten|wheat|meat|red meat|pork|beef|lamb|chicken|poultry|fish|seafood|shellfish"
    r"|eggs?|lactose|soy|nuts|peanuts|sugar|carbs|fried food|processed food"
)
"""Foods a diet leaves out: "I avoid dairy" states a diet, "I avoid crowds" does not."""
_DIETS: Final = (
    r"vegetarian|vegan|pescatarian|pescetarian|gluten[- ]free|keto|paleo|halal|kosher"
    r"|flexitarian|plant[- ]based|dairy[- ]free|lactose[- ]free"
)
_I_AM_DIET: Final = re.compile(
    rf"\b(?:I(?:'m| am| eat| follow| keep| went| have been|'ve been)|as) (?P<not>not )?"
    rf"(?:(?:a|an|now|also|still|fully|strictly|totally) )*(?P<diet>{_DIETS})\b",
    _I,
)
_COELIAC: Final = re.compile(r"\bI(?:'m| am| have) (?:a |also )?(?:coeliac|celiac)\b", _I)
_NO_FOOD: Final = re.compile(
    r"(?:^|\bso )(?:and |also |but )?(?:no|zero) (?P<food>" + FOOD_GROUPS + r")(?: for me)?"
    r"(?: in (?:\w+ ){0,2}\w+)?(?: (?:pls|please|thanks|thx)\b.*)?(?: when .*)?$",
    _I,
)
"""A clause that is only "no <food>" ("no pork pls when you suggest food") leaves it out."""
_SO_NO_FOOD: Final = re.compile(
    r"\bso (?:no|zero|not much) (?P<food>" + FOOD_GROUPS + r"|milk|cheese|butter|cream|yogh?urt"
    r"|ice cream)\b(?!\s+(?:pls|please|thanks))?",
    _I,
)
"""What an intolerance rules out, said after it: "lactose intolerant, so no milk"."""
_I_EAT: Final = re.compile(r"\bI (?:do )?eat\b", _I)
_BUT_NOT_FOOD: Final = re.compile(
    r"^(?:but |except )?not (?:any )?(?P<food>" + FOOD_GROUPS + r")$", _I
)
_NOT_DIET: Final = re.compile(rf"\bnot (?:an? )?(?P<diet>{_DIETS})\b", _I)
_DONT_EAT: Final = re.compile(
    r"(?:\bI |^(?=(?:also|and|plus|just) ))(?:(?:just|also|really|generally|usually|mostly"
    r"|basically|personally|still|tend to|and|plus) )?(?:(?:don't|do not|never|no longer|can't"
    r"|cannot|won't|(?:am |do )?not) eat"
    r"|(?:don't|do not|never|no longer|can't|cannot) do(?= (?:any )?(?:" + FOOD_GROUPS + r")\b)"
    r"|(?:do |also |strictly )?avoid(?: eating)?(?= (?:any )?(?:" + FOOD_GROUPS + r")\b)) (?:any )?"
    r"(?P<food>(?:red |white |processed |raw |fried )?[a-z]+(?:(?:,| or| and|, or|, and) [a-z]+)*)",
    _I,
)
_ALLERGIC: Final = re.compile(
    r"(?:\b(?:I'm|I am) |\band |^)(?:(?:very|severely|mildly|also|a bit) )?allergic to"
    r" (?P<what>[\w -]+?)(?=[,.;!?]|$| and\b| so\b| which\b)"
    r"|\b(?:I have|I've got|I've|my) (?:an? )?(?:severe |bad |mild )?(?P<what2>[\w-]+) allergy\b"
    r"|(?:\b(?:I'm|I am) |^)(?:(?:also|very|a bit) )?(?P<what3>\w+)[- ]intolerant\b"
    r"|^(?:and |also |plus )?(?:an? )?(?:severe |bad |mild )?(?P<what5>[\w-]+) allergy\b"
    r"|\b(?:can't|cannot|can not) (?:have|eat|touch) (?:any )?(?P<what4>\w+)\b(?=.*\ballergic\b)",
    _I,
)
_NOT_FOODS: Final = _word_set(
    "much a the out after before late breakfast lunch dinner anymore enough well there here"
)
_DIET_ALIASES: Final = {"pescetarian": "pescatarian", "plant based": "plant-based"}


def _diet_name(text: str) -> str:
    name = text.lower().replace("-", " ")
    name = _DIET_ALIASES.get(name, name)
    return name.replace(" free", "-free").replace("plant based", "plant-based")


_NOT_FOOD_WORDS: Final = r"(?:or|and|nor|for|in|on|please|pls|obviously|either|thanks|at|when)\b"
_SO_NO_FOODS: Final = re.compile(
    rf"\bso (?:no|zero|never any) (?P<foods>[a-z]+(?: (?!{_NOT_FOOD_WORDS})[a-z]+)?"
    rf"(?:(?:,|,? or|,? and|,? nor) [a-z]+(?: (?!{_NOT_FOOD_WORDS})[a-z]+)?)*)",
    _I,
)
"""What a diet rules out, said after it: "I keep kosher, so no pork or shellfish"."""
_MORE_FOODS: Final = _word_set(
    "alcohol gelatine gelatin onion onions garlic milk cheese butter cream yoghurt yogurt honey"
    " caffeine mushrooms nightshades tomatoes bread pasta rice cheeseburgers bacon ham veal"
    " game offal prawns shrimp mussels oysters crab lobster tuna salmon"
)
_MEATS: Final = _word_set(
    "meat chicken beef pork lamb poultry fish seafood shellfish bacon ham veal game prawns"
)
_FOOD: Final = re.compile(rf"(?:red |white |raw )?(?:{FOOD_GROUPS})", _I)
_EXCEPT_FOOD: Final = re.compile(
    rf"^(?:but |though |although )?(?P<food>(?:red |white |raw )?(?:{FOOD_GROUPS}))"
    r" (?:is|are) (?:fine|ok|okay|alright|good)(?: for me| though| tho)?$"
    rf"|^but I (?:do |still )?eat (?P<food2>(?:red |white |raw )?(?:{FOOD_GROUPS}))$",
    _I,
)
"""After a food left out, one the user does eat: "I don't eat meat but fish is fine"."""


def _ruled_out(sentence: str, diet_said: set[str]) -> Iterator[Stated]:
    """Each food that "so no pork or gelatine" leaves out after a diet, but the one the diet
    is named for ("vegetarian, so no meat")."""
    for match in _SO_NO_FOODS.finditer(sentence):
        for food in re.split(r",\s*(?:or |and |nor )?|\s+(?:or|and|nor)\s+", match["foods"]):
            food = re.sub(r" (?:obviously|please|pls|for me|either|thanks)$", "", food.lower())
            if not (_FOOD.fullmatch(food) or food in _MORE_FOODS):
                break  # "so no pub suggestions": not a food
            if food.split()[-1] in _MEATS and diet_said & {"vegetarian", "vegan"}:
                continue  # "I'm vegetarian, so no chicken": the diet says it
            yield Stated("diet", f"no {food}", item=f"no {food}", positive=False)


_NO_ALCOHOL: Final = re.compile(
    r"\bI (?:just |really |also |personally )?(?:don't|do not|never|no longer|can't|won't|stopped"
    r"|not|am not)"
    r" (?:drink|drinking|touch)(?=(?: any)? (?:alcohol|booze)\b|(?: at all| anymore| any more"
    r"| these days)*\s*(?:[,.;!]|$| so\b| and\b| but\b))"
    r"|\bI (?:haven't|have not|havent) (?:touched|had) (?:any )?(?:alcohol|booze|a drink)\b"
    r"|\bI'm (?:teetotal|tee-total|a teetotaller|a teetotaler)\b"
    r"|(?:^|[,:;(]\s*|\d[.)]\s*|[-*\u2022]\s*)(?:no|zero) (?:alcohol|booze)\b",
    _I,
)
"""Not drinking alcohol is a diet: "I don't drink", "haven't touched alcohol in years", "- no
alcohol" in a list of what the user eats."""


def _diet(sentence: str) -> Iterator[Stated]:
    found: dict[str, bool] = {}
    dry = _NO_ALCOHOL.search(sentence)
    same_clause = re.split(r"[,;]|\b(?:but|and|so)\b", sentence[: dry.start()])[-1] if dry else ""
    if dry is not None and not _SOMEONE_ELSE.search(same_clause):
        yield Stated("diet", "no alcohol", item="no alcohol", positive=False)
    excepted = [m["food"] or m["food2"] for c in clauses(sentence) if (m := _EXCEPT_FOOD.match(c))]
    coeliac = _COELIAC.search(sentence)
    if coeliac is not None and not NEGATION.search(sentence[: coeliac.start()]):
        found["gluten-free"] = True  # "I'm coeliac": no gluten
        yield Stated("allergy", "coeliac (gluten)", item="coeliac")
    for clause in clauses(sentence):
        for match in _I_AM_DIET.finditer(clause):
            positive = match.group("not") is None and not NEGATION.search(match.group(0))
            found.setdefault(_diet_name(match.group("diet")), positive)
        for match in _NOT_DIET.finditer(clause):
            found.setdefault(_diet_name(match.group("diet")), False)
        for food in (
            f.strip()
            for match in _DONT_EAT.finditer(clause)
            for f in re.split(r",\s*(?:or |and )?|\s+or\s+|\s+and\s+", match.group("food").lower())
        ):
            if food in {"meat", "any meat", "meat or fish", "meat and fish"} and not excepted:
                found.setdefault("vegetarian", True)
            elif food in {"animal", "animals"}:
                found.setdefault("vegan", True)
            elif food.split()[-1] not in _NOT_FOODS:
                yield Stated("diet", f"no {food}", item=f"no {food}", positive=False)
    if _I_EAT.search(sentence):
        for clause in clauses(sentence):
            but_not = _BUT_NOT_FOOD.match(clause)
            if but_not is not None:  # "I eat meat but not lamb"
                food = but_not.group("food").lower()
                yield Stated("diet", f"no {food}", item=f"no {food}", positive=False)
    allergen = _ALLERGIC.search(sentence)  # "I'm lactose intolerant, so no milk" says both
    said = {w for w in (allergen.group(0).lower().split() if allergen else [])}
    for clause in [] if found else clauses(sentence):  # "I'm vegetarian, so no chicken"
        no_food = _NO_FOOD.search(clause)
        food = no_food.group("food").lower() if no_food is not None else "meat"
        if food != "meat" and food not in said:  # "fish but no meat" is a diet's name
            yield Stated("diet", f"no {food}", item=f"no {food}", positive=False)
    if allergen is not None and not found:
        for match in _SO_NO_FOOD.finditer(sentence, allergen.end()):
            food = match.group("food").lower()  # "I'm lactose intolerant, so no milk"
            if food not in said:
                yield Stated("diet", f"no {food}", item=f"no {food}", positive=False)
    alone = re.match(
        rf"^(?:(?:again|yes|yeah|yep|yup|right|correct|exactly|ok|okay)[,!]? )?"
        rf"(?:(?:I guess|I suppose|I'd say|probably|basically|so),? )?(?:strictly )?"
        rf"(?P<diet>{_DIETS})(?: here| then)?(?: (?:is|would be|sounds) (?:right|fair|correct"
        rf"|accurate|about right|it|more like it|closer|better))?\b(?![ -]\w)",
        sentence,
        _I,
    )
    if not found and alone is not None:
        found[_diet_name(alone.group("diet"))] = True
    if _DONT_EAT.search(sentence):
        for food in excepted:  # "I don't eat red meat but chicken is fine"
            yield Stated("diet", f"eats {food.lower()}", item=food.lower())
    if found:
        yield from _ruled_out(sentence, set(found))
    for diet, positive in found.items():
        yield Stated("diet", diet) if positive else Stated("diet", f"not {diet}", positive=False)


_AND_ALSO: Final = re.compile(
    r"^\s*(?:,\s*(?:and |or )?|\s+(?:and|or)\s+)(?P<what>[a-z][\w-]*(?: [a-z][\w-]*)?)"
    r"(?=\s*(?:[,.;!?]|$|\s+(?:and|or)\s+))",
)
"""The next of a list of allergens: "allergic to penicillin and shellfish"."""


def _allergy(clause: str) -> Iterator[Stated]:
    for match in _ALLERGIC.finditer(clause):
        if NEGATION.search(clause[: match.start()]):
            return
        yield from _allergen(match)
        if match.group("what") is None:
            continue
        rest = clause[match.end() :]
        more = _AND_ALSO.match(rest)
        while more is not None and more.group("what").lower() not in _NOT_ALLERGENS:
            yield Stated("allergy", more.group("what"), item=more.group("what"))
            rest = rest[more.end() :]
            more = _AND_ALSO.match(rest)


_NOT_ALLERGENS: Final = _word_set("i so it that they we my which also too")


def _allergen(match: re.Match[str]) -> Iterator[Stated]:
    groups = match.groupdict()
    what = next((g for g in (groups.get(f"what{n}") for n in ("", "2", "3", "4", "5")) if g), "")
    what = what.strip()
    what = re.sub(r"^(?:the|all|any) ", "", what, flags=_I)
    what = re.sub(r" (?:as well|too|also|though)$", "", what, flags=_I)
    if what:
        yield Stated("allergy", what, item=what)


# --- languages -------------------------------------------------------------------------------

_SPEAK: Final = re.compile(
    r"(?:\bI |^)(?i:speak) (?:\w+ )?(?i:languages?)\s*[-:,]\s*"
    r"(?P<langs6>[A-Z][a-z]+(?:(?:,|,? and) (?:a little |some |basic )?[A-Z][a-z]+)*)|"
    r"(?:\bI |^)(?P<not>(?i:don't |do not |can't ))?(?:also )?(?:am |can |could )?"
    r"(?i:speak|speaking)"
    r" (?:fluent )?(?P<langs>[A-Za-z][a-z]+(?:(?:,? and|,| &| \+) (?:some |a little |fluent"
    r" |a bit of |a little bit of |basic |conversational |broken |decent |good )?[A-Za-z][a-z]+)*)"
    r"|(?:\b(?:I'm|I am) |^)(?i:fluent) in (?P<langs2>[A-Z][a-z]+(?:(?:,| and) [A-Z][a-z]+)*)"
    r"|\b(?i:my (?:native|first|mother) (?:language|tongue) is) (?P<langs3>[A-Z][a-z]+)"
    r"|\b(?i:(?:I'm|I am) an?) (?i:native|fluent) (?P<langs4>[A-Z][a-z]+) (?i:speaker)\b"
    r"|(?:^|\b(?i:and|but|so) )(?P<langs5>[A-Z][a-z]+) (?i:is my (?:native|first|second|third"
    r"|fourth|mother|home|main) (?:language|tongue))\b",
)


_LANGUAGE_GROUPS: Final = ("langs", "langs2", "langs3", "langs4", "langs5", "langs6")


_LEARNING_A_LANGUAGE: Final = re.compile(
    r"\bI(?:'m| am)? (?:also |now |currently )?(?:improving|brushing up(?: on)?|polishing)"
    r"\s+(?:my\s+)?(?P<lang>[A-Za-z]+)\b"
    r"|\bI(?:'m|'d| am| also| would| really)* ?(?:want|need|trying|try|hope|like|wanna) to"
    r" (?:improve|practi[sc]e|get better at|brush up(?: on)?|polish|learn better)"
    r"(?: (?:better|more))* (?:my )?(?P<lang2>[A-Za-z]+)\b",
    _I,
)
"""'I want to improve my French', "I want to learn better english": a language the user
already speaks some of (one they are only learning is not labelled as spoken)."""


_NOT_A_LANGUAGE_AFTER: Final = (
    r"(?! (?:food|cuisine|cooking|dishes|restaurants?|music|films?|movies|tv|dramas?|shows?"
    r"|homework|translations?|version|taxes|wine|beer|breakfast|people|friends?|colleagues?"
    r"|clients?|customers?|team|market|office|side|style|history|literature|law)\b)"
)
_LANGUAGE_LEARNT: Final = re.compile(
    r"(?:\b(?:I'm|I am|im|I've been|ive been|I)\s+(?:also |now |currently |still |slowly |finally"
    r" |trying |started |starting )*|(?:^|[,;:!?]\s*|\b(?:and|but|so|also|now) ))"
    r"(?:learning|studying|learn|study|doing|taking|picking up|started learning)"
    r"\s+(?:some |a bit of |a little |basic )?(?P<lang>[A-Za-z]+)\b"
    + _NOT_A_LANGUAGE_AFTER
    + r"|(?:\bI (?:have|take|do|go to|started|attend)|\bmy|^|[,;:!?-]\s*|\b(?:and|also|plus) )"
    r" ?(?P<lang2>[A-Za-z]+) (?:lessons?|class(?:es)?|tutor(?:ing)?|course|evening class)\b",
    _I,
)
"""'I'm learning Welsh', "learning swedish, its hard", "Portuguese lessons on Saturdays": a
language the user is learning."""
_LANGUAGE_SPOKEN: Final = re.compile(
    r"\bmy (?:own )?(?!english\b)(?P<lang>[A-Za-z]+) is (?!my\b)"
    r"|\b(?:I|we) (?:only |really |mostly |also |all |usually )*(?:read|write|understand"
    r"|grew up speaking|speak)(?: in)?(?: (?:some|a bit of|a little|basic|fluent|decent))?"
    r" (?P<lang2>[A-Za-z]+(?:(?:,| and| &) [A-Za-z]+)*)\b"
    + _NOT_A_LANGUAGE_AFTER
    + r"|(?:^|[,;:]\s*|\bI'?m (?:an? )?|\bI am (?:an? )?)(?:native |fluent )?(?P<lang3>[A-Za-z]+)"
    r" speaker\b"
    r"|\b(?P<lang4>[A-Za-z]+)(?:'s| is) my (?:(?:native|first|second|mother|home|main) )?"
    r"(?:language|tongue)\b"
    r"|\bnative(?: language| tongue)?(?: is|:|-) (?P<lang5>[A-Za-z]+)\b"
    r"|\b(?:speak|languages?)\s*[-:]\s*(?P<langs>[A-Za-z]+(?:(?:,| and| n| &)\s*"
    r"(?:(?:lil|a little|some) (?:bit of )?)?[A-Za-z]+)*)",
    _I,
)
"""Other ways of saying a language is one's own: "my German is only okay", "we speak Swahili",
"irish speaker too", "Tamil's my first language", "speak - spanish, english". Not "my English
is not so good", said in English: a wish for plain words, not news of a language."""


def _more_languages(sentence: str) -> Iterator[Stated]:
    """The languages `_LANGUAGE_LEARNT` and `_LANGUAGE_SPOKEN` find, in the lexicon only."""
    if _SOMEONE_ELSE.search(sentence) and not re.search(r"\b(?:I|I'm|we|my)\b", sentence, _I):
        return
    for match in _LANGUAGE_LEARNT.finditer(sentence):
        lang = match["lang"] or match["lang2"]
        if lang.lower() in _LANGUAGE_NAMES and not negated_before(sentence, match.start()):
            lang = lang[:1].upper() + lang[1:]
            yield Stated("language", f"learning {lang}", item=lang)
    for match in _LANGUAGE_SPOKEN.finditer(sentence):
        said = next((g for g in match.group("lang", "lang3", "lang4", "lang5") if g), "")
        found = re.split(r",\s*|\s+(?:and|n|&)\s+", match["langs"] or match["lang2"] or said)
        for lang in found:
            lang = re.sub(r"^(?:lil|a little|some)(?: bit of)? ", "", lang.strip(), flags=_I)
            if lang.lower() in _LANGUAGE_NAMES and not negated_before(sentence, match.start()):
                lang = lang[:1].upper() + lang[1:]
                yield Stated("language", lang, item=lang)


def _languages(sentence: str) -> Iterator[Stated]:
    yield from _more_languages(sentence)
    for match in _LEARNING_A_LANGUAGE.finditer(sentence):
        lang = match["lang"] or match["lang2"]
        if lang.lower() in _LANGUAGE_NAMES and not negated_before(sentence, match.start()):
            lang = lang[:1].upper() + lang[1:]
            yield Stated("language", lang, item=lang)
    for match in _SPEAK.finditer(sentence):
        langs = next((g for g in match.group(*_LANGUAGE_GROUPS) if g), "")
        positive = match.group("not") is None
        for lang in re.split(r",\s*(?:and\s+)?|\s+and\s+|\s+[&+]\s+", langs):
            lang = re.sub(
                r"^(?:some|a little|fluent|a bit of|a little bit of|basic|conversational|broken"
                r"|decent|good|native|also) ",
                "",
                lang.strip(),
                flags=_I,
            )
            if lang and (lang[:1].isupper() or lang.lower() in _LANGUAGE_NAMES):
                lang = lang[:1].upper() + lang[1:]
                yield Stated(
                    "language",
                    lang if positive else f"does not speak {lang}",
                    item=lang,
                    positive=positive,
                )


# --- schedules -------------------------------------------------------------------------------

_ORDINAL: Final = r"(?:other|single|second|third|fourth|first|last|2nd|3rd|4th|1st)"
_RECURRING: Final = (
    rf"(?:(?:(?:\w+|\d+) times|once|twice) (?:a|per|every) (?:day|week|month)"
    rf"|(?:one|two|three|four|\d+) (?:weeks?|days?|weekends?|nights?) (?:a|per|every|each)"
    rf" (?:week|month|year)"
    rf"|(?:from )?{_CLOCK} (?:to|-|until|till) {_CLOCK}"
    rf"|(?:on )?the (?:first|second|third|fourth|last) {_WEEKDAY}(?: of (?:every|each|the) month)?"
    rf"|monthly|every month|each month|every year|yearly|annually"
    rf"|on (?:the )?\d{{1,2}}(?:st|nd|rd|th)?(?: of)? {_MONTH}\b|on {_MONTH} \d{{1,2}}"
    rf"|(?:next|this) {_WEEKDAY}|tomorrow(?: at {_CLOCK})?"
    rf"|(?:every|each) (?:{_ORDINAL} )?(?:day|week|weekday|weekend|{_WEEKDAY}|{_PART_OF_DAY}|"
    rf"(?:mon|tues|wednes|thurs|fri|satur|sun)day {_PART_OF_DAY})"
    rf"|(?:on|each) (?:{_WEEKDAY}|weekends|weekdays)(?: {_PART_OF_DAY})?(?: and {_WEEKDAY})?"
    rf"|daily|weekly|nightly|on weekends|at weekends|at {_CLOCK}|{_WEEKDAY} at {_CLOCK}"
    rf"|\d{{1,2}}[:.]\d{{2}}(?: (?:every|each) \w+| daily)"
    rf"|(?:in the|most|some) {_PART_OF_DAY}|{_WEEKDAY} {_PART_OF_DAY}|{_PART_OF_DAY} at"
    rf"|(?:most|some|alternate) (?:weekends|weekdays|weeks|days|{_WEEKDAY})"
    rf"|(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|weekends\b|weekdays\b"
    rf"|{_WEEKDAY} (?:to|through|till|until|-) {_WEEKDAY}"
    rf"|every (?:two|three|four|\d+|few|couple of) (?:days|weeks|months))"
)
_WHEN: Final = (
    rf"(?P<when>{_RECURRING}(?:[\w :.,-]*?))"
    r"(?=[.;!?]|$|,?\s+so\b|,\s*(?:but|please)\b|\s+(?:and|but) (?:the|my|our|I|we)\b"
    r"|\s+(?:though|tho|btw|lol)\b|,\s*(?:I|I'm|we)\b)"
)
_SCHEDULED: Final = re.compile(
    rf"(?:^|(?<=[,:;] ))(?:(?:our|my|the|a|an) )?(?P<act>(?:[\w'-]+ ){{0,3}}?[\w-]+)"
    rf" (?:is|are|starts?|begins?|happens?|takes? place|runs?|meets?|falls?|rotates?"
    rf"|(?:moved|changed|shifted)(?: from [\w:.]+)? to)"
    rf"(?: always| usually| normally| now)? {_WHEN}",
    _I,
)
_I_DO: Final = re.compile(
    rf"\b(?:I|we)(?: both| all)?(?: usually| always| normally| also| still| already| often"
    rf"| regularly| \w+ly)?"
    rf" (?P<verb>have|do|go|play|attend|make"
    rf"|take|practi[cs]e|hit|run|swim|cycle|train|work out|jog|lift|ship|release|deploy|publish"
    rf"|meet|call|visit|walk|cook|teach|clean|study|volunteer|review|plan|record|stream"
    rf"|post|publish|upload|bake|host|get up|wake up|wake|sleep|go to bed|leave|commute|pray"
    rf"|work|prep|meal prep|batch cook|operate|lecture|tutor|coach|perform|sing|rehearse"
    rf"|meditate|read|write|practi[cs]e|open|close|start work|finish work|start|finish|climb"
    rf"|boulder|dance|paint|surf|hike|ski|skate|row|box|knit|sew|garden|babysit|drum|mark|grade"
    rf"|check|update|water|visit|shop|wash)"
    rf"(?: an?| the| my| our| to)?"
    rf"(?P<act>(?: [\w-]+){{0,6}}?),? {_WHEN}",
    _I,
)
_I_AM_ON: Final = re.compile(
    rf"\b(?:I'm|I am|[Ww]e're|[Ww]e are) (?P<act>on call|on duty|on shift|on nights|on days"
    rf"|on lates|on earlies|on site|at work|out|in the office|at the office|off work|off)"
    rf"(?: by \d{{1,2}}(?::\d{{2}})?)? (?P<verb>){_WHEN}",
    _I,
)
_LEADING_WHEN: Final = re.compile(
    rf"^(?P<when>{_RECURRING}(?: at {_CLOCK})?),? (?:I|we) (?:usually |always |normally )?"
    rf"(?P<verb>have|do|go|play|attend|take|practi[cs]e|hit|run|swim|cycle|train|work out|jog"
    rf"|lift|volunteer|work|teach|coach|cook|meet|study|visit|call|clean|shop|climb|dance)"
    rf"(?: an?| the| my| our| to)?(?P<act>(?: [\w-]+){{0,3}}?)"
    rf"(?: (?:with|at|in|for) [\w' -]+)?(?=[,.;!?]|$)",
    _I,
)
_BARE_ACTIVITY: Final = {
    "run": "running",
    "swim": "swimming",
    "cycle": "cycling",
    "train": "training",
    "work out": "working out",
    "jog": "running",
    "lift": "lifting",
    "get up": "getting up",
    "meal prep": "meal prep",
    "prep": "meal prep",
    "batch cook": "batch cooking",
    "operate": "operate",
    "lecture": "lecture",
    "perform": "perform",
    "rehearse": "rehearse",
    "wake up": "waking up",
    "wake": "waking up",
    "sleep": "sleeping",
    "go to bed": "going to bed",
    "commute": "commuting",
    "meditate": "meditating",
    "pray": "praying",
    "read": "reading",
    "write": "writing",
    "practise": "practising",
    "practice": "practicing",
}
_SAME_ACTIVITY: Final = {
    "run": "running",
    "runs": "running",
    "jog": "running",
    "jogging": "running",
    "jogs": "running",
    "stand-up": "standup",
}
_NOT_ACTIVITIES: Final = _word_set(
    "it that this there i we you he she they which what who work home time class lunch him her"
    " them us me best well hard better late early more less"
)
_ACTIVITY_FILLER: Final = _word_set(
    "daily weekly morning evening usual regular team our my the a an for meeting meetings"
    " remember reminder note fyi btw so also and oh just reminder:"
    " session sessions"
)


def _not_activity(activity: str) -> bool:
    """A pronoun or a word such as "work" or "class" alone names no activity."""
    words = activity.split()
    return words[-1] in _PRONOUN_WORDS or (len(words) == 1 and words[0] in _NOT_ACTIVITIES)


_PRONOUN_WORDS: Final = _word_set("it that this there i we you he she they him her them us me")


def _activity(text: str) -> str:
    """The activity's words without the generic ones ("the daily standup meeting" is
    "standup"; "my morning run" is "running")."""
    words = [_SAME_ACTIVITY.get(w, w) for w in text.lower().replace("'s ", " ").split()]
    kept = [w for w in words if w not in _ACTIVITY_FILLER]
    return " ".join(kept or words[-1:])


_WORK_DAYS: Final = re.compile(
    rf"(?:\bI(?:'m| am)? |^)(?:(?:usually|only|normally|mostly|now|currently|just) )?"
    rf"(?P<verb>work|working|on the road|in the office) (?:on )?(?P<days>{_DAYS}|weekends|weekdays)"
    rf"(?=\s*(?:[,.;!?]|$|\b(?:and|but|so|because|lol|btw|only|too|now|these days|each week"
    rf"|every week|a week|this week)\b))",
    _I,
)
"""The days the user works: "I work Monday to Thursday", "i work tues wed fri"."""


_AND_NEXT_SCHEDULED: Final = re.compile(
    r",?\s+and\s+(?=(?:the |my |our )?(?:[\w-]+ ){0,2}[\w-]+ (?:is|are|starts?|begins?|happens?"
    r"|runs?|meets?)"
    r" (?:always |usually |now )?(?:at|on|every|each|from|daily|weekly)\b)",
    _I,
)
"""Where a second scheduled thing begins: "standup is at 9:15 and retro is every Friday"."""


_CLOSED_ON: Final = re.compile(
    rf"(?:^|\b)(?:(?:my|our|the) )?(?P<what>(?:[\w'-]+ ){{0,2}}?[\w-]+) (?:is|are|'s) (?:always )?"
    rf"(?P<state>closed|shut)(?: (?:on|all day|every))* (?P<days>{_DAYS}|weekends|weekdays)\b",
    _I,
)
"""The days the user's place of work closes or opens: "My restaurant is closed on Mondays"."""
_AT_A_PLACE: Final = re.compile(r"^(?:at|in) (?:the|a|an|my|our|a local) (?P<where>[\w' -]+)$", _I)
_GOES_BY_PLACE: Final = _word_set("volunteer work help teach coach")
"""Verbs whose activity is named by where it is done: "I volunteer at the food bank"."""


def _schedule(clause: str) -> Iterator[Stated]:
    parts = _AND_NEXT_SCHEDULED.split(clause)
    if len(parts) > 1:
        for part in parts:
            yield from _schedule(part)
        return
    closed = _CLOSED_ON.search(clause)
    if closed is not None and not _SOMEONE_ELSE.search(clause) and not NEGATION.search(clause):
        what = f"{closed['what'].lower()} {closed['state'].lower()}"
        yield Stated("schedule", f"{what} {closed['days'].rstrip('.')}", item=what)
        return
    work = _WORK_DAYS.search(clause)
    if work is not None and not NEGATION.search(clause[: work.start()]):
        verb = work.group("verb").lower()
        what = "work" if verb in {"work", "working"} else verb
        days = work.group("days").rstrip(".")
        yield Stated("schedule", f"{what} {days}", item=f"{what} days")
        return
    match = _SCHEDULED.search(clause)
    if match is not None and (NEGATION.search(match.group(0)) or _DUE_WORD.search(match.group(0))):
        match = None
    if match is not None:
        words = match.group("act").lower().split()
        act = _activity(match.group("act"))
        if act and not _not_activity(act) and not _SPEAKERS & set(words):
            yield Stated("schedule", _when(act, match.group("act"), match.group("when")), item=act)
            return
    match = _I_DO.search(clause) or _LEADING_WHEN.search(clause) or _I_AM_ON.search(clause)
    if match is not None and (NEGATION.search(match.group(0)) or _DUE_WORD.search(match.group(0))):
        match = None
    if match is not None:
        verb = match.group("verb").lower()
        said = match.group("act").strip()
        place = _AT_A_PLACE.match(said)
        if place is not None and verb in _GOES_BY_PLACE:
            said = place["where"]  # "I volunteer at the food bank on Saturdays"
            verb = "volunteer" if verb == "help" else verb
        elif match.re is not _I_AM_ON and said.split(" ", 1)[0].lower() in _CIRCUMSTANCE:
            said = ""  # "I run before work every morning": the activity is the verb's
        act = _activity(said) or _BARE_ACTIVITY.get(
            verb, verb if verb in _NAMES_ITS_ACTIVITY else ""
        )
        if act and not _not_activity(act):
            said = said if verb in _LIGHT_VERBS else f"{verb} {said}"
            when, *more = _AND_ANOTHER.split(match.group("when"), maxsplit=1)
            yield Stated("schedule", _when(act, said, when), item=act)
            other = _ANOTHER.match(more[0]) if more else None
            if other is not None:  # "I do yoga every Sunday and pilates on Wednesdays"
                second = _activity(other.group("act"))
                yield Stated("schedule", f"{other.group('act')} {other.group('when')}", item=second)


_AND_ANOTHER: Final = re.compile(
    rf"\s+and\s+(?!{_DAY}\b)(?=[a-z]+(?: [a-z]+)? (?:on|every|each|at|in the) )", _I
)
_ANOTHER: Final = re.compile(
    r"^(?P<act>[a-z]+(?: [a-z]+)?) (?P<when>(?:on|every|each|at|in the) .+)$", _I
)


_WHEN_WORD: Final = (
    r"(?:(?:every|each|on|at|in the|most|some|alternate|from)\s+)?"
    rf"(?:{_ORDINAL}\s+)?(?:{_DAYS}|{_HOUR}|daily|weekly|nightly|monthly|weekdays?|weekends?"
    rf"|day|week|{_PART_OF_DAY})"
)
_NOMINAL_SCHEDULE: Final = re.compile(
    rf"^(?P<act>[a-z][\w-]*(?: [a-z][\w-]*){{0,3}}?)(?:'s| is| are| r)?,?"
    rf" (?P<when>{_WHEN_WORD}(?:(?:,|,? and|,? at|,? from|,? to|\s*-)?\s+{_WHEN_WORD})*)"
    r"(?: (?:with|at|in|before|after) [\w' ]+)?(?: (?:lol|ugh|haha|btw|though|too|otherwise"
    r"|as well))*$",
    _I,
)
"""A schedule said as a note, without a verb: "gym mon wed fri 6am", "standup 9:15 daily"."""
_SCHEDULE_FIELD: Final = re.compile(
    rf"^(?P<when>{_DAYS})\s*:\s*(?P<act>[a-z][\w' -]*?)(?: (?P<hour>{_HOUR}))?$", _I
)
"""A week written as a list: "Thu: choir practice 8pm"."""
_DEFINITE_WHEN: Final = re.compile(
    rf"(?:\b(?:{_DAYS}|daily|weekly|nightly|monthly|weekdays?|weekends?|every|each)\b|\d)", _I
)
_ABBREVIATED_DAY: Final = re.compile(r"^(?:\w+ ){0,2}(?:mon|tue|wed|thu|fri|sat|sun)\.?$", _I)
"""A short day alone ("sun", "sat") is too often a word to name a day."""
_NOT_NOMINAL: Final = _word_set(
    "it that this he she they we you i see good have happy thanks thank same what is are at on"
    " in from until till since by bye the a an and but so my to of for with see catch talk"
    " speak meet every each most some next last this ugh oh all its it's usually normally"
    " always often sometimes starting beginning until from"
)


_OBJECTS: Final = _word_set("him her them it")
_HOUR_FIRST: Final = re.compile(
    r"^(?:(?:daily|weekdays|every day)\s*:\s*)?(?P<when>\d{1,2}(?::\d{2})?\s*(?:am|pm)"
    r"|\d{1,2}(?::\d{2})?\s*-\s*\d{1,2}(?::\d{2})?) (?P<act>[a-z]+(?: [a-z]+)?)$",
    _I,
)
"""A day written as times: "daily: 6am run, 9-6 work"."""
_THEN: Final = re.compile(r"\s+(?:and )?then\s+", _I)


_SHIFT_PATTERN: Final = re.compile(
    r"(?P<lead>\b(?:[\w-]+ ){0,2}shifts?,? )?"
    r"\b(?P<pattern>(?:\d+|one|two|three|four|five|six|seven)(?: days?| nights?)? on,?"
    r" (?:\d+|one|two|three|four|five|six|seven)(?: days?| nights?)? off)\b",
    _I,
)
"""A shift rota: "4 on 4 off", "two on four off"."""


def _nominal_schedule(clause: str) -> Iterator[Stated]:
    rota = _SHIFT_PATTERN.search(clause)
    if rota is not None and not _SOMEONE_ELSE.search(clause):
        lead = (rota.group("lead") or "shifts ").replace(",", "")
        yield Stated("schedule", f"{lead}{rota.group('pattern')}", item="shifts")
        return
    field = _SCHEDULE_FIELD.match(clause)
    first = _HOUR_FIRST.match(clause)
    if first is not None and first.group("act").lower().split()[0] not in _NOT_NOMINAL:
        yield Stated(
            "schedule",
            f"{first.group('act')} {first.group('when')}",
            item=_activity(first.group("act")),
        )
        return
    if field is not None:
        act, when = field.group("act"), field.group("when")
        when = f"{when} {field.group('hour')}" if field.group("hour") else when
    else:
        match = _NOMINAL_SCHEDULE.match(clause)
        if match is None or _SOMEONE_ELSE.search(clause) or NEGATION.search(clause):
            return
        if _DUE_WORD.search(clause) or _ABBREVIATED_DAY.match(match.group("when").strip()):
            return
        act, when = match.group("act"), match.group("when")
    words = act.lower().split()
    if len(words) > 1 and words[-1] in _OBJECTS:  # "walk him every morning at 7"
        words, act = words[:-1], act.rsplit(" ", 1)[0]
    if (
        words[0] in _NOT_NOMINAL
        or words[-1] in _NOT_NOMINAL
        or _PRONOUN_WORDS & set(words)
        or not _DEFINITE_WHEN.search(when)
    ):
        return
    item = _activity(act)
    yield Stated("schedule", f"{act} {when}", item=item)


_NAMES_ITS_ACTIVITY: Final = _word_set(
    "cook meet open close climb boulder dance paint surf hike ski skate row box knit sew garden"
    " babysit drum teach tutor coach volunteer study start finish mark grade deploy release ship"
    " publish stream record post upload"
) | {"start work", "finish work"}
"""Verbs that name the activity themselves ("I cook every night", "we open at 7")."""
_CIRCUMSTANCE: Final = _word_set("before after at in on during around by with near")


_SPEAKERS: Final = frozenset({"i", "we", "you", "i'm", "we're"})
_LIGHT_VERBS: Final = _word_set(
    "have do go make take attend run swim cycle train jog lift sleep meditate pray read write prep"
    " operate lecture perform rehearse cook meet open close climb boulder dance paint surf hike"
    " ski skate row box knit sew garden babysit drum"
    " practise practice commute"
)
"""Verbs that say nothing the activity does not ("I go running", "I have yoga")."""
_DUE_WORD: Final = re.compile(r"\b(?:due|deadline)\b", _I)
_PART_OF_DAY_WORD: Final = re.compile(_PART_OF_DAY, _I)


def _when(activity: str, said: str, when: str) -> str:
    """The schedule as the memory's content: the activity as said, then when; a part of the
    day only the activity's words gave ("my morning run is at 6") is kept."""
    when = when.strip()
    if when.split(" ", 1)[0].lower() in _WHEN_OPENERS:
        when = when[:1].lower() + when[1:]  # "Every Monday at 8 I have a call"
    said_words = [w for w in said.lower().split() if w not in _DETERMINERS | _ASIDES]
    named = " ".join(said_words) if set(activity.split()) <= set(said_words) else activity
    part = _PART_OF_DAY_WORD.search(said)
    if part is not None and part.group(0).lower() not in f"{when} {named}".lower():
        when = f"{when} in the {part.group(0).lower()}"
    return f"{named} {when}"


_DETERMINERS: Final = _word_set("a an the my our your to for")
_WHEN_OPENERS: Final = _word_set("every each on most some in at from once twice next this")
_ASIDES: Final = _word_set("remember reminder note fyi btw so also and oh just reminder:")


# --- deadlines -------------------------------------------------------------------------------

_ORDINAL_WORD: Final = (
    r"(?:(?:(?:twenty|thirty)[- ])?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)"
    r"|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth"
    r"|nineteenth|twentieth|thirtieth)"
)
_DATE: Final = (
    rf"(?P<when>(?:(?:on|by|next|this|before|at the|at|every) )*"
    rf"(?:{_WEEKDAY}|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b|tomorrow|tonight|today"
    rf"|(?:eod|(?:the )?end of (?:the )?day|cob|close of business)(?: (?:on )?{_WEEKDAY})?"
    rf"|(?:the )?(?:end|start|beginning|middle) of (?:the )?"
    rf"(?:day|week|month|quarter|year|{_MONTH})"
    rf"|(?:early|mid|late)[- ]{_MONTH}|(?:month|week|quarter|year)[- ]end"
    rf"|(?:the )?{_ORDINAL_WORD} (?:of )?{_MONTH}\b"
    rf"|the {_ORDINAL_WORD}(?=\s*(?:[,.;!?\u2014\u2013-]|$))"
    rf"|eow|eom|(?:the )?\d{{1,2}}(?:st|nd|rd|th|\.)? (?:of )?{_MONTH}\b"
    rf"|(?:the )?\d{{1,2}}(?:st|nd|rd|th)\b|{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?"
    rf"|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}"
    rf"|next week|next month|in \w+ (?:days|weeks))(?: at {_CLOCK})?)"
)
_DEADLINE_FOR: Final = re.compile(
    r"\b(?:the |my |our )?(?:deadline|due date) (?:for|on) (?:the |my |our |this )?"
    r"(?P<what>[\w' -]+?)"
    r"(?: is| was moved to| falls on|:| -) " + _DATE,
    _I,
)
_DUE: Final = re.compile(
    r"(?:^|\b(?:the|my|our|this|that|it|its|it's)\b ?)(?P<what>(?:[\w'-]+ ){0,3}?[\w'-]+)?"
    r" ?(?:is |are |'s )?due (?:to (?:the |my |our )?[\w-]+(?: [\w-]+)? )?(?:in on |on |by |for )?"
    + _DATE,
    _I,
)
_WHAT_DEADLINE: Final = re.compile(
    r"\b(?:the |my |our )?(?P<what>(?:[\w'-]+ ){0,2}?[\w'-]+) deadline is " + _DATE, _I
)
_HAVE_TO_BY: Final = re.compile(
    r"\b(?:I|we) (?:have to|need to|must|'ve got to|have got to|gotta) (?:submit|finish|deliver"
    r"|hand in|send|file|ship|turn in) (?:the |my |our )?(?P<what>[\w' -]+?) (?:by|before) "
    + _DATE,
    _I,
)
_DONE_BY: Final = re.compile(
    r"\b(?:the |my |our )?(?P<what>(?:[\w'-]+ ){0,2}?[\w'-]+) (?:has|have|needs?|must) (?:to )?be"
    r" (?:done|finished|shipped|delivered|submitted|ready|in|sent|live) (?:by|before|on) "
    + _DATE
    + r"|\b(?:the |my |our )?(?P<what2>(?:[\w'-]+ ){0,2}?[\w'-]+) (?:has|have|needs?|must) (?:to )?"
    r"(?:go out|go in|land|ship|be with \w+) (?:by|before|on) " + _DATE.replace("when>", "when2>"),
    _I,
)
_LAUNCHES_ON: Final = re.compile(
    r"(?:\b(?:the|my|our) |^)(?P<what>(?:[\w'-]+ ){0,2}?[\w'-]+) (?:closes?|launch(?:es)?|ships?"
    r"|goes live|wraps up|ends|opens|is launching|is closing|is shipping|is ending|starts?|begins?)"
    r" (?:on |by )?" + _DATE,
    _I,
)
"""A date the user's work is set for: "our Series A closes on June 30"."""
_WANTED_BY: Final = re.compile(
    r"\b(?:wants?|needs?|expects?|asked for) (?:the |my |our |a )?"
    r"(?P<what>(?:[\w'-]+ ){0,2}?[\w'-]+) (?:by|before) " + _DATE,
    _I,
)
"""'my boss wants the quarterly report by end of month'."""
_DATE_IS_DEADLINE: Final = re.compile(
    _DATE + r" is (?:the|my|our) deadline for (?:the |my |our )?(?P<what>[\w' -]+)", _I
)
_DELIVERABLE: Final = re.compile(
    r"\b(?:my|the|our|an?|this)\s+(?P<what>(?:[\w-]+ )?(?:essay|report|thesis|paper|assignment"
    r"|proposal|application|presentation|project|homework|article|deck|draft|dissertation"
    r"|manuscript|review|submission|translation|taxes|tax return|reconciliation|checklist|rota"
    r"|summary|letter|reflection|spreadsheet|manual|update|dashboard|plan|form|statement|entry"
    r"|note|brief|briefing|email|slides|budget|invoice|accounts|renewal|portfolio|chapter|bid"
    r"|tender|audit|pitch|forecast|lesson plans|report cards|feedback|marking|reports))\b",
    _I,
)
_PRONOUNS: Final = frozenset({"it", "its", "it's", "this", "that", "which", "everything"})


_ASIDE_START: Final = re.compile(
    r"^(?:(?:also|and|so|oh|btw|anyway|plus|then|ok|okay|well|now|yeah|yes|um|uh|like|hey|hi"
    r"|hello|thanks|honestly|basically|actually),? )+(?=\S)",
    _I,
)
"""Words that open a sentence without being part of what it names ("Also my visa ...")."""


_COPULAS: Final = _word_set("is are was were")
_CORRECTED_DATE: Final = re.compile(
    r"[\s,;:.!?\u2014\u2013-]*(?:(?:um|uh|er|oh),? )?(?:no,? wait|wait,? no|no,? sorry|sorry,? no"
    r"|sorry|no|I mean|actually|or rather|make that|scratch that)\b[\s,;:.!\u2014\u2013-]+"
    r"(?:[^\d.?!]{0,40}?[\s,;:\u2014\u2013-]+)??(?:it's |it is |its |now |make that )?"
    + _DATE.replace("P<when>", "P<fixed>"),
    _I,
)
"""'due Tuesday, no wait, Thursday', "on the twentieth, sorry, the twenty-first": the date said
after a correction is the one that holds."""


def _corrected_date(when: str, sentence: str) -> str:
    """`when`, or the date the user gives instead right after it in `sentence`."""
    at = sentence.find(when)
    while at >= 0:
        fixed = _CORRECTED_DATE.match(sentence, at + len(when))
        if fixed is None:
            break
        when = fixed["fixed"].strip()
        at = fixed.start("fixed")
    return when


def _deadline(clause: str, earlier: Sequence[str], sentence: str | None = None) -> Iterator[Stated]:
    for pattern in (
        _DEADLINE_FOR,
        _WHAT_DEADLINE,
        _HAVE_TO_BY,
        _DONE_BY,
        _WANTED_BY,
        _DATE_IS_DEADLINE,
        _DUE,
        _LAUNCHES_ON,
    ):
        match = pattern.search(clause)
        if match is None:
            continue
        groups = match.groupdict()
        what = _ASIDE_START.sub("", (groups.get("what") or groups.get("what2") or "").strip())
        what = re.sub(r"^(?:the|my|our|this) ", "", what, flags=_I)
        what = what.removesuffix("'s")
        if not what or what.lower() in _PRONOUNS | _COPULAS or what.lower().endswith(" it"):
            what = _deliverable(sentence or clause, earlier)
        if not what:
            continue
        when = (groups.get("when") or groups.get("when2") or "").strip()
        yield Stated(
            "deadline", f"{what} due {_corrected_date(when, sentence or clause)}", item=what
        )
        following = _AND_NEXT_DUE.match(clause, match.end())
        if following is not None and following["what"].lower() not in _PRONOUNS:
            nxt = following[
                "what"
            ]  # "... due on 15 March and the ethics renewal before end of Feb"
            yield Stated("deadline", f"{nxt} due {following['when_'].strip()}", item=nxt)
        return


_AND_NEXT_DUE: Final = re.compile(
    r",? and (?:the |my |our )?(?P<what>(?:[\w'-]+ ){0,2}?[\w'-]+)(?: is| are|'s)?(?: due)?"
    r"(?: in on| on| by| before| for| until)? " + _DATE.replace("P<when>", "P<when_>"),
    _I,
)
"""A second deadline in one clause: "... and the ethics renewal before end of Feb"."""


DEADLINE_HEADER: Final = re.compile(
    r"^(?:my |our |upcoming |some )?(?:deadlines?|due dates?|things due)(?: (?:this|next) (?:week"
    r"|month)| coming up| soon)?\s*:?$",
    _I,
)
"""A header whose list items are deadlines ("deadlines this week:")."""
_DEADLINE_ITEM: Final = re.compile(
    r"^(?P<what>[\w' -]+?)\s*(?:\(|,|-|:|\bby\b|\bon\b|\bdue\b)\s*(?:by |on |due )?"
    + _DATE
    + r"\)?[.!]*$",
    _I,
)


def deadline_item(item: str) -> Stated | None:
    """A list item under a deadlines header: "tax return (Fri)", "visa form by the 28th"."""
    match = _DEADLINE_ITEM.match(item.strip())
    if match is None:
        return None
    what = match.group("what").strip()
    return Stated("deadline", f"{what} due {match.group('when').strip()}", item=what)


def _deliverable(clause: str, earlier: Sequence[str]) -> str:
    """What "it" is due: the last deliverable the user named ("my essay")."""
    for text in [clause, *reversed(earlier)]:
        found = list(_DELIVERABLE.finditer(text))
        if found:
            return found[-1].group("what")
    return ""


# --- tools -----------------------------------------------------------------------------------

_TOOL: Final = r"(?:[A-Z][\w.+#-]*(?: [A-Z0-9][\w.+#-]*)*|[\w.+#-]+)"
_TOOL_LIST: Final = rf"(?P<tools>{_TOOL}(?:(?:,| and| &| plus) {_TOOL})*)"
_USE: Final = re.compile(
    r"\b(?:I|[Ww]e|(?i:my|our) (?i:team|company|office|lab|studio|shop))(?:'m| am| are|'re)? "
    + _ADVERB
    + r"(?P<not>(?i:don't |do not |never |no longer |can't |refuse to |won't |will not "
    r"|avoid ))?"
    + _ADVERB
    + r"(?i:use|using|rely on|work (?:mostly |mainly |a lot |daily )?with|swear by|switched to"
    r"|get on with|get along with"
    r"|uses|is using|been using|have been using|touch|switched from [\w.+# -]+? to"
    r"|moved from [\w.+# -]+? to"
    r") " + _TOOL_LIST
)
_CODE_IN: Final = re.compile(
    r"\bI (?:[\w']+ ){0,4}?(?i:code|program|write code|develop|write (?:all )?my code)"
    r" (?:mostly |mainly )?in " + _TOOL_LIST
)
_MY_TOOL_IS: Final = re.compile(
    r"\b(?i:my (?:main |favou?rite |preferred |go-to |daily |usual )?(?:code )?(?:editor|ide"
    r"|browser|terminal|shell|os|operating system|note-taking app|notes app|task manager"
    r"|todo app|to-do app|test runner|testing framework|language of choice) (?:is|of choice is)) "
    + _TOOL_LIST
)
_KEEP_IN: Final = re.compile(
    r"\bI(?:'m| am)? (?i:write|writing|keep|keeping|take|track|tracking|manage|managing|plan"
    r"|planning|organi[sz]e|do|doing|store|draft|drafting|log|sketch|sketching|design|designing"
    r"|put|putting|make|making|build|building|edit|editing|create|creating|model|modelling"
    r"|analy[sz]e|analy[sz]ing|present|presenting|record|recording|compose|composing|render"
    r"|code|coding|program|programming|test|testing|learn|learning|study|studying|draw"
    r"|drawing|paint|painting|illustrate|illustrating|animate|animating|sync|syncing|back up"
    r"|backing up|host|hosting|deploy|deploying|run|running|organise|organize)"
    r" (?!an? )(?i:all |most )?(?:of )?(?i:my |our |the |them |it )?(?:[\w-]+ ){0,2}?"
    r"(?:in|on|with|using) (?P<tools>(?:[A-Z][\w.+#-]*(?: [A-Z0-9][\w.+#-]*)*|[a-z][\w.+#-]*)"
    r"(?:(?:,| and| &) [A-Z][\w.+#-]*(?: [A-Z0-9][\w.+#-]*)*)*)",
)
_TOOL_IS_MY: Final = re.compile(
    r"^(?P<tools>[\w.+#-]+) (?i:is my (?:main |favou?rite |preferred |go-to |daily |usual )?"
    r"(?:code )?(?:editor|ide|browser|terminal|shell|test runner|testing framework|test framework"
    r"|notes app|task manager))\b"
    r"|\bI(?:'m| am) an? (?P<tools2>[A-Z][\w.+#-]*) user\b"
    r"|\bI (?:test|write tests|write my tests|build|deploy) (?:everything )?(?:with|using|in) "
    r"(?P<tools3>[\w.+#-]+)",
)
_PREFER_FOR: Final = re.compile(
    r"\bI (?i:prefer|like|love|enjoy) (?:using )?(?P<tools>[\w.+#-]+(?: [A-Z][\w.+#-]*)?)"
    r" (?i:for|to) (?i:test|code|edit|write|note|plan|track|manage|build|deploy|design|draw"
    r"|sketch|chart|budget|write up)\w*"
)
_MACHINE_RUNS: Final = re.compile(
    r"\b(?i:my|our) (?i:laptop|computer|machine|pc|desktop|server|mac|workstation|box)"
    r" (?i:runs|is running|has|is on) (?P<tools>[A-Z][\w.+#-]*)"
)
"""'My laptop runs Fedora'."""
_ALSO_WITH: Final = re.compile(
    r"\s+(?:with|using|via|through|in|on|and sync(?:ed)? (?:it |them )?with) "
    r"(?P<tool>[A-Z][\w.+#-]*(?: [A-Z0-9][\w.+#-]*)*)"
)
"""A second tool named after the first: "I write in LaTeX with Overleaf"."""
_ON_OS: Final = re.compile(
    r"\bI(?:'m| am) (?:on|running) (?P<tools>Linux|Windows|macOS|Mac|Ubuntu|Fedora|Debian"
    r"|Arch|ChromeOS|Android|iOS|NixOS)\b"
)
_LANGUAGE_NAMES: Final = _word_set(
    "english french german spanish italian portuguese dutch irish welsh scottish gaelic chinese"
    " mandarin cantonese japanese korean arabic hindi urdu bengali russian polish czech swedish"
    " norwegian danish finnish greek turkish hebrew persian farsi swahili thai vietnamese"
    " indonesian malay tagalog ukrainian romanian hungarian catalan basque twi igbo yoruba hausa"
    " amharic somali zulu xhosa afrikaans tamil telugu marathi gujarati punjabi kannada malayalam"
    " nepali sinhala burmese khmer lao mongolian kazakh uzbek georgian armenian azerbaijani"
    " albanian serbian croatian bosnian slovak slovenian bulgarian macedonian lithuanian latvian"
    " estonian icelandic maltese luxembourgish galician filipino cebuano javanese sundanese"
    " malagasy creole pashto dari kurdish tigrinya oromo wolof lingala kinyarwanda shona quechua"
    " guarani maori samoan tongan hawaiian esperanto latin yiddish tibetan uyghur tatar"
    " belarusian flemish frisian akan fula kiswahili"
)
_TOOL_STOP: Final = _word_set(
    "a an the my our your some any it this that them these those lots lot to for at in on"
    " every daily with because when so as since but though all everything anything nothing"
    " something both more less much very really quite mostly just only also home work"
    " public university uni college school class classes person bed town city night nights"
    " friends family people others colleagues classmates kids children"
)


_NO_DEVICE: Final = re.compile(
    r"\bI (?:don't|do not|never|no longer|refuse to) (?:use|own|have|carry|bother with)"
    r" (?:an? |any )?(?P<device>smart ?phone|mobile phone|mobile|cell ?phone|phone|laptop|tablet"
    r"|ipad|iphone|computer|pc|desktop|smart ?watch|kindle|e-reader|printer)\b"
    r"(?=\s*(?:$|[,.;!]|anymore|any more|at all|only|though|tho|lol))",
    _I,
)
"""A device the user goes without: "I don't use a smartphone"."""
_DONE_WITH: Final = re.compile(
    r"^(?:(?:and|but|also|oh|plus),? )?(?P<tool>[\w.+#-]+(?: [A-Z][\w.+#-]*)?),? (?i:never again"
    r"|no more|no longer|is dead to me|can die|not anymore|not any more)\b"
)
"""'Jira never again': a tool the user is done with."""
_HATE_TOOL: Final = re.compile(
    r"\bI (?:really |absolutely |truly |just )?(?:hate|loathe|detest|despise|dislike|can't stand"
    r"|cannot stand|can't bear) (?:using |working (?:in|with) )?(?P<tool>[\w.+#-]+(?: [\w.+#-]+)?)"
    r"(?: (?:with a passion|so much|though|tho|lol))?$",
    _I,
)
"""'I hate MATLAB': a tool the lexicon knows, disliked, is a tool the user does not want."""
_LIVE_IN_TOOL: Final = re.compile(
    r"\b(?:I|we) (?:basically |practically |pretty much |kind of |kinda )?live in"
    r" (?P<tool>[\w.+#-]+(?: [\w.+#-]+)?)(?: and (?P<tool2>[\w.+#-]+))?(?: all day)?$",
    _I,
)
"""'I live in Figma', "we live in Slack and Linear": the tools the user works in all day (one
the lexicon knows among them)."""
_BARE_USE: Final = re.compile(
    r"^(?:(?:and|also|plus|but|then|mostly|mainly),? )*(?i:use|using) "
    + _TOOL_LIST
    + r"(?= (?:daily|every day|all day|a lot|at work|for work|for everything|mostly)\b|[,.;!]*$)"
)
"""A note without its subject: "use intellij and grafana daily"."""
_TOOL_DOES_IT_ALL: Final = re.compile(
    r"^(?:(?:but|and|now|so|honestly|tbh),? )*(?P<tool>[A-Z][\w.+#-]*(?: [A-Z0-9][\w.+#-]*)?)"
    r" (?:now |basically |honestly |pretty much |literally )?(?:does everything I need|does it all"
    r"|does all I need|has everything I need|runs my (?:whole |entire )?(?:life|day|week|work"
    r"|business)|is all I need|is my go-to|is my bible|is where I (?:do|keep|write|plan) \w+)\b"
)
"""'Affinity does everything I need', "Trello runs my whole life": a tool by what it does for
the user."""


_GAVE_UP_TOOL: Final = re.compile(
    r"\b(?:ditched|dropped|gave up(?: on)?|quit|stopped using|uninstalled|got rid of"
    r"|moved away from|switched (?:away )?from|moved (?:my \w+ )?from|abandoned|deleted)"
    r" (?:my |using )?(?P<tool>[\w.+#-]+(?: (?-i:[A-Z0-9])[\w.+#-]*)?)"
    r"|^(?P<tool2>[\w.+#-]+(?: (?-i:[A-Z0-9])[\w.+#-]*)?) [^,.;]{0,40}? so (?:I )?"
    r"(?:ditched|dropped|quit|uninstalled|gave up on|deleted) it\b",
    _I,
)
"""'ditched trello last month', "I switched from VS Code to Neovim", "keynote keeps crashing so
ditched it": software the user no longer uses (a name the lexicon knows)."""


def _given_up_tools(clause: str) -> Iterator[Stated]:
    for match in _GAVE_UP_TOOL.finditer(clause):
        name = match["tool"] or match["tool2"]
        if not _is_tool_name(name) and " " in name:
            name = name.split()[0]  # "Evernote ages": the name is the first word
        target = re.match(r" to (?P<to>[\w.+#-]+)", clause[match.end() :])
        software = _is_tool_name(name) or (
            match.group(0).lower().startswith("switched")
            and name[:1].isupper()
            and target is not None
            and target["to"][:1].isupper()
            and not known_place(name)
            and not known_place(target["to"])
        )  # "switched from Eclipse to IntelliJ": one name for another, neither a town
        if software and not _SOMEONE_ELSE.search(clause[: match.start()]):
            yield Stated("tool", f"no longer uses {name}", item=name, positive=False)


def _tools(clause: str) -> Iterator[Stated]:
    given_up = list(_given_up_tools(clause))
    yield from given_up
    if given_up and not re.search(r"\bto\b|\bnow\b|\binstead\b", clause, _I):
        return
    device = _NO_DEVICE.search(clause)
    if device is not None:
        name = device["device"].lower()
        yield Stated("tool", f"does not use {name}", item=name, positive=False)
        return
    done = _DONE_WITH.match(clause)
    if done is not None and _is_tool_name(done["tool"]):
        yield Stated("tool", f"does not use {done['tool']}", item=done["tool"], positive=False)
        return
    named = _LIVE_IN_TOOL.search(clause)
    if named is not None and any(_is_tool_name(t) for t in named.group("tool", "tool2") if t):
        for name in filter(None, named.group("tool", "tool2")):
            yield Stated("tool", name, item=name)
        return
    does = _TOOL_DOES_IT_ALL.match(clause)
    if (
        does is not None
        and does["tool"].split()[0] not in _NOT_NAMES
        and not _SOMEONE_ELSE.match(does["tool"])
        and not known_place(does["tool"])
    ):
        yield Stated("tool", does["tool"], item=does["tool"])
        return
    negated = False
    names: list[str] = []
    for pattern in (
        _MY_TOOL_IS,
        _TOOL_IS_MY,
        _CODE_IN,
        _ON_OS,
        _MACHINE_RUNS,
        _PREFER_FOR,
        _KEEP_IN,
        _USE,
        _BARE_USE,
    ):
        match = pattern.search(clause)
        if match is None:
            continue
        groups = match.groupdict()
        negated = bool(groups.get("not")) or negated_before(clause, match.start())
        listed = groups.get("tools") or groups.get("tools2") or groups.get("tools3") or ""
        after = re.match(r" ([a-z]+)", clause[match.end() :])
        if listed.islower() and after is not None and after.group(1) not in _TOOL_STOP:
            continue  # "I don't use social media": words, not a tool's name
        for name in re.split(r",\s*|\s+and\s+|\s+&\s+|\s+plus\s+", listed):
            name = name.strip(" .")
            if not name or name.lower() in _TOOL_STOP or name.lower().startswith("to "):
                break
            if name.lower() in _LANGUAGE_NAMES:
                continue
            names.append(name)
        if names:
            rest = clause[match.end() :]
            while (more := _ALSO_WITH.match(rest)) is not None:
                if more.group("tool").split()[0] not in _NOT_NAMES:
                    names.append(more.group("tool"))
                rest = rest[more.end() :]
            break
    for name in names:
        if negated:
            yield Stated("tool", f"does not use {name}", item=name, positive=False)
        else:
            yield Stated("tool", name, item=name)


# --- form-like answers ("Job: electrician. City: Leicester.") ---------------------------

_FIELD: Final = re.compile(
    r"^(?:[-*\u2022] )?(?P<field>[A-Za-z ]{2,20}?)(?:\s*[:=]|\s+-)\s*(?P<value>[^:=]{1,60}?)\s*$"
)
_FIELDS: Final = {
    "job": "occupation",
    "occupation": "occupation",
    "role": "occupation",
    "profession": "occupation",
    "city": "location",
    "location": "location",
    "based in": "location",
    "lives in": "location",
    "home": "location",
    "employer": "employer",
    "company": "employer",
    "works at": "employer",
    "diet": "diet",
    "dietary": "diet",
    "dietary requirements": "diet",
    "dietary needs": "diet",
    "hometown": "hometown",
    "home town": "hometown",
    "from": "hometown",
    "title": "occupation",
    "job title": "occupation",
    "position": "occupation",
    "work": "employer",
    "organisation": "employer",
    "organization": "employer",
    "town": "location",
    "based": "location",
    "lives": "location",
    "allergies": "allergy",
    "allergy": "allergy",
    "languages": "language",
    "language": "language",
    "tools": "tool",
    "stack": "tool",
    "tech stack": "tool",
    "editor": "tool",
    "name": "name",
    "my name": "name",
    "my job": "occupation",
    "work as": "occupation",
    "tools i use": "tool",
    "software": "tool",
    "speaks": "language",
    "i speak": "language",
    "home base": "location",
    "current city": "location",
    "where": "location",
    "born in": "hometown",
    "originally from": "hometown",
    "deadline": "deadline",
    "deadlines": "deadline",
    "due": "deadline",
}


def _field(sentence: str) -> Iterator[Stated]:
    match = _FIELD.match(sentence.strip().rstrip("."))
    if match is None:
        return
    attribute = _FIELDS.get(match.group("field").strip().lower())
    if attribute is None:
        return
    value = match.group("value").strip()
    if _EMPTY_FIELD.match(value):
        return  # "Allergies: none"
    if attribute == "deadline":  # "deadline: Q3 roadmap, Sept 30"
        due = re.match(
            r"^(?P<what>.+?),?\s+(?:(?:is |are )?due |by |on |-\s*)?" + _DATE + "$", value, _I
        )
        if due is not None:
            what = due.group("what").strip(" ,-")
            yield Stated("deadline", f"{what} due {due.group('when')}", item=what)
        return
    job = _FIELD_JOB.match(value)
    if job is not None and (
        attribute == "occupation"
        or (attribute == "employer" and (job.group("job2") or job.group("job")[:1].islower()))
    ):  # "Role: SRE at Cloudflare", "work = nurse at St Thomas'"
        preposition = (job.group("preposition") or job.group("preposition2")).lower()
        yield Stated("occupation", job.group("job") or job.group("job2"))
        where = "location" if preposition == "in" else "employer"
        yield Stated(where, (job.group("org") or job.group("org2")).strip(" '."))
        return
    if attribute in _NAMED_FIELDS and "," in value:  # "work = Red Hat, Brno office"
        value, rest = (v.strip() for v in value.split(",", 1))
        yield from _in_a_known_place(f"work {rest}")
    if attribute == "name" and value.islower():
        value = _title(value)
    if attribute in _LISTED_FIELDS:  # "Languages: French, English"
        for item in re.split(r",\s*|\s+and\s+|\s*/\s*|\s+\+\s+|\s+&\s+", value):
            if item.strip():
                yield Stated(attribute, item.strip(), item=item.strip())
        return
    yield Stated(attribute, _diet_name(value) if attribute == "diet" else value)


_EMPTY_FIELD: Final = re.compile(
    r"^(?:none|n/?a|nope|no|nothing|nil|-+|not really|none known|none that I know of|no allergies)"
    r"[.!]*$",
    _I,
)
"""A form's field left empty."""
_LISTED_FIELDS: Final = frozenset({"allergy", "language", "tool"})
_NAMED_FIELDS: Final = frozenset({"employer", "location"})
_FIELD_JOB: Final = re.compile(
    r"^(?P<job>[\w -]+?) (?P<preposition>at|for|with|in) (?:the )?(?P<org>[A-Z][\w&'. -]*)$"
    r"|^(?P<job2>[a-z][\w -]*?) (?P<preposition2>at|for|with) the (?P<org2>(?:[\w-]+ ){0,2}"
    r"(?:" + _ORG_NOUNS + r"|service|trust|board|authority))$"
)
"""A job field that also says where: "SRE at Cloudflare"."""


# --- an introduction as a list ("Let me introduce myself: Hugo Laurent, sommelier, Bordeaux")

_INTRO: Final = re.compile(
    r"\b(?i:introduce myself|about me|quick intro|a bit about me|intro|context(?: for you)?"
    r"|background|some context)\s*[:,-]\s*(?P<rest>.+)$"
)
_CAPITALISED_ONLY: Final = re.compile(rf"^{_NAME}(?: {_NAME}){{0,2}}$")


def _introduction(sentence: str) -> Iterator[Stated]:
    match = _INTRO.search(sentence.rstrip("."))
    if match is None:
        return
    parts = [p.strip() for p in re.split(r",|;", match.group("rest")) if p.strip()]
    for index, part in enumerate(parts):
        job = _BARE_JOB.match(part)
        if job is not None:
            yield Stated("occupation", _job(job.group("job")))
            yield from _where_the_job_is(job)
        elif _CAPITALISED_ONLY.match(part) and all(_is_name(w) for w in part.split()):
            # the first proper name is the person's, a later one the place they are in
            yield Stated("name", part) if index == 0 else Stated("location", part)


# --- about me: a bare job ("product designer, working at Canva") ------------------------

_BARE_JOB: Final = re.compile(
    rf"^(?:an? )?(?P<job>(?:[\w-]+ ){{0,2}}(?i:{_JOBS}))(?: here)?"
    rf"(?: (?P<preposition>in|at|for) {_PLACE})?$"
)
_ABOUT_ME: Final = re.compile(
    r"\babout me\b|^(?:me|myself)\b|\bI(?:'m| am)\b|\bhere\b|^(?:hi|hey|yo)\b", _I
)


_TERSE_JOB: Final = re.compile(
    rf"^(?:an? )?(?P<job>(?:(?!(?i:a|an|the|being|as|my|his|her|their)\b)[\w-]+ ){{0,3}}?"
    rf"(?i:[a-z]*(?:{_JOBS})))s?"
    r"(?: (?:by trade|by day|by night|here|myself))?"
    r"[.!]*$"
)


def _terse_job(sentence: str) -> Iterator[Stated]:
    """A sentence that is only a job ("Plumber.", "freelance photographer") answers what
    the user does."""
    match = _TERSE_JOB.match(sentence.strip())
    if match is not None and not _NOT_JOB_WORDS & set(match.group("job").lower().split()):
        yield Stated("occupation", _job(match.group("job")))


_NOT_JOB_WORDS: Final = _word_set(
    "my your his her their our the this that no not i i'm we love like hate enjoy adore"
)


_GREETING: Final = re.compile(r"^(?i:dear|hi|hello|hey|hiya|thanks|thank you|cheers)\b")
"""'Dear assistant': whom the user writes to, not their job."""


def _greeted(sentence: str, clause: str) -> bool:
    """Whether `clause` is whom a greeting addresses ("Hello doctor, ...")."""
    return _GREETING.match(clause) is not None or (
        re.match(rf"{_GREETING.pattern},? {re.escape(clause)}\b", sentence.strip()) is not None
    )


def _bare_job(sentence: str, clause: str) -> Iterator[Stated]:
    match = _BARE_JOB.match(clause)
    if match is not None and _ABOUT_ME.search(sentence) and not _greeted(sentence, clause):
        yield Stated("occupation", _job(match.group("job")))
        yield from _where_the_job_is(match)


def _where_the_job_is(match: re.Match[str]) -> Iterator[Stated]:
    """ "nurse in Leeds": where the user is; "PM at Atlassian": whom they work for."""
    if match.group("place"):
        at_an_employer = match.group("preposition").lower() in {"at", "for"}
        yield Stated("employer" if at_an_employer else "location", match.group("place"))


# --- the lead's attribute catalogue, for wordings the patterns above do not know ---------

_NAMED_BY_CUE: Final = tuple(a for a in ATTRIBUTES if a.value_is_name and a.profile)
"""Catalogue attributes (`commands.llm.rules.attributes`) whose value is a proper name."""
_HEDGE: Final = re.compile(
    r"\b(?:might|may|maybe|perhaps|thinking (?:of|about)|plan(?:ning)? to|want(?:s|ed)? to"
    r"|would like to|hope to|hoping to|if|could|should|considering|someday|one day|wish)\b|\?$",
    _I,
)
"""A clause that wonders or plans states nothing yet ("I might move to Amsterdam")."""
_PROPER_NAME_AFTER: Final = re.compile(
    r"\s*(?:(?:the|job|at|in|to|for|with|by|up|over|there|now) ){0,3}"
    r"(?P<value>[A-Z][\w'.&+\u00c0-\u017f-]*(?: (?:of |de |and )?[A-Z][\w'.&+\u00c0-\u017f-]*)*)"
)


def _catalogued(clause: str, have: set[str]) -> Iterator[Stated]:
    """Residence, hometown and employer by the catalogue's cues ("I ended up settling in
    Leeds", "I got a job at Spotify"): the proper name right after the cue, when the
    statement is the user's own and neither hedged, negated nor ended."""
    if (
        _HEDGE.search(clause)
        or ENDED.search(clause)
        or NEGATION.search(clause)
        or _LOST_JOB.search(clause)
        or _BOUNDED_PAST.search(clause)
    ):
        return
    spoken = {f.attribute for f in facts_of(clause) if not f.holder}
    for catalogued in _NAMED_BY_CUE:
        attribute = catalogued.profile or catalogued.name
        cue = catalogued.cue.search(clause)
        if catalogued.name not in spoken or attribute in have or cue is None:
            continue
        start = cue.end() - 1 if clause[cue.end() - 1 : cue.end()].isupper() else cue.end()
        value = _PROPER_NAME_AFTER.match(clause, start)
        if value is not None and value.group("value").split()[0] not in _NOT_NAMES:
            yield Stated(attribute, value.group("value").rstrip("."))


_BOUNDED_PAST: Final = re.compile(
    r"(?:^|(?<!'ve )(?<!have )(?<!I've ))\b(?:lived|worked|stayed|studied|was based|spent)\b"
    r"(?=.*\b(?:until|till|for (?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+"
    r"|many|several|a few|a couple of) (?:decades?|years?|months?)|before|back then)\b)",
    _I,
)
"""A past that ended ("I worked at Amazon until last month", "lived in London for a decade");
"I've lived in Leeds for ten years" still holds."""
_SUPPOSING: Final = re.compile(
    r"^(?:and |but |so )?if\b|\bif (?:I|we)\b|\b(?:would|could|should) I\b", _I
)
"""A sentence that supposes ("If I moved to Berlin, would I ...") states nothing."""
_WONDERING: Final = re.compile(
    r"\b(?:might|maybe|perhaps|thinking (?:of|about)|planning to|plan to|want to|would like to"
    r"|hope to|hoping to|considering|someday|one day|wish I)\b|^(?:should|shall|can|could|am|do"
    r"|would) I\b|^(?:and |but |so )?if\b|\bif (?:I|we)\b",
    _I,
)
"""A clause that plans, wonders or asks states no fact of the user's yet."""


# --- places by the gazetteer ---------------------------------------------------------------

_DATA: Final = Path(__file__).resolve().parent.parent.parent / "data" / "extractor.json"


@lru_cache(maxsize=1)
def _gazetteer() -> frozenset[str]:
    """The shipped town names (`scripts/fit_extractor.py`: GeoNames' cities of 15,000 people
    or more, casefolded, without accents); empty without the data file."""
    try:
        places = json.loads(_DATA.read_text(encoding="utf-8")).get("places", [])
    except (OSError, ValueError):
        return frozenset()
    return frozenset(places)


def fold(name: str) -> str:
    """A name as the gazetteer keeps it: casefolded, without accents ("Gdańsk": "gdansk")."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def known_place(name: str) -> bool:
    return fold(name.strip(" .,")) in _gazetteer()


_IN_A_PLACE: Final = re.compile(
    r"\b(?i:in) (?P<place>[A-Z][\w'\u00c0-\u017f-]*(?: [A-Z][\w'\u00c0-\u017f-]*){0,2})"
    r"|\b(?P<place2>[A-Z][\w'\u00c0-\u017f-]*(?: [A-Z][\w'\u00c0-\u017f-]*)?)"
    r" (?i:office|hub|branch|campus|site|hq|headquarters)\b"
)
"""A town in a place's slot: "a nurse in Cardiff", "working from the Brno office"."""
_NOT_HERE_NOW: Final = re.compile(
    r"\b(?:was|were|used to|visit\w*|went|trip|holiday|vacation|flights?|flew|fly|flying"
    r"|travel\w*|last (?:week|month|year|summer|winter|spring|autumn|fall|time)|ago|born|grew up"
    r"|raised|conference|layover|moving|move|tomorrow|next (?:week|month|year)|rain\w*"
    r"|weather|family|parents|every (?:summer|winter|spring|autumn)|summers|on tour|gigs?)\b",
    _I,
)
"""What was, will be, or is only a visit: "I was in Rome last week"."""
_FIRST_PERSON: Final = re.compile(
    r"\b(?:I|I'm|I've|me|my|we|we're|our)\b|^(?:work|working|live|living|based|teach|teaching"
    r"|study|studying|job)\b",
    _I,
)


_AT_WORK_IN: Final = re.compile(
    r"^(?:I|I'm|I am)\b(?=.*\b(?:work|working|farm|teach|job|" + _JOBS + r")\b)"
    r".*? in (?P<place>(?-i:[A-Z][\w'\u00c0-\u017f-]*(?: [A-Z][\w'\u00c0-\u017f-]*){0,2}))$",
    _I,
)
"""A clause of the user's work that ends in a town: "I farm sheep in Wicklow"."""


def _in_a_known_place(clause: str) -> Iterator[Stated]:
    """Where the user is, when a clause of theirs names a known town in a place's slot."""
    if (
        _HEDGE.search(clause)
        or _NOT_HERE_NOW.search(clause)
        or _SOMEONE_ELSE.search(clause)
        or _LOST_JOB.search(clause)
        or not _FIRST_PERSON.search(clause)
    ):
        return
    at_work = _AT_WORK_IN.search(clause)
    if (
        at_work is not None
        and at_work.group("place").split()[0] not in _NOT_NAMES
        and not _is_tool_name(at_work.group("place"))
        and not re.fullmatch(_FIELDS_OF_WORK, at_work.group("place"), _I)
    ):
        yield Stated("location", at_work.group("place"))  # "I farm sheep in Wicklow"
        return
    for match in _IN_A_PLACE.finditer(clause):
        words = (match.group("place") or match.group("place2")).split()
        for size in range(len(words), 0, -1):
            place = " ".join(words[:size])
            if known_place(place) and not negated_before(clause, match.start()):
                yield Stated("location", place)
                return


_PLACE_SLOT: Final = re.compile(
    r"\b(?P<head>(?:in|from|to|near|based|at) )(?P<value>[a-z][\w'-]*(?: [a-z][\w'-]*)?)"
)


def _places_capitalised(sentence: str) -> str:
    """In a lower-case sentence, a known town after "in", "from", ... capitalised."""

    def capitalised(match: re.Match[str]) -> str:
        words = match.group("value").split()
        for size in range(len(words), 0, -1):
            place = " ".join(words[:size])
            if known_place(place):
                rest = " ".join(words[size:])
                named = " ".join(w[:1].upper() + w[1:] for w in words[:size])
                return f"{match.group('head')}{named}{' ' + rest if rest else ''}"
        return match.group(0)

    return _PLACE_SLOT.sub(capitalised, sentence)


# --- notes: a self-description in fragments ("berlin. freelance photographer.") ------------

_TOOL_NAMES: Final = _word_set(
    "python java javascript typescript js ts rust ruby php kotlin swift scala sql bash zsh matlab"
    " julia haskell elixir erlang perl lua dart golang c++ c# f# clojure fortran cobol"
    " react vue angular svelte django flask fastapi rails laravel spring node nodejs deno next.js"
    " docker kubernetes k8s terraform ansible puppet chef aws gcp azure git github gitlab"
    " bitbucket jira confluence slack notion obsidian figma figjam photoshop illustrator"
    " indesign lightroom excel powerpoint outlook salesforce hubspot tableau looker powerbi"
    " sap quickbooks xero sage stata spss sas latex overleaf vim neovim nvim emacs vscode"
    " intellij pycharm webstorm xcode unity blender autocad revit solidworks premiere"
    " ableton wordpress trello asana clickup airtable postgres postgresql mysql sqlite mongodb"
    " redis kafka spark airflow dbt snowflake bigquery pandas numpy pytorch tensorflow jupyter"
    " pagerduty datadog grafana prometheus jenkins circleci podman linux ubuntu debian fedora"
    " macos windows selenium cypress playwright postman jmeter tmux zapier miro canva"
    " excel sheets gmail dropbox onedrive sharepoint teams zoom webex arduino raspberry"
    " gradle maven npm yarn pnpm webpack vite babel eslint pytest junit jest cargo pip conda"
    " poetry homebrew nginx tomcat rabbitmq elasticsearch kibana splunk sentry heroku vercel"
    " netlify firebase supabase pulumi helm argocd openshift vmware virtualbox proxmox inkscape"
    " gimp krita procreate qlik alteryx knime dbeaver datagrip insomnia sublime notepad++"
    " vscodium cursor zed helix nano jira gitlab bazel buck make cmake godot"
)
"""A general lexicon of software a note names without capitals ("terraform + aws all day")."""
_TOOL_PHRASES: Final = frozenset(
    {"unreal engine", "vs code", "visual studio", "google sheets", "google docs", "power bi"}
    | {"after effects", "final cut", "logic pro", "pro tools", "github actions", "android studio"}
)
_TOOL_NOTE: Final = re.compile(
    r"^(?:(?:mostly|mainly|also|some|and|plus) )?(?P<tools>[\w.+#-]+(?: [\w.+#-]+)??"
    r"(?:(?:,| and| &| \+|,? plus) [\w.+#-]+(?: [\w.+#-]+)??)*)"
    r"(?: (?:pretty much|basically|mostly|mainly|all day(?: every day)?|every day|daily"
    r"|for everything|at work|on weekends|too|as well|lol))*(?: (?:on|for|in) [\w' ]+)?$",
    _I,
)
_NOTE_HEAD: Final = re.compile(
    r"^(?:tl;?dr|headline|bio|summary|about me|profile|currently|(?:quick |some )?(?:background"
    r"|context|facts|intro)(?: about me)?)"
    r"\s*[:-]\s*",
    _I,
)
_JOB_WHERE: Final = re.compile(
    rf"^(?:an? )?(?P<job>(?:[\w-]+ ){{0,3}}?(?i:{_JOBS}))(?: by (?:day|night|trade))?"
    r" (?P<preposition>at|for|with|in|from) (?P<where>[A-Z][\w&'.\u00c0-\u017f-]*"
    r"(?: (?:of |de )?[A-Z][\w&'.\u00c0-\u017f-]*)*)$"
)
"""A note's job with where it is done: "software engineer at Atlassian", "teacher from Swansea"."""
_JOB_SOMEWHERE_IN: Final = re.compile(
    rf"^(?:an? )?(?P<job>(?:[\w-]+ ){{0,2}}?(?i:{_JOBS})) (?:at|with|for) (?:an? |the )?[\w -]+?"
    r" (?P<preposition>in) (?P<where>[A-Z][\w'.\u00c0-\u017f-]*(?: [A-Z][\w'.\u00c0-\u017f-]*)*)$"
)
"""'Dev at a fintech in Warsaw'."""
_PLACE_OFFICE: Final = re.compile(
    r"^(?:the |our |my )?(?P<place>[A-Z][\w'\u00c0-\u017f-]*(?: [A-Z][\w'\u00c0-\u017f-]*)?)"
    r" (?i:office|hub|branch|campus|site|hq|headquarters)$"
)
_FRAGMENT_GREETING: Final = re.compile(
    r"^(?:dear \w+[,!]? )?(?:(?:hi|hey|hello|yo|hiya|heya|howdy|greetings|ok|okay|so|hola|ciao"
    r"|salut|bonjour|hallo|namaste|salaam|aloha|ola|ol\u00e1|hej|moin|servus|ahoj|cze\u015b\u0107"
    r"|merhaba|shalom|oi|salam|selam|privet|annyeong|habari|jambo|konnichiwa|ni ?hao"
    r"|xin ch[a\u00e0]o|kia ora|g'day|ahlan|marhaba|vanakkam|kumusta|mabuhay|sawubona|bom dia"
    r"|buenas|buongiorno"
    r"|guten tag|bonsoir|dzie\u0144 dobry|szia|hei|hallo)(?:[,!.]+|$) ?)+",
    _I,
)


_WORKING_IN: Final = re.compile(
    r"\b(?:work|working|code|coding|build|building|develop|developing|program|programming)"
    r"(?: \w+){0,3}? (?:(?:in|with|using) )?(?P<tool>[\w.+#-]+(?: [\w.+#-]+)?)"
    r"(?: for \w+ \w+| (?:mostly|mainly|daily|every day|all day))?$",
    _I,
)
"""'a frontend developer working mostly in React': software the lexicon knows."""


_ARE_MY_TOOLS: Final = re.compile(
    r"^(?P<tools>[\w.+# -]+?) (?:is|are) (?:my (?:daily |main |go-to |favou?rite |usual"
    r" |everyday )?(?:tools?|apps?|stack|editor|ide|software|life|bread and butter|daily driver)"
    r"|where I (?:spend|live|work)\b.*)$",
    _I,
)


def _is_tool_name(name: str) -> bool:
    return name.casefold() in _TOOL_NAMES or name.casefold() in _TOOL_PHRASES


def _fragments(sentence: str, have: set[str]) -> Iterator[Stated]:
    """A note's bare fragments: a job ("software dev"), a known town ("stockholm"), software
    ("sql and looker all day"), each a clause of its own."""
    note = _NOTE_HEAD.sub("", _FRAGMENT_GREETING.sub("", sentence))
    fragments = clauses(note)
    after_job = False
    for clause in fragments:
        clause = clause.strip(" .!")
        if (
            after_job
            and "employer" not in have
            and _CAPITALISED_ONLY.match(clause)
            and not known_place(clause)
            and not _is_tool_name(clause)
        ):
            have.add("employer")
            yield Stated("employer", clause)  # "medical resident, internal medicine, Johns Hopkins"
            continue
        after_job = after_job or bool(_TERSE_JOB.match(clause))
        listed = _TOOL_NOTE.match(clause)
        if listed is not None:
            names = [
                n.strip()
                for n in re.split(
                    r",\s*|\s+and\s+|\s*&\s*|\s*\+\s*|,?\s+plus\s+", listed.group("tools")
                )
            ]
            if names and all(_is_tool_name(n) for n in names):
                for name in names:
                    yield Stated("tool", name, item=name)
                continue
        located = _JOB_WHERE.match(clause) or _JOB_SOMEWHERE_IN.match(clause)
        if (
            located is not None
            and "occupation" not in have
            and (len(fragments) > 1 or note != sentence)
        ):
            have.add("occupation")
            yield Stated("occupation", _job(located.group("job")))
            place = located.group("where")
            if known_place(place) or located.group("preposition").lower() == "in":
                yield Stated("location", place)
            elif located.group("preposition").lower() in {"at", "for", "with"}:
                yield Stated("employer", place)
            continue
        if not clause or _SOMEONE_ELSE.search(clause):
            continue
        job = _TERSE_JOB.match(clause)
        if (
            "occupation" not in have
            and job is not None
            and not _NOT_JOB_WORDS & set(job.group("job").lower().split())
            and not _GREETING.match(clause)  # "Hello doctor, ..."
        ):
            have.add("occupation")
            yield Stated("occupation", _job(job.group("job")))
            continue
        office = _PLACE_OFFICE.match(clause)
        if "location" not in have and office is not None and known_place(office.group("place")):
            have.add("location")
            yield Stated("location", office.group("place"))  # "PM at Ocado, London office"
            continue
        if "location" not in have and known_place(clause) and len(clause.split()) <= 3:
            have.add("location")
            yield Stated("location", clause if not clause.islower() else _title(clause))
            continue
        working = _WORKING_IN.search(clause)
        if working is not None and _is_tool_name(working.group("tool")):
            yield Stated("tool", working.group("tool"), item=working.group("tool"))
            continue
        mine = _ARE_MY_TOOLS.match(clause)
        if mine is not None:
            named = " where I " not in clause  # "Lightroom is where I spend my evenings": known
            for name in re.split(r",\s*|\s+and\s+|\s*&\s*|\s*\+\s*", mine.group("tools")):
                if name and ((named and name[:1].isupper()) or _is_tool_name(name)):
                    yield Stated("tool", name, item=name)
            continue


# --- the reader ------------------------------------------------------------------------------

_LOWER_CASE_VOICE: Final = re.compile(r"^[^A-Z]*$")
"""A sentence written all in lower case: names have no capital to be told by."""
_NAME_SLOT: Final = re.compile(
    r"\b(?:(?:live|lives|living|based|settled|reside|residing) in|(?:moved|relocated) to"
    r"|(?:I'm|I am|originally) from|grew up in|(?:work|working|intern|interning|employed)"
    r" (?:at|for|by)|(?:drive|driving|deliver|delivering) for|(?:" + _JOBS + r") (?:at|for|in)"
    r"|(?:" + _ORG_NOUNS + r"|shop|business) in"
    r"|my name is|name's|call me|^(?:hi|hey|hello|yo)[ ,!]+(?:I'm|I am|this is|it's|myself))"
    r" (?P<value>[a-z][\w'-]*(?: [a-z][\w'-]*)?)"
    r"|^(?:(?:ok|okay|so|well|oh|anyway|right|um+)[ ,]+)*(?P<intro>I'm|I am) (?P<value2>[a-z]+)"
    r"(?=,| and\b| here\b| btw\b| by the way\b| from\b|$)"
    r"|^(?P<value3>[a-z]+)(?= here(?:[,!.]|$| btw\b| again\b))",
    _I,
)
"""A name's slot in a lower-case sentence: "i live in bristol", "hey im kofi", "im jess, 24",
"jess here"."""
_NOT_LOWER_CASE_NAMES: Final = _word_set(
    "a an the my our your his her their this that these those home work night nights day days"
    " weekends weekdays moment least now too also and with for at in on to from near since"
    " because but so as of by myself there here it them him everything right once still just"
    " around about all both some mostly lol haha tho though rn atm anyway pls please thanks"
    " local same an other another two three few many not so very really just back new good"
    " fine ok okay well sorry tired bored sick busy glad happy sad ready done curious confused"
    " stuck lost sure excited late early out off up down free alone married single retired"
    " unemployed pregnant gonna kinda looking trying going working getting having doing"
    " thinking wondering vegan vegetarian allergic into over about"
)


_NOT_LOWER_CASE_INTROS: Final = _word_set(
    "hungry thirsty starving broke cold hot warm ill unwell great awesome fab grand knackered"
    " shattered away bad fat old young divorced engaged separated widowed homesick skint fine"
    " good okay ok alright here home back new me anyone nobody someone everyone somebody you"
    " this that what who why how when where which also just still only even sorry afraid"
    " tired exhausted stressed worried scared nervous confused lost stuck sick lonely bored"
    " married retired divorced interested excited annoyed relaxed qualified employed unemployed"
    " based located pleased delighted indian syrian better older younger sober silly lovely"
    " friendly early late active creative positive sure"
)


DEMONYMS: Final = _word_set(
    "american british english scottish welsh irish canadian australian kiwi french german"
    " dutch belgian swiss austrian italian spanish portuguese greek turkish polish czech"
    " slovak hungarian romanian bulgarian serbian croatian ukrainian russian swedish"
    " norwegian danish finnish icelandic estonian latvian lithuanian mexican brazilian"
    " argentinian argentine chilean colombian peruvian venezuelan cuban chinese japanese"
    " korean vietnamese thai filipino indonesian malaysian indian pakistani bangladeshi"
    " nepali sri lankan iranian iraqi syrian lebanese israeli egyptian moroccan algerian"
    " tunisian nigerian ghanaian kenyan ethiopian somali south african european asian"
    " african latin arab arabic"
)
"""What a people or their spelling is called ("British spelling", "American spellings"): never
a tool, an employer or a town."""


def _could_be_a_name(word: str) -> bool:
    """A lower-case word introduced as the user ("im jess") that is no state, job or diet."""
    return (
        word not in _NOT_LOWER_CASE_NAMES
        and word not in _NOT_LOWER_CASE_INTROS
        and not re.search(r"(?:ful|ous|able|less|ish|ese)$|^\w{3,}ing$|^\w{5,}ian$", word)
        and not _A_JOB_NOUN.fullmatch(word)
        and word.capitalize() not in _NOT_NAMES
    )


def _names_capitalised(sentence: str) -> str:
    """Where a lower-case sentence names a place, an employer or the user ("i live in
    bristol", "backend dev at flipkart"), the name capitalised, as the patterns expect."""

    def capitalised(match: re.Match[str]) -> str:
        if match.group("value") is None:  # "im jess, from leeds", "jess here": one word
            group = "value2" if match.group("value2") else "value3"
            word = match.group(group)
            if not _could_be_a_name(word):
                return match.group(0)
            head = match.group(0)[: match.start(group) - match.start()]
            return f"{head}{word[:1].upper()}{word[1:]}"
        words = match.group("value").split()
        if words[0] in _NOT_LOWER_CASE_NAMES:
            return match.group(0)
        kept = words[:1]
        greeting = match.group(0)[:1].lower() in "hy"  # "hey im kofi ...": one word
        if (
            len(words) > 1
            and not greeting
            and words[1] not in _NOT_LOWER_CASE_NAMES
            and not words[1].endswith("ly")
        ):
            kept = words
        value = " ".join(w[:1].upper() + w[1:] for w in kept)
        rest = " ".join(words[len(kept) :])
        head = match.group(0)[: match.start("value") - match.start()]
        return f"{head}{value}{' ' + rest if rest else ''}"

    return _NAME_SLOT.sub(capitalised, sentence)


def stated_facts(sentence: str, earlier: Sequence[str] = ()) -> list[Stated]:
    """The facts `sentence` states about the user; `earlier` are the user's earlier turns of
    the conversation (what "it" refers to in "it's due Thursday")."""
    lower_case_note = _LOWER_CASE_JOB_AT.match(clean(sentence)) if sentence.islower() else None
    sentence = _places_capitalised(
        _names_capitalised(clean(sentence))
        if _LOWER_CASE_VOICE.match(sentence)
        else clean(sentence)
    )
    found: dict[str, Stated] = {}

    def keep(facts: Iterator[Stated]) -> None:
        for fact in facts:
            found.setdefault(fact.key, fact)

    keep(_name(sentence))
    keep(_field(sentence))
    keep(_introduction(sentence))
    if not _SUPPOSING.search(sentence):  # "if I went vegan, would I ...?"
        keep(_diet(sentence))
        keep(_languages(sentence))
        keep(_schedule(sentence))
    if not _WONDERING.search(sentence) and not any(
        f.attribute == "schedule" for f in found.values()
    ):
        for clause in [sentence.rstrip(" .!"), *clauses(_ASIDE_START.sub("", sentence))]:
            for part in _THEN.split(clause):  # "coffee first then standup at 9"
                keep(_nominal_schedule(part))
    parts = re.split(r",\s*(?:and\s+)?|\s+and\s+", sentence.rstrip(" .!"))
    if len(parts) > 1 and not _WONDERING.search(sentence) and not _SOMEONE_ELSE.search(sentence):
        for part in parts:  # "standup at 10 every day and spanish class tuesday evenings"
            if _SCHEDULE_PART_OPENER.match(part) or _SOMEONE_ELSE.search(part):
                continue
            activities = {w for f in found.values() if f.attribute == "schedule" for w in _words(f)}
            keep(f for f in _nominal_schedule(part) if not _words(f) & activities)
    keep(_day_off(sentence))
    keep(_shift_or_workplace_alone(sentence))
    keep(_allergy(sentence))  # "I can't have nuts, I'm allergic"
    keep(_terse_job(sentence))
    keep(_where_i_live(sentence))
    for fact in _corrected(sentence, [], earlier):
        found[fact.key] = fact  # "Wait, no, Bergen, I moved last year"
    kind_then_name = _KIND_THEN_NAME.search(sentence)
    if kind_then_name is not None and not NEGATION.search(sentence[: kind_then_name.start("org")]):
        keep(
            iter([Stated("employer", kind_then_name.group("org"))])
        )  # "at an insurance firm, Aviva"
    job_at = _MY_JOB_AT.search(sentence)
    if (
        job_at is not None
        and job_at.group("org").split()[0] not in _NOT_ORGS
        and not _LOST_JOB.search(sentence[: job_at.start()])
    ):
        keep(iter([Stated("employer", job_at.group("org"))]))  # "quitting my job at Deloitte"
    for fact in _replaced(sentence, earlier):
        found[fact.key] = fact  # "sorry, Swansea, not Cardiff"
    tool_clause: Stated | None = None
    previous = ""
    first = ""
    for clause in clauses(sentence):
        clause = _ASIDE_START.sub("", clause)  # "ok so I'm a midwife in Glasgow"
        if _WONDERING.search(clause):
            previous = ""
            continue
        keep(_name(clause))
        keep(_occupation(sentence, clause))
        keep(_bare_job(sentence, clause))
        keep(_employer(clause))
        keep(_where(clause))
        if previous and _CONTINUES.match(clause):
            # "I work in finance, at Barclays"; "I'm an electrician, self-employed, in Kumasi"
            for joined in dict.fromkeys((f"{previous} {clause}", f"{first} {clause}")):
                keep(_occupation(sentence, joined))
                keep(_employer(joined))
                keep(_where(joined))
                keep(_tools(joined))  # "I build websites for a living, mostly with WordPress"
        for fact in _corrected(clause, list(found.values()), earlier):
            found[fact.key] = fact  # the corrected value replaces the one said before
        previous = clause
        first = first or clause
        keep(_allergy(clause))
        keep(_deadline(clause, earlier, sentence))
        tools = list(_tools(clause))
        if not tools and tool_clause is not None:
            tools = list(_more_tools(clause, tool_clause))  # "I use Windows at work but Linux"
        elif not tools and _TOOL_NAMES & set(re.findall(r"[\w.+#-]+", sentence.casefold())):
            tools = list(_hated_tool(clause, sentence))  # "I write R and SQL, and I hate SPSS"
        keep(iter(tools))
        tool_clause = tools[-1] if tools else tool_clause
        keep(_catalogued(clause, {f.attribute for f in found.values()}))
        if not any(f.attribute in ("location", "hometown") for f in found.values()):
            keep(_in_a_known_place(clause))
    if lower_case_note is not None and not _NOT_JOBS & set(lower_case_note["job"].split()):
        keep(_job_at_org_town(lower_case_note))
    if not any(f.attribute == "deadline" for f in found.values()) and not _WONDERING.search(
        sentence
    ):
        keep(_deadline(sentence, earlier))  # "deadline for the zine: next Thursday"
    if not _WONDERING.search(sentence) and not sentence.rstrip().endswith("?"):
        keep(_fragments(sentence, {f.attribute for f in found.values()}))
    found = {
        k: f
        for k, f in found.items()
        if f.attribute not in ("location", "hometown")
        or not _is_tool_name(f.value)
        or known_place(f.value)
    }  # "I live in Figma"
    places = {f.value for f in found.values() if f.attribute in ("location", "hometown")}
    found = {
        k: f
        for k, f in found.items()
        if f.attribute != "tool" or f.item not in places or not known_place(f.item)
    }  # "we moved from Porto to Bristol": a town, not a tool
    tool_names = {f.item.casefold() for f in found.values() if f.attribute == "tool" and f.item}
    found = {
        k: f
        for k, f in found.items()
        if f.attribute not in ("location", "hometown", "employer")
        or not set(re.split(r",\s*|\s+and\s+", f.value.casefold())) <= tool_names
    }  # "we live in Slack and Linear"; "Affinity does everything I need"
    home = found.get("user/hometown")
    if home is not None and not known_place(home.value):
        town = re.search(
            rf"\b{re.escape(home.value)},? (?:(?:from|in) )?{_PLACE}"
            r"(?= city\b| originally\b|[,.;!]|$)",
            sentence,
        )
        if town is not None and known_place(town["place"]):  # "from Brazil, from Recife"
            found["user/hometown"] = Stated("hometown", town["place"])
    attributes = {f.attribute for f in found.values()}
    field = _WORK_IN_A_FIELD.search(sentence)
    if field is not None and not {"occupation", "employer"} & attributes:
        found["user/occupation"] = Stated("occupation", field["field"])  # "I work in marketing"
    for fact in _not_jobs(sentence, "occupation" in attributes):
        found.setdefault(fact.key, fact)
    for key, fact in list(found.items()):
        if fact.attribute == "deadline" and fact.item is not None:
            found[key] = _what_it_is(fact, sentence)
    named = {w for f in found.values() if f.attribute in ("deadline", "tool") for w in _words(f)}
    found = {k: f for k, f in found.items() if f.attribute != "schedule" or not _words(f) & named}
    return list(found.values())


_WORK_IN_A_FIELD: Final = re.compile(
    rf"(?:^|\bI(?:'m| am)? )(?:work|working) in (?P<field>{_FIELDS_OF_WORK})"
    r"(?!\w| (?:at|for|with|in)\b| company\b| firm\b)",
)
"""'I work in marketing, fully remote': a field of work and no employer is the user's job
(with an employer, "I work in marketing at HubSpot", the employer is the fact)."""
_NOT_A_JOB: Final = re.compile(
    rf"\bI(?:'m| am) not (?:really )?an? (?P<job>(?:[\w-]+ )?(?i:{_JOBS}))\b"
    rf"|(?P<contrast>, (?:and |but )?not an? )(?P<job2>(?:[\w-]+ )?(?i:{_JOBS}))(?=[,.;!]|$| by\b)",
)
"""'I'm not a developer, I'm a designer'; "I'm a pharmacist, not a chemist"."""


def _not_jobs(sentence: str, has_job: bool) -> Iterator[Stated]:
    """The jobs the user says they do not do; "..., not a chemist" only after their job."""
    for match in _NOT_A_JOB.finditer(sentence):
        if match["contrast"] and not has_job:
            continue
        job = _job(match["job"] or match["job2"])
        if _SOMEONE_ELSE.search(sentence[: match.start()].rsplit(",", 1)[-1].strip()):
            continue
        if re.match(r"\s*(?:any ?more|now|these days|no more)\b", sentence[match.end() :], _I):
            continue  # "I'm not a teacher anymore": a past job
        if job and not re.search(r"\b(?:fan|person|lot|bit|big|huge)\b", job, _I):
            article = "an" if job[:1].lower() in "aeiou" else "a"
            yield Stated("occupation", f"not {article} {job}", positive=False)


_SCHEDULE_PART_OPENER: Final = re.compile(
    rf"^(?:{_WEEKDAY}|(?:mon|tue|wed|thu|fri|sat|sun)\b|at\b|on\b|every\b|from\b|\d|I\b|my\b)",
    _I,
)
"""A part of a list that is only more days or times of the schedule before it."""


def _what_it_is(fact: Stated, sentence: str) -> Stated:
    """A deadline with what its work is, said after its date: "deadline for the next
    application is Friday, a lottery fund bid"."""
    what, _, when = fact.value.rpartition(" due ")
    if not when:
        return fact
    said = re.search(
        rf"\b{re.escape(when)},\s*(?:it's |which is )?an? (?P<what>[\w' -]{{3,40}}?)"
        r"(?= for\b|[,.;!]|$)",
        sentence,
        _I,
    )
    if said is None or said["what"].lower() in what.lower():
        return fact
    if said["what"].split()[-1].lower() in {"one", "thing", "lot", "bit", "pain", "nightmare"}:
        return fact  # "due Monday, a big one"
    return Stated("deadline", f"{what} ({said['what']}) due {when}", item=fact.item)


_LOWER_CASE_JOB_AT: Final = re.compile(
    r"^(?:(?:hi|hey|hiya|so|ok|okay|well)[,!]? )*(?:[Ii]'?m|[Ii] am) an? (?P<job>[a-z][\w-]*"
    r"(?: [a-z][\w-]*){0,2}) (?:at|for|with) (?P<org>[a-z][\w&'.-]*(?: [a-z][\w&'.-]*)?),\s*"
    r"(?:in |based in )?(?P<town>[a-z][\w'-]+(?: [a-z][\w'-]+)?)[.!]*$"
)
"""'im a sofware enginer at spotify, stockhlm': a lower-case note of job, employer and town,
whatever their spelling (the town is the slot after the employer)."""
_NOT_TOWNS: Final = _word_set(
    "lol haha tho though btw rn atm now currently remote remotely fulltime parttime mostly"
    " basically lately today yeah yes ok okay thanks mate sadly honestly"
)


def _job_at_org_town(note: re.Match[str]) -> Iterator[Stated]:
    yield Stated("occupation", note["job"])
    yield Stated("employer", note["org"])
    if not _NOT_TOWNS & set(note["town"].split()):
        yield Stated("location", note["town"])


_DAY_OFF: Final = re.compile(
    rf"(?:^|[,;]\s*)(?:(?:and|but|only|plus|on|also)\s+)*(?P<day>{_WEEKDAY}|weekends)"
    r"\s+(?:I(?:'m| am)|im)"
    r"\s+(?:always\s+|usually\s+)?(?P<state>off|free)\b"
    rf"|\bI(?:'m| am) (?:always |usually )?(?P<state2>free) (?:on )?(?P<day2>{_WEEKDAY})",
    _I,
)
"""'sunday I am free', "wednesday I'm off": the day the user has to themselves."""
_SHIFT_ALONE: Final = re.compile(
    r"^(?:(?:on|mostly|working|doing|currently)\s+)?(?P<shift>nights|lates|earlies|twilights"
    r"|(?:night|late|early|day|graveyard) shifts?)(?:\s+(?:mostly|only|atm|now))?[.!]*$",
    _I,
)
_WORKPLACE_ALONE: Final = re.compile(
    r"^(?P<place>(?:st\.? [a-z]+'s|(?!(?:the|a|an|my|our|local|big|small|private|public)\b)"
    r"[a-z]+(?: [a-z]+)? (?:infirmary|hospital|hospice|clinic|surgery|academy|college"
    r"|university|school|council|prison|library)))[.!]*$",
    _I,
)
"""In a note of fragments ("nurse. nights. st james's. leeds"), the shift and the named place
of work, each said alone."""


def _day_off(sentence: str) -> Iterator[Stated]:
    match = _DAY_OFF.search(sentence)
    if match is not None and not _WONDERING.search(sentence):
        state, day = (match["state"] or match["state2"]).lower(), match["day"] or match["day2"]
        yield Stated("schedule", f"{state} on {day}", item=state)


def _shift_or_workplace_alone(sentence: str) -> Iterator[Stated]:
    said = sentence.strip()
    shift = _SHIFT_ALONE.match(said)
    if shift is not None:
        yield Stated("schedule", shift["shift"], item=shift["shift"])
    place = _WORKPLACE_ALONE.match(said)
    if place is not None:
        yield Stated("employer", place["place"])


_KIND_THEN_NAME: Final = re.compile(
    r"\bI(?:'m| am| work| worked)\b[^.;]*? (?:at|for|with) an? (?:[\w-]+ ){0,3}?"
    r"(?:company|firm|bank|startup|agency|insurer|consultancy|charity|retailer|chain|brand"
    r"|studio|clinic|hospital|school|university|airline|telecom|telco),"
    r" (?:called |named |namely )?" + _ORG + r"\s*(?:[,.;!]|$)"
)
"""An employer named after what it is: "I'm an analyst at an insurance company, Aviva"."""
_I_MEANT: Final = re.compile(
    r"^(?:I (?:meant|mean) |(?i:wait|sorry|oops|actually)[,!]? (?i:no)[,!]? )"
    r"(?P<value>[A-Z][\w'.\u00c0-\u017f-]*(?: [A-Z][\w'.\u00c0-\u017f-]*)*)"
    r"(?: instead)?(?:[.!]*$|,)"
)
_NAMED_ATTRIBUTES: Final = frozenset({"location", "employer", "hometown", "name"})
_INSTEAD_OF: Final = re.compile(
    r"^(?:(?:sorry|oops|wait|no|actually|well|correction|and|oh|also|ok|okay)[,!:]? )*"
    r"(?:it's |it is |I'm |I am |I meant |I mean )?(?:an? )?(?P<new>[\w' -]+?),?"
    r" (?:actually,? )?(?:not|rather than|instead of) (?:an? |in |at )?"
    r"(?P<old>[\w' -]+?)(?=[,.;!]|$)",
    _I,
)
"""'sorry, Swansea, not Cardiff', "it's midwife actually, not nurse": a value said before,
replaced."""


def _replaced(sentence: str, earlier: Sequence[str]) -> Iterator[Stated]:
    """The new value of the fact whose value the user now says was wrong."""
    match = _INSTEAD_OF.match(sentence)
    if match is None:
        return
    old = match.group("old").strip().casefold()
    new = re.sub(r"\s+actually$", "", match.group("new").strip(), flags=_I)
    for text in reversed(earlier):
        for fact in stated_facts(text):
            if fact.item is None and fact.positive and fact.value.casefold() == old:
                yield Stated(fact.attribute, new)
                return


def _corrected(clause: str, found: Sequence[Stated], earlier: Sequence[str]) -> Iterator[Stated]:
    """ "Sorry, I meant Braga": the new value of the last name the user gave (a city, an
    employer, their name), in this sentence or their earlier turns."""
    match = _I_MEANT.match(clause)
    if match is None or match.group("value").split()[0] in _NOT_NAMES:
        return
    for facts in (found, *(stated_facts(text) for text in reversed(earlier))):
        named = [f for f in facts if f.attribute in _NAMED_ATTRIBUTES]
        if named:
            yield Stated(named[-1].attribute, match.group("value"))
            return


_WHERE_I_LIVE: Final = re.compile(
    r"\bin " + _PLACE + r",? (?:which is )?where (?:I|we) (?:live|are based)\b"
)


def _where_i_live(sentence: str) -> Iterator[Stated]:
    """'The bootcamp is in Manchester, where I live'."""
    match = _WHERE_I_LIVE.search(sentence)
    if match is not None and match.group("place").split()[0] not in _NOT_NAMES:
        yield Stated("location", match.group("place"))


_CONTINUES: Final = re.compile(
    r"^(?:(?:mostly|mainly|usually|also|currently|now|often) )?(?:at|for|with|in|as|from|using)\b",
    _I,
)
"""A clause that opens with a preposition goes on with the clause before it."""


def _words(fact: Stated) -> set[str]:
    return set((fact.item or fact.value).lower().split())


_MORE_TOOLS: Final = re.compile(
    r"^(?:(?P<only>only |just |but )|(?P<not>not |never |no ))?"
    r"(?P<tool>[A-Z][\w.+#-]*(?: [A-Z0-9][\w.+#-]*)*|[a-z]+[A-Z][\w.+#-]*)"
    r"(?: (?:at|for|on|in|when|with) [\w ]+| too| as well| instead)?$"
)


_NOT_LOWER_CASE_TOOL: Final = re.compile(r"^(?P<not>not |never )(?P<tool>[a-z][\w.+#-]*)$")


def _hated_tool(clause: str, sentence: str, among_tools: bool = False) -> Iterator[Stated]:
    """'I hate MATLAB' after the tools the user uses (`among_tools`) or where the sentence also
    names another tool the lexicon knows."""
    hated = _HATE_TOOL.search(clause)
    if hated is None or not _is_tool_name(hated["tool"]):
        return
    others = _TOOL_NAMES & set(re.findall(r"[\w.+#-]+", sentence.casefold()))
    if among_tools or others - {hated["tool"].casefold()}:
        yield Stated("tool", f"dislikes {hated['tool']}", item=hated["tool"], positive=False)


def _more_tools(clause: str, previous: Stated) -> Iterator[Stated]:
    """A clause naming only a tool after a clause about tools: the same verb, or its
    contrary after "not"; a tool the user hates, after the ones they use ("I code in Python,
    and I hate MATLAB": said of a tool among tools, not a taste)."""
    hated = list(_hated_tool(clause, clause, among_tools=True))
    if hated:
        yield from hated
        return
    done = _DONE_WITH.match(clause)
    if (
        done is not None
        and done["tool"][:1].isupper()
        and done["tool"].split()[0] not in _NOT_NAMES
        and not known_place(done["tool"])
    ):  # "I use Notion every day, Coda never again"
        yield Stated("tool", f"does not use {done['tool']}", item=done["tool"], positive=False)
        return
    match = _MORE_TOOLS.match(clause)
    if match is None and (previous.item or "").islower():
        match = _NOT_LOWER_CASE_TOOL.match(clause)  # "i use gradle, not maven"
    if match is None or match.group("tool").split()[0] in _NOT_NAMES:
        return
    name = match.group("tool")
    if match.groupdict().get("only") and not previous.positive:
        yield Stated("tool", name, item=name)  # "I don't use Windows, only Linux"
    elif (match.group("not") is None) == previous.positive:
        yield Stated("tool", name, item=name)
    else:
        yield Stated("tool", f"does not use {name}", item=name, positive=False)
