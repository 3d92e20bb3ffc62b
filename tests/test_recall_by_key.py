"""Nebo's recall (seed 004 §5) by key records what it served, as `memory.query` does."""

from __future__ import annotations

from pathlib import Path

from mnemoledger import MnemoLedger
from mnemoledger.commands.service.scoped import ScopedMemory
from mnemoledger.ledger import NewMemory, Provenance, Settings


def test_a_memory_recalled_by_key_counts_an_access(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="t") as memory:
        [stored] = memory.ledger.add(
            Provenance(user_id="maya", actor="t"),
            [NewMemory("Maya indents with tabs", namespace="tacit/preferences", key="code-style")],
        )
        memory_id = stored.id.hex
        scoped = ScopedMemory(
            memory,
            memory.authenticate(memory.create_key(agent="admin", users=["maya"], admin=True).key),
        )
        found = scoped.recall(user="maya", key="Code_Style")
        assert found.matched_by == "key"
        assert [m.id for m in found.memories] == [memory_id]
        memory.refresh()
        row = memory.layers.get(memory_id)
        assert row is not None and row.access_count == 1
        served = [e for e in memory.log(user="maya") if e.type == "RecallServed"]
        assert len(served) == 1 and served[0].data["memory_ids"] == [memory_id]
        assert served[0].actor.startswith("key:")
