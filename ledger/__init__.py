"""The write model and the log: the source of truth. Knows nothing of its readers."""

from ledger.application import Ledger, NewMemory
from ledger.errors import InvalidInput, InvalidTransition, LedgerError, MemoryNotFound
from ledger.memory import Memory
from ledger.provenance import Provenance
from ledger.records import EventRecord
from ledger.settings import Settings

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
