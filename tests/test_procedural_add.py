"""A procedure written as numbered steps is one memory (seed 003 §12)."""

from __future__ import annotations

from pathlib import Path

from mnemoledger import MnemoLedger


def test_numbered_steps_stay_one_procedural_memory(tmp_path: Path) -> None:
    with MnemoLedger(tmp_path / "home") as memory:
        steps = "1. Run make deploy.\n2. Check the Grafana dashboard.\n3. Post in #release."
        memory.add([steps], user="u", kind="procedural")
        memory.add(["I deploy on Tuesdays. I use Grafana."], user="u")  # facts still split
        procedures = [m for m in memory.list(user="u") if m.kind == "procedural"]
        facts = [m for m in memory.list(user="u") if m.kind == "semantic"]
    assert len(procedures) == 1
    assert all(step in procedures[0].content for step in ("make deploy", "Grafana", "#release"))
    assert len(facts) == 2
