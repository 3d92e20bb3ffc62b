"""Offline N:M reconstruction and refinement (seed 000).

Each distinct new content becomes one memory, written as given: new contents are the
newest evidence. Rules cannot read meaning, so a related memory is taken as an older version
of a new content only when the new content gives a newer value of every attribute the
memory states, for the same person (`commands.llm.rules.attributes.replaces`: "I live in
Paris" / "I moved to Berlin last month", "My brother Oskar's number is ..." / "Oskar got a
new phone, his number is now ..."), or, for a statement outside the attribute catalogue,
when it explicitly ends or corrects one of the same speaker's with enough words in common
("I no longer drink coffee" / "I drink coffee every morning"). Then the memory of the new
content it overlaps most lists its id in `sources`, so it is replaced. Everything else stays
untouched and is left out of the output: similar memories are kept side by side. No
similarity edge decides: the related memories are those the add pipeline found above its
cutoff on the reference scale, and the words decide among them.

Measured on LoCoMo (6 dev conversations, one `add` per turn): similarity and a change
word alone superseded 669 of 7,046 memories, nearly all of them wrongly, because the
shared "[date] Speaker:" attribution lifts the cosine of any two sentences of one speaker,
and a superseded memory is never retrieved again.
"""

from __future__ import annotations

from typing import Final

from mnemoledger.commands.llm.rules import same_attribute
from mnemoledger.commands.llm.rules.attributes import CORRECTION, ENDED, facts_of
from mnemoledger.commands.llm.rules.text import comparison_key, overlap, single_line
from mnemoledger.commands.llm.rules.updates import supersedes
from mnemoledger.commands.llm.schemas import (
    Coverage,
    ReconstructedMemory,
    ReconstructInput,
    ReconstructOutput,
    RefineInput,
    RelatedMemory,
    new_source,
)
from mnemoledger.commands.write.attribution import different_speakers, speaker_and_body

SAME_THING_OVERLAP: Final = 0.3
"""Word overlap (Jaccard, attributions left out) from which two statements outside the
attribute catalogue are taken to be about the same thing ("I no longer drink coffee" /
"I drink coffee every morning": 0.43); the same value as the core rule's stale-bullet
overlap."""


def is_older_version(memory: RelatedMemory, content: str) -> bool:
    """Whether the related `memory` is an older version of the new `content`."""
    if supersedes(memory.content, content):
        return True
    old_speaker, old_body = speaker_and_body(memory.content)
    new_speaker, new_body = speaker_and_body(content)
    if different_speakers(old_speaker, new_speaker) or facts_of(old_body) or facts_of(new_body):
        return False
    ends_it = ENDED.search(new_body) is not None or CORRECTION.search(new_body) is not None
    return ends_it and overlap(old_body, new_body) >= SAME_THING_OVERLAP


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

    ruled: set[int] = set()
    for memory in related:
        replaced_by = [i for i, content in enumerate(contents) if is_older_version(memory, content)]
        if replaced_by:
            # max() keeps the first of equal overlaps: deterministic.
            target = max(replaced_by, key=lambda i: overlap(memory.content, contents[i]))
            ruled.add(target)
            if memory.id not in sources[target]:
                sources[target].append(memory.id)
    taken = {source for memory_sources in sources for source in memory_sources}
    for position, content in enumerate(contents):
        if position in ruled:
            continue
        free = [memory for memory in related if memory.id not in taken]
        older = same_attribute.replaced([memory.content for memory in free], content)
        if older is not None:  # no rule matched: what the two statements mean
            sources[position].append(free[older].id)
            taken.add(free[older].id)

    memories = [
        ReconstructedMemory(content=content, sources=memory_sources)
        for content, memory_sources in zip(contents, sources, strict=True)
    ]
    return ReconstructOutput(memories=memories, coverage=coverage)
