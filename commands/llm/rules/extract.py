"""Offline extraction from a conversation (seed 004 §3): Nebo's five arrays, by cue words
over the user's turns.

What the user states about themselves (name, job, employer, city, diet, schedules,
deadlines, tools: `commands.llm.rules.user_facts`) goes out as `user/<attribute>` keys, the
seed's auto-extraction format of the user profile (§5); likes and dislikes are preferences;
how the user wants replies written are styles. Each is read clause by clause, so a negation
or a contrast keeps its side ("I like a casual tone, not formal": casual, and not formal).

Explicit statements ("I prefer ...", "my sister Anna ...") are `explicit: true`; what is
inferred from behaviour (emoji in the user's own messages) is `explicit: false`; names
picked up without a stated relation leave `explicit` unset.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final

from mnemoledger.commands.llm.render import conversation_excerpt
from mnemoledger.commands.llm.rules.attributes import CORRECTION
from mnemoledger.commands.llm.rules.learned import kept_clauses, learned_facts
from mnemoledger.commands.llm.rules.speech_acts import ARTIFACT, DECISION, EMOJI
from mnemoledger.commands.llm.rules.tagger import tagged_facts
from mnemoledger.commands.llm.rules.text import OWN_WORDS_TAG, sentences, single_line, slug
from mnemoledger.commands.llm.rules.user_facts import (
    DEADLINE_HEADER,
    DEMONYMS,
    NEGATION,
    Stated,
    clauses,
    clean,
    deadline_item,
    known_place,
    list_items,
    stated_facts,
)
from mnemoledger.commands.llm.schemas import ExtractInput, ExtractOutput, Fact

_I = re.IGNORECASE
_WAIT_NO: Final = re.compile(r"\bwait,? no\b", _I)
"""'Wait, no, Bergen': the user takes back what they just said."""
USER_KEY_PREFIX: Final = "user/"
"""Keys of the facts the user states about themselves (`user/location`, `user/tool/git`)."""

PREFERENCE: Final = re.compile(
    r"(?:\bI(?:'ve| have)?\s?|^)(?:(?:really|strongly|also|much|kind of|kinda|sort of|absolutely"
    r"|totally|truly|genuinely|honestly|still|just|always|actually|started to|come to|grown to"
    r"|begun to|do|does|did|usually|mostly|mainly|often|generally) )*"
    r"(?P<verb>prefer|like|love|enjoy|adore|hate|dislike|detest|loathe|despise|abhor|don't like"
    r"|do not like"
    r"|don't enjoy|do not enjoy|can't stand|cannot stand|can't bear|cannot bear|can't abide"
    r"|cannot abide|never liked|never enjoyed|don't care for"
    r"|don't drink|do not drink|never drink|no longer drink|stopped drinking"
    r"|am not a fan of|'m not a fan of|am a fan of"
    r"|'m a fan of|am a big fan of|'m a big fan of|am into|'m into|am not into|'m not into"
    r"|am obsessed with|'m obsessed with|can't get enough of|am not big on|'m not big on"
    r"|(?:am|'m) (?:a |such a |a total |a real |a massive |a huge |a big )?sucker for"
    r"|(?:am|'m) an? (?:huge|massive|real|total|great|true) fan of"
    r"|am big on|'m big on|really dig|am crazy about|'m crazy about|am passionate about"
    r"|'m passionate about|avoid|am not keen on|'m not keen on|am keen on|'m keen on"
    r"|(?:am |'m )?(?:pretty |kinda |a bit |a little |so )?meh (?:about|on)"
    r"|(?:am |'m )getting (?:really |very |super |more )?into"
    r"|(?:basically |practically |pretty much |could |would |'d )?live on"
    r"(?= (?!(?:a|an|the|my|our|\d)\b)(?-i:[a-z]))"
    r"|(?:a )?(?:big |huge )?fan of|not (?:a )?(?:big |huge )?fan of|not into|not big on"
    r"|not keen on|listen to|(?:am )?not drink|(?:am |'m )?mad about"
    r"|(?:drink|eat) (?:way too much|too much|a lot of|lots of|loads of|tons of|so much)"
    r"|(?:am|'m) (?:really|so|totally|very|quite|super|pretty|massively) (?:into|big on|keen on"
    r"|(?:a )?(?:big |huge )?fan of))"
    r"\s+(?P<object>[^.!?;]+)",
    _I,
)
_VERB_AS_STATED: Final = {
    **{
        f"{be} {a}sucker for": "loves"
        for be in ("am", "'m")
        for a in ("", "a ", "such a ", "a total ", "a real ", "a massive ", "a huge ", "a big ")
    },
    **{
        f"{be} {a} {size} fan of": "likes"
        for be in ("am", "'m")
        for a in ("a", "an")
        for size in ("huge", "massive", "real", "total", "great", "true")
    },
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "adore": "loves",
    "am a fan of": "likes",
    "'m a fan of": "likes",
    "am a big fan of": "likes",
    "'m a big fan of": "likes",
    "am into": "likes",
    "'m into": "likes",
    "am obsessed with": "loves",
    "'m obsessed with": "loves",
    "can't get enough of": "loves",
    "am big on": "likes",
    "'m big on": "likes",
    "really dig": "likes",
    "am crazy about": "loves",
    "'m crazy about": "loves",
    "am passionate about": "loves",
    "'m passionate about": "loves",
    "am keen on": "likes",
    "'m keen on": "likes",
    "fan of": "likes",
    "a fan of": "likes",
    "big fan of": "likes",
    "a big fan of": "likes",
    "huge fan of": "likes",
    "a huge fan of": "likes",
    "listen to": "likes",
    "mad about": "loves",
    **{
        f"{be}getting {how}into": "likes"
        for be in ("am ", "'m ")
        for how in ("", "really ", "very ", "super ", "more ")
    },
    **{
        f"{how}live on": "loves"
        for how in ("", "basically ", "practically ", "pretty much ", "could ", "would ", "'d ")
    },
    "am mad about": "loves",
    "'m mad about": "loves",
    "drink way too much": "loves",
    "drink too much": "loves",
    "drink a lot of": "likes",
    "drink lots of": "likes",
    "drink loads of": "likes",
    "drink tons of": "likes",
    "drink so much": "loves",
    "eat way too much": "loves",
    "eat too much": "loves",
    "eat a lot of": "likes",
    "eat lots of": "likes",
    "eat loads of": "likes",
    "eat tons of": "likes",
    "eat so much": "loves",
}
_NEGATIVE_AS_STATED: Final = {
    "no longer drink": "no longer drinks",
    "stopped drinking": "no longer drinks",
    "don't drink": "does not drink",
    "do not drink": "does not drink",
    "never drink": "does not drink",
    "not drink": "does not drink",
    "am not drink": "does not drink",
}
_INTENSIFIED: Final = re.compile(
    r"^(?:am|'m) (?:really|so|totally|very|quite|super|pretty|massively) (?=into|big|keen|a |fan)"
)
"""'I'm really into': the verb "'m into"."""
_OBJECT_TAIL: Final = re.compile(
    r"(?:,.*|\s+(?:though|tho|lol|haha|anyway|a lot|very much|so much|too|as well|either"
    r"|honestly|really|at all|these days|nowadays|but .*|because .*|since .*|so .*))$",
    _I,
)
_OBJECT_HEAD: Final = re.compile(
    r"^(?:the|its|their|his|her|your|my|all|any|some|an?(?: (?:cup|glass|bowl|mug|bit|slice|pot)"
    r" of)?)\s+",
    _I,
)
_CONTRAST: Final = re.compile(r"^(?:but )?not (?:really )?(?P<object>[^,.!?;]+)$", _I)
_FINE: Final = re.compile(
    r"^(?P<object>[\w -]+?) (?:is|are) (?:fine|ok|okay|great|good|perfect)(?: for me)?$", _I
)
_PRONOUN_OBJECTS: Final = frozenset({"it", "that", "this", "them", "you", "to", "one"})


def _each(words: str) -> list[str]:
    return words.split()


