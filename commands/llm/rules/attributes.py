"""What a statement says about whom: the offline rules' reading of single-valued facts.

A newer statement replaces an older one only when it gives a new value of the same
single-valued attribute of the same person ("I live in Paris" / "I moved to Berlin last
month"; "My brother Oskar's number is ..." / "Oskar got a new phone, his number is now
..."), or when it explicitly corrects or ends what the older one said ("Sorry, I mixed that
up: my allergy is to tree nuts, not seafood"). Facts that are all true at once stay side by
side: other holders ("My sister lives in Rome" / "My brother lives in Milan"), attributes
that hold several values ("I speak Spanish" / "I also speak German"), other qualifiers
("My personal number ..." / "My work number ...") and other favourites ("favourite fruit"
/ "favourite dessert").

Rules read words, not meaning, so the catalogue below lists the attributes people state
about themselves and others in everyday wording (seed 000 leaves this decision to the
model; with the openai provider the reconstruction and reconcile prompts decide).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from mnemoledger.commands.write.attribution import speaker_and_body

_I = re.IGNORECASE


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Attribute:
    """One kind of fact a statement can give a value of."""

    name: str
    cue: re.Pattern[str]
    """Words by which a statement gives (or ends) a value of it."""
    single_valued: bool = True
    """A person has one value at a time: a newer value replaces the older."""
    replaced_on_change_only: bool = False
    """People often have two at once (a gym, a supermarket, a bank): a newer value replaces
    the older only when it says the older changed ("I work out at Anytime Fitness instead")."""


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _I)


ORG_WORDS: Final = (
    r"job|company|startup|start-up|firm|agency|studio|shop|store|restaurant|caf[eé]|bank"
    r"|office|practice|clinic|hospital|school|university|lab|team|business|employer|role"
)
JOB_NOUNS: Final = (
    r"accountant|actor|actress|analyst|architect|artist|assistant|attorney|baker|banker"
    r"|barista|bartender|carpenter|cashier|chef|clerk|coach|consultant|cook|counsel+or"
    r"|dentist|designer|developer|director|doctor|driver|economist|editor|electrician"
    r"|engineer|farmer|firefighter|founder|freelancer|hairdresser|intern|journalist|judge"
    r"|lawyer|lecturer|librarian|manager|mechanic|midwife|musician|nurse|officer|paralegal"
    r"|paramedic|pharmacist|photographer|physician|physio(?:therapist)?|pilot|plumber"
    r"|professor|programmer|psychologist|receptionist|recruiter|researcher|salesperson"
    r"|scientist|secretary|surgeon|teacher|technician|therapist|translator|tutor|vet"
    r"|veterinarian|waiter|waitress|writer|student|retiree|ceo|cto|cfo|vp|lead|head"
    r"|postdoc|associate|coordinator|midwife|nanny|cleaner|guard|soldier|officer|agent|tester"
    r"|porter|hygienist|phlebotomist|operative|carer|courier|postman|postwoman|builder"
    r"|sommelier|optometrist|anaesthetist|anesthetist|dietitian|dietician|orthodontist"
    r"|[a-z]+ographer|[a-z]+ologist|[a-z]+ician|[a-z]+iatrist"
)
_CAR_BRANDS: Final = (
    r"toyota|honda civic|honda jazz|honda accord|ford|tesla|audi|bmw|volvo|volkswagen|vw"
    r"|fiat|kia|hyundai|nissan|mazda|subaru|mercedes|peugeot|renault|skoda|citro[eë]n|opel"
    r"|vauxhall|lexus|porsche|jaguar|land rover|range rover|dacia|polestar|rivian|jeep"
    r"|chevrolet|chevy|mini cooper|prius|corolla|golf|civic"
)
_NUMBER_WORDS: Final = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety"
)
_TRANSPORT: Final = (
    r"train|bus|tube|subway|metro|tram|ferry|bike|bicycle|cycl\w*|walk\w*|driv\w*|car"
    r"|scooter|motorbike|motorcycle|carpool\w*|run\w*"
)

_SITES: Final = r"office|branch|site|campus|depot|plant|warehouse|headquarters|hq|factory"
_SITE: Final = (
    rf"(?:(?:the|our|my|his|her|their|a|an) (?:[\w-]+ ){{0,2}}(?:{_SITES})s?"
    r"|(?-i:HQ)|head ?office|headquarters)\b"
)
NOT_A_SITE: Final = rf"(?! {_SITE})"
"""Not before "the Leeds branch", "our London office": a place of work, not a home, an
employer or a school ("I'm based in our London office", "I moved to the Leeds branch")."""
_GYM_NAME: Final = (
    r"(?=(?-i:[A-Z]))(?:(?-i:[A-Z])[\w'&-]*\s){0,2}(?:(?-i:[A-Z])[\w'&-]*?)?"
    r"(?:gym|fitness|leisure|crossfit)\b"
)
"""A gym by a name that says so: "PureGym", "Anytime Fitness", "Gold's Gym"."""
_HOME: Final = (
    r"(?:(?!holiday |second |summer |rental |buy-to-let )[\w-]+ ){0,4}?(?:house|flat"
    r"|apartment|home|place|semi|bungalow|cottage|terrace|condo|townhouse|studio|duplex"
    r"|maisonette|loft|dorm|houseboat|narrowboat|caravan|farmhouse|new[- ]build|detached)s?\b"
)
"""A home by its kind: "a three-bedroom semi", "a terraced house", not "a holiday cottage"."""
_ROUTINE_TIME: Final = (
    r"(?:at|around|about|by|before|after|from|for|until|till) (?:\d|half|quarter|noon|midday)"
)
"""A time of day after a routine's verb ("getting up at 5:15", "going to bed around 10")."""


