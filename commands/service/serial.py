"""One `MnemoLedger` owned by one thread, for servers (HTTP, MCP).

The facade is not thread-safe: its read models hold SQLite connections and in-memory FAISS
indexes, a read first catches the projections up (a write of read-model rows), and the
acting identity is an attribute. A server therefore opens one facade in one dedicated
thread and runs every call there, one at a time, in arrival order. The event loop stays free
for what does not touch the facade (parsing, key checks, validation, JSON encoding), and the
work itself is no slower than in parallel: on CPython it is CPU-bound under one GIL. Several
processes (e.g. one server per core) can still share one home: the ledger's optimistic
concurrency and the runner's file lock already make concurrent writers safe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

T = TypeVar("T")


class FacadeThread:
    """Opens the facade in its own thread and runs every call on it, serially."""

    def __init__(self, open_facade: Callable[[], MnemoLedger]) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemoledger")
        self.memory = self._executor.submit(open_facade).result()

    async def run(self, call: Callable[[MnemoLedger], T]) -> T:
        """Run `call(facade)` in the facade's thread; await its result."""
        return await asyncio.wrap_future(self._executor.submit(call, self.memory))

    def call(self, call: Callable[[MnemoLedger], T]) -> T:
        """Run `call(facade)` in the facade's thread and wait (for synchronous callers)."""
        return self._executor.submit(call, self.memory).result()

    def close(self) -> None:
        self._executor.submit(self.memory.close).result()
        self._executor.shutdown()
