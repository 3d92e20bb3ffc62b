"""What the read models answer, as plain data: incremental and rebuilt models compare equal
when every view here does (used by the concurrency and crash tests)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemoledger import MnemoLedger
from mnemoledger.ledger import Settings

AT = datetime(2030, 1, 1, tzinfo=UTC)
"""Searches judge recency at one fixed time, so scores compare exactly."""


def open_memory(home: Path) -> MnemoLedger:
    """A ledger in `home` on the run's store (`$MNEMOLEDGER_DB` in PostgreSQL runs)."""
    return MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester")


def views(memory: MnemoLedger, users: list[str], queries: list[str]) -> dict[str, Any]:
    """Every memory, each user's core document, graph and searches, after a catch-up."""
    memory.refresh()
    stats = memory.stats()
    found: dict[str, Any] = {
        "list": [m.model_dump() for m in memory.list()],
        "counts": stats.model_dump(exclude={"projections"}),
    }
    for user in users:
        found[f"core {user}"] = memory.core(user=user).model_dump(exclude={"path"})
        found[f"graph {user}"] = [e.model_dump() for e in memory.graph_edges(user=user)]
        for query in queries:
            hits = memory.search(query, user=user, k=10, at=AT)
            found[f"search {user} {query}"] = [h.model_dump() for h in hits]
    return found


def rebuilt_views(home: Path, users: list[str], queries: list[str]) -> dict[str, Any]:
    """The same views from read models rebuilt from the log alone (files deleted first)."""
    shutil.rmtree(home / "projections", ignore_errors=True)
    with open_memory(home) as memory:
        memory.rebuild()
        return views(memory, users, queries)