def _meal_cue(meal: str) -> re.Pattern[str]:
    """When one has a meal: "I have lunch at 12:30", "I've started taking my lunch at 1:30"."""
    return _cue(
        r"\b(?:have|has|having|had|eat|eats|eating|ate|take|takes|taking|took|grab|grabs"
        rf"|grabbing|grabbed) (?:(?:my|our|his|her|their) )?{meal}(?: break)?"
        rf" {_ROUTINE_TIME}|\b{meal}(?: break)? is {_ROUTINE_TIME}"
    )


ATTRIBUTES: Final = (
    Attribute(
        "residence",
        _cue(
            r"\b(?:live|lives|living|lived|reside|resides|residing|settled) in\b"
            r"|\b(?:moved|moving|move|relocated|relocating|relocate) (?:back )?to\b"
            + NOT_A_SITE
            + r"|\bbased in\b"
            + NOT_A_SITE
            + r"|\bhome for (?:me|us) is\b|\b(?:our|my) (?:new )?(?:home|place) is in\b"
            r"|\b(?:after|since) (?:our|my|the) move\b"
            r"|\bmoved (?:out|away|house|home|back|there|from)\b|\blive with\b"
            rf"|\b(?:rent|own|bought|renting|buying) (?:a|an|the|my|our) {_HOME}"
            rf"|\b(?:moved|moving|move|moves) (?:(?:back|in|over|out) )?into"
            rf" (?:a|an|the|our|my|his|her|their) {_HOME}"
            r"|\b(?:live|lives|living|lived) on (?:a|an|the|my|our) (?:[\w-]+ ){0,2}?"
            r"(?:houseboat|narrowboat|boat|barge|farm|estate|island)\b"
        ),
    ),
    Attribute(
        "hometown",
        _cue(r"\b(?:grew up|raised|born and raised) in\b|\bhometown\b|\boriginally from\b"),
    ),
    Attribute("birth_year", _cue(r"\bborn in (?:19|20)\d\d\b")),
    Attribute(
        "employer",
        _cue(
            r"\b(?:work|works|working|worked) (?:at|for)\b"
            + NOT_A_SITE
            + r"|\bemployed (?:at|by)\b"
            r"|\b(?:joined|joining)\b|\bchanged (?:jobs|employers|companies)\b"
            r"|\b(?:new|old|current|day) job\b|\bjob at\b|\bhired (?:at|by)\b"
            r"|\b(?:quit|left|leaving|resigned from)\b (?:(?:my|the|his|her|that|a|an|old) )?"
            rf"(?:(?-i:[A-Z])[\w&.-]*|(?:\w+ )?(?:{ORG_WORDS}))"
            r"|\b(?:i'm|i am|she's|she is|he's|he is|they're|they are) (?:now )?(?:at|with)"
            r" (?-i:[A-Z])"
            r"|\bemployer\b|\bmoved (?:schools|companies|firms|jobs)\b|\bteach(?:es|ing)? at\b"
            r"|\b(?:i'm|i am|she's|she is|he's|he is) (?:an? )(?:[\w-]+ ){1,3}at (?-i:[A-Z])"
            r"|\b(?:i've|i have|she's|he's) been at (?-i:[A-Z])"
            rf"|\b(?:{JOB_NOUNS}) at\b|\bfound a job\b"
            r"|\b(?:started|starting|began) (?:(?:work|working|a (?:new )?job|my new job) )?at"
            r" (?-i:[A-Z])|\b(?:started|starting|began) (?:work|working|a (?:new )?job) with"
            r" (?-i:[A-Z])"
        ),
    ),
    Attribute(
        "occupation",
        _cue(
            r"\b(?:work|works|working|worked) (?:as\b|(?:[\w-]+ ){1,2}as an?\b)"
            r"|\bjob (?:title )?is\b|\bprofession\b"
            r"|\bfreelanc\w*(?: as)?\b|\bpromoted\b|\b(?:bumped|moved|stepped) up to\b"
            r"|\bretired\b|\b(?:job )?title\b"
            r"|\bteach(?:es|ing)?\b(?! \w+ (?:lessons|classes))"
            r"|\b(?:i'm|i am|am|is|are|'s|'m|became|become) (?:now |currently |still |the )?"
            rf"(?:an? )?(?:[\w-]+ ){{0,2}}(?:{JOB_NOUNS})s?\b"
        ),
    ),
    Attribute(
        "phone",
        _cue(
            r"\b(?:phone|mobile|cell|telephone|landline|whatsapp)(?: number)?\b(?=.*\d{3})"
            r"|\bnumber\b(?=.*\d{3})|\breach (?:me|him|her|them|us) (?:on|at)\b(?=.*\d{3})"
        ),
    ),
    Attribute("email", _cue(r"\be-?mail\b|[\w.+-]+@[\w-]+\.[\w.]+")),
    Attribute(
        "diet",
        _cue(
            r"\b(?:vegetarian|vegan|pescatarian|pescetarian|keto|paleo|carnivore|omnivore"
            r"|plant-based|flexitarian|low-carb|low-fat|gluten-free|dairy-free|sugar-free"
            r"|whole30|intermittent fasting|mediterranean(?:-style)?)\b|\bdiet\b"
            r"|\beat(?:s|ing)? (?:meat|fish|chicken)\b"
            r"|\beat (?:everything|anything)\b"
        ),
    ),
    Attribute(
        "relationship",
        _cue(
            r"\b(?:single|dating|married|engaged|divorced|separated|widowed)\b"
            r"|\bin a relationship\b|\bseeing (?:someone|somebody)\b"
            r"|\b(?:my|his|her|a) (?:boyfriend|girlfriend|fianc[eé]e?)\b|\b(?:broke|split) up\b"
        ),
    ),
    Attribute(
        "manager",
        _cue(
            r"\b(?:manager|boss|supervisor|team lead)(?:'s name)? (?:is|was|'s)\b"
            r"|\b(?:is|'s) (?:my|his|her|our) (?:new )?(?:manager|boss|supervisor|team lead)\b"
            r"|\breport(?:s|ing)? (?:directly )?to\b|\bnew (?:manager|boss|supervisor)\b"
        ),
    ),
    Attribute(
        "car",
        _cue(
            r"\b(?:drive|drives|driving|drove) (?:an?|my|the|his|her) (?!(?:\w+ )?to\b)"
            r"|\b(?:my|his|her|our|old|new|that|first) (?:car|vehicle)\b|\bcar is\b"
            rf"|\b(?:{_CAR_BRANDS})\b"
        ),
    ),
    Attribute(
        "commute",
        _cue(
            r"\bcommut\w*\b"
            rf"|\b(?:{_TRANSPORT})\b(?:\s+\w+){{0,3}}\s+(?:to|into) (?:work|the office|school)\b"
            rf"|\b(?:to|into) (?:work|the office) (?:by|on) (?:{_TRANSPORT})\b"
        ),
    ),
    Attribute(
        "timezone",
        _cue(
            r"\btime ?zone\b|\b(?:pacific|eastern|central|mountain|atlantic|greenwich"
            r"|central european|eastern european|western european|british summer|india"
            r"|japan|australian eastern)(?: standard| daylight| summer)? time\b"
            r"|\b(?:UTC|GMT)\s*[+-]\s*\d+"
        ),
    ),
    Attribute(
        "doctor",
        _cue(
            r"\b(?:my|our|his|her) (?:(?:family|new|regular|usual) )?(?:doctor|gp|physician)\b"
            r"(?!'?s? (?:appointment|visit|check|office|surgery))"
            r"|\b(?:switched|changed) (?:gps|doctors)\b|\bnew (?:gp|doctor)\b"
        ),
    ),
    Attribute(
        "dentist",
        _cue(
            r"\b(?:my|our|his|her) (?:new |regular )?dentist\b(?!'?s? (?:appointment|visit|check))"
            r"|\b(?:changed|switched) dentists\b"
        ),
    ),
    Attribute("therapist", _cue(r"\b(?:my|our|his|her) (?:new )?therapist\b")),
    Attribute(
        "airport",
        _cue(
            r"\bhome airport\b|\bfl(?:y|ies|ying|ew) (?:out of|from)\b"
            r"|\bflights? (?:leaves?|departs?|leaving|departing|goes|go) (?:out of|from)\b"
            r"|\bdepart(?:s|ing)? from\b"
        ),
    ),
    Attribute("birthday", _cue(r"\bbirthday\b|\bborn on\b|\bdate of birth\b")),
    Attribute(
        "name",
        _cue(
            r"\bname(?:'s| is| was)\b|\bcall me\b|\bgoes by\b|\b(?:is|are|'s) (?:called|named)\b"
            r"|\bspelled\b"
        ),
    ),
    Attribute("pronouns", _cue(r"\bpronouns\b")),
    Attribute("native_language", _cue(r"\b(?:native|first) language\b|\bmother tongue\b")),
    Attribute("editor", _cue(r"\beditor\b|\bIDE\b")),
    Attribute("browser", _cue(r"\bbrowser\b")),
    Attribute("laptop", _cue(r"\b(?:my|his|her) (?:new |work )?(?:laptop|computer)\b")),
    Attribute(
        "age",
        _cue(
            rf"\b(?:\d{{1,3}}|{_NUMBER_WORDS}) years? old\b|\bmy age\b"
            rf"|\b(?:turned|turns|turning|will be) (?:\d{{1,3}}|{_NUMBER_WORDS})\b"
        ),
    ),
    Attribute("rent", _cue(r"\b(?:my|our|the) rent\b|\braised (?:my|our|the) rent\b")),
    Attribute("salary", _cue(r"\bsalary\b|\bi earn\b|\bgot a raise\b")),
    Attribute(
        "phone_model",
        _cue(
            r"\b(?:iphone|pixel \d|galaxy s\d+|samsung galaxy|oneplus|android phone)\b"
            r"|\b(?:my|his|her) (?:phone|smartphone) is an?\b"
        ),
    ),
    Attribute(
        "operating_system",
        _cue(r"\b(?:windows|macos|mac os|ubuntu|fedora|debian|arch linux|chromeos|linux mint)\b"),
    ),
    Attribute(
        "gym",
        _cue(
            r"\b(?:my|our) gym\b|\bgym membership\b|\b\w*gym\b membership"
            r"|\b(?:train|trains|training|trained|lift|lifts|lifting|lifted|exercis(?:e|es|ing|ed)"
            r"|work(?:s|ing|ed)? out|go(?:es|ing)? to the gym|went to the gym|been going to the gym"
            r"|(?:a|am a|is a|'m a|'s a) member) at"
            r" (?:(?:the|a|an|my|our) )?(?:(?-i:[A-Z])|(?:[\w'-]+ ){0,3}(?:gym|fitness|leisure))"
            r"|\b(?:join|joins|joined|joining|switch(?:ed|ing)? to|mov(?:e|es|ed|ing) to"
            r"|go(?:es)? to|going to|went to|signed up (?:at|with|to)|member (?:at|of))"
            rf" (?:the )?{_GYM_NAME}"
        ),
        replaced_on_change_only=True,
    ),
    Attribute(
        "shopping",
        _cue(
            r"\b(?:shop|shops|shopping|shopped) (?:at|in)\b"
            r"|\b(?:do|does|doing|did|get|gets|getting|got|buy|buys|buying|bought)"
            r" (?:(?:my|our|his|her|their|the) )?(?:weekly |food |grocery |big )?"
            r"(?:groceries|grocery shopping|food shopping|shopping|shop|food shop) (?:at|from|in)\b"
            r"|\b(?:my|our) (?:usual |local )?supermarket\b"
            r"|\bfor (?:(?:our|my|the) )?(?:groceries|grocery shopping|food shopping|weekly shop"
            r"|food shop|big shop)\b"
        ),
        replaced_on_change_only=True,
    ),
    Attribute("shoe_size", _cue(r"\bshoe size\b|\bsize \d+ shoes?\b")),
    Attribute("weight", _cue(r"\bi weigh\b|\b\d+ ?(?:kilos|kg|pounds|lbs)\b")),
    Attribute("smoking", _cue(r"\bsmok(?:e|es|er|ing)\b")),
    Attribute(
        "bedtime",
        _cue(
            r"\b(?:go|goes|going|went|gone) to (?:bed|sleep)\b|\bbedtime\b"
            rf"|\b(?:turn|turns|turning|turned) in {_ROUTINE_TIME}"
        ),
    ),
    Attribute(
        "wake_time",
        _cue(
            r"\b(?:wake|wakes|waking|woke|woken|get|gets|getting|got|gotten) up"
            rf" (?:{_ROUTINE_TIME}|at\b)|\bmy alarm\b"
        ),
    ),
    *(
        Attribute(f"{meal}_time", _meal_cue(meal))
        for meal in ("breakfast", "lunch", "dinner", "supper")
    ),
    Attribute(
        "leave_for_work",
        _cue(
            r"\b(?:leave|leaves|leaving|left|head|heads|heading|headed|set|sets|setting)"
            r" (?:off |out )?(?:for|to) (?:work|the office)\b"
            rf"|\b(?:leave|leaves|leaving|left) (?:the house|home) {_ROUTINE_TIME}"
        ),
    ),
    Attribute(
        "work_start",
        _cue(
            r"\b(?:start|starts|starting|started|begin|begins|beginning|began) work"
            rf" {_ROUTINE_TIME}|\b(?:clock|clocks|clocking|clocked|log|logs|logging|logged)"
            rf" (?:in|on) {_ROUTINE_TIME}"
        ),
    ),
    Attribute(
        "work_end",
        _cue(
            r"\b(?:finish|finishes|finishing|finished|leave|leaves|leaving|left) work\b"
            rf"|\b(?:clock|clocks|clocking|clocked|log|logs|logging|logged) (?:off|out)"
            rf" {_ROUTINE_TIME}|\b(?:finish|finishes|finishing|finished) {_ROUTINE_TIME}"
        ),
    ),
    Attribute(
        "school",
        _cue(
            r"\bschool is\b|\b(?:studies|study|studying) (?:in|at)\b"
            r"|\btransferred (?:(?-i:[A-Z])[\w'-]+ |him |her |them )?to\b"
            + NOT_A_SITE
            + r"|\b(?:go|goes|going|started|starts|is|'s|are) (?:now )?(?:at |to )"
            r"(?:(?-i:[A-Z])[\w'.-]+ )+"
            r"(?-i:Elementary|Primary|Academy|High|School|College|Nursery|Kindergarten|Prep)\b"
            r"|\b(?:primary|secondary|high school|academy|kindergarten|university) in\b"
        ),
    ),
    Attribute(
        "study_subject",
        _cue(
            r"\bmy major\b|\bmajor(?:ing)? in\b|\bi'm studying\b"
            r"|\b(?:master'?s|bachelor'?s|phd|doctorate|mba|msc|bsc|degree|diploma) in\b"
        ),
    ),
    Attribute(
        "work_site",
        _cue(
            r"\b(?:based|work|works|working|worked|transferr(?:ed|ing)|transfers?|moved|moving"
            r"|relocat(?:ed|ing|es?)|posted|stationed|sent|seconded|i'm|i am|he's|she's|is)"
            r" (?=(?:(?:over|back|out|down|up|across|permanently) )?(?:in|at|to|from|out of|into)"
            rf" {_SITE})"
        ),
    ),
    Attribute(
        "work_location",
        _cue(r"\bwork (?:from|at) (?:home|the office)\b|\bfrom the office\b|\bremotely\b"),
    ),
    Attribute(
        "work_hours",
        _cue(
            r"\b(?:part|full)[- ]time\b"
            r"|\bwork(?:s|ing)? (?:from )?\d{1,2}(?::\d\d)? ?(?:am|pm)? (?:to|till|until|-) \d"
            r"|\bwork(?:s|ing)? (?:only )?(?:on )?(?:mon|tues|wednes|thurs|fri|satur|sun)day"
            r"s? (?:to|through|till|until|-) (?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
        ),
    ),
    Attribute(
        "employment_status",
        _cue(
            r"\bunemployed\b|\bbetween jobs\b|\bfound a job\b|\bback at work\b"
            r"|\bon (?:maternity|paternity|parental|sick) leave\b"
        ),
    ),
    Attribute("shift", _cue(r"\b(?:night|day|early|late) shifts?\b|\bworks? nights\b")),
    Attribute(
        "sports_team",
        _cue(
            r"\bplay(?:s|ing)? for\b|\bsupport(?:er|s)?\b|\bfan of\b"
            r"|\b(?:root|cheer)(?:s|ing|ed)? for\b"
        ),
    ),
    Attribute(
        "bank",
        _cue(
            r"\bmy bank\b|\bbank account\b|\bmoved my account\b|\bbank(?:s|ing|ed)? with\b"
            r"|\b(?:checking|current) account\b"
        ),
        replaced_on_change_only=True,
    ),
    Attribute(
        "main_language",
        _cue(r"\b(?:main|primary) (?:programming )?language\b|\bmostly (?:write|code in)\b"),
    ),
    Attribute("address", _cue(r"\b(?:home |postal |street )?address is\b|\bnew address\b")),
    Attribute("username", _cue(r"\busername\b|\bhandle is\b|\bgamertag\b")),
    Attribute("password", _cue(r"\bpassword\b")),
    Attribute(
        "school_year",
        _cue(r"\b(?:year|grade) \d+\b|\b(?:first|second|third|fourth|final) year\b"),
    ),
    Attribute(
        "allergy",
        _cue(r"\ballerg\w*\b|\bintoleran\w*\b"),
        single_valued=False,
    ),
    Attribute(
        "language",
        _cue(r"\bspeak(?:s|ing)?\b|\blearning (?:to speak )?(?-i:[A-Z])\w+\b"),
        single_valued=False,
    ),
)
"""The catalogue. Single-valued unless marked: one value replaces the other."""

