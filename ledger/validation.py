"""Input validation of seed 001 §2.1, with errors a person can act on."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    KINDS,
    MAX_CONTENT_CHARS,
    MAX_EVIDENCE_CHARS,
    MAX_EVIDENCE_ITEMS,
    MAX_ID_CHARS,
    MAX_IMPORTANCE,
    MAX_JSON_DEPTH,
    MAX_KEY_CHARS,
    MAX_POSITION,
    MAX_SOURCE_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TTL_DAYS,
    MIN_IMPORTANCE,
    SAID_AT_SKEW_SECONDS,
)

CONTROL_RANGES: Final = (
    (0x0000, 0x001F), (0x007F, 0x009F),  # Cc
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001), (0xE0020, 0xE007F),  # Cf
    (0xD800, 0xDFFF),  # Cs
    (0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD),  # Co
)  # fmt: skip
"""The control (Cc), format (Cf), surrogate (Cs) and private-use (Co) characters of Unicode
16.0, as code point ranges: what `normalize_text` removes (but tab and newline). A fixed
table, not `unicodedata`: the rule is the same on every Python (3.11 knows Unicode 14.0),
and the HTTP API's schema states it exactly (`commands.service.http.requests`). A code point
no Unicode version has assigned yet is none of these, so it is kept."""

SEPARATOR_RANGES: Final = (
    (0x0020, 0x0020), (0x00A0, 0x00A0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
    (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
)  # fmt: skip
"""The space (Zs), line (Zl) and paragraph (Zp) separators of Unicode 16.0. With
`CONTROL_RANGES` they hold every character `str.isspace()` is true for."""


WHITE_SPACE_RANGES: Final = (
    (0x09, 0x0D), (0x1C, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
    (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
)  # fmt: skip
"""What `str.isspace()` is true for: what `strip()` trims and `split()` splits at."""


def char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """The inside of a Python regex character class matching `ranges`."""
    return "".join(
        f"\\U{first:08X}" if first == last else f"\\U{first:08X}-\\U{last:08X}"
        for first, last in ranges
    )


_ASCII_CONTROLS = bytes([*range(0x09), *range(0x0B, 0x20), 0x7F])
"""The ASCII characters `isprintable()` refuses, but tab and newline."""
_CONTROLS_BUT_TAB_AND_NEWLINE = re.compile(
    f"[{char_class(((0x00, 0x08), (0x0B, 0x1F), *CONTROL_RANGES[1:]))}]"
)
_CONTROLS = re.compile(f"[{char_class(CONTROL_RANGES)}]")
_INVISIBLE = re.compile(f"[{char_class((*CONTROL_RANGES, *SEPARATOR_RANGES))}]")
"""A control, format, surrogate, private-use or separator character (white space)."""


def without_controls(text: str) -> str:
    """`text` without its control, format, surrogate and private-use characters
    (`CONTROL_RANGES`), tab and newline included."""
    return _CONTROLS.sub("", text)


def normalize_text(text: str) -> str:
    """NFC, no control or format characters (`CONTROL_RANGES`) but newlines and tabs,
    trimmed (HAEMA step 1)."""
    text = unicodedata.normalize("NFC", text)
    # isprintable() is False for every control/format/unassigned character, so the slower
    # removal only runs when there may be something to remove. For ASCII text the same
    # answer comes from deleting its control bytes, in a third of the time.
    if text.isascii():
        printable = len(text.encode("ascii").translate(None, _ASCII_CONTROLS)) == len(text)
    else:
        printable = text.replace("\n", "").replace("\t", "").isprintable()
    if not printable:
        text = _CONTROLS_BUT_TAB_AND_NEWLINE.sub("", text)
    return text.strip()


def content(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"content must be text, not {type(text).__name__}")
    if len(text) > MAX_CONTENT_CHARS:  # as given: NFC may lengthen a text ("\u0958" is 2)
        raise InvalidInput(f"content has {len(text)} characters; the limit is {MAX_CONTENT_CHARS}")
    normalized = normalize_text(text)
    if not normalized:
        raise InvalidInput("content is empty")
    return normalized


def tags(values: Iterable[object] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        raise InvalidInput("tags must be a list of strings, not one string")
    cleaned: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise InvalidInput(f"tag {value!r} is not text")
        if len(value) > MAX_TAG_CHARS:  # as given (NFC may lengthen it), as the API states
            raise InvalidInput(f"tag {value[:40]!r} is longer than {MAX_TAG_CHARS} characters")
        tag = normalize_text(value)
        if not tag:
            raise InvalidInput("tags must not be empty")
        if tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"{len(cleaned)} tags given; the limit is {MAX_TAGS}")
    return cleaned


def source(value: object) -> str:
    if not isinstance(value, str) or not normalize_text(value):
        raise InvalidInput("source must be non-empty text")
    if len(value) > MAX_SOURCE_CHARS:  # as given
        raise InvalidInput(f"source is longer than {MAX_SOURCE_CHARS} characters")
    return normalize_text(value)


def kind(value: object) -> str:
    if value not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}; got {value!r}")
    assert isinstance(value, str)
    return value


def identifier(name: str, value: object, *, required: bool = True) -> str | None:
    """A user, agent, thread or namespace id: printable (no control, format, surrogate,
    private-use or separator character: `CONTROL_RANGES`, `SEPARATOR_RANGES`), bounded."""
    if value is None or value == "":
        if required:
            raise InvalidInput(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text")
    if len(value) > MAX_ID_CHARS:
        raise InvalidInput(f"{name} is longer than {MAX_ID_CHARS} characters")
    if _INVISIBLE.search(value):
        raise InvalidInput(f"{name} {value!r} must be printable with no spaces")
    return value


def unit_interval(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput(f"{name} must be a number")
    if not MIN_IMPORTANCE <= value <= MAX_IMPORTANCE:
        raise InvalidInput(f"{name} must be between 0 and 1; got {value}")
    return float(value)


def ttl_days(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput("days must be a number")
    if not 0 < value <= MAX_TTL_DAYS:
        raise InvalidInput(f"days must be more than 0 and at most {MAX_TTL_DAYS}; got {value}")
    return float(value)


def said_at(value: object, name: str = "at", now: datetime | None = None) -> str | None:
    """When contents were said (`add`'s `at`, for importing a history), as ISO-8601 UTC text,
    or None (now): an aware datetime, or ISO-8601 text with its zone (`Z` is UTC). Refused,
    naming `name`, when it has no zone, cannot be read or is in the future (more than
    `SAID_AT_SKEW_SECONDS` after `now`)."""
    if value is None:
        return None
    expected = f"{name} must be an ISO-8601 time with its zone, e.g. 2024-05-01T09:00:00Z"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInput(f"{expected}; got {value!r}") from None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{expected}; got {value!r}")
    if value.utcoffset() is None:
        raise InvalidInput(f"{expected}; {value.isoformat()} has no zone (add Z for UTC)")
    try:
        moment = value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise InvalidInput(f"{name} is out of range: {value.isoformat()}") from None
    if moment > (now or datetime.now(UTC)) + timedelta(seconds=SAID_AT_SKEW_SECONDS):
        raise InvalidInput(
            f"{name} is in the future ({moment.isoformat()}): it says when the contents "
            "were said, now or earlier"
        )
    return moment.isoformat()


def optional_choice(name: str, value: object, allowed: Sequence[str]) -> str | None:
    """`value` if it is None or one of `allowed`."""
    return None if value is None else choice(name, value, allowed)


def choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """`value` if it is one of `allowed`."""
    if value not in allowed:
        raise InvalidInput(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    assert isinstance(value, str)
    return value


def memory_key(value: object) -> str | None:
    """A Nebo key (seed 004 §2, §15): normalized, at most 128 characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput("key must be text")
    key = normalize_key(normalize_text(value))
    if not key:
        raise InvalidInput("key is empty after normalization")
    if len(key) > MAX_KEY_CHARS and len(value) > MAX_KEY_CHARS:  # lowercase may lengthen it
        raise InvalidInput(f"key is longer than {MAX_KEY_CHARS} characters")
    return key


def normalize_key(key: str) -> str:
    """Seed 004 §2: lowercase, `_` and spaces to `-`, repeated `-`/`/` collapsed, trimmed."""
    key = key.lower().replace("_", "-").replace(" ", "-")
    key = re.sub(r"-{2,}", "-", key)
    key = re.sub(r"/{2,}", "/", key)
    return key.strip("-/")


def evidence(values: Iterable[object] | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        raise InvalidInput("evidence must be a list of strings, not one string")
    items = []
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(f"evidence item {value!r} must be non-empty text")
        if len(value) > MAX_EVIDENCE_CHARS:
            raise InvalidInput(f"evidence item is longer than {MAX_EVIDENCE_CHARS} characters")
        items.append(value.strip())
    if len(items) > MAX_EVIDENCE_ITEMS:
        raise InvalidInput(f"{len(items)} evidence items; the limit is {MAX_EVIDENCE_ITEMS}")
    return items


def metadata(value: Mapping[str, object] | None) -> dict[str, object] | None:
    """Flat metadata: text keys, values of JSON scalar types."""
    if value is None:
        return None
    checked: dict[str, object] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise InvalidInput("metadata keys must be text")
        if item is not None and not isinstance(item, str | int | float | bool):
            raise InvalidInput(f"metadata value of {key!r} must be text, a number or a bool")
        if isinstance(item, float) and not math.isfinite(item):
            raise InvalidInput(f"metadata value of {key!r} must be finite")
        # a whole number is stored as one: past 64 bits the stores cannot hold it
        if (
            isinstance(item, int)
            and not isinstance(item, bool)
            and not -MAX_POSITION - 1 <= item <= MAX_POSITION
        ):
            raise InvalidInput(f"metadata value of {key!r} must fit in 64 bits")
        checked[key] = item
    return checked


def position(name: str, value: object, *, required: bool = False) -> int | None:
    """A log position or revision: an integer from 0 to the stores' largest BIGINT."""
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be a whole number")
    if not 0 <= value <= MAX_POSITION:
        raise InvalidInput(f"{name} must be between 0 and {MAX_POSITION}; got {value}")
    return value


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def json_text_depth(text: str, where: str, limit: int = MAX_JSON_DEPTH) -> str:
    """`text` if the JSON it holds nests at most `limit` deep, checked before it is parsed:
    the parser recurses, and a RecursionError deep in it can also break finalizers that
    the garbage collector happens to run there."""
    depth = 0
    for char in _JSON_STRING.sub("", text):
        if char in "[{":
            depth += 1
            if depth > limit:
                raise InvalidInput(f"{where}: JSON nested deeper than {limit} levels")
        elif char in "]}":
            depth -= 1
    return text


def json_depth(value: object, where: str, limit: int = MAX_JSON_DEPTH) -> object:
    """`value` if its lists and objects nest at most `limit` deep (walked without
    recursion, so any depth is answered with `InvalidInput`, never `RecursionError`)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[object] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            raise InvalidInput(f"{where}: JSON nested deeper than {limit} levels")
        stack.extend((child, depth + 1) for child in children)
    return value
