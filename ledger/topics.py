"""Event topics across the package rename.

Logs written before the code was importable as `mnemoledger` name their events
`ledger.memory:Memory.Created`; today's name them `mnemoledger.ledger.memory:Memory.Created`.
Both resolve to the same class, and a filter on one event type matches both spellings. The
stored topic is never rewritten: it is covered by the event's hash.
"""

from __future__ import annotations

import importlib

from eventsourcing.utils import get_topic, register_topic

PACKAGE_PREFIX = "mnemoledger."


def register_legacy_topics() -> None:
    """Let `ledger.x:Cls` resolve to `mnemoledger.ledger.x:Cls` (idempotent)."""
    register_topic("ledger", importlib.import_module("mnemoledger.ledger"))


def topics_of(cls: type) -> tuple[str, ...]:
    """Every spelling of `cls`'s topic a log may hold: today's, then the legacy one."""
    topic = get_topic(cls)
    return (topic, topic.removeprefix(PACKAGE_PREFIX))