_RELATION_TYPES: Final = {
    **dict.fromkeys(
        _each(
            "wife husband partner girlfriend boyfriend fiance fiancee son daughter sister "
            "brother mother mom mum father dad friend boss manager colleague coworker cousin "
            "aunt uncle grandmother grandma grandfather grandpa kid child coach teacher tutor "
            "bf gf hubby bestie bff sis bro "
            "mentor trainer therapist neighbour neighbor roommate flatmate landlord"
        ),
        "person",
    ),
    **dict.fromkeys(_each("dog cat pet puppy kitten parrot rabbit hamster horse"), "pet"),
    **dict.fromkeys(_each("project app startup"), "project"),
    **dict.fromkeys(_each("company employer team"), "organization"),
    **dict.fromkeys(_each("city hometown"), "place"),
}
"""What "my <relation> <Name>" names: `person/anna`, `pet/rex`, `project/nebo`, ..."""
_RELATIONS: Final = "|".join(sorted(_RELATION_TYPES, key=len, reverse=True))
RELATION_ENTITY: Final = re.compile(
    r"(?:\b(?:[Mm]y|[Oo]ur|(?:[Ww]e|I) have an?|(?:[Ww]e|I)'ve got an?"
    r"|an?(?= \w+ (?:called|named))) |^)(?P<relation>(?i:"
    + _RELATIONS
    + r"))(?:\s+(?:she|he|they|it))?(?:'s name is|\s+is called|\s+is named|\s+called|\s+named"
    r"|,)?\s+"
    r"(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
)
_PLURAL_RELATIONS: Final = {
    **{f"{r}s": r for r in _RELATION_TYPES if not r.endswith("s")},
    "children": "child",
    "grandchildren": "child",
    "grandkids": "kid",
}
RELATED_GROUP: Final = re.compile(
    r"\b(?:[Mm]y|[Oo]ur|(?:[Ww]e|I) have|(?:[Ww]e|I)(?:'ve| have) got)"
    r"(?: (?:two|three|four|\d) )?\s*(?P<relation>(?i:"
    + "|".join(sorted(_PLURAL_RELATIONS, key=len, reverse=True))
    + r")),?\s+(?:called |named )?"
    r"(?P<names>[A-Z][\w'-]*(?:, [A-Z][\w'-]*)*,? (?:and|&) [A-Z][\w'-]*)"
)
"""Several named at once: "my kids, Oscar and Freya", "we have two cats, Miso and Tofu"."""
MARRIED_TO: Final = re.compile(r"\b(?:I'm |I am |I've been |)married to (?P<name>[A-Z][\w'-]+)\b")
"""The user's spouse, named: "married to Pieter"."""
CAPITALISED_NAME: Final = re.compile(r"\b[A-Z][a-z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
"""A run of capitalised words; the first word of a sentence does not count."""
_NOT_NAMES: Final = frozenset(
    _each(
        "I I'm I've I'll I'd OK Okay Thanks Hi Hello Hey Monday Tuesday Wednesday Thursday "
        "Friday Saturday Sunday January February March April May June July August September "
        "October November December Mondays Tuesdays Wednesdays Thursdays Fridays Saturdays "
        "Sundays"
    )
)
_PLACE_BEFORE: Final = frozenset({"in", "to", "from", "at", "near", "visit", "visiting", "visited"})
_PERSON_BEFORE: Final = frozenset({"with", "meet", "met", "call", "called", "named", "told", "ask"})

_REPLIES: Final = r"(?:answers?|responses?|replies|explanations?|messages?|texts?|summar(?:y|ies))"
_KEEP: Final = r"(?:keep|make|be|stay|reply|answer|respond)"
STYLE_CUES: Final = (
    (
        re.compile(
            r"\b(short(?:er)?|brief(?:er)?|(?:more )?concise|terse|succinct|tight)\b.*\b"
            + _REPLIES
            + r"|\b"
            + _REPLIES
            + r"\b.*\b(short|brief|concise|terse|succinct|tight)\b|\b"
            + _KEEP
            + r"\b.*\b(short|brief|concise|terse|succinct)\b|\bto the point\b|\btl;?dr\b"
            r"|\bshort and sweet\b|\bone-liners?\b|\bjust (?:answer|the answer)\b"
            r"|\b(?:under|below|less than|max(?:imum)?|at most) \d+ (?:words|lines|sentences)\b"
            r"|\bstraight to the (?:point|answer)\b|\bno fluff\b"
            r"|^(?:(?:pls|please|so|but|and|ok|okay),? )?(?:(?:explain|answer|reply|write"
            r"|keep it|make it)(?: \w+)? )?(?:short|brief|concise|tight|succinct|terse)"
            r"(?:(?: and| &|,) \w+)?(?: (?:sentences|pls|please|plz|thanks|thx|ty|if possible))*"
            r"[.!]*$",
            _I,
        ),
        ("style/prefers-terse-responses", "Prefers short, concise responses"),
        ("style/prefers-detailed-responses", "Prefers detailed, thorough explanations"),
    ),
    (
        re.compile(
            r"\b(long|lengthy|wordy|verbose)\b.*\b(?:" + _REPLIES + r"|intros?|introductions?"
            r"|preambles?|paragraphs?|essays?)\b|\bwalls? of text\b|\bwaffl\w*|\brambl\w*"
            r"|\b" + _REPLIES + r" (?:are|get|run) (?:too |so |very |really )?(?:long|lengthy"
            r"|wordy|verbose)\b",
            _I,
        ),
        ("style/prefers-detailed-responses", "Prefers detailed, thorough explanations"),
        ("style/prefers-terse-responses", "Prefers short, concise responses"),
    ),
    (
        re.compile(
            r"\b(detailed|thorough|in-depth|step-by-step|step by step)\b.*\b"
            + _REPLIES
            + r"|\b(?:detailed|thorough|in-depth)\b|\bwith (?:lots of |plenty of )?examples\b"
            r"|\b(?:more |practical |concrete |real(?:-world)? )+examples\b"
            r"|\blonger " + _REPLIES + r"|\b(?:like|love|want|need|prefer) (?:the |more |lots of"
            r" |all the )?details?\b",
            _I,
        ),
        ("style/prefers-detailed-responses", "Prefers detailed, thorough explanations"),
        ("style/prefers-terse-responses", "Prefers short, concise responses"),
    ),
    (
        re.compile(
            r"\blike I'?m (?:a |an )?(?:beginner|newbie|novice|five|5|new|kid|child)\b"
            r"|\bfor (?:a )?(?:beginners?|newbies?|novices?|dummies)\b|\bbeginner-friendly\b",
            _I,
        ),
        ("style/for-beginners", "Wants explanations for a beginner, simply put"),
        ("style/not-for-beginners", "Does not want beginner-level explanations"),
    ),
    (
        re.compile(r"\bdry\b.*\b(humou?r|wit|jokes?)\b", _I),
        ("style/humor-dry", "Prefers dry wit over overt humor"),
        ("style/no-humor", "Prefers replies without jokes"),
    ),
    (
        re.compile(r"\b(humou?r|jokes?|joking|funny|witty|puns?|keep it fun|make it fun)\b", _I),
        ("style/humor", "Enjoys some humor in replies"),
        ("style/no-humor", "Prefers replies without jokes"),
    ),
    (
        re.compile(
            r"(?<!in)\bformal(?:ly)?\b|\bprofessional (?:tone|language|style)\b"
            r"|\b(?:keep|be|stay|sound)\b(?: \w+){0,2} professional\b",
            _I,
        ),
        ("style/formal-tone", "Prefers a formal tone"),
        ("style/not-formal", "Does not want a formal tone"),
    ),
    (
        re.compile(r"\b(casual(?:ly)?|informal(?:ly)?|relaxed|laid-back|laid back|chill)\b", _I),
        ("style/casual-tone", "Prefers a casual, relaxed tone"),
        ("style/not-casual", "Does not want a casual tone"),
    ),
    (
        re.compile(
            r"\b(straightforward|blunt|direct(?:ly)?|sugar-?coat\w*|pleasantries|small talk)\b"
            r"|\bget (?:straight )?to it\b|\b(?:give it to me|be|tell me|talk to me) straight\b"
            r"|\bstraight talk\b|\bstraight answers?\b"
            r"|\btell it like it is\b|\bbrutal(?:ly)? honest\b|\bneed you to be nice\b",
            _I,
        ),
        ("style/direct", "Prefers direct, straightforward answers"),
        ("style/not-blunt", "Does not want blunt answers"),
    ),
    (
        re.compile(
            r"\bbullet(?:ed)?(?: points?| lists?)?\b|\bbullets\b|\bin (?:short )?points\b"
            r"|\bpoint(?:-| )?(?:form|wise)\b|\b(?:as|in) a list\b",
            _I,
        ),
        ("style/bullet-points", "Prefers bullet points"),
        ("style/no-bullet-points", "Does not want bullet points"),
    ),
    (
        re.compile(
            r"\bjargon\b|\bplain (?:english|language|words)\b"
            r"|\b(?:simple|easy|simpler|easier) (?:terms|words|language|english|vocabulary)\b"
            r"|\b(?:technical|difficult|big|complicated|fancy|hard) (?:words|terms|vocabulary)\b"
            r"|\blayman'?s terms\b|\beli5\b|\bexplain (?:it )?like I'm five\b"
            r"|\b(?:explain|speak|talk|write)\b(?: [\w']+){0,4} (?:simply|simple|plainly)\b"
            r"|\bkeep it simple\b",
            _I,
        ),
        ("style/plain-language", "Prefers plain, simple language"),
        ("style/technical-language", "Fine with technical jargon"),
    ),
    (
        re.compile(r"\b(prose|paragraphs|full sentences)\b", _I),
        ("style/prose", "Prefers prose in full paragraphs"),
        ("style/no-prose", "Does not want prose paragraphs"),
    ),
)
"""Cue, what it says, and what it says under a negation."""
_PREFER_OVER: Final = re.compile(
    r"(?<=\w) (?:over|to) (?=(?:an? |the )?(?:\w+ )?(?:one|tone)\b)"
    r"|(?<=\w) over (?=(?:an? |the )?\w+(?: \w+)?[.!]*$)",
    _I,
)
"""In a style sentence, "casual over formal" is "casual, not formal"."""
_FLIPPED_BY: Final = re.compile(
    r"\bsugar-?coat|\bpleasantries\b|\bsmall talk\b|\bjargon\b|\bfluff\b|\bwaffl"
    r"|\b(?:technical|difficult|big|complicated|fancy|hard) (?:words|terms|vocabulary)\b"
    r"|\bneed you to be nice\b",
    _I,
)
"""Cues whose negation states the style itself ("no sugarcoating": direct; "skip the
pleasantries": direct; "no jargon": plain language)."""
_SKIP: Final = re.compile(
    r"\b(?:skip|drop|cut|leave out|spare me|go easy on|easy on the|light on|tone down"
    r"|cut down on|to a minimum|minimi[sz]e|less)\b",
    _I,
)
"""Words that leave a style's cue out ("skip the jargon", "go easy on the technical terms",
"keep the jargon to a minimum")."""
_ABOUT_REPLIES: Final = re.compile(
    r"^(?:please )?(?:stop|quit) (?P<habit>\w+ing\b[\w ]*?)"
    r"(?: in (?:every|your|each|all) (?:reply|replies|answers?|responses?|messages?))?$"
    r"|(?:^(?:please )?(?:don't|do not|never|stop)"
    r"|\b(?:(?:don't|do not) (?:like|want)|hate|dislike|like|love|prefer) (?:it )?when you)"
    r"\s+(?:use|using|write|writing|say|saying|add|adding|put|putting|start|starting|include"
    r"|including|give me|giving me)"
    r"\s+(?:an? |the |any |so many |lots of |too many )?(?P<what>[\w' -]+?)"
    r"(?: in (?:your|the) (?:answers?|replies|responses|messages))?$",
    _I,
)
"""How the user wants the assistant's replies written, said about what the replies hold:
"I really don't like when you use exclamation marks", "always include sources"."""
_REPLY_LANGUAGE: Final = re.compile(
    r"(?:(?:^(?i:please |can you |could you )?|\byou )(?i:answer|reply|respond|write|talk|speak)"
    r"(?: to me)?|\b(?i:answers|replies|responses)) (?:only )?in (?P<language>(?i:English"
    r"|French|German|Spanish|Italian|Portuguese|Dutch|Polish|Swedish|Norwegian|Danish|Finnish"
    r"|Greek|Turkish|Arabic|Hebrew|Hindi|Japanese|Korean|Chinese|Mandarin|Russian|Ukrainian"
    r"|Czech|Romanian|Hungarian|Indonesian|Vietnamese|Thai))\b"
)
"""The language replies are to be written in: 'Please answer in Portuguese from now on'."""
_SPELLING: Final = re.compile(
    r"\b(?P<variant>british|american|australian|canadian|us|uk) (?:english )?"
    r"(?:spelling|english)\b",
    _I,
)
_REPLY_VERB: Final = re.compile(r"\b(?:reply|replies|answer|respond|write|use|talk|speak)\b", _I)
_WRITE_LIKE: Final = re.compile(
    r"(?:^|\b(?:write|talk|speak|reply|answer|sound|respond)(?: to me)? )(?P<not>not )?like an?"
    r" (?P<what>[a-z]+)$",
    _I,
)
"""'Write like a friend, not like a textbook'."""
_STOP_WITH: Final = re.compile(
    r"^(?:please |can you |could you )?(?:stop|quit|enough) with (?:the |all the |your |all those"
    r" )?(?P<what>[\w' -]+?)(?: please)?$",
    _I,
)
"""'please stop with the exclamation marks'."""
_DONT_IN_REPLIES: Final = re.compile(
    r"^(?:please )?(?:don't|do not|never|stop|avoid) (?P<what>(?:\w+ ){0,3}?(?:\w+ )?"
    r"(?:your |the |my )?(?:answers?|replies|responses|charts?|colou?rs?|tables?|lists?|code"
    r"|markdown|headers?|links?|formatting|caps|capitals)\b[\w ]*)$",
    _I,
)
"""An order about what the replies hold: 'please don't pad your answers', 'don't rely on
colors in charts'."""
_WANT_IN_REPLIES: Final = re.compile(
    r"^(?:please |(?:I'd|I would) (?:prefer|like) (?:it if )?(?:you (?:to )?)?|(?:can|could|would)"
    r" you (?:please )?|I want you to |I need you to )?(?:always )?(?P<verb>include|add|give me"
    r"|show|cite|use|provide) (?P<what>(?:\w+ )?"
    r"(?:sources|citations|references|links|examples|code examples|code snippets|tables"
    r"|summaries|a summary|a tl;?dr|diagrams))(?: (?:in|with) (?:your |the )?\w+)?"
    r"(?: (?:when|where|if) (?:possible|you can|it helps|relevant|needed|applicable))?"
    r"(?: please)?[.!]*$",
    _I,
)
"""A standing order about what replies hold: 'please always include sources'."""
_IDIOM: Final = re.compile(r"\b(?:is |was |it's |that's )?no joke\b(?!s)", _I)
"""Idioms that hold a style's cue word without being about replies."""
EMOJI_MENTION: Final = re.compile(r"\bemojis?\b|\bemoticons?\b|\bsmileys?\b", _I)


def extract(inputs: ExtractInput) -> ExtractOutput:
    found: dict[str, dict[str, Fact]] = {
        name: {} for name in ("preferences", "entities", "decisions", "styles", "artifacts")
    }
    turns = conversation_excerpt(inputs.conversation)
    user_texts = [t.content for t in turns if t.role == "user"]
    asked = [
        turns[i - 1].content if i and turns[i - 1].role == "assistant" else ""
        for i, t in enumerate(turns)
        if t.role == "user"
    ]
    tagged: list[Fact] = []
    kept: list[Fact] = []
    for index, text in enumerate(user_texts):
        corrects = CORRECTION.search(text) is not None or _WAIT_NO.search(text) is not None
        said = answered(asked[index], text)
        for category, fact in _facts_of_turn(said, user_texts[:index]):
            if category == TAGGED:
                tagged.append(fact)
            elif category == KEPT:
                kept.append(fact)
            elif (
                (corrects or _confirms(asked[index], fact))
                and fact.key.startswith(USER_KEY_PREFIX)
                and fact.key.count("/") == 1
            ):
                # "Sorry, I meant Braga"; "So pescatarian?" / "yeah, pescatarian": the value said
                # last
                found[category][fact.key] = fact
            elif _a_better_town(found[category].get(fact.key), fact, text):
                found[category][fact.key] = fact
            else:
                found[category].setdefault(fact.key, fact)
    for fact in _fallbacks(tagged, found["preferences"]):
        found["preferences"][fact.key] = fact
    for fact in _new_statements(kept, found["preferences"]):
        found["preferences"][fact.key] = fact
    if any(EMOJI.search(text) for text in user_texts):
        fact = _fact("style/uses-emojis", "Uses emoji when writing", "style", False)
        found["styles"].setdefault(fact.key, fact)
    return ExtractOutput(**{name: list(facts.values()) for name, facts in found.items()})


def _a_better_town(held: Fact | None, fact: Fact, said: str) -> bool:
    """Whether `fact` should replace the user's town read earlier: a town the gazetteer knows,
    said to be where the user lives, over a name it does not know ("nurse in Hospital
    Sirio-Libanes", then "I live in Sao Paulo")."""
    return (
        held is not None
        and fact.key == f"{USER_KEY_PREFIX}location"
        and not known_place(held.value)
        and known_place(fact.value)
        and fact.value in said
        and _LIVES_IN.search(said[: said.find(fact.value)][-40:]) is not None
    )


_LIVES_IN: Final = re.compile(
    r"\b(?:live|living|based|settled|stay|staying|moved|home is|I'm|I am|we're)\b[^,.;]*$", _I
)


def _confirms(question: str, fact: Fact) -> bool:
    """The user takes up the value the assistant asked about ("So pescatarian-ish?")."""
    value = fact.value.strip().lower()
    return question.rstrip().endswith("?") and len(value) > 2 and value in question.lower()


_QUESTIONS: Final = (
    (
        re.compile(
            r"\bwhere (?:are you|do you) (?:from|come from)\b|\bwhere did you grow up\b", _I
        ),
        "I'm originally from {}",
    ),
    (
        re.compile(
            r"\bwhere (?:are you|do you) (?:based|live|living|located)\b|\bwhich (?:city|town)\b"
            r"|\bwhere(?:'s| is) home\b|\bwhere are you\?",
            _I,
        ),
        "I live in {}",
    ),
    (
        re.compile(
            r"\bwho do you work for\b|\bwhich company\b|\bwhere do you work\b|\bwhat company\b",
            _I,
        ),
        "I work at {}",
    ),
    (
        re.compile(
            r"\bwhat do you do\b|\bwhat(?:'s| is) your (?:job|occupation|profession|role|work)\b"
            r"|\bwhat (?:kind of )?work do you do\b|\bwhat do you do for (?:work|a living)\b",
            _I,
        ),
        "I'm a {}",
    ),
    (
        re.compile(r"\bwhat(?:'s| is) your name\b|\bwhat should I call you\b|\bwho are you\b", _I),
        "My name is {}",
    ),
    (re.compile(r"\bwhat languages? do you speak\b", _I), "I speak {}"),
    (
        re.compile(
            r"\bfavou?rites?\b[^?]*\?|\bwho do you (?:support|follow|root for)\b"
            r"|\bwhat (?:kinds?|sorts?|types?) of [\w ]+ (?:are you into"
            r"|do you (?:like|enjoy|listen to|read|watch|play))\b"
            r"|\bwhich (?:team|club|band|artist|author)s? do you (?:like|support|follow)\b",
            _I,
        ),
        "I love {}",
    ),
    (
        re.compile(
            r"\bwhich (?:languages?|tools?|editor|stack|software)\b.*\b(?:use|code|work)"
            r"|\bwhat (?:tools?|stack|editor|software) do you\b",
            _I,
        ),
        "I use {}",
    ),
)
"""What an assistant's question asks, and the user's short answer as a statement."""
_SHORT_ANSWER: Final = re.compile(r"^[^?]{1,60}$")
_FIRST_PERSON: Final = re.compile(r"\b(?:I|I'm|i|im|me|my|we|our)\b")
_ANSWER_HEAD: Final = re.compile(r"^(?:(?:um+|well|oh|so|yeah|yes|yep|ok|okay),? )+", _I)


def answered(question: str, answer: str) -> str:
    """A short answer to the assistant's question as the statement it makes: "Nairobi" after
    "Where are you based?" is "I live in Nairobi", also when more sentences follow it
    ("Coltrane mostly. And I love football"); anything else as it was said."""
    reply = _ANSWER_HEAD.sub("", answer.strip())
    first, stop, rest = reply.partition(". ")
    if stop and first and not _FIRST_PERSON.search(first) and _FIRST_PERSON.search(rest):
        said = answered(question, first)  # a name first: a favourite, a town, an employer
        named = said.startswith(_NAME_ANSWERS)
        return f"{said}. {rest}" if said != first and named else answer
    if not question or not _SHORT_ANSWER.match(reply) or _FIRST_PERSON.search(reply):
        return answer
    if _NON_ANSWER.match(reply):
        return answer
    reply = _ANSWER_TAIL.sub("", reply)
    reply = re.sub(r"^(?:mostly|mainly|usually|probably) ", "", reply, flags=_I)
    if len(reply.split()) > MAX_ANSWER_WORDS:
        return answer
    for asks, statement in _QUESTIONS:
        if asks.search(question):
            reply = re.sub(r"^(?:an?|the) ", "", reply, flags=_I) if "I'm a" in statement else reply
            return statement.format(reply.rstrip(" .!"))
    return answer


MAX_ANSWER_WORDS: Final = 6
_NON_ANSWER: Final = re.compile(
    r"^(?:no|not|nope|nah|none|nothing|hmm+|dunno|idk|not sure|hard to say|depends|good question"
    r"|too many|can't|don't|haha|lol|who knows|pass)\b",
    _I,
)
"""Replies that answer nothing ("hard to say", "nope")."""
_NAME_ANSWERS: Final = ("I love ", "I live in ", "I'm originally from ", "I work at ")
"""Statements whose answer is a name, which may come first in a longer reply."""
_ANSWER_TAIL: Final = re.compile(
    r"[, ]+(?:mostly|mainly|always|easily|probably|definitely|obviously|of course|for sure"
    r"|hands down|by far|i guess|i think|i'd say|these days|forever)[.!]*$",
    _I,
)
"""'Radiohead, always': the answer without the word that weighs it."""
"""Longer replies say more than an answer: they are read as they are."""


def _fact(key: str, value: str, category: str, explicit: bool | None) -> Fact:
    return Fact(key=key, value=value, category=category, tags=[category], explicit=explicit)


def _facts_of_turn(text: str, earlier: Sequence[str]) -> Iterator[tuple[str, Fact]]:
    artifact = ARTIFACT.search(text)
    if artifact:
        body = single_line(artifact.group("body") or text)
        key = f"artifact/{slug(artifact.group('what'))}"
        yield "artifacts", _fact(key, body, "artifact", True)
        text = text[: artifact.start()]
    said_before = list(earlier)
    listing: bool | None = None
    """Under a header such as "Things I love:", whether its items are liked."""
    due_list = False
    """Under a header such as "deadlines this week:"."""
    signed = 0
    """Lines since a sign-off ("Best regards,"): a name, then a title, a company, a town."""
    for sentence in sentences(list_items(text)):
        sentence = single_line(sentence)
        if signed == 1 and not _SIGNATURE_NAME.match(sentence):
            signed = 0  # "Thanks. My wife Hana ...": no signature
        if signed:
            signed += 1
            yield from _signature_line(sentence, first=signed == 2)
            continue
        if _SIGN_OFF.match(sentence):
            signed = 1
            continue
        if DEADLINE_HEADER.match(sentence):
            due_list = True
            continue
        due = deadline_item(sentence) if due_list else None
        if due is not None:
            yield "preferences", _user_fact(due)
            continue
        due_list = False
        header = _LIST_HEADER.match(sentence)
        if header is not None:
            listing = header.group("negative") is None and header.group("negative2") is None
            continue
        if listing is not None and _LIST_ITEM.match(sentence):
            what = _object(sentence.rstrip(".!"))
            stated = "likes" if listing else "dislikes"
            yield "preferences", _fact(slug(what), f"User {stated} {what}", "preference", True)
            continue
        listing = None
        yield from _facts_of_sentence(sentence, said_before)
        said_before.append(sentence)  # "I live in Oslo. Wait, no, Bergen."


_SIGN_OFF: Final = re.compile(
    r"^(?:(?:best|kind|warm|many)(?: regards| wishes)?|regards|cheers|thanks|thank you|sincerely"
    r"|yours(?: sincerely| truly)?|all the best|br|rgds)[,!.]?$",
    _I,
)
"""A letter's sign-off: the lines after it are the writer's signature."""
_SIGNATURE_NAME: Final = re.compile(
    r"^[A-Z][\w'\u00c0-\u017f-]+(?: [A-Z][\w'\u00c0-\u017f-]+){0,2}$"
)


def _signature_line(line: str, first: bool) -> Iterator[tuple[str, Fact]]:
    """A signature's lines: the writer's name first, then their title, company and town."""
    if first and _SIGNATURE_NAME.match(line):
        yield "preferences", _user_fact(Stated("name", line))
        return
    stated = stated_facts(line)
    if stated:
        yield from (("preferences", _user_fact(fact)) for fact in stated)
    elif _SIGNATURE_NAME.match(line) and not known_place(line):
        yield "preferences", _user_fact(Stated("employer", line))


def _user_fact(fact: Stated) -> Fact:
    return Fact(
        key=fact.key,
        value=fact.value,
        category="preference",
        tags=["user", fact.attribute],
        explicit=True,
    )


_LIST_HEADER: Final = re.compile(
    r"^(?:(?:some )?(?:things|stuff|what) (?:I|that I) (?:really )?(?:(?P<negative>hate|dislike"
    r"|can't stand|don't like|avoid)|love|like|enjoy)|(?:my )?(?:likes|loves|favou?rites"
    r"|faves|(?P<negative2>dislikes|hates|pet peeves)))\s*:$",
    _I,
)
"""A header whose list items are what the user likes or dislikes ("Things I love:")."""
_LIST_ITEM: Final = re.compile(r"^[\w'&+ -]{2,40}[.!]?$")
"""A short item of a list: a few words, no clause of its own."""


TAGGED: Final = "tagged"
"""The category under which `_facts_of_turn` yields the value tagger's facts: they only fill
what the rules left empty (`_fallbacks`)."""


def _fallbacks(tagged: Sequence[Fact], found: dict[str, Fact]) -> Iterator[Fact]:
    """The tagger's facts of attributes the rules found nothing for, and of values (a tool, a
    language) they did not find; none whose words another fact already holds."""
    have_attributes = {key.split("/")[1] for key in found if key.startswith(USER_KEY_PREFIX)}
    said = {w for fact in found.values() for w in fact.value.casefold().split()}
    taken: set[str] = set()
    for fact in tagged:
        attribute = fact.key.split("/")[1]
        single = fact.key.count("/") == 1
        if fact.key in found or fact.key in taken or (single and attribute in have_attributes):
            continue
        if set(fact.value.casefold().split()) & said:
            continue
        if attribute in _NAMED_VALUES and fact.value.casefold() in DEMONYMS:
            continue  # "American spellings make me twitch"
        taken.add(fact.key)
        said |= set(fact.value.casefold().split())
        yield fact


_NAMED_VALUES: Final = frozenset({"tool", "employer", "location", "hometown"})
KEPT: Final = "kept"
"""The category under which `_facts_of_turn` yields clauses kept in the user's own words
(`learned.kept_clauses`): only those saying something no other fact of theirs says."""
_MINOR_WORDS: Final = frozenset(
    re.findall(
        r"\S+",
        "a an the is are am be to of in on at by for and or my our i i'm it its it's this that"
        " when which has have had need needs must should due every each",
    )
)


def _content_words(text: str) -> set[str]:
    found = re.findall(r"[\w:]+", text.casefold())
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in found} - _MINOR_WORDS


