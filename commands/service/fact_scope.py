"""The fact graph (seed 001 §9) as one API key may use it: what the HTTP routes
(`routes/facts.py`) call.

A fact is seen through the memory that states it: a key states facts only on memories it
may see, and lists only the facts of such memories (another user's are unknown, another
category's are left out). The key's agent and actor are recorded on every write.
"""

from __future__ import annotations

import builtins

from mnemoledger.commands.recall.facts_api import (
    DEFAULT_FACT_HOPS,
    DEFAULT_FACTS_LIMIT,
    FactExtraction,
    FactNotFound,
    FactOut,
)
from mnemoledger.commands.service.checkpoint_scope import user_of
from mnemoledger.commands.service.scoped import Forbidden, ScopedMemory
from mnemoledger.ledger.errors import MemoryNotFound


def state(
    scoped: ScopedMemory,
    subject: str,
    predicate: str,
    object: str,
    *,
    memory_id: str,
    valid_from: str | None = None,
    keep_others: bool = False,
) -> FactOut:
    """Record a fact the memory states (which the key must see)."""
    scoped.visible(memory_id)
    with scoped._acting() as memory:
        return memory.state_fact(
            subject,
            predicate,
            object,
            memory=memory_id,
            valid_from=valid_from,
            keep_others=keep_others,
            agent=scoped.principal.agent,
        )


def extract(scoped: ScopedMemory, memory_id: str) -> FactExtraction:
    """Extract the facts of a memory the key may see."""
    scoped.visible(memory_id)
    with scoped._acting() as memory:
        return memory.extract_facts(memory_id, agent=scoped.principal.agent)


def end(scoped: ScopedMemory, fact_id: str, *, valid_until: str | None = None) -> FactOut:
    """End a fact of a memory the key may see."""
    if not _visible_facts(scoped, [scoped.memory.fact(fact_id)]):
        raise FactNotFound(fact_id)
    with scoped._acting() as memory:
        return memory.end_fact(fact_id, valid_until=valid_until, agent=scoped.principal.agent)


def listing(
    scoped: ScopedMemory,
    *,
    user: str | None = None,
    entity: str | None = None,
    predicate: str | None = None,
    hops: int = DEFAULT_FACT_HOPS,
    at: str | None = None,
    history: bool = False,
    limit: int = DEFAULT_FACTS_LIMIT,
) -> builtins.list[FactOut]:
    """The user's facts the key may see (see `Facts.facts`)."""
    found = scoped.memory.facts(
        user=user_of(scoped, user),
        entity=entity,
        predicate=predicate,
        hops=hops,
        at=at,
        history=history,
        limit=limit,
    )
    return _visible_facts(scoped, found)


def _visible_facts(scoped: ScopedMemory, facts: builtins.list[FactOut]) -> builtins.list[FactOut]:
    seen: dict[str, bool] = {}
    kept = []
    for fact in facts:
        if fact.memory_id not in seen:
            try:
                scoped.visible(fact.memory_id)
                seen[fact.memory_id] = True
            except (Forbidden, MemoryNotFound):
                seen[fact.memory_id] = False
        if seen[fact.memory_id]:
            kept.append(fact)
    return kept
