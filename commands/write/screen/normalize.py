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
from typing import Final

# Zero-width characters, soft hyphen, word joiners, BOM and the bidi controls (Unicode
# Standard Annex #9: LRE..RLO U+202A-202E, LRI..PDI U+2066-2069, marks U+200E/F, U+061C):
# invisible in a rendered memory, so they only ever serve to split a word.
INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)

# Cyrillic and Greek letters drawn like Latin ones (the common entries of Unicode's
# confusables.txt, UTS #39, for these two scripts), folded to the Latin letter they imitate.
CONFUSABLES: Final = str.maketrans(
    {
        # Cyrillic lower case
        "а": "a",
        "в": "b",
        "е": "e",
        "ё": "e",
        "к": "k",
        "м": "m",
        "н": "h",
        "о": "o",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
        "һ": "h",
        "ɡ": "g",
        "ӏ": "l",
        "ո": "n",
        "ս": "u",
        "ց": "g",
        "ɑ": "a",
        "ı": "i",
        # Cyrillic upper case
        "А": "A",
        "В": "B",
        "Е": "E",
        "Ё": "E",
        "К": "K",
        "М": "M",
        "Н": "H",
        "О": "O",
        "Р": "P",
        "С": "C",
        "Т": "T",
        "У": "Y",
        "Х": "X",
        "Ѕ": "S",
        "І": "I",
        "Ї": "I",
        "Ј": "J",
        "Ԛ": "Q",
        "Ԝ": "W",
        "Һ": "H",
        "Ӏ": "I",
        # Greek
        "α": "a",
        "β": "b",
        "ε": "e",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "γ": "y",
        "ω": "w",
        "η": "n",
        "μ": "u",
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ζ": "Z",
        "Η": "H",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Υ": "Y",
        "Χ": "X",
    }
)

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
        return word.translate(CONFUSABLES) if re.search("[A-Za-z]", word) else word

    return re.sub(r"\w+", fold, text)


def fold_all_confusables(text: str) -> str:
    """Every look-alike folded: catches a word written entirely in look-alike letters."""
    return text.translate(CONFUSABLES)


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
