"""`TIME|POSITION`: a point of the log given as a log position or as a time.

parse_point("120")                    -> 120 (after the event at position 120)
parse_point("2026-05-01")             -> 2026-05-01T00:00:00+00:00
parse_point("2026-05-01T10:00:00+02:00")
"""

from __future__ import annotations

from datetime import UTC, datetime

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import MAX_POSITION

Point = int | datetime
"""A log position (>= 0) or a UTC time."""


def parse_point(text: str | int | datetime) -> Point:
    """A position when `text` is a whole number, else an ISO-8601 time (naive = UTC)."""
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=UTC)
    if isinstance(text, int):
        return _position(text)
    value = text.strip()
    if value.isdigit():
        return _position(int(value))
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{text!r} is neither a log position nor an ISO-8601 time (e.g. 2026-05-01T10:00)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _position(value: int) -> int:
    if not 0 <= value <= MAX_POSITION:
        raise InvalidInput(f"a log position must be between 0 and {MAX_POSITION}; got {value}")
    return value


def at_or_before(record: EventRecord, point: Point) -> bool:
    """Whether `record` happened at or before `point`."""
    if isinstance(point, int):
        return (record.position or 0) <= point
    return record.at <= point


def after(record: EventRecord, point: Point) -> bool:
    """Whether `record` happened after `point` (a position), or at or after it (a time)."""
    if isinstance(point, int):
        return (record.position or 0) > point
    return record.at >= point
