"""Which sensitive profile fields a text states about the user (seed 003 §10).

The consent policy needs to know, before anything reaches the user's profile (core.md,
`profile`, an agent's context), whether a text gives the user's preferred name, pronouns,
city or language. The judge reads it (`Judge.stated`: the fine-tuned facts model offline,
the configured model with an LLM provider): a name it reads is a preferred name, a town
where they live or come from a city, a language they speak or want replies in a language.
What stays as rules is grammar a linguist would name, never a list of words or wordings:

- pronouns are a closed class ("she/her", "they/them", "xe/xem") the facts model does not
  read: a set of them is its holder's pronouns;
- the holder: a value is the user's (the first person, "the user") unless someone else
  holds it in its sentence, nearer before it than the user: a third-person pronoun ("she
  uses she/her"), the assistant addressed ("you are Ava"; a language it is asked to reply
  in stays the user's), a possessive ("my daughter's pronouns are"), a person the model reads
  ("my colleague Jonas is from Hamburg"), a name opening the sentence ("Maya lives in
  Paris"), or a noun phrase opening its clause with a determiner ("the office is in
  Berlin");
- negation and the past: a value after a negation or "used to" in its clause sets nothing
  ("I don't live in Lisbon anymore", "call me Alex, not Alexander");
- quotation: a value inside quotation marks is someone's words, not a statement.

A name a sentence is about is not a name it gives: its subject ("Maya lives in Paris") or a
possessor ("Maya's assistant"). A sentence that opens with "the user" is read a second time
with it written "User", as the model reads a third-person statement best. A document about
the user by construction (core.md's USER section, a user note: "Pri lives in Porto") is
read with `named_is_user=True`: a name opening a sentence is the user too, and is written
"User" for the second reading.

The gate errs on the side of privacy: what either reading finds is held back; a hometown or
birthplace counts as a city; a reply style the model reads as a language when said as one
("please reply in German") is a language. Holding back (core.md, the context, the
consolidation gate) reads with the offline model; the proposals of an add read with the
home's judge (`consent_gate.proposals`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from mnemoledger.commands.judge.facts import StatedFact, Word, words
from mnemoledger.commands.judge.guards import NEGATION
from mnemoledger.commands.judge.judgement import Judge
from mnemoledger.commands.write.attribution import speaker_and_body
from mnemoledger.ledger.policy import SENSITIVE_PROFILE_FIELDS

PREFERRED_NAME: Final = "preferred_name"
PRONOUNS: Final = "pronouns"
CITY: Final = "city"
LANGUAGE: Final = "language"
assert (PREFERRED_NAME, PRONOUNS, CITY, LANGUAGE) == SENSITIVE_PROFILE_FIELDS

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

FIELD_OF_ATTRIBUTE: Final = {
    "name": PREFERRED_NAME,
    "location": CITY,
    "hometown": CITY,
    "language": LANGUAGE,
}
"""The sensitive field each attribute of the judge's facts reading gives."""
REPLY_STYLE: Final = "style"
"""How the user wants replies written: a language when the model reads it as one."""
FRAMES: Final = {
    PREFERRED_NAME: "My name is {}.",
    CITY: "I live in {}.",
    LANGUAGE: "I speak {}.",
}
"""The plainest statement of each field: a bare value (a key's, a reply style's) is read in
it to tell whether it can be a value of the field ("the suburbs" is no city)."""

PRONOUN_SET: Final = re.compile(
    r"(?<![\w/])(?:she|he|they|xe|ze|ey|fae|ve|it)\s*/\s*"
    r"(?:her|him|them|they|she|he|hers|his|theirs|xem|xir|hir|zir|em|faer|ver|its)"
    r"(?:\s*/\s*[a-z]+)?(?![\w/])",
    re.IGNORECASE,
)
"""A set of personal pronouns: a subject form, then its other forms ("she/her", "xe/xem")."""

# closed grammatical classes: who holds what a clause says