ROUTINES: Final = frozenset(
    {"bedtime", "wake_time", "leave_for_work", "work_start", "work_end"}
    | {a.name for a in ATTRIBUTES if a.name.endswith("_time")}
)
"""The times of a daily routine: a morning that went otherwise is no new routine."""

_FAVOURITE: Final = re.compile(
    r"\b(?:favou?rite|fave|preferred)\s+((?:[\w-]+\s+){0,3}?)([\w-]+)\s+(?:is|are|was|has been"
    r"|has become|became|these days|right now|at the moment|now)\b"
    r"|\b(?:is|are)\s+(?:my|his|her|our)\s+(?:new\s+)?(?:favou?rite|fave)\s+([\w-]+)",
    _I,
)
_SAME_FAVOURITE: Final = {
    "series": "show",
    "programme": "show",
    "program": "show",
    "film": "movie",
    "novel": "book",
    "color": "colour",
    "dish": "food",
    "meal": "food",
    "singer": "artist",
    "musician": "artist",
    "group": "band",
}
_WEEKDAY_OR_TIME: Final = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b"
    r"|\b(?:mornings?|afternoons?|evenings?|nights?|weekends?|weekdays?|daily|weekly)\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]* \d{1,2}\b"
    r"|\b\d{1,2}(?::\d{2})\b|\b\d{1,2}(?:st|nd|rd|th)\b",
    _I,
)
_SCHEDULE_CUE: Final = re.compile(
    r"\b(?:is|are|was|were|falls?|happens?|leaves?|departs?|starts?|begins?|meets?)\s+(?:now\s+)?"
    r"(?:on|at|every)\b|\b(?:moved|changed|switched|rescheduled|pushed|postponed|brought forward)"
    r"\b(?:\s+\w+){0,3}?\s+to\b",
    _I,
)

