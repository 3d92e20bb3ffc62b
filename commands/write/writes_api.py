"""`Writes`: add, update, link, ttl, forget and restore in the Python API.

    result = memory.add(["I moved to Lisbon in May"], user="maya")
    memory.update(result.memories[0].id, "I moved to Porto in June")
    memory.forget(memory_id)              # soft delete; `restore` brings it back

Writes go to the event log and return at once; each returns the memory as the read models
show it after the write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from mnemoledger.commands.judge.judgement import role_of
from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.models import AddResult, EdgeOut, MemoryOut, memory_out
from mnemoledger.commands.parts import Parts
from mnemoledger.commands.recall.relations import update_linked, value_within_limit
from mnemoledger.commands.write.add import AddOutcome, AddRequest
from mnemoledger.commands.write.sanitize import instructs_the_agent, screen
from mnemoledger.ledger import validation
from mnemoledger.ledger.policy import (
    DEFAULT_IMPORTANCE,
    DEFAULT_KIND,
    DEFAULT_LINK_STRENGTH,
    DEFAULT_LINK_TYPE,
    DEFAULT_SOURCE,
)


def add_result(outcome: AddOutcome) -> AddResult:
    """What an add did, as the API answers it."""
    return AddResult(
        command_id=outcome.command_id,
        memories=[memory_out(m, just_added=True) for m in outcome.added],
        superseded=outcome.superseded,
        reinforced=[memory_out(m) for m in outcome.reinforced],
        core_updated=outcome.core_updated,
        fallback=outcome.fallback,
        llm_calls=outcome.llm_calls,
        not_kept=outcome.not_kept,
    )


class Writes:
    """The memory writes of `MnemoLedger` (add, and the single-memory changes)."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def add(
        self,
        contents: Sequence[str],
        *,
        user: str,
        agent: str | None = None,
        thread: str | None = None,
        kind: str = DEFAULT_KIND,
        tags: Sequence[str] = (),
        source: str = DEFAULT_SOURCE,
        namespace: str = "default",
        importance: float = DEFAULT_IMPORTANCE,
        evidence: Sequence[str] | None = None,
        category: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        role: str = "user",
        keep_all: bool = False,
        at: datetime | str | None = None,
        wait: bool = True,
    ) -> AddResult:
        """`MnemoLedger.add`: remember contents for a user (documented there)."""
        if isinstance(contents, str):
            contents = [contents]
        parts = self.parts
        category = parts.categories_config.check_write(agent, category)
        request = AddRequest(
            contents=list(contents),
            kind=kind,
            tags=tuple(tags),
            source=source,
            namespace=namespace,
            importance=importance,
            evidence=evidence,
            category=category,
            metadata=metadata,
            role=role_of(role),
            keep_all=keep_all,
            said_at=validation.said_at(at),
        )
        provenance = parts.provenance(user, agent, thread)
        if not wait:
            command_id = parts.add_pipeline.record(request, provenance).id.hex
            if parts.adds_in_background:
                parts.add_processor.submit(command_id)
            return AddResult(command_id=command_id, memories=[], pending=True)
        parts.refresh_for_add()
        return add_result(parts.add_pipeline.run(request, provenance))

    def update(
        self,
        memory_id: str,
        content: str,
        *,
        tags: Sequence[str] | None = None,
        agent: str | None = None,
        thread: str | None = None,
    ) -> MemoryOut:
        """`MnemoLedger.update`: replace a memory's content (documented there)."""
        parts = self.parts
        provenance = parts.provenance("", agent, thread)
        parts.refresh()
        row = parts.layers.get(memory_id)
        instructs = row is not None and instructs_the_agent(row.note_kind, row.namespace)
        if row is not None and row.key is not None:  # the value limit first: cheap and plain
            value_within_limit(validation.content(content))
        memory = update_linked(
            parts.ledger,
            provenance,
            memory_id,
            screen(content, instructs=instructs),
            tags,
            parts.embedder,
            parts.vectors,
        )
        return parts.current(memory)

    def link(
        self,
        source_id: str,
        target_id: str,
        *,
        link_type: str = DEFAULT_LINK_TYPE,
        strength: float = DEFAULT_LINK_STRENGTH,
        agent: str | None = None,
    ) -> EdgeOut:
        """`MnemoLedger.link`: relate two memories of one user (documented there)."""
        ledger = self.parts.ledger
        memory = ledger.link(
            self.parts.provenance("", agent, None), source_id, target_id, link_type, strength
        )
        target = ledger.memory(target_id).id.hex
        edge = memory.links[target]
        return EdgeOut(
            from_id=memory.id.hex, to=target, type=edge["type"], strength=edge["strength"]
        )

    def ttl(
        self, memory_id: str, days: float, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """`MnemoLedger.ttl`: make a memory expire after `days` (documented there)."""
        parts = self.parts
        memory = parts.ledger.set_ttl(parts.provenance("", agent, thread), memory_id, days)
        return parts.current(memory)

    def forget(
        self, memory_id: str, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """`MnemoLedger.forget`: soft-delete a memory (documented there)."""
        parts = self.parts
        memory = core_sync.forget(parts.ledger, parts.provenance("", agent, thread), memory_id)
        return parts.current(memory)

    def restore(
        self, memory_id: str, *, agent: str | None = None, thread: str | None = None
    ) -> MemoryOut:
        """`MnemoLedger.restore`: bring back a soft-deleted memory (documented there)."""
        parts = self.parts
        memory = parts.ledger.restore(parts.provenance("", agent, thread), memory_id)
        return parts.current(memory)