_USER_WORDS: Final = frozenset(("user", "likes", "dislikes", "enjoys", "loves", "hates"))


def _new_statements(kept: Sequence[Fact], found: dict[str, Fact]) -> Iterator[Fact]:
    """The kept clauses whose words are not, for the most part, those of another fact ("October
    15 is when the Q3 report is due" after "Q3 report due October 15": said again, not a second
    deadline; "I drink green tea every day" after "I enjoy green tea")."""
    others = [_content_words(f.value) - _USER_WORDS for f in found.values()]
    for fact in kept:
        said = _content_words(fact.value)
        if fact.key in found or not said:
            continue
        if any(len(said & w) * 2 >= min(len(said), len(w)) for w in others if w):
            continue
        others.append(said)
        yield fact


def _facts_of_sentence(sentence: str, earlier: Sequence[str]) -> Iterator[tuple[str, Fact]]:
    found = list(_read_facts_of_sentence(sentence, earlier))
    yield from found
    # a schedule or deadline in words no rule knows is kept, from a clause nothing was read from
    stated = [
        Stated(f.key.split("/")[1], f.value)
        for category, f in found
        if category in ("preferences", TAGGED) and f.key.startswith(USER_KEY_PREFIX)
    ]
    read = frozenset(
        w
        for _, f in found
        for w in re.findall(r"\w+", f"{f.key.replace('-', ' ')} {f.value}".casefold())
        if w not in _READ_NOTHING
    )
    for kept in kept_clauses(sentence, stated, read):
        tags = ["user", kept.attribute, OWN_WORDS_TAG]
        yield (
            KEPT,
            Fact(key=kept.key, value=kept.value, category="preference", tags=tags, explicit=True),
        )