ENDED: Final = re.compile(
    r"\b(?:no longer|not anymore|any ?more|stopped|quit|gave up|used to|don't \w+ (?:any ?more)"
    r"|never again)\b",
    _I,
)
"""Words by which a statement says an older value no longer holds."""

QUALIFIERS: Final = {
    "work": re.compile(r"\b(?:work|office|business|professional|company)\b", _I),
    "home": re.compile(r"\b(?:home|landline|house)\b", _I),
    "school": re.compile(r"\b(?:school|university|student)\b", _I),
}
"""Kinds of one attribute that hold side by side ("my work phone" / "my personal phone")."""
_QUALIFIED: Final = frozenset({"phone", "email", "laptop", "address"})

KIN: Final = _word_set(
    "sister brother mother father mom mum dad son daughter wife husband partner spouse"
    " boyfriend girlfriend fiance fiancee friend colleague coworker co-worker boss manager"
    " cousin aunt uncle niece nephew grandma grandmother grandpa grandfather grandson"
    " granddaughter neighbour neighbor roommate flatmate kid child baby stepson"
    " stepdaughter stepmother stepfather in-law mentor teammate landlord"
)
"""Words naming a person by their relation to the user."""
_THIRD_PERSON: Final = frozenset({"he", "she", "they", "his", "her", "their", "him", "them"})
_NOT_NAMES: Final = _word_set(
    "i i'm i've i'd i'll my me we we're our us you your the a an after since last these"
    " this that those actually sorry oops correction let just also now today tonight"
    " tomorrow on in at for from home every when then so but and yes no well oh hey please"
    " recently currently lately nowadays starting as it he she they his her their its"
    " update note fyi btw by back over one two my mine here there what which who how if"
    " once before during while until dr mr mrs ms prof st monday tuesday wednesday"
    " thursday friday saturday sunday january february march april may june july august"
    " september october november december english spanish french german italian portuguese"
    " chinese japanese korean dutch contact call email text reach use send write ask tell"
    " remember note keep find most some many all both each few several usually often always"
    " normally generally sometimes mostly weekdays weekends mornings evenings nights days"
)
_CLAUSE: Final = re.compile(r"[,;:](?=\s|$)|\s+(?:and|but|so|because)\s+", _I)
_WORD: Final = re.compile(r"[A-Za-z][\w'&.-]*")
_VALUE: Final = re.compile(r"\d[\d:./-]*|[A-Z][\w&.-]*|[\w.+-]+@[\w.-]+")


