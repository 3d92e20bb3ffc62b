"""Seed 001 §8 resume thresholds (compact mode): Core memories are kept at relevance 0.35 or
more to the recent context (Buffer and recent changes), Working ones at 0.20 or more;
identity/constraint/bootstrap tags add 0.25, lessons/procedures/preferences 0.10."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.recall.resume import build_resume, context_relevance
from mnemoledger.ledger.policy import (
    RESUME_CORE_THRESHOLD,
    RESUME_HIGH_RELEVANCE,
    RESUME_LOW_RELEVANCE,
    RESUME_WORKING_THRESHOLD,
)
from mnemoledger.projections.layers import MemoryRow
from tests.test_consolidation_helpers import place

AXES = {"deploy": 0, "cat": 1, "garden": 2}


def axis(name: str, share: float = 1.0) -> np.ndarray[Any, Any]:
    """A unit vector mostly along `name`'s axis (`share` of it, the rest on a spare axis)."""
    vector = np.zeros(4, dtype=np.float32)
    vector[AXES[name]] = share
    vector[3] = float(np.sqrt(max(0.0, 1 - share * share)))
    return vector


@pytest.fixture
def rows(memory: MnemoLedger) -> Iterator[tuple[MnemoLedger, dict[str, MemoryRow]]]:
    added = {}
    for name, text, tags in [
        ("core_deploy", "We deploy with Helm charts.", []),
        ("core_cat", "The cat is called Pumpkin.", []),
        ("core_identity", "The user's name is Ines.", ["identity"]),
        ("core_lesson", "Lesson: water the garden before noon.", ["lesson"]),
        ("working_cat", "Pumpkin likes tuna.", []),
        ("working_deploy", "Staging deploys need a ticket.", []),
        ("buffer_deploy", "The deploy failed at 9 today.", []),
    ]:
        (memory_added,) = memory.add([text], user="ines", tags=tags).memories
        added[name] = memory_added.id
    for name, memory_id in added.items():
        if name.startswith("core"):
            place(memory, memory_id, "core")
        elif name.startswith("working"):
            place(memory, memory_id, "working")
    memory.refresh()
    by_id = {row.id: row for row in memory.layers.list("ines")}
    yield memory, {name: by_id[memory_id] for name, memory_id in added.items()}


def test_s8_resume_thresholds_keep_what_relates_to_the_recent_context(
    rows: tuple[MnemoLedger, dict[str, MemoryRow]],
) -> None:
    _, named = rows
    vectors = {
        named["core_deploy"].id: axis("deploy", 0.9),
        named["core_cat"].id: axis("cat"),
        named["core_identity"].id: axis("cat", 0.2),  # unrelated, but identity: + 0.25
        named["core_lesson"].id: axis("deploy", 0.3),  # 0.3 x 0.9 + 0.10 (lesson)
        named["working_cat"].id: axis("cat"),
        named["working_deploy"].id: axis("deploy", 0.5),
        named["buffer_deploy"].id: axis("deploy"),
    }
    now = datetime.now(UTC) + timedelta(days=2)  # nothing changed lately but the Buffer
    relevance = context_relevance(
        list(named.values()), vectors.get, lambda raw: raw, now - timedelta(hours=12)
    )
    assert relevance is not None
    assert relevance[named["core_deploy"].id] == pytest.approx(0.9)
    assert relevance[named["core_identity"].id] == pytest.approx(RESUME_HIGH_RELEVANCE)
    assert relevance[named["core_lesson"].id] == pytest.approx(0.3 + RESUME_LOW_RELEVANCE)
    assert named["buffer_deploy"].id not in relevance  # only Core and Working are scored

    out = build_resume(named.values(), user_id="ines", now=now, relevance=relevance)
    core = {item.id for item in out.core.memories}
    assert core == {named["core_deploy"].id, named["core_lesson"].id}
    assert relevance[named["core_identity"].id] < RESUME_CORE_THRESHOLD
    assert out.core.below_relevance == 2 and out.compact
    everything = build_resume(named.values(), user_id="ines", now=now)
    assert len(everything.core.memories) == 4 and not everything.compact

    recent = build_resume(named.values(), user_id="ines", now=now, hours=72, relevance=relevance)
    shown = {item.id for item in recent.recent.memories}
    assert named["working_deploy"].id in shown and named["buffer_deploy"].id in shown
    assert named["working_cat"].id not in shown  # 0.0 < RESUME_WORKING_THRESHOLD
    assert recent.recent.below_relevance == 1
    assert RESUME_WORKING_THRESHOLD == 0.20


def test_s8_compact_resume_without_recent_context_keeps_everything(
    rows: tuple[MnemoLedger, dict[str, MemoryRow]],
) -> None:
    _, named = rows
    nothing_recent = [row for row in named.values() if row.layer != "buffer"]
    far = datetime.now(UTC) + timedelta(days=30)
    assert context_relevance(nothing_recent, lambda _id: None, float, far) is None


def test_s8_compact_resume_through_the_facade(
    rows: tuple[MnemoLedger, dict[str, MemoryRow]],
) -> None:
    memory, _ = rows
    compact = memory.resume("ines", compact=True)
    full = memory.resume("ines")
    assert compact.compact and not full.compact
    kept = {item.id for item in compact.core.memories}
    assert kept <= {item.id for item in full.core.memories}
    assert len(kept) + compact.core.below_relevance == len(full.core.memories)
