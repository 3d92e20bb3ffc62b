"""The core-update call, and the new memories that wait for it.

With one model call per add, an add's new memories wait on the user's core document
(`CoreCandidatesDeferred`) and one core-update call reads every waiting memory still
active (`CoreCandidatesRead`): on the add that completes a batch of `llm_core_batch`
adds, or at the user's next consolidation cycle (`flush`), whichever comes first. The
staged add asks the same call over its own new memories.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.lifecycle.core_sync import CoreBullet
from mnemoledger.commands.llm.prompts import CORE_UPDATE
from mnemoledger.commands.llm.schemas import CoreUpdateInput
from mnemoledger.commands.write.recorded_llm import RecordedLLM, prompt_version
from mnemoledger.ledger import Ledger, Memory, Provenance
from mnemoledger.ledger.core import CoreDocument, empty_core_markdown
from mnemoledger.ledger.policy import ACTIVE
from mnemoledger.ledger.provenance import acting_as


def ask_core_update(
    llm: RecordedLLM,
    provenance: Provenance,
    current: str,
    bullets: list[CoreBullet],
    candidates: Sequence[Memory],
    superseded: Sequence[Memory],
) -> tuple[list[CoreBullet], Provenance]:
    """One core-update call over `candidates` (recorded on the command of `llm`): the
    bullets of the markdown it answers, each resting on the memories that hold it, and
    the provenance the new version is decided under (the prompt's version when the answer
    changed core.md). An answer that changes nothing leaves `bullets` as they were."""
    output = llm.run(
        CORE_UPDATE,
        CoreUpdateInput(
            current_core_markdown=current,
            candidate_new_memories=[m.content for m in candidates],
            superseded_memories=[m.content for m in superseded],
            candidate_ids=[m.id.hex for m in candidates],
        ),
    )
    markdown = output.core_markdown.strip() + "\n"
    if not output.should_update or markdown == current:
        return bullets, provenance
    named = [(s.bullet, s.memories) for s in output.sources]
    staged = core_sync.stage_bullets(markdown, bullets, candidates, named)
    return staged, replace(provenance, prompt_version=prompt_version(CORE_UPDATE))


def waiting(
    ledger: Ledger, document: CoreDocument, changed: Mapping[str, Memory] | None = None
) -> list[Memory]:
    """The memories waiting on `document` that are still active, oldest first; a waiting
    memory replaced since (merged into another, superseded) is read as its replacement.
    `changed`: memories changed but not saved yet, by id (looked up before the ledger)."""
    known = dict(changed or {})

    def resolve(memory_id: str) -> Memory | None:
        return known.get(memory_id) or core_sync.lookup(ledger, memory_id)

    found: dict[str, Memory] = {}
    for memory_id in document.pending:
        memory = resolve(memory_id)
        if memory is not None:
            memory = core_sync.standing_for(memory, known, resolve)
        if memory is not None and memory.state == ACTIVE:
            found.setdefault(memory.id.hex, memory)
    return list(found.values())


def flush(
    llm: RecordedLLM,
    ledger: Ledger,
    provenance: Provenance,
    document: CoreDocument,
    changed: Mapping[str, Memory] | None = None,
) -> bool:
    """Read every memory waiting on `document` now: one core-update call over those still
    active (none when none is), the version of core.md it decides, and
    `CoreCandidatesRead`, all as unsaved events of `document`. Whether there was anything
    waiting (the document then has events to save)."""
    if not document.pending:
        return False
    candidates = waiting(ledger, document, changed)
    if candidates:
        current = document.markdown or empty_core_markdown()
        bullets = core_sync.bullets_of(current, document.sources)
        bullets, decided = ask_core_update(llm, provenance, current, bullets, candidates, [])
        core_sync.record(document, decided, bullets, [m.id.hex for m in candidates])
    with acting_as(provenance):
        document.read_candidates([m.id.hex for m in candidates])
    return True