FACTS_CACHE_SIZE: Final = 8192
"""Texts whose facts are kept once read (a Fact is immutable)."""


@dataclass(frozen=True)
class Fact:
    """One attribute a statement gives a value of, and whose it is."""

    attribute: str
    holder: frozenset[str]
    """Names and relation words of the person it is about; empty: the speaker (the user)."""
    single_valued: bool = True
    detail: frozenset[str] = frozenset()
    """Words that tell one of its kind from another: "hot" of a favourite drink, "piano
    lessons" of a schedule."""

    def same_attribute(self, other: Fact) -> bool:
        """The same attribute, of the same kind: details compatible (a favourite "tv show"
        is a favourite "show"; a "hot drink" is not a "cold drink"; schedules of activities
        that share most of their words)."""
        if self.attribute != other.attribute:
            return False
        if self.attribute == "schedule":
            shared = self.detail & other.detail
            return len(shared) * 2 >= min(len(self.detail), len(other.detail)) and bool(shared)
        return self.detail <= other.detail or other.detail <= self.detail


def facts_of(text: str) -> list[Fact]:
    """The attributes `text` gives values of, each with its holder, in catalogue order."""
    return list(_facts_of(text))


_NAMED_OBJECT: Final = re.compile(r"\w+ ((?-i:[A-Z])[\w'-]+) (?:to|from)\b", _I)
"""A cue whose verb takes the person it is about as its object ("transferred Theo to")."""


