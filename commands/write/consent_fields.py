"""Which sensitive profile fields a text states about the user (seed 003 §10).

The consent policy needs to know, before anything reaches the user's profile (core.md,
`profile`, an agent's context), whether a text gives the user's preferred name, pronouns,
city or language. `mentions(text)` finds them in the many ways people say them ("call me
Pri", "I go by Lexi", "my pronouns are they/them", "Pronouns: she/they", "I'm based in
Berlin", "home for me is Melbourne", "I'm a native French speaker", "please reply in
German") and only when they are the user's own: "my sister lives in Rome", "Maya speaks
French" or "my daughter's pronouns are they/them" are someone else's, and "I don't live in
Lisbon anymore", "I used to live in Rome" or "I'm learning Japanese" set nothing.

The user is the first person (I, my, me, we) or "the user". A document that is about the
user by construction (core.md's USER section, written in the third person by an LLM: "Pri
lives in Porto") is read with `named_is_user=True`, where a bare name is the user too
(never one after a relation word: "my sister Ingrid lives in Rome").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from mnemoledger.ledger.policy import SENSITIVE_PROFILE_FIELDS

PREFERRED_NAME: Final = "preferred_name"
PRONOUNS: Final = "pronouns"
CITY: Final = "city"
LANGUAGE: Final = "language"
assert (PREFERRED_NAME, PRONOUNS, CITY, LANGUAGE) == SENSITIVE_PROFILE_FIELDS

_I = re.IGNORECASE


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FIELD_LABELS: Final = {
    PREFERRED_NAME: "Preferred name",
    PRONOUNS: "Pronouns",
    CITY: "City",
    LANGUAGE: "Language",
}
"""How a granted field reads as a core.md bullet ("City: Porto")."""
_FIELD_BULLET: Final = re.compile(
    r"^(" + "|".join(re.escape(label) for label in FIELD_LABELS.values()) + r"): (.+)$"
)

LANGUAGES: Final = _words(
    """afrikaans albanian amharic arabic armenian basque belarusian bengali bosnian
    bulgarian burmese cantonese catalan croatian czech danish dutch english estonian
    farsi filipino finnish french galician georgian german greek gujarati hausa hebrew
    hindi hungarian icelandic igbo indonesian irish italian japanese javanese kannada
    kazakh khmer korean kurdish lao latvian lithuanian luxembourgish macedonian malay
    malayalam maltese mandarin marathi mongolian nepali norwegian pashto persian polish
    portuguese punjabi romanian russian serbian sinhala slovak slovenian somali spanish
    swahili swedish tagalog tamil telugu thai tibetan turkish ukrainian urdu uzbek
    vietnamese welsh xhosa yiddish yoruba zulu asl"""
)
"""Language names (lower case) a language field may take."""

_NOT_NAMES: Final = _words(
    """a an the fine ok okay good sure sorry glad happy tired here back done ready new not
    just also so very really still always never from in at on with and or but"""
)
"""Words after "I'm" that are no name ("I'm Sure" at a line start)."""

RELATION_WORDS: Final = _words(
    """sister brother mother mom mum father dad parent parents wife husband partner
    boyfriend girlfriend son daughter kid kids child children friend friends colleague
    coworker co-worker boss manager neighbour neighbor cousin aunt uncle grandma grandpa
    grandmother grandfather niece nephew roommate flatmate dog cat teammate"""
)
"""A name after one of these is that person's, not the user's ("my sister Ingrid")."""

_NON_PLACES: Final = _words(
    """january february march april may june july august september october november
    december monday tuesday wednesday thursday friday saturday sunday i the a an my our"""
)

# --- the parts of a statement --------------------------------------------------------------

_NAME = r"(?-i:(?:Dr\.|Mr\.|Mrs\.|Ms\.|Prof\.)?\s?[A-Z][\w'’-]+(?:\s[A-Z][\w'’-]+)?)"
_PLACE = (
    r"(?-i:[A-Z][\w'’.-]*[a-zà-ÿ][\w'’-]*"
    r"(?:\s(?:(?:de|da|do|del|la|le|am|upon|on|of)\s)?[A-Z][\w'’-]+){0,2})"
)
_SET = (
    r"(?:(?:she|he|they|xe|ze|ey|fae|ve|it)\s*/\s*(?:her|him|them|they|she|he|hers|his"
    r"|theirs|xem|xir|hir|zir|em|faer|ver|its)(?:\s*/\s*[a-z]+)?|any pronouns)"
)
_LANG = r"(?:[A-Za-z]+(?:\s+(?:and|or|,)\s*[A-Za-z]+)*)"
_ME = r"(?:I|I'm|I am|I've|I have|I'd|we|we're|we've)"
_ADV = r"(?:\s+(?:just|now|recently|currently|also|still|actually|finally|originally))?"
_USER3 = r"(?:the user|user)"

Pattern = tuple[str, re.Pattern[str]]


def _patterns(subject_3rd: str) -> list[Pattern]:
    """The field patterns; `subject_3rd` is who counts as the user in the third person."""
    s3 = subject_3rd
    return [
        # preferred name
        (PREFERRED_NAME, re.compile(r"\bcall me (?:by )?(?P<v>" + _NAME + ")", _I)),
        (
            PREFERRED_NAME,
            re.compile(
                r"\b(?:everyone|people|friends|folks|they) calls? me (?P<v>" + _NAME + ")", _I
            ),
        ),
        (
            PREFERRED_NAME,
            re.compile(
                r"(?:\bmy|^|[.!?]\s+)\s*(?:(?:preferred|first|nick|given)\s?)?name(?: is|'s|:)\s+"
                r"(?P<v>" + _NAME + ")",
                _I,
            ),
        ),
        (PREFERRED_NAME, re.compile(r"\bmy nickname is (?P<v>" + _NAME + ")", _I)),
        (
            PREFERRED_NAME,
            re.compile(
                r"\bI(?:'m| am)? (?:go by|goes by|prefer to go by|answer to)\s+(?P<v>"
                + _NAME
                + ")",
                _I,
            ),
        ),
        (
            PREFERRED_NAME,
            re.compile(
                r"\b(?:I|" + s3 + r")(?:'d| would)? (?:prefers?|like|likes|want|wants) to be "
                r"(?:called|named|addressed as|known as) (?P<v>" + _NAME + ")",
                _I,
            ),
        ),
        (
            PREFERRED_NAME,
            re.compile(r"\b(?:address|refer to) me as (?P<v>" + _NAME + ")", _I),
        ),
        (PREFERRED_NAME, re.compile(r"\bI(?:'m| am) (?:called|named) (?P<v>" + _NAME + ")", _I)),
        (
            PREFERRED_NAME,
            re.compile(
                r"(?:^|[.!?,;]\s+|\bhi,?\s+|\bhello,?\s+|\bhey,?\s+)I(?:'m| am) "
                r"(?P<v>(?-i:[A-Z][\w'’-]+))(?=\s*(?:[,.!;]|$|\band\b|\bhere\b))",
                _I,
            ),
        ),
        (
            PREFERRED_NAME,
            re.compile(
                s3 + r"(?:'s (?:preferred )?name is| goes by| is called) (?P<v>" + _NAME + ")",
                _I,
            ),
        ),
        # pronouns
        (PRONOUNS, re.compile(r"\bmy pronouns (?:are|:)\s*(?P<v>" + _SET + ")", _I)),
        (PRONOUNS, re.compile(r"(?:^|[.!?]\s+)pronouns\s*[:=-]\s*(?P<v>" + _SET + ")", _I)),
        (
            PRONOUNS,
            re.compile(
                r"\bI (?:use|go by|prefer|identify with|answer to)\s+(?P<v>" + _SET + ")", _I
            ),
        ),
        (
            PRONOUNS,
            re.compile(
                r"\b(?:refer to|address|describe) me (?:as|with|using|by)\s+(?P<v>" + _SET + ")",
                _I,
            ),
        ),
        (
            PRONOUNS,
            re.compile(r"\buse (?P<v>" + _SET + r")(?: pronouns)? (?:for|with|about) me\b", _I),
        ),
        (
            PRONOUNS,
            re.compile(r"(?:^|[;,.]\s*)(?P<v>" + _SET + r")(?: pronouns)? (?:is|are) fine\b", _I),
        ),
        (
            PRONOUNS,
            re.compile(
                s3 + r"(?:'s pronouns are| uses| goes by)\s+(?P<v>" + _SET + ")",
                _I,
            ),
        ),
        # city
        (
            CITY,
            re.compile(
                r"\b" + _ME + _ADV + r"\s+(?:live|reside|am living|'m living|'ve been living"
                r"|have been living|been living|are living|'re living|'ve lived|have lived)"
                r" in (?P<v>" + _PLACE + ")",
                _I,
            ),
        ),
        (
            CITY,
            re.compile(
                r"\b"
                + _ME
                + _ADV
                + r"\s+(?:(?:am|'m|are|'re)\s+)?based (?:in|out of) (?P<v>"
                + _PLACE
                + ")",
                _I,
            ),
        ),
        (
            CITY,
            re.compile(
                r"\b" + _ME + _ADV + r"\s+(?:(?:have|'ve|am|'m|are|'re)\s+)?"
                r"(?:moved|relocated|moving|relocating)(?: back)? to (?P<v>" + _PLACE + ")",
                _I,
            ),
        ),
        (
            CITY,
            re.compile(
                r"\b(?:I(?:'m| am)|we(?:'re| are))" + _ADV + r" from (?P<v>" + _PLACE + ")", _I
            ),
        ),
        (
            CITY,
            re.compile(
                r"\bI"
                + _ADV
                + r" (?:come from|grew up in|was born in|was raised in) (?P<v>"
                + _PLACE
                + ")",
                _I,
            ),
        ),
        (
            CITY,
            re.compile(
                r"\bI" + _ADV + r" work (?:remotely |from home )?from (?P<v>" + _PLACE + ")", _I
            ),
        ),
        (
            CITY,
            re.compile(
                r"\b(?:home for me is|my (?:home ?town|home city|city|home) is(?: in)?) (?P<v>"
                + _PLACE
                + ")",
                _I,
            ),
        ),
        (CITY, re.compile(r"\bI call (?P<v>" + _PLACE + r") home\b", _I)),
        (CITY, re.compile(r"\bhome is (?P<v>" + _PLACE + r") for (?:me|us)\b", _I)),
        (
            CITY,
            re.compile(r"\b(?:I|we)(?:'ve| have) lived in (?P<v>" + _PLACE + ")", _I),
        ),
        (
            CITY,
            re.compile(
                s3 + r" (?:lives|resides|is based|is living|has been living|moved|relocated"
                r"|is from|grew up|was born)(?: (?:in|to|out of))? (?P<v>" + _PLACE + ")",
                _I,
            ),
        ),
        # a second verb of a first-person statement: "I live in Porto and speak Portuguese"
        (
            LANGUAGE,
            re.compile(
                r"\b(?:I|we)\b[^.!?;]{0,80}?\band (?:also |now )?speak (?:fluent )?(?P<v>"
                + _LANG
                + ")",
                _I,
            ),
        ),
        (
            CITY,
            re.compile(
                r"\b(?:I|we)\b[^.!?;]{0,80}?\band (?:now |currently )?live in (?P<v>"
                + _PLACE
                + ")",
                _I,
            ),
        ),
        # language
        (
            LANGUAGE,
            re.compile(
                r"\b" + _ME + _ADV + r"\s+(?:speak|can speak|grew up speaking|mostly speak"
                r"|(?:am|'m|are)?\s*(?:fluent|bilingual) in)\s+(?:fluent\s+)?"
                r"(?P<v>" + _LANG + ")",
                _I,
            ),
        ),
        (
            LANGUAGE,
            re.compile(r"\bI(?:'m| am) a native (?P<v>" + _LANG + r") speaker", _I),
        ),
        (
            LANGUAGE,
            re.compile(
                r"\bmy (?:native |first |mother |home |preferred |main )?(?:language|tongue)"
                r" is (?P<v>" + _LANG + ")",
                _I,
            ),
        ),
        (
            LANGUAGE,
            re.compile(
                r"(?P<v>" + _LANG + r") is my (?:native|first|mother|home|preferred|main)"
                r" (?:language|tongue)",
                _I,
            ),
        ),
        (
            LANGUAGE,
            re.compile(
                r"\b(?:reply|respond|answer|talk|write|speak|chat)(?: to me| me)? in (?P<v>"
                + _LANG
                + ")",
                _I,
            ),
        ),
        (
            LANGUAGE,
            re.compile(
                r"\bI(?:'d| would) rather (?:chat|talk|speak|write|communicate) in (?P<v>"
                + _LANG
                + r")|\bI (?:prefer|like|want) to (?:chat|talk|speak|write|communicate) in (?P<w>"
                + _LANG
                + ")",
                _I,
            ),
        ),
        (
            LANGUAGE,
            re.compile(
                s3
                + r" (?:speaks|is fluent in|is a native|prefers)\s+(?:fluent\s+)?(?P<v>"
                + _LANG
                + ")",
                _I,
            ),
        ),
    ]


_USER_PATTERNS: Final = _patterns(_USER3)
_NAMED_PATTERNS: Final = _patterns(r"(?:the user|user|(?-i:(?P<who>[A-Z][a-zà-ÿ]+)))")

_NEGATION: Final = re.compile(r"\b(?:not|never|no longer|used to)\b|n't\b", _I)
_NEGATION_REACH: Final = 24
"""How many characters before a statement a negation still reaches ("please don't reply
in German")."""


@dataclass(frozen=True)
class FieldMention:
    """A sensitive profile field a text states for the user, and the value it gives."""

    field: str
    value: str
    start: int
    end: int

    def matches(self, value: str) -> bool:
        """Whether `value` is the value this mention gives (case and spaces aside)."""
        return same_value(self.value, value)


def field_bullet(field: str, value: str) -> str:
    """The core.md bullet of a granted field."""
    return f"{FIELD_LABELS[field]}: {value}"


def field_of_bullet(text: str) -> tuple[str, str] | None:
    """(field, value) of a field bullet, None for any other bullet."""
    match = _FIELD_BULLET.match(text)
    if match is None:
        return None
    label, value = match.groups()
    return next(f for f, name in FIELD_LABELS.items() if name == label), value


def same_value(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def mentions(text: str, *, named_is_user: bool = False) -> list[FieldMention]:
    """The sensitive profile fields `text` states about the user, in text order, one per
    field and value."""
    found: dict[tuple[str, str], FieldMention] = {}
    for field, pattern in _NAMED_PATTERNS if named_is_user else _USER_PATTERNS:
        for match in pattern.finditer(text):
            mention = _accept(field, match, text)
            if mention is not None:
                found.setdefault((field, mention.value.casefold()), mention)
    return sorted(found.values(), key=lambda m: (m.start, m.field))


def fields_of(text: str, *, named_is_user: bool = False) -> dict[str, str]:
    """`mentions` as {field: value}; the first value of a field wins."""
    result: dict[str, str] = {}
    for mention in mentions(text, named_is_user=named_is_user):
        result.setdefault(mention.field, mention.value)
    return result


def _accept(field: str, match: re.Match[str], text: str) -> FieldMention | None:
    group = "v" if match.group("v") is not None else "w"
    before = text[: match.start()]
    sentence_start = max(before.rfind(". "), before.rfind("! "), before.rfind("? "), -1) + 1
    lead = before[max(sentence_start, len(before) - _NEGATION_REACH) :]
    if _NEGATION.search(lead + text[match.start() : match.start(group)]):
        return None
    who = match.groupdict().get("who")
    if who is not None and not _is_user_name(who, before):
        return None
    value = _value(field, match.group(group))
    if value is None:
        return None
    return FieldMention(field, value, match.start(), match.end())


def _is_user_name(who: str, before: str) -> bool:
    """A bare name is the user's unless it is a pronoun-like word or follows a relation
    word ("my sister Ingrid")."""
    if who.casefold() in _NOT_SUBJECTS:
        return False
    words = re.findall(r"[\w'-]+", before.casefold())
    return not (words and (words[-1] in RELATION_WORDS or words[-1].endswith("'s")))


_NOT_SUBJECTS: Final = _words(
    """i my our your his her their she he they it we you this that there here the a an
    everyone someone nobody people"""
)


def field_value(field: str, raw: str) -> str | None:
    """`raw` as a value of `field` (a name, a pronoun set, a place, languages), None when it
    cannot be one ("And" is no name, "the suburbs" no city)."""
    if field == PRONOUNS:
        return _value(field, raw) if re.fullmatch(_SET, raw.strip(" .,;:!?"), _I) else None
    if field in (PREFERRED_NAME, CITY) and not re.match(
        r"(?:Dr\.|Mr\.|Mrs\.|Ms\.)?\s?[A-ZÀ-Ý]", raw.strip()
    ):
        return None
    return _value(field, raw)


def _value(field: str, raw: str) -> str | None:
    value = raw.strip(" ,.;:!?\"'")
    if field == LANGUAGE:
        return _languages(value)
    if field == PRONOUNS:
        return re.sub(r"\s*/\s*", "/", value.casefold())
    if field == PREFERRED_NAME:
        first = value.split()[0].rstrip(".").casefold()
        if first in _NOT_NAMES or first in LANGUAGES or _nationality(first):
            return None
        return value
    words = value.split()
    if not words or words[0].casefold() in _NON_PLACES:
        return None
    return value


def _languages(value: str) -> str | None:
    names = [w for w in re.split(r"\s*(?:,|\band\b|\bor\b)\s*", value) if w]
    known: list[str] = []
    for name in names:
        word = name.split()[0]
        if word.casefold() not in LANGUAGES:
            break  # "Spanish at work": the list ends at the first word that is no language
        known.append(word[0].upper() + word[1:].lower() if word.casefold() != "asl" else "ASL")
    return ", ".join(known) or None


def _nationality(word: str) -> bool:
    """Words like "portuguese", "polish", "brazilian": "I'm Portuguese" names no one."""
    return word.endswith(("ese", "ish", "ian", "ean")) and len(word) > 5


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the sentences of `text` (ends: . ! ? ; followed by space, or the end)."""
    start = 0
    for match in re.finditer(r"(?<![A-Z][a-z])(?<!\b[A-Z])[.!?;]+\s+", text):
        yield start, match.end()
        start = match.end()
    if start < len(text):
        yield start, len(text)