_READ_NOTHING: Final = frozenset(
    ("user", "likes", "dislikes", "loves", "enjoys", "hates", "prefers", "does", "not", "no")
)
"""Words of a fact's key and value that say nothing of where in the sentence it was read."""


def _read_facts_of_sentence(sentence: str, earlier: Sequence[str]) -> Iterator[tuple[str, Fact]]:
    stated = stated_facts(sentence, earlier)
    stated += learned_facts(sentence, stated)
    for fact in stated:
        yield "preferences", _user_fact(fact)
    for tagged, _margin in tagged_facts(sentence):
        yield TAGGED, _user_fact(tagged)
    for style in _styles_of(sentence):
        yield "styles", style
    tools = {slug(f.item) for f in stated if f.attribute == "tool" and f.item}
    for category, liking in _preferences_of(sentence, earlier):
        if liking.key not in tools:  # "I code in Python, and I hate MATLAB": a tool's, said once
            yield category, liking
    decided = False
    for match in DECISION.finditer(sentence):
        decided = True
        key = f"decision/{slug(match.group('what'))}"
        yield "decisions", _fact(key, sentence, "decision", True)
    values = frozenset(f.value for f in stated)
    yield from _entities_of_sentence(sentence, named_others=decided, values=values)


def _styles_of(sentence: str) -> Iterator[Fact]:
    """Each clause's style cues, with the clause's own polarity."""
    seen: set[str] = set()
    sentence = _PREFER_OVER.sub(", not ", clean(sentence))  # "a casual tone over a formal one"
    for clause in (part for c in clauses(sentence) for part in _STYLE_PART.split(c)):
        for style in _clause_styles(clause):
            if style.key not in seen:
                seen.add(style.key)
                yield style