@lru_cache(maxsize=FACTS_CACHE_SIZE)
def _facts_of(text: str) -> tuple[Fact, ...]:
    # one add compares each new statement with every related memory: the same texts are
    # read again and again, and each reading runs the whole catalogue's patterns
    _, body = speaker_and_body(text)
    found: dict[str, Fact] = {}
    for attribute in ATTRIBUTES:
        match = attribute.cue.search(body)
        if match is None:
            continue
        name = attribute.name
        if name in _QUALIFIED:
            name = f"{name}:{_qualifier(_clause_around(body, match.start(), match.end()))}"
        holder = _holder(body, match.start(), match.end())
        moved = _NAMED_OBJECT.match(match.group(0))
        if moved and not holder and _is_name(moved.group(1)):
            holder = frozenset({moved.group(1).lower()})  # "We transferred Theo to ..."
        found.setdefault(name, Fact(name, holder, attribute.single_valued))
    favourite = _FAVOURITE.search(body)
    if favourite is not None:
        noun = (favourite.group(2) or favourite.group(3) or "").lower()
        noun = _SAME_FAVOURITE.get(noun, noun.removesuffix("s"))
        kind = frozenset(_WORD.findall((favourite.group(1) or "").lower())) - _GENERIC_KINDS
        name = f"favourite:{noun}"
        found[name] = Fact(name, _holder(body, favourite.start(), favourite.end()), detail=kind)
    if any(name.startswith("email") for name in found):
        found = {k: v for k, v in found.items() if not k.startswith("address")}
    schedule = _schedule_of(body)
    if schedule is not None:
        found[schedule.attribute] = schedule
    provider = _provider_of(body)
    if provider is not None:
        found.setdefault(provider.attribute, provider)
    return tuple(found.values())


