"""mnemoledger: an event-sourced memory ledger for AI agents.

    from mnemoledger import MnemoLedger

    with MnemoLedger(home="~/.agent-memory") as memory:
        memory.add(["I moved to Lisbon in May"], user="maya")
        hits = memory.search("where does she live", user="maya")

`Memory` is mem0's `Memory` over the same ledger. The three layers are importable too:
`mnemoledger.ledger` (the log, the source of truth), `mnemoledger.projections` (read models
rebuilt from it) and `mnemoledger.commands` (the use cases, the CLI and the servers).
Names are loaded on first use, so `mnemoledger --version` does not import the whole stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "MnemoLedger": "mnemoledger.commands.facade",
    "Memory": "mnemoledger.commands.service.mem0_compat",
    "Settings": "mnemoledger.ledger.settings",
    "LedgerError": "mnemoledger.ledger.errors",
    "InvalidInput": "mnemoledger.ledger.errors",
    "InvalidTransition": "mnemoledger.ledger.errors",
    "MemoryNotFound": "mnemoledger.ledger.errors",
    "IntegrityViolation": "mnemoledger.ledger.errors",
    "AddResult": "mnemoledger.commands.models",
    "CoreOut": "mnemoledger.commands.models",
    "EdgeOut": "mnemoledger.commands.models",
    "EventOut": "mnemoledger.commands.models",
    "MemoryOut": "mnemoledger.commands.models",
    "SearchHit": "mnemoledger.commands.models",
    "Stats": "mnemoledger.commands.models",
}

__all__ = [
    "AddResult",
    "CoreOut",
    "EdgeOut",
    "EventOut",
    "IntegrityViolation",
    "InvalidInput",
    "InvalidTransition",
    "LedgerError",
    "Memory",
    "MemoryNotFound",
    "MemoryOut",
    "MnemoLedger",
    "SearchHit",
    "Settings",
    "Stats",
]

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger
    from mnemoledger.commands.models import (
        AddResult,
        CoreOut,
        EdgeOut,
        EventOut,
        MemoryOut,
        SearchHit,
        Stats,
    )
    from mnemoledger.commands.service.mem0_compat import Memory
    from mnemoledger.ledger.errors import (
        IntegrityViolation,
        InvalidInput,
        InvalidTransition,
        LedgerError,
        MemoryNotFound,
    )
    from mnemoledger.ledger.settings import Settings


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'mnemoledger' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