_STYLE_PART: Final = re.compile(
    r",?\s+(?:and|so|but)\s+(?=(?:please |just |also )?(?:keep|be|make|use|go|give|write|explain"
    r"|don't|do not|no|skip|avoid|talk|speak|stick|stay|cut|drop|spare|leave)\b)",
    _I,
)
"""Where a clause goes on with another wish of its own ("use bullet points and no long
paragraphs", "im not a big reader so keep it simple"): each has its own polarity."""
_LAYOUT_IS_GOOD: Final = re.compile(
    r"(?:^|\bso\s+)(?:(?:so|and|but|also|plus)\s+)*(?P<what>(?:markdown )?tables|bullet points"
    r"|bullets|numbered lists|lists|diagrams|charts|code blocks|headings|headers)"
    r" (?:are|r|work) (?:really |very |always )?(?:good|great|fine|helpful|welcome|ideal|useful"
    r"|best|easier|perfect|my friend)(?: for me| by me)?$",
    _I,
)
"""A layout the user says suits them: "tables are good", "bullet points work best"."""


def _clause_styles(clause: str) -> Iterator[Fact]:
    clause = _IDIOM.sub("", clause)  # "forklift driving ... is no joke"
    clause = re.sub(r"^(?:and|also|oh|plus|but)\s+", "", clause, flags=_I)
    mention = EMOJI_MENTION.search(clause)
    if mention:
        if NEGATION.search(clause):
            yield _fact("style/no-emojis", "Prefers replies without emoji", "style", True)
        else:
            yield _fact("style/likes-emojis", "Likes emoji in replies", "style", True)
        return
    layout = _LAYOUT_IS_GOOD.search(clause)
    if layout is not None:
        what = layout.group("what").lower()
        yield _fact(f"style/{slug(what)}", f"Wants {what} in replies", "style", True)
        return
    language = _REPLY_LANGUAGE.search(clause)
    if language is not None and not NEGATION.search(clause[: language.start()]):
        name = language.group("language").capitalize()
        yield _fact("style/reply-language", f"Wants replies in {name}", "style", True)
        return
    spelling = _SPELLING.search(clause)
    if spelling is not None and _REPLY_VERB.search(clause):
        variant = spelling.group("variant")
        variant = variant.upper() if len(variant) == 2 else variant.capitalize()
        yield _fact("style/spelling", f"Wants replies in {variant} English", "style", True)
        return
    for cue, (key, value), (negated_key, negated_value) in STYLE_CUES:
        match = cue.search(clause)
        if match is None:
            continue
        negated = NEGATION.search(clause) is not None or _SKIP.search(clause) is not None
        if _FLIPPED_BY.search(match.group(0)):
            negated = not negated
        if negated:
            key, value = negated_key, negated_value
        yield _fact(key, value, "style", True)
        return
    like = _WRITE_LIKE.search(clause)
    if like is not None:
        what = like.group("what")
        if like.group("not"):
            yield _fact(
                f"style/not-like-{slug(what)}",
                f"Does not want replies like a {what}",
                "style",
                True,
            )
        else:
            yield _fact(
                f"style/like-{slug(what)}", f"Wants replies written like a {what}", "style", True
            )
        return
    wants = _WANT_IN_REPLIES.search(clause)
    if wants is not None:
        what = wants.group("what").strip()
        verb = wants.group("verb").lower()
        value = (
            f"Wants {what} in replies" if verb == "give me" else f"Wants replies to {verb} {what}"
        )
        yield _fact(f"style/with-{slug(what)}", value, "style", True)
        return
    enough = _STOP_WITH.search(clause)
    if enough is not None:
        what = enough.group("what").strip()
        yield _fact(f"style/no-{slug(what)}", f"Does not want {what} in replies", "style", True)
        return
    dont = _DONT_IN_REPLIES.search(clause)
    if dont is not None:
        what = dont.group("what").strip()
        yield _fact(f"style/no-{slug(what)}", f"Does not want you to {what}", "style", True)
        return
    about = _ABOUT_REPLIES.search(clause)
    if about is not None and about.group("habit"):
        habit = about.group("habit").strip()
        yield _fact(f"style/no-{slug(habit)}", f"Does not want {habit} in replies", "style", True)
        return
    if about is not None and (about.group("what") or "").strip():
        what = about.group("what").strip()
        if NEGATION.search(clause[: about.start("what")]) or re.search(
            r"\b(?:hate|dislike)\b", clause, _I
        ):
            yield _fact(f"style/no-{slug(what)}", f"Does not want {what} in replies", "style", True)
        else:
            yield _fact(f"style/{slug(what)}", f"Wants {what} in replies", "style", True)


