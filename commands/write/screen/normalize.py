"""Views of a text that undo the usual disguises of a prompt injection.

An attacker hides "ignore previous instructions" from a plain regex with fullwidth letters
("Ｉgnore"), Cyrillic or Greek look-alikes ("Ignоre" with a Cyrillic о), zero-width or
bidi control characters inside words, leetspeak digits ("1gn0r3") or spaced-out letters
("i g n o r e"). `views()` gives the text in several readings; the screen matches its
patterns on every one. The views are only ever matched, never stored.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
from functools import cache
from typing import Final

from confusable_homoglyphs.utils import load as load_confusables

# Zero-width characters, soft hyphen, word joiners, BOM and the bidi controls (Unicode
# Standard Annex #9: LRE..RLO U+202A-202E, LRI..PDI U+2066-2069, marks U+200E/F, U+061C):
# invisible in a rendered memory, so they only ever serve to split a word.
INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)


@cache
def _confusables() -> dict[int, str]:
    """Letters of other scripts drawn like Latin ones, folded to the Latin letter they
    imitate: Unicode's confusables (UTS #39, the data `confusable_homoglyphs` ships), each
    lower-case letter too when its capital is one (the screen reads without case: "к" as
    "К" -> "K"). Built once, on the first text screened."""
    table: dict[int, str] = {}
    for char, glyphs in load_confusables("confusables.json").items():
        latin = [g["c"] for g in glyphs if g["c"].isascii() and g["c"].isalpha()]
        if len(char) == 1 and not char.isascii() and char.isalpha() and latin:
            # the skeleton folds Latin "I" into "l": a capital look-alike imitates "I"
            table[ord(char)] = "I" if latin[0] == "l" and char.isupper() else latin[0]
    for code, letter in list(table.items()):
        lower = chr(code).lower()
        if len(lower) == 1 and lower != chr(code):
            table.setdefault(ord(lower), letter.lower())
    return table


# Leetspeak digits and symbols, read as letters only inside a word that also holds a
# letter (so "24.04" or "$5" stay numbers).
LEET: Final = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "8": "b",
        "9": "g",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "l",
        "€": "e",
    }
)
LEET_CHARS: Final = re.compile(r"[0-9@$!|€]")

# A run of at least this many single letters separated by spaces or punctuation
# ("i g n o r e", "I.G.N.O.R.E") is one spaced-out word: real text has few runs of
# 4+ one-letter words ("I a m" does not occur), so 4 keeps initials like "J. R. R." apart.
SPACED_RUN_MIN: Final = 4
SPACED_RUN: Final = re.compile(
    rf"(?<![\w])(?:[^\W\d_][ \t._\-*·/]{{1,3}}){{{SPACED_RUN_MIN - 1},}}[^\W\d_](?![\w])"
)
SPACED_GAP: Final = re.compile(r"[ \t._\-*·/]+")
# Inside a spaced-out run, a gap this wide or wider separates words ("i g n o r e   a l l").
WORD_GAP: Final = re.compile(r"[ \t]{2,}|\s*/\s*|\s*\|\s*")

COMBINING_ACCENTS: Final = re.compile("[\u0300-\u036f]")


# Typographic apostrophes read as the ASCII one ("don’t" is "don't").
APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})


def clean(text: str) -> str:
    """NFKC (fullwidth, ligatures, compatibility forms) without invisible characters."""
    return unicodedata.normalize("NFKC", INVISIBLE.sub("", text)).translate(APOSTROPHES)


def fold_confusables(text: str) -> str:
    """Cyrillic and Greek look-alikes read as the Latin letters they imitate, in words that
    also hold a Latin letter (a whole Russian or Greek sentence stays what it is)."""

    def fold(match: re.Match[str]) -> str:
        word = match.group(0)
        return word.translate(_confusables()) if re.search("[A-Za-z]", word) else word

    return re.sub(r"\w+", fold, text)


def fold_all_confusables(text: str) -> str:
    """Every look-alike folded: catches a word written entirely in look-alike letters."""
    return text.translate(_confusables())


def strip_accents(text: str) -> str:
    """Latin accents dropped ("instrucciónes" -> "instrucciones"), other scripts intact."""
    stripped = COMBINING_ACCENTS.sub("", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", stripped)


def unleet(text: str) -> str:
    """Digits and symbols inside words read as the letters they imitate."""

    def fold(match: re.Match[str]) -> str:
        word = match.group(0)
        if not LEET_CHARS.search(word) or not re.search("[A-Za-z]", word):
            return word
        return word.translate(LEET)

    return re.sub(r"[\w@$!|€]+", fold, text)


def unspace(text: str) -> str:
    """Spaced-out letters joined back into words; wide gaps stay word breaks."""

    def join(match: re.Match[str]) -> str:
        words = WORD_GAP.split(match.group(0))
        return " ".join(SPACED_GAP.sub("", word) for word in words)

    return SPACED_RUN.sub(join, text)


# A base64 run at least this long (24 characters = 18 bytes, a short sentence) is decoded
# and read as text; shorter runs are ids and hashes.
BASE64_MIN_CHARS: Final = 24
BASE64_RUN: Final = re.compile(rf"[A-Za-z0-9+/]{{{BASE64_MIN_CHARS},}}={{0,2}}")
# Share of printable characters a decoded run needs to count as text.
PRINTABLE_SHARE: Final = 0.9


def decoded(text: str) -> list[str]:
    """The texts hidden in base64 runs of `text` (only those that decode to readable text)."""
    found: list[str] = []
    for run in BASE64_RUN.findall(text):
        padded = run + "=" * (-len(run) % 4)
        try:
            plain = base64.b64decode(padded, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if plain and sum(ch.isprintable() for ch in plain) / len(plain) >= PRINTABLE_SHARE:
            found.append(plain)
    return found


def views(text: str) -> list[str]:
    """The readings of `text` the screen matches, the plainest first, without repeats:
    the normalised text, its leetspeak and spaced-out readings, and the text read
    backwards, in ROT13 and decoded from base64 (obfuscations that ask to be decoded)."""
    base = strip_accents(fold_confusables(clean(text)))
    readings = [
        clean(text),
        base,
        unleet(base),
        unspace(base),
        unleet(unspace(base)),
        strip_accents(fold_all_confusables(clean(text))),
        base[::-1],
        codecs.encode(base, "rot13"),
    ]
    for plain in decoded(clean(text)):
        readings.append(strip_accents(fold_confusables(clean(plain))))
    return list(dict.fromkeys(readings))


def compact(text: str) -> str:
    """Letters only, lower case: what is left of a phrase split by any spacing at all."""
    folded = unleet(strip_accents(fold_all_confusables(clean(text))))
    return "".join(ch for ch in folded.lower() if ch.isalpha())