_SERVICES: Final = (
    ("internet", r"internet|broadband|wi-?fi|fib(?:re|er)(?: broadband)?|isp"),
    (
        "mobile",
        r"mobile(?: phone)?(?: network| plan| contract| provider| carrier)?"
        r"|(?:phone|cell) (?:contract|plan|provider|carrier|network)|carrier|sim(?: card)?|phones",
    ),
    ("energy", r"energy|electricity|electric|gas(?: and electric(?:ity)?)?|power"),
    ("tv", r"tv|television|cable|satellite"),
    ("water", r"water"),
)
_SERVICE_WORDS: Final = "|".join(f"(?P<{name}>{words})" for name, words in _SERVICES)
_SERVICE: Final = re.compile(
    r"\b(?:(?P<insured>car|motor|home|house|contents|buildings|health|pet|travel|life|van"
    rf"|dental) (?:insurance|insurer|cover|policy)|{_SERVICE_WORDS})\b",
    _I,
)
_PROVIDER_CUE: Final = re.compile(
    r"\b(?:provider|supplier|carrier|network|insurer|contract|tariff|package|company)\b"
    r"|\b(?:is|are|was|'s|'re|am|be|been|go|goes|went|gone|going|stay|stayed|signed up)"
    r" (?:with|on|through)\b|\b(?:switch|switched|switching|move|moved|moving|change|changed"
    r"|changing|swap|swapped|swapping|port|ported|porting)\b"
    r"|\b(?:from|through|via|with|to) (?-i:[A-Z])",
    _I,
)
"""Words by which a statement names who provides a service ("Our internet provider is
Comcast", "We switched our broadband to Verizon Fios")."""


def _provider_of(body: str) -> Fact | None:
    """'Our internet provider is Comcast', 'Mum switched her broadband to Sky': who provides
    a household service, one provider per service (internet, mobile, energy, each kind of
    insurance), keyed by the service."""
    service = _SERVICE.search(body)
    if service is None or _PROVIDER_CUE.search(body) is None:
        return None
    names = [
        w
        for w in _WORD.findall(body[service.end() :] + " " + body[: service.start()])
        if _is_name(w) and not _SERVICE.fullmatch(w)
    ]
    if not names:
        return None
    kind = service.lastgroup or ""
    if kind == "insured":
        kind = f"insurance:{service.group('insured').lower()}"
    return Fact(f"provider:{kind}", _holder(body, service.start(), service.end()))


_GENERIC_KINDS: Final = _word_set("tv all time ever")
"""Words of a favourite's kind that do not make another kind ("favourite TV show")."""
_SCHEDULE_FILLER: Final = _word_set(
    "i my we our have has go goe usually always just get got sorry meant moved changed"
    " switched actually now day time"
)


def _schedule_of(body: str) -> Fact | None:
    """'My piano lessons are on Mondays': when a named activity happens, keyed by the
    activity's words (a team meeting and choir practice are two schedules)."""
    when = _WEEKDAY_OR_TIME.search(body)
    if when is None:
        return None
    for clause in _CLAUSE.split(body):
        cue = _SCHEDULE_CUE.search(clause)
        if cue is None or not _WEEKDAY_OR_TIME.search(clause[cue.start() :]):
            continue
        activity = [
            w.lower()
            for w in _WORD.findall(clause[: cue.start()])
            if w.lower() not in _NOT_NAMES and w.lower() not in _STOP
        ]
        if activity:
            key = frozenset(w.removesuffix("s") for w in activity) - _SCHEDULE_FILLER
            return Fact("schedule", _holder(clause, 0, cue.start()), detail=key)
    return None


_STOP: Final = _word_set(
    "is are was were be been the a an of my our your his her their to in on at for with"
    " class classes"
)


def _clause_around(body: str, start: int, end: int) -> str:
    bounds = [0, *(m.end() for m in _CLAUSE.finditer(body)), len(body)]
    left = max(b for b in bounds if b <= start)
    right = min((b for b in bounds if b >= end), default=len(body))
    return body[left:right]


def _qualifier(clause: str) -> str:
    for name, pattern in QUALIFIERS.items():
        if pattern.search(clause):
            return name
    return "personal"


_SPEAKERS_OWN: Final = re.compile(r"\b(?:my|our)\b", _I)
_PERSON_NOUN: Final = re.compile(r"\b(?:number|phone|e-?mail|address|birthday|name|age)\b", _I)
"""Cues that name something a person has ("the number for Rafael"), unlike a move."""