def _preferences_of(sentence: str, earlier: Sequence[str]) -> Iterator[tuple[str, Fact]]:
    """Likes and dislikes, clause by clause; a clause that states a style or a fact of the
    user's ("I like a casual tone", "I like working at Acme") is not also a preference."""
    previous: bool | None = None
    """The polarity of the sentence's last preference: "not X" and "X is fine" answer it."""
    field = _PREFERENCE_FIELD.match(clean(sentence))
    if field is not None:  # "likes: cats, jazz", "fav food = sushi"
        negative = field.group("negative") is not None
        kind = (field.group("kind") or "").strip()
        for item in re.split(r",\s*|\s+and\s+|\s*/\s*", field.group("items")):
            if _OWN.match(item.strip()):
                continue  # "things I love: hiking, my dog Mochi": the dog is no taste
            what = _object(item.strip(" .!"))
            if not what:
                continue
            value = f"User {'dislikes' if negative else 'likes'} {what}"
            if kind:
                value = f"User's favourite {kind} is {what}"
            yield "preferences", _fact(slug(what), value, "preference", True)
        return
    cleaned = clean(sentence)
    pastime = _PASTIME.search(cleaned)
    if pastime is not None:  # "in my spare time I paint and listen to a lot of jazz"
        for what in _pastimes(pastime.group("acts")):
            yield "preferences", _fact(slug(what), f"User enjoys {what}", "preference", True)
        cleaned = cleaned[: pastime.start()] + cleaned[pastime.end() :]
    whole = PREFERENCE.search(cleaned)
    if whole is not None and _SERIES.match(whole.group("object").strip()):
        head = clauses(whole.group(0))[0]  # "I love bouldering, board games and tea"
        if not (any(True for _ in _clause_styles(head)) or stated_facts(head, earlier)):
            stated, negative = _as_stated(whole, cleaned)
            for what in _objects(whole.group("object")):
                yield "preferences", _fact(slug(what), f"User {stated} {what}", "preference", True)
            cleaned = cleaned[: whole.start()]
    for clause in clauses(cleaned):
        if any(True for _ in _clause_styles(clause)) or stated_facts(clause, earlier):
            continue
        if _UNSURE.search(clause):
            continue  # "I'm not sure if I like jazz"
        fine = _FINE.match(clause)
        if previous is False and fine is not None:
            what = _object(fine.group("object"))  # "I don't drink coffee, tea is fine"
            yield "preferences", _fact(slug(what), f"User likes {what}", "preference", True)
            continue
        favourite = _FAVOURITE.search(clause)
        if favourite is not None:
            what = _object(favourite.group("object") or favourite.group("object2") or "")
            kind = favourite.group("kind") or favourite.group("kind2") or ""
            if what:
                value = f"User's favourite {kind.strip()} is {what}"
                yield "preferences", _fact(slug(what), value, "preference", True)
                previous = True
                continue
        thing = _THING_FOR_ME.match(clause)
        if thing is not None:
            negative = thing.group("object2") is not None or thing.group("not") is not None
            what = _object(thing.group("object") or thing.group("object2") or "")
            if what:
                stated = "dislikes" if negative else "likes"
                yield "preferences", _fact(slug(what), f"User {stated} {what}", "preference", True)
                previous = not negative
                continue
        set_aside = _SET_ASIDE_FOR.match(clause)
        if set_aside is not None and not _CHORES.search(set_aside["object"]):
            # "weekends are for hiking and sea swimming"
            for what in filter(
                None, map(_object, re.split(r",\s*|\s+and\s+", set_aside["object"]))
            ):
                yield "preferences", _fact(slug(what), f"User enjoys {what}", "preference", True)
            previous = True
            continue
        mostly = _MOSTLY.match(clause)
        if previous and mostly is not None and (what := _object(mostly.group("object"))):
            yield "preferences", _fact(slug(what), f"User likes {what}", "preference", True)
            continue  # "I love reading, mostly fantasy"
        if _DONT_DRINK.match(clause):
            previous = False  # a diet (`user_facts._NO_ALCOHOL`), not a taste
            continue
        any_day = _ANY_DAY.match(clause)
        if any_day is not None and (what := _object(any_day["object"])):
            yield "preferences", _fact(slug(what), f"User likes {what}", "preference", True)
            previous = True
            continue
        fronted = _FRONTED.match(clause)
        if (
            fronted is not None
            and (what := _object(fronted["object"]))
            and not _names_no_thing(what)
        ):
            negative = fronted["dislike"] is not None
            stated = "dislikes" if negative else "loves"
            yield "preferences", _fact(slug(what), f"User {stated} {what}", "preference", True)
            previous = not negative
            continue
        match = PREFERENCE.search(clause)
        if match is not None:
            stated, negative = _as_stated(match, clause)
            previous = not negative
            said = match.group("object")
            if negative and _object(said).lower() in _ALCOHOL:
                continue  # "I don't drink alcohol": a diet (`user_facts._NO_ALCOHOL`)
            if said.strip(" .!").lower() in _BACK_REFERENCES:
                before = cleaned[: max(cleaned.find(clause), 0)] + clause[: match.start()]
                said = _antecedent(before) or said
            for what in _objects(said):
                yield "preferences", _fact(slug(what), f"User {stated} {what}", "preference", True)
            continue
        only = _ONLY.match(clause)
        if previous is False and only is not None:
            what = _object(only.group("object"))  # "I don't drink coffee, only green tea"
            if what and what.lower() not in _PRONOUN_OBJECTS:
                yield "preferences", _fact(slug(what), f"User likes {what}", "preference", True)
                previous = True
            continue
        person = _A_PERSON.search(clause)
        if person is not None and person.group("object").lower() not in _TIMES_OF_DAY:
            what = person.group("object")  # "not a big coffee person", "more of a dog person"
            negative = person.group("not") is not None
            stated = "dislikes" if negative else "likes"
            yield "preferences", _fact(slug(what), f"User {stated} {what}", "preference", True)
            previous = not negative
            continue
        fan = _A_FAN.search(clause)
        if (
            fan is not None
            and not NEGATION.search(clause[: fan.start()])
            and fan.group("object").lower() not in {"huge", "big", "massive", "total", "real"}
        ):
            what = _object(fan.group("object"))  # "I'm a huge Arsenal fan"
            if what:
                yield "preferences", _fact(slug(what), f"User likes {what}", "preference", True)
                previous = True
                continue
        beats = _NOTHING_BEATS.match(clause)
        if beats is not None:
            what = _object(beats.group("object"))
            if what:
                yield "preferences", _fact(slug(what), f"User loves {what}", "preference", True)
                previous = True
            continue
        contrast = _CONTRAST.match(clause)
        if previous and contrast is not None and contrast.group("object"):
            what = _object(contrast.group("object"))  # "I like tea, not coffee"
            if what and what.lower() not in _PRONOUN_OBJECTS:
                yield "preferences", _fact(slug(what), f"User dislikes {what}", "preference", True)