def _closed(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FIRST_PERSON: Final = _closed("i me my mine myself we us our ours ourselves")
_THIRD_PERSON: Final = _closed(
    "he she they him her hers his their theirs them himself herself themselves"
)
_SECOND_PERSON: Final = _closed("you your yours yourself yourselves")
"""The assistant, addressed: it holds a name or a place ("You are Ava"), but a language it
is asked to reply in is the user's ("could you respond in Spanish?")."""
_DETERMINERS: Final = _closed("the a an this that these those another each every")
_USER: Final = "user"
"""How a text names the user in the third person ("the user", "User")."""
_NOT_POSSESSORS: Final = _closed("it that there here what who where let")
"""Words whose "'s" is "is" or "us" ("it's", "let's"), never a possessive."""

PAST: Final = re.compile(r"\b(?:used to|formerly|previously)\b", re.IGNORECASE)
"""A state that held once and no longer does."""
_CLAUSE_END: Final = re.compile(r"[,;:()\n]|\s[-–—]\s|[–—]|\b(?:and|but)\b", re.IGNORECASE)
"""Where a clause ends: punctuation within a sentence, a dash, "and", "but"."""
_QUOTED: Final = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»|„[^“”]*[“”]")
_OPENING_NAME: Final = re.compile(r"(?-i:[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)(?=\s+[a-z])")
"""Capitalised words opening a sentence before a lower-case word: a name as its subject."""
_THE_USER: Final = re.compile(r"(?:the\s+)?user\b", re.IGNORECASE)
WRITTEN_USER: Final = "User"
"""How the user, named in the third person, is written for a second reading."""


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
    """Whether two values are one (case and spaces aside)."""
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def mentions(
    text: str, *, named_is_user: bool = False, judge: Judge | None = None
) -> list[FieldMention]:
    """The sensitive profile fields `text` states about the user, in text order, one per
    field and value."""
    return mentions_in([text], named_is_user=named_is_user, judge=judge)[0]


def fields_of(
    text: str, *, named_is_user: bool = False, judge: Judge | None = None
) -> dict[str, str]:
    """`mentions` as {field: value}; the first value of a field wins."""
    result: dict[str, str] = {}
    for mention in mentions(text, named_is_user=named_is_user, judge=judge):
        result.setdefault(mention.field, mention.value)
    return result


def mentions_in(
    texts: Sequence[str], *, named_is_user: bool = False, judge: Judge | None = None
) -> list[list[FieldMention]]:
    """`mentions` of each text, the judge asked once for all of them (the offline facts
    model when `judge` is None)."""
    chosen = judge or _offline()
    bodies = [_body(text) for text in texts]
    rewrites = [_as_user(body, named_is_user) for body, _ in bodies]
    asked = [body for body, _ in bodies] + [said for r in rewrites for said, _ in r]
    read = chosen.stated(asked) if asked else []
    again = iter(read[len(bodies) :])
    second = [[(said, shift, next(again)) for said, shift in r] for r in rewrites]
    styles = list(
        dict.fromkeys(
            f.value for facts in read for f in facts if f.attribute == REPLY_STYLE and f.positive
        )
    )
    languages = _read_as(LANGUAGE, styles)
    found: list[list[FieldMention]] = []
    for (body, offset), facts, rewritten in zip(bodies, read[: len(bodies)], second, strict=True):
        mentioned = _mentions(body, facts, languages, named_is_user, offset)
        for said, shift, facts_again in rewritten:
            mentioned += _mentions(said, facts_again, languages, named_is_user, offset + shift)
        unique: dict[tuple[str, str], FieldMention] = {}
        for mention in sorted(mentioned, key=lambda m: (m.start, m.field)):
            unique.setdefault((mention.field, mention.value.casefold()), mention)
        found.append(list(unique.values()))
    return found


def field_value(field: str, raw: str, judge: Judge | None = None) -> str | None:
    """`raw` as a value of `field` (a name, a pronoun set, a place, languages), None when it
    cannot be one: the judge reads no such field in its plainest statement ("And" is no
    name, "the suburbs" no city)."""
    value = raw.strip(" ,.;:!?\"'")
    if field == PRONOUNS:
        return _pronouns(value) if PRONOUN_SET.fullmatch(value) else None
    if not value or field not in FRAMES:
        return None
    return value if _read_as(field, [value], judge).get(value) else None


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the sentences of `text` (ends: . ! ? ; followed by space, or the end)."""
    start = 0
    for match in re.finditer(r"(?<![A-Z][a-z])(?<!\b[A-Z])[.!?;]+\s+", text):
        yield start, match.end()
        start = match.end()
    if start < len(text):
        yield start, len(text)


# --- the reading ------------------------------------------------------------------------------


def _offline() -> Judge:
    from mnemoledger.commands.judge.learned import default_judge

    return default_judge()


def _body(text: str) -> tuple[str, int]:
    """What a text says without its attribution ("[date] Caroline: "), and where it starts:
    the attribution is no statement of a name."""
    body = speaker_and_body(text)[1]
    return body, len(text) - len(body)


def _read_as(field: str, values: Sequence[str], judge: Judge | None = None) -> dict[str, str]:
    """Each value the judge reads as `field` in the field's plainest statement (`FRAMES`),
    with the value it gives: the value itself, or the languages read in it."""
    if not values:
        return {}
    readings = (judge or _offline()).stated([FRAMES[field].format(v) for v in values])
    found: dict[str, str] = {}
    for value, facts in zip(values, readings, strict=True):
        read = [
            f.value for f in facts if f.positive and FIELD_OF_ATTRIBUTE.get(f.attribute) == field
        ]
        if read:
            found[value] = ", ".join(dict.fromkeys(read)) if field == LANGUAGE else value
    return found


def _mentions(
    text: str,
    facts: Sequence[StatedFact],
    languages: dict[str, str],
    named_is_user: bool,
    offset: int,
) -> list[FieldMention]:
    """The fields the judge's facts give, the pronoun sets of `text`, through the guards;
    positions in the text `offset` characters longer."""
    said = words(text)
    located = _located(text, facts)
    others = [(s, e) for f, s, e in located if f.attribute in ("person", "pet")]
    names = [(s, e) for f, s, e in located if f.attribute == "name"]
    holders = _Holders(text, said, others, names, named_is_user)
    found: list[FieldMention] = []
    spoken: list[FieldMention] = []
    for fact, start, end in located:
        if not fact.positive or PRONOUN_SET.fullmatch(fact.value):
            continue
        field = FIELD_OF_ATTRIBUTE.get(fact.attribute)
        value = fact.value
        if fact.attribute == REPLY_STYLE and fact.value in languages:
            field, value = LANGUAGE, languages[fact.value]
        if field is None:
            continue
        if start >= 0 and (
            (field == PREFERRED_NAME and holders.named_not_given(start, end))
            or not holders.the_users(start, end, field)
        ):
            continue
        mention = FieldMention(field, value, start + offset, end + offset)
        (spoken if field == LANGUAGE else found).append(mention)
    for match in PRONOUN_SET.finditer(text):
        if holders.the_users(match.start(), match.end(), PRONOUNS):
            found.append(
                FieldMention(
                    PRONOUNS, _pronouns(match.group()), match.start() + offset, match.end() + offset
                )
            )
    if spoken:  # the languages of one text are one value: "English, Hindi"
        names_said = list(dict.fromkeys(m.value for m in spoken))
        found.append(FieldMention(LANGUAGE, ", ".join(names_said), spoken[0].start, spoken[-1].end))
    return found


def _located(text: str, facts: Sequence[StatedFact]) -> list[tuple[StatedFact, int, int]]:
    """Each fact with where its value stands in `text`, in the order said (-1 for a value
    the text does not hold word for word: a model's paraphrase, read without the guards)."""
    cursor = 0
    located = []
    for fact in facts:
        start = text.find(fact.value, cursor)
        if start < 0:
            start = text.find(fact.value)
        if start < 0:
            located.append((fact, -1, -1))
            continue
        located.append((fact, start, start + len(fact.value)))
        cursor = start + len(fact.value)
    return located


def _pronouns(value: str) -> str:
    return re.sub(r"\s*/\s*", "/", value.strip().casefold())


def _as_user(text: str, named_is_user: bool) -> list[tuple[str, int]]:
    """Each sentence of `text` that opens with "the user" (and, when `named_is_user`, with a
    name) written with it as `WRITTEN_USER`, and what to add to a position in that sentence
    to find it in `text`."""
    found = []
    for start, end in sentences(text):
        sentence = text[start:end]
        lead = len(sentence) - len(sentence.lstrip(" \t-*•"))
        rest = sentence[lead:]
        user = _THE_USER.match(rest)
        opening = _OPENING_NAME.match(rest)
        if user:
            span = user.end()
        elif named_is_user and opening and _base(rest.split()[0])[0] not in _CLOSED:
            span = opening.end() - 2 * bool(re.search(r"['’]s$", opening.group()))
        else:
            continue
        found.append((WRITTEN_USER + rest[span:], start + lead + span - len(WRITTEN_USER)))
    return found


_CLOSED: Final = _FIRST_PERSON | _SECOND_PERSON | _THIRD_PERSON | _DETERMINERS | {"it", "its"}


class _Holders:
    """Who holds what each part of a text says: the user unless a guard names another."""

    def __init__(
        self,
        text: str,
        said: list[Word],
        others: list[tuple[int, int]],
        names: list[tuple[int, int]],
        named_is_user: bool,
    ) -> None:
        self.text = text
        self.said = said
        self.others = others
        self.names = names
        self.named_is_user = named_is_user
        self.sentences = list(sentences(text))

    def named_not_given(self, start: int, end: int) -> bool:
        """Whether the name at [start, end) is one the sentence is about, not one it gives:
        its subject, opening it before a verb ("Maya lives in Paris"; in a document about
        the user, whatever follows: "Maya, a violinist"), or a possessor ("Maya's
        assistant")."""
        begins = next((s for s, e in self.sentences if s <= start < e), 0)
        opens = not self.text[begins:start].strip(" \t-*•")
        if opens and (self.named_is_user or re.match(r"(?:['’]s)?\s+[a-z]", self.text[end:])):
            return True
        return re.match(r"['’]s\s+\w", self.text[max(start, end - 2) :]) is not None or (
            re.match(r"['’]s\s+\w", self.text[end:]) is not None
        )

    def the_users(self, start: int, end: int, field: str) -> bool:
        """Whether the value at [start, end) is the user's, stated: not negated or past in
        its clause, not quoted, and held by the user."""
        if any(q.start() < start and end <= q.end() for q in _QUOTED.finditer(self.text)):
            return False
        begins = next((s for s, e in self.sentences if s <= start < e), 0)
        clause = begins + max(
            (m.end() for m in _CLAUSE_END.finditer(self.text[begins:start])), default=0
        )
        lead = self.text[clause:start]
        if NEGATION.search(lead) or PAST.search(lead):
            return False
        return self._held_by_user(begins, clause, start, field)

    def _held_by_user(self, begins: int, clause: int, start: int, field: str) -> bool:
        before = [w for w in self.said if begins <= w.start and w.end <= start]
        for index in range(len(before) - 1, -1, -1):
            word = before[index]
            base, possessive = _base(word.text)
            if base in _FIRST_PERSON or base == _USER:
                return True
            if base in _THIRD_PERSON or (base in _SECOND_PERSON and field != LANGUAGE):
                return False
            if _within(word, self.others):
                return False
            if index == 0 and _within(word, self.names):
                return self.named_is_user  # the sentence's subject, not a name it gives
            if possessive and index < len(before) - 1 and base not in _NOT_POSSESSORS:
                return self.named_is_user and index == 0  # "my daughter's", "Pri's"
        opening = [w for w in before if w.start >= clause]
        return not (opening and opening[0].text.casefold() in _DETERMINERS)


def _base(word: str) -> tuple[str, bool]:
    """A word in lower case without its clitic ("I'm" -> "i"), and whether it ends in "'s"
    (a possessive, or "is")."""
    plain = word.casefold().replace("’", "'")
    base, _, clitic = plain.partition("'")
    return base, clitic == "s"


def _within(word: Word, spans: list[tuple[int, int]]) -> bool:
    return any(s <= word.start and word.end <= e for s, e in spans)
