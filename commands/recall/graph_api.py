"""`Graph`: the relations graph's methods of the Python API (seed 003 §2), over the graph
read model of the shared parts (kept up to date by the runner).

    memory.graph_edges(user="maya")                      # every relation, strongest first
    memory.graph_edges(user="maya", memory=memory_id)    # the edges of one memory
"""

from __future__ import annotations

import builtins

from mnemoledger.commands.models import EdgeOut
from mnemoledger.commands.parts import Parts
from mnemoledger.ledger import InvalidInput, MemoryNotFound, validation
from mnemoledger.ledger.application import parse_memory_id
from mnemoledger.ledger.policy import RELATED_BULLETS_MAX
from mnemoledger.projections.graph import Edge


class Graph:
    """Read the relation edges of a user or of one memory."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def graph_edges(
        self,
        *,
        user: str,
        memory: str | None = None,
        min_strength: float = 0.0,
        active_only: bool = True,
    ) -> builtins.list[EdgeOut]:
        """`MnemoLedger.graph_edges`: the relations of a user or memory (documented there)."""
        validation.identifier("user", user)
        min_strength = validation.unit_interval("min strength", min_strength)
        self.parts.refresh()
        if memory is None:
            edges = self.parts.graph_model.edges(user, min_strength, active_only=active_only)
        else:
            memory_id = self._graph_memory(user, memory)
            edges = self.parts.graph_model.neighbours(
                memory_id, min_strength, active_only=active_only
            )
        return [_edge_out(edge) for edge in edges]

    def related_edges(
        self, memory: str, *, limit: int = RELATED_BULLETS_MAX
    ) -> builtins.list[EdgeOut]:
        """`MnemoLedger.related_edges`: a memory's strongest relations (documented there)."""
        self.parts.refresh()
        memory_id = parse_memory_id(memory).hex
        if self.parts.graph_model.node(memory_id) is None:
            raise MemoryNotFound(memory)
        return [_edge_out(edge) for edge in self.parts.graph_model.related(memory_id, limit)]

    def _graph_memory(self, user: str, memory: str) -> str:
        memory_id = parse_memory_id(memory).hex
        node = self.parts.graph_model.node(memory_id)
        if node is None:
            raise MemoryNotFound(memory)
        if node.user_id != user:
            raise InvalidInput(f"memory {memory_id} belongs to another user than {user!r}")
        return memory_id


def _edge_out(edge: Edge) -> EdgeOut:
    return EdgeOut(from_id=edge.from_id, to=edge.to_id, type=edge.type, strength=edge.strength)