def _as_stated(match: re.Match[str], clause: str) -> tuple[str, bool]:
    """How a preference's verb reads ("loves", "dislikes") and whether it is a dislike."""
    verb = _INTENSIFIED.sub("'m ", match.group("verb").lower())
    negative = verb not in _VERB_AS_STATED
    stated = _NEGATIVE_AS_STATED.get(verb, "dislikes") if negative else _VERB_AS_STATED[verb]
    if not negative and NEGATION.search(clause[: match.start()]):
        stated, negative = "dislikes", True
    return stated, negative


_PREFERENCE_FIELD: Final = re.compile(
    r"^(?:[-*\u2022] )?(?:my )?(?:things (?:that )?I )?(?:likes?|loves?|enjoy|into|hobbies"
    r"|interests|(?P<negative>dislikes?|hates?|can't stand|not into|pet peeves?)"
    r"|(?:fav|fave|favou?rite)s?(?P<kind>(?: [\w-]+){0,2}))\s*[:=]\s*"
    r"(?P<items>[^:=]+?)[.!]*$",
    _I,
)
"""A preference said as a form's field: "likes: cats, jazz", "fav food = sushi"."""
_OWN: Final = re.compile(r"^(?:my|our)\b", _I)
_DONT_DRINK: Final = re.compile(
    r"^(?:(?:and|also|but|plus|oh|so|tbh|honestly),? )*I (?:don't|do not|never|no longer|can't)"
    r" drink(?: (?:anymore|any more|at all|these days|alcohol|booze))*$",
    _I,
)
"""'I don't drink' without saying what: alcohol."""
_ANY_DAY: Final = re.compile(
    r"^(?:(?:but|just|and|honestly),? )*give me (?P<object>[\w' -]+?) any day(?: of the week)?$", _I
)
"""'Give me a good documentary any day': a liking."""
_ONLY: Final = re.compile(
    r"^(?:only|just|but) (?!(?:so|saying|fyi|in case|kidding|joking|to be clear|to let you)\b)"
    r"(?P<object>[\w' -]+)$",
    _I,
)
"""After a dislike, what the user has instead: "I don't drink coffee, only green tea"."""
_A_FAN: Final = re.compile(
    r"\bI(?:'m| am) (?:an? )?(?:huge |big |massive |total |die-?hard |lifelong )?"
    r"(?P<object>[\w' -]+?) (?:fan|nerd|buff|addict|lover)\b",
    _I,
)
"""'I'm a huge Arsenal fan', "I'm a coffee addict"."""
_A_PERSON: Final = re.compile(
    r"(?:^(?:(?:honestly|tbh|ngl|really|just|also|and|but|so),? )*|\bI(?:'m| am) )"
    r"(?P<not>not |never )?(?:really |much of |more of |very much |totally |definitely |such "
    r"|just )*an? (?:big |huge |real |massive )?(?P<object>[a-z]+) person\b",
    _I,
)
"""'I'm not a big coffee person', "more of a dog person": a taste, said of oneself."""
_TIMES_OF_DAY: Final = frozenset({"morning", "night", "evening", "early", "late", "people"})
"""'Not a morning person' is a rhythm of the day, not a taste in things."""
_NOTHING_BEATS: Final = re.compile(
    r"^(?:honestly |really )?nothing (?:beats|compares to|tops) (?P<object>.+)$", _I
)
_UNSURE: Final = re.compile(
    r"\b(?:not sure|unsure|don't know|do not know|wonder(?:ing)?|can't decide|cannot decide)"
    r" (?:if|whether)\b",
    _I,
)
"""A clause that wonders whether the user likes something states no liking."""
_THING_FOR_ME: Final = re.compile(
    r"^(?P<object>[\w' -]+?) (?:is|are) (?P<not>not |isn't |aren't )?(?:really )?"
    r"(?:my thing|for me|my jam|my cup of tea)$|^(?P<object2>[\w' -]+?) (?:isn't|aren't|is not"
    r"|are not) (?:really )?(?:my thing|for me|my cup of tea)$",
    _I,
)
_FAVOURITE: Final = re.compile(
    r"\bmy (?:all-time |absolute )?(?:favou?rite|fave|fav) (?P<kind>[\w -]+?) (?:is|are)"
    r" (?P<object>.+)"
    r"|^(?P<object2>[\w' -]+?) (?:is|are) my (?:all-time |absolute )?(?:favou?rite|fave|fav)"
    r"(?P<kind2>(?: [\w-]+){0,2})$",
    _I,
)
_GERUNDS: Final = re.compile(r"^\w+ing(?:(?:,| and| or) \w+ing)+$", _I)
_PASTIME: Final = re.compile(
    r"\b(?:(?:in|during) my (?:free|spare|down|own|off) time|outside (?:of )?(?:work|my job)"
    r"|when I'm not (?:working|at work)|for fun|in the evenings|at weekends|on weekends"
    r"|after work),? I (?P<acts>[^.!?;]+)",
    _I,
)
"""What the user does for pleasure: "outside work I do bouldering and read a lot of sci-fi"."""
_SET_ASIDE_FOR: Final = re.compile(
    r"^(?:(?:and|but|so|my|oh|the)\s+)*(?P<when>(?:week ?ends?|evenings?|nights?|summers?"
    r"|winters?|holidays|days off|(?:mon|tues|wednes|thurs|fri|satur|sun)days))\s+(?:are|r|is)"
    r" (?:usually |mostly |always |strictly )?(?:for|all about|made for|reserved for)"
    r" (?P<object>[\w' -]+)$",
    _I,
)
"""Time set aside for something: "sundays are for fishing and braais"."""
_CHORES: Final = re.compile(
    r"\b(?:work|homework|chores|errands|laundry|admin|emails?|paperwork|cleaning|housework"
    r"|catching up|overtime|the kids|my kids)\b",
    _I,
)
"""What time is set aside for out of need, not liking."""
_MOSTLY: Final = re.compile(r"^(?:mostly|mainly) (?P<object>[\w' -]+)$", _I)
"""After a liking, what most of it is: "I love reading, mostly fantasy"."""
_PASTIME_OBJECT_VERBS: Final = frozenset(
    {"play", "listen to", "read", "watch", "do", "go", "follow", "collect"}
)
_NOT_PASTIMES: Final = frozenset(
    {"am", "have", "need", "want", "try", "think", "guess", "mean", "work", "can", "will", "just"}
)
_PASTIME_ACT: Final = re.compile(
    r"^(?:(?:also|mostly|usually|often|sometimes|like to|love to|tend to) )*"
    r"(?P<verb>listen to|[a-z]+)(?: (?:a lot of|lots of|loads of|tons of|a bit of|some|the|a"
    r" little|plenty of))?(?: (?P<object>[\w' -]+))?$",
    _I,
)


