"""Offline merges that keep every detail: insert merge (seed 001 §2.1) and note merge
(seed 002, mergeNotes)."""

from __future__ import annotations

from mnemoledger.commands.llm.rules.text import (
    comparison_key,
    sentences,
    single_line,
    with_final_stop,
)
from mnemoledger.commands.llm.schemas import (
    MergeInput,
    MergeNotesInput,
    MergeNotesOutput,
    MergeOutput,
)


def insert_merge(inputs: MergeInput) -> MergeOutput:
    """The longer text when one contains the other, else both joined by "; "."""
    existing, new = single_line(inputs.existing), single_line(inputs.new)
    existing_key, new_key = comparison_key(existing), comparison_key(new)
    if new_key in existing_key:
        return MergeOutput(content=existing)
    if existing_key in new_key:
        return MergeOutput(content=new)
    return MergeOutput(content=f"{existing.rstrip(' .;')}; {new}")


def merge_notes(inputs: MergeNotesInput) -> MergeNotesOutput:
    """Every sentence of every note, in order, each once."""
    seen: set[str] = set()
    kept: list[str] = []
    for note in inputs.notes:
        for sentence in sentences(note):
            key = comparison_key(sentence)
            if key not in seen:
                seen.add(key)
                kept.append(with_final_stop(single_line(sentence)))
    return MergeNotesOutput(summary=" ".join(kept))
