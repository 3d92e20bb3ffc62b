"""The write model and the log: the source of truth. Knows nothing of its readers.

The names below load on first use, so a light module of this package (the policy, the
errors) can be imported without the event store behind it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "EventRecord": "mnemoledger.ledger.records",
    "InvalidInput": "mnemoledger.ledger.errors",
    "InvalidTransition": "mnemoledger.ledger.errors",
    "Ledger": "mnemoledger.ledger.application",
    "LedgerError": "mnemoledger.ledger.errors",
    "Memory": "mnemoledger.ledger.memory",
    "MemoryNotFound": "mnemoledger.ledger.errors",
    "NewMemory": "mnemoledger.ledger.application",
    "Provenance": "mnemoledger.ledger.provenance",
    "Settings": "mnemoledger.ledger.settings",
}

__all__ = [
    "EventRecord",
    "InvalidInput",
    "InvalidTransition",
    "Ledger",
    "LedgerError",
    "Memory",
    "MemoryNotFound",
    "NewMemory",
    "Provenance",
    "Settings",
]

if TYPE_CHECKING:
    from mnemoledger.ledger.application import Ledger, NewMemory
    from mnemoledger.ledger.errors import (
        InvalidInput,
        InvalidTransition,
        LedgerError,
        MemoryNotFound,
    )
    from mnemoledger.ledger.memory import Memory
    from mnemoledger.ledger.provenance import Provenance
    from mnemoledger.ledger.records import EventRecord
    from mnemoledger.ledger.settings import Settings


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'mnemoledger.ledger' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