def _gerund(verb: str) -> str:
    """'paint' -> 'painting', 'bake' -> 'baking', 'swim' -> 'swimming'."""
    if verb.endswith("e") and not verb.endswith("ee"):
        return f"{verb[:-1]}ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnpt]", verb):
        return f"{verb}{verb[-1]}ing"
    return f"{verb}ing"


def _pastimes(acts: str) -> list[str]:
    """What each act of "I play chess and listen to a lot of metal" is about: chess, metal;
    a verb alone is its activity ("I paint": painting)."""
    found = []
    for act in re.split(r",\s*(?:and\s+)?|\s+and\s+(?:I\s+)?", acts.strip()):
        match = _PASTIME_ACT.match(act.strip())
        if match is None:
            continue
        verb = match.group("verb").lower()
        what = _object(match.group("object") or "")
        if verb in _NOT_PASTIMES:
            continue
        if verb in _PASTIME_OBJECT_VERBS:
            if what:
                found.append(what)
        else:
            found.append(f"{_gerund(verb)} {what}".strip() if verb != "do" else what)
    return found


def _objects(text: str) -> list[str]:
    """What a like or dislike is about: "gardening and birdwatching" are two."""
    series = text.strip().rstrip(".!")
    if _SERIES.match(series) and not re.search(r"\b(?:my|our|his|her|their)\b", series, _I):
        items = re.split(r",\s*(?:and |or )?|\s+and\s+|\s+or\s+", series)
        return [o for o in (_object(w) for w in items) if o]  # "bouldering, board games and tea"
    what = _object(text)
    if _OWN_LIFE.match(text.strip()) or what.split(" ", 1)[0].lower() in _OBJECT_PRONOUNS:
        return []  # "I love my job", "I listen to them on my commute"
    pair = _PAIR.match(what)
    if _GERUNDS.match(what) or (pair is not None and not _IDIOM_WORDS & set(what.lower().split())):
        return [w for w in re.split(r",\s*|\s+and\s+|\s+or\s+", what) if w]
    return [what] if what else []


_FRONTED: Final = re.compile(
    r"^(?P<object>[\w' -]{2,30}?)(?: ones)?,?(?: though| tho| honestly)?,? (?:I|I'm|i|im|I am)"
    r" (?:really |just |honestly |pretty |so |kinda |truly |absolutely )*(?:(?P<dislike>can't do"
    r"|cannot do|can't eat|can't stand|cannot stand|can't bear|hate|don't like|do not like"
    r"|dislike|am not a fan of|'m not a fan of|not a fan of|(?:am |'m )?meh (?:on|about)"
    r"|(?:am |'m )?not (?:really )?into|won't eat|don't eat|never eat)"
    r"|(?P<like>love|adore|(?:am |'m )?obsessed with|(?:am |'m )?into|(?:am |'m )?a fan of))"
    r"(?: (?:it|them|those))?$",
    _I,
)
"""A thing named first, then the liking: "tuna I can't do", "Tofu I'm not a fan of", "Popcorn
I'm meh on", "Comedy ones I'm pretty meh about"."""
_NOT_THINGS: Final = frozenset(
    re.findall(
        r"\S+",
        "honestly yes yeah yep yup no nope oh ah wow lol haha hah ok okay well so and but also plus"
        " really actually seriously literally totally absolutely this that these those it one ones"
        " everything anything something nothing all both either neither hmm um uh er omg tbh ngl"
        " lmao god man dude sure right now then tho though still",
    )
)


def _names_no_thing(what: str) -> bool:
    """'Honestly I love it', "This one I love": the words before the liking name no thing."""
    words = what.lower().split()
    return words[0] in {"this", "that", "these", "those", "it"} or all(
        w in _NOT_THINGS or w.endswith("ly") for w in words
    )


_ALCOHOL: Final = frozenset({"alcohol", "booze", "alcoholic drinks", "any alcohol"})
_BACK_REFERENCES: Final = frozenset({"them", "those", "these", "them either", "them at all"})
_PLURAL_BEFORE: Final = re.compile(
    r"\b(?:with|except|about|of|on|for|like|eat|hate|love|use|into|than|but)"
    r" (?:the |those |these |all |any |most )?(?P<thing>[a-z][a-z-]*[a-rt-z]s)\b",
    _I,
)


def _antecedent(before: str) -> str | None:
    """What "them" stands for in "I'm rubbish with spreadsheets and I can't stand them": the
    last plural thing named earlier in the sentence, after a preposition or a verb."""
    things = [match["thing"] for match in _PLURAL_BEFORE.finditer(before)]
    return things[-1] if things else None


_SERIES: Final = re.compile(
    r"^[\w'-]+(?: [\w'-]+){0,2}(?:, [\w'-]+(?: [\w'-]+){0,2})+,? (?:and|or)"
    r" [\w'-]+(?: [\w'-]+){0,2}$"
)
"""Three or more short things in a row, the last after "and": each is one liking."""


_OWN_LIFE: Final = re.compile(r"^my (?:job|work|life|team|colleagues|city)\b", _I)
"""Liking one's own job or life is contentment, not a taste in things."""
_OBJECT_PRONOUNS: Final = frozenset({"them", "him", "her", "us", "me"})
"""Objects that name no thing ("I listen to them on my commute"); "I like it when ..." goes
on to say what."""
_PAIR: Final = re.compile(r"^[A-Za-z]+ and [A-Za-z]+$")
_IDIOM_WORDS: Final = frozenset(
    {"rock", "roll", "mac", "cheese", "salt", "pepper", "fish", "chips", "bread", "butter"}
)
"""One thing named by two words joined with "and" ("rock and roll")."""


def _object(text: str) -> str:
    what = text.strip()
    previous = None
    while previous != what:
        previous = what
        what = _OBJECT_TAIL.sub("", what).strip()
    what = _OBJECT_HEAD.sub("", what).strip()
    if what.lower() in _PRONOUN_OBJECTS:
        return ""
    return what


def _entities_of_sentence(
    sentence: str, named_others: bool, values: frozenset[str] = frozenset()
) -> Iterator[tuple[str, Fact]]:
    """People, pets and projects named by their relation to the user; other capitalised
    names only where the sentence is about them (a decision, a related person): elsewhere a
    capitalised word is a value of a fact of the user's ("I work at Acme") or nothing, and a
    name that is the value of one of the user's facts (`values`: "I live in Exeter with my
    cats") is not also an entity."""
    related_names: set[str] = set()
    for match in RELATED_GROUP.finditer(sentence):
        relation = _PLURAL_RELATIONS[match.group("relation").lower()]
        for name in re.split(r",\s*(?:and |& )?|\s+(?:and|&)\s+", match.group("names")):
            if name and name not in _NOT_NAMES and name not in related_names:
                content = f"{sentence} ({relation}: {name})"
                related_names.add(name)
                yield (
                    "entities",
                    _fact(f"{_RELATION_TYPES[relation]}/{name}", content, "entity", True),
                )
    for match in MARRIED_TO.finditer(sentence):
        name = match.group("name")
        if name not in _NOT_NAMES and name not in related_names:
            content = f"{sentence} (spouse: {name})" if related_names else sentence
            related_names.add(name)
            yield "entities", _fact(f"person/{name}", content, "entity", True)
    for match in RELATION_ENTITY.finditer(sentence):
        name = match.group("name")
        relation = match.group("relation").lower()
        if name.split()[0] in _NOT_NAMES:
            continue  # "my landlord, I'm ...": no name
        if _RELATION_TYPES[relation] in {"project", "organization", "place"} and name in values:
            continue  # "now I'm at a startup called Fernway": the user's employer
        # a second relation of one sentence names itself: the same content would be a copy
        content = f"{sentence} ({relation}: {name})" if related_names else sentence
        related_names.add(name)
        yield "entities", _fact(f"{_RELATION_TYPES[relation]}/{name}", content, "entity", True)
    if not related_names and not named_others:
        return
    for match in CAPITALISED_NAME.finditer(sentence):
        name = match.group(0)
        if (
            match.start() == 0
            or name in related_names
            or name in values
            or name.split()[0] in _NOT_NAMES
        ):
            continue
        before = sentence[: match.start()].split()
        previous = before[-1].lower() if before else ""
        kind = (
            "place"
            if previous in _PLACE_BEFORE
            else "person"
            if previous in _PERSON_BEFORE
            else "thing"
        )
        yield "entities", _fact(f"{kind}/{name}", sentence, "entity", None)
