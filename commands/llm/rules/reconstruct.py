"""Offline N:M reconstruction and refinement (seed 000).

Each distinct new content becomes one memory, written as given: new contents are the
newest evidence. Which related memory a new content replaces is the judge's call
(`commands.judge`: a fine-tuned cross-encoder reads each (memory, content) pair of the add
in one batch); a replaced memory's id goes into the `sources` of the memory that replaces
it. A related memory that joins clauses may be replaced in part ("I live in Paris and work
as a nurse", then "I moved to Berlin"): what it still says ("I work as a nurse") is written
as a memory built from it. Everything else stays untouched and is left out of the output:
similar memories are kept side by side. No similarity edge decides: the related memories
are those the add pipeline found above its cutoff, and the judge decides among them.
"""

from __future__ import annotations

from mnemoledger.commands.judge.decisions import replacements
from mnemoledger.commands.llm.rules.text import comparison_key, single_line
from mnemoledger.commands.llm.schemas import (
    Coverage,
    ReconstructedMemory,
    ReconstructInput,
    ReconstructOutput,
    RefineInput,
    RelatedMemory,
    new_source,
)


def reconstruct(inputs: ReconstructInput) -> ReconstructOutput:
    return rebuild(inputs.related, inputs.new_contents)


def refine(inputs: RefineInput) -> ReconstructOutput:
    """Recomputed from scratch, which fixes whatever the previous output got wrong."""
    return rebuild(inputs.related, inputs.new_contents)


def rebuild(related: list[RelatedMemory], new_contents: list[str]) -> ReconstructOutput:
    memory_of_key: dict[str, int] = {}
    contents: list[str] = []
    sources: list[list[str]] = []
    coverage: list[Coverage] = []
    for index, content in enumerate(new_contents):
        key = comparison_key(content)
        if key not in memory_of_key:
            memory_of_key[key] = len(contents)
            contents.append(single_line(content))
            sources.append([])
        position = memory_of_key[key]
        sources[position].append(new_source(index))
        coverage.append(Coverage(new_content=index, memories=[position]))

    olders = [m.content for m in related]
    closeness = [m.similarity for m in related]
    found = replacements(olders, contents, closeness=closeness, by_clause=True)
    for older, replacement in found.items():
        sources[replacement.newer].append(related[older].id)

    memories = [
        ReconstructedMemory(content=content, sources=memory_sources)
        for content, memory_sources in zip(contents, sources, strict=True)
    ]
    # what a memory replaced in part still says stays, as a memory built from it
    memories += [
        ReconstructedMemory(content=replacement.kept, sources=[related[older].id])
        for older, replacement in found.items()
        if replacement.kept
    ]
    return ReconstructOutput(memories=memories, coverage=coverage)
