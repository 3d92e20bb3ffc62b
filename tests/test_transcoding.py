"""The orjson transcoder writes and reads exactly what the library's JSON transcoder does."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from enum import Enum
from typing import Any
from uuid import UUID

from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder, UUIDAsHex
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemoledger.ledger.transcoding import OrjsonTranscoder


class Colour(Enum):
    RED = "red"


class Text(str):
    """A str subclass: `json` writes it natively, orjson would too (it must not be told
    apart by its type)."""


def transcoders() -> tuple[OrjsonTranscoder, JSONTranscoder]:
    fast, library = OrjsonTranscoder(), JSONTranscoder()
    for transcoder in (fast, library):
        transcoder.register(DatetimeAsISO())
        transcoder.register(UUIDAsHex())
    return fast, library


AT = datetime(2031, 5, 4, 3, 2, 1, 123456, tzinfo=UTC)
ID = UUID("12345678-1234-5678-1234-567812345678")

CASES: list[dict[Any, Any]] = [
    {"timestamp": AT, "content": "tea", "importance": 0.5, "tags": ["a", "b"], "key": None},
    {"timestamp": AT, "nested": {"at": AT, "ids": [ID, ID]}, "n": 3, "ok": True},
    {"timestamp": AT.astimezone(timezone(timedelta(hours=2))), "id": ID},
    {"big": 2**70, "timestamp": AT},
    {"nan": math.nan, "inf": math.inf, "timestamp": AT},
    {"colour": Colour.RED},
    {"text": Text("x"), "timestamp": AT},
    {"pair": (1, "two"), "timestamp": AT},
    {1: "not a text key", "timestamp": AT},
    {"lone": "\ud800", "timestamp": AT},
    {"envelope": {"k": "kid", "c": "YWJj", "f": {"content": "s"}}, "timestamp": AT},
]


def test_the_same_bytes_and_values_as_the_library_for_awkward_states() -> None:
    fast, library = transcoders()
    for state in CASES:
        try:
            expected = library.encode(state)
        except (TypeError, ValueError) as error:
            written: Any = error
            try:
                written = fast.encode(state)
            except (TypeError, ValueError) as fast_error:
                assert type(fast_error) is type(error)
                continue
            raise AssertionError(
                f"the library refused {state!r}, orjson wrote {written!r}"
            ) from None
        assert fast.encode(state) == expected, state
        decoded = library.decode(expected)
        assert _same(fast.decode(expected), decoded)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.datetimes(timezones=st.just(UTC))
    | st.uuids(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=6))
def test_the_same_bytes_and_values_as_the_library_for_any_state(state: dict[str, Any]) -> None:
    """Floats may be spelled differently (orjson writes 1e-9 where `json` writes 1e-09):
    each transcoder reads what the other wrote as the same values."""
    fast, library = transcoders()
    expected = library.encode(state)
    written = fast.encode(state)
    if not _has_float(state):
        assert written == expected
    assert _same(library.decode(written), library.decode(expected))
    assert _same(fast.decode(expected), library.decode(expected))
    assert _same(fast.decode(written), library.decode(expected))


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
