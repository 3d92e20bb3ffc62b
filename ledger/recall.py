"""Served recalls: one stream per answered memory query (seed 003 §6, DESIGN `RecallServed`).

Which memories were returned to which agent for which query. The provenance metadata holds
the user, the agent that asked (`agent_id`) and the thread (`thread_id`); the event holds the
query and what was served. Projections derive access counts (`layers`) and the revision an
agent last saw in a thread (`delta`) from these events; nothing else changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from eventsourcing.domain import Aggregate

from mnemoledger.ledger.event import LedgerEvent


@dataclass
class Recall(Aggregate, created_event_name="RecallServed"):
    """One answered `memory.query`."""

    class Event(LedgerEvent):
        """Every event of a recall carries the provenance metadata."""

    query: str
    """The query text, as asked."""
    categories: list[str]
    """The categories the query served (after the allowlist check)."""
    memory_ids: list[str]
    """The memories returned, in the order served."""
    return_mode: str
    """`bullets` or `full`."""
    top_k: int
    """How many searched results were asked for."""
    budget_tokens: int | None = None
    """The token budget of the answer, if any."""
    rev: int | None = None
    """The thread's revision the answer reflects (its delta header shown up to here)."""
    since_rev: int | None = None
    """The revision the delta header was computed from, if a thread was given."""
    touched: list[str] | None = None
    """The served memories whose access counts (seed 001 §4.5: relevance > 0.5; none for a
    dry query); None (recalls recorded before it): every memory served."""