def _holder(body: str, start: int, end: int) -> frozenset[str]:
    """Whose value the cue at body[start:end] gives: the names and relation words before
    it in its clause ("My sister Ingrid lives in"), a name right after it ("the number
    for Rafael"), the first name of the text for a pronoun ("Oskar got a new phone, his
    number is"); empty for the speaker."""
    if _SPEAKERS_OWN.search(body[start:end]):
        return frozenset()  # "Mirela is my team lead now", "our family doctor is"
    bounds = [0, *(m.end() for m in _CLAUSE.finditer(body))]
    clause_start = max(b for b in bounds if b <= start)
    words = _subject_words(body[clause_start:start])
    holder = {w.lower().removesuffix("'s") for w in words if w.lower().removesuffix("'s") in KIN}
    holder |= {w.removesuffix("'s").lower() for w in words if _is_name(w)}
    before = body[clause_start:start]
    if (
        not holder
        and clause_start > 0
        and not any(
            w.lower() in _SPEAKER or w.lower() in {"my", "our"} for w in _WORD.findall(before)
        )
    ):
        # "Maya switched jobs and now works at Globex": the clause shares the first's subject
        first_clause = body[: min(b for b in bounds if b > 0)]
        subject = _subject_words(first_clause)
        holder = {w.lower().removesuffix("'s") for w in subject if w.lower() in KIN}
        holder |= {w.removesuffix("'s").lower() for w in subject if _is_name(w)}
    after = re.match(r"\s*(?:for|of)\s+([A-Z][\w'-]+)", body[end:])
    if after and _is_name(after.group(1)) and _PERSON_NOUN.search(body[start:end]):
        holder.add(after.group(1).removesuffix("'s").lower())
    if not holder and any(w.lower() in _THIRD_PERSON for w in words):
        names = [w for w in _WORD.findall(body) if _is_name(w)]
        holder |= {names[0].removesuffix("'s").lower()} if names else {"someone"}
    if holder and holder <= {"manager", "boss"} and re.match(r"\s*(?:is|'s)\b", body[end:]):
        return frozenset()  # "My manager is Priyanka": a fact of the user's
    if not holder:
        # "The meeting moved to 3pm", "My company moved to Austin": a thing's, not the user's
        holder = _thing_of(words)
        if _ends_at_speaker(body[clause_start:start]):
            holder = set()  # "I started cycling to work"
    return frozenset(holder)


def _thing_of(words: list[str]) -> set[str]:
    """The nouns of a subject that opens with a determiner ("the meeting", "my company",
    not "my new" nor "these days my")."""
    if len(words) < 2 or words[0].lower() not in _DETERMINERS:
        return set()
    return {
        w.lower().removesuffix("'s")
        for w in words[1:]
        if w.lower() not in _NOT_NAMES and w.lower() not in _STOP and w.lower() not in _ADJECTIVES
    } - _TIME_WORDS


_DETERMINERS: Final = _word_set("the this that my our his her their its")
_ADJECTIVES: Final = _word_set(
    "new old current previous usual main own first second last next other regular favourite"
)
_TIME_WORDS: Final = _word_set(
    "day days week weeks month months year years morning mornings evening evenings night"
    " weekend weekends time times lately ago"
)


def _ends_at_speaker(text: str) -> bool:
    """Whether the speaker ("I", "we") is the subject before the cue."""
    return any(w.lower() in _SPEAKER for w in _WORD.findall(text))


def _subject_words(text: str) -> list[str]:
    """The words of a clause's subject: up to the speaker ("I", "we": what follows is the
    speaker's object, "I use VS Code as my editor"), without the objects of prepositions
    ("Ingrid moved to Seattle for a new job": Seattle is a value, not whose it is)."""
    words: list[str] = []
    after_preposition = False
    for word in _WORD.findall(text):
        lower = word.lower()
        if lower in _SPEAKER:
            break
        if not after_preposition:
            words.append(word)
        after_preposition = lower in _PREPOSITIONS or (after_preposition and lower in _ARTICLES)
    return words


_SPEAKER: Final = frozenset({"i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've"})
_PREPOSITIONS: Final = _word_set(
    "to in at from for with near of by on into onto about like than via"
)
_ARTICLES: Final = frozenset({"a", "an", "the"})


def _is_name(word: str) -> bool:
    """A capitalised word that is not a function word, a month or a relation ("Ingrid")."""
    bare = word.removesuffix("'s").rstrip(".")
    return bare[:1].isupper() and bare.lower() not in _NOT_NAMES and bare.lower() not in KIN


def values_of(text: str) -> set[str]:
    """The specific values a text states: numbers, addresses and names (capitalised words
    that are not the sentence's first)."""
    _, body = speaker_and_body(text)
    found = set()
    for match in _VALUE.finditer(body):
        token = match.group(0).rstrip(".,").removesuffix("'s")
        if (
            token[:1].isdigit()
            or "@" in token
            or (
                match.start() > 0
                and body[: match.start()].rstrip()[-1:] not in ".!?:"
                and (token.lower() not in _NOT_NAMES)
            )
        ):
            found.add(token.lower())
    return found
