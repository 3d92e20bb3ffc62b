"""engram's `touch()` on an insert dedup hit (seed 001 §2.1 step 3): the existing memory is
returned to the writer, so it counts one access and its last access is now.

Access counts derive from `RecallServed` (the `layers` read model counts one access per
memory served and sets `last_accessed`; `engram_state` restarts its idle epochs), so the
touch is one `RecallServed` of the memories the add restated, recorded by the add command
(`causation_id`) in the same transaction. Its id derives from the command's id, so a
recorded replay of the add writes the same stream."""

from __future__ import annotations

import uuid
from typing import Any

from mnemoledger.ledger.provenance import Provenance, acting_as
from mnemoledger.ledger.recall import Recall

DEDUP_TOUCH_MODE = "dedup-touch"
"""The `return_mode` of a touch: what the add returned is the existing memory itself."""


def dedup_touch(
    command_id: uuid.UUID, memory_ids: list[str], provenance: Provenance
) -> Recall | None:
    """One `RecallServed` touching `memory_ids` (None when the add restated nothing)."""
    if not memory_ids:
        return None
    with acting_as(provenance):
        recall = Recall(
            query="",
            categories=[],
            memory_ids=list(dict.fromkeys(memory_ids)),
            return_mode=DEDUP_TOUCH_MODE,
            top_k=0,
        )
    [created] = recall.collect_events()
    event: Any = created
    # the created event is not stored yet: it can take its derived id before folding again
    object.__setattr__(event, "originator_id", uuid.uuid5(command_id, DEDUP_TOUCH_MODE))
    touched: Recall = event.mutate(None)
    touched.pending_events.append(event)
    return touched
