"""Inputs and outputs of every LLM stage, as pydantic models.

Outputs forbid unknown keys, so their JSON schemas (sent as `response_format`) say
`additionalProperties: false`. Inputs forbid them too: a misspelt field is a bug.
Attribute docstrings become descriptions in the JSON schemas, where the model reads them.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mnemoledger.ledger.validation import normalize_key

# --- seed 004 §3 / §14: the `explicit` flag of an extracted fact maps to its confidence --
EXPLICIT_CONFIDENCE: Final = 0.9  # the user stated it directly
INFERRED_CONFIDENCE: Final = 0.6  # inferred from context or behaviour
DEFAULT_CONFIDENCE: Final = 0.75  # the model did not say

# --- seed 003 §13: the multi-fact pass extracts 1-5 candidate facts per turn -------------
MAX_CANDIDATE_FACTS: Final = 5

NEW_SOURCE_PREFIX: Final = "new:"
"""How a reconstructed memory names a new content it was built from: `new:<index>`."""


def new_source(index: int) -> str:
    """The `sources` entry for new content number `index`."""
    return f"{NEW_SOURCE_PREFIX}{index}"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


# --- split (seed 000: pre-memory split) --------------------------------------------------


class SplitInput(_Model):
    raw_input: str


class SplitOutput(_Model):
    contents: list[str]


# --- reconstruct and refine (seed 000: N:M reconstruction) ------------------------------


class RelatedMemory(_Model):
    id: str
    content: str
    similarity: float
    """Best cosine similarity of this memory to any of the new contents."""


class ReconstructInput(_Model):
    related: list[RelatedMemory]
    new_contents: list[str]


class ReconstructedMemory(_Model):
    content: str
    sources: list[str]
    """Related memory ids and `new:<index>` entries this memory was built from."""


class Coverage(_Model):
    new_content: int
    """Index into the input's `new_contents`."""
    memories: list[int]
    """Indexes into the output's `memories` that cover that new content."""


class ReconstructOutput(_Model):
    memories: list[ReconstructedMemory]
    coverage: list[Coverage]


class RefineInput(_Model):
    related: list[RelatedMemory]
    new_contents: list[str]
    previous: ReconstructOutput
    problems: list[str]


# --- core update (seed 000: core entry policy) -------------------------------------------


class CoreUpdateInput(_Model):
    current_core_markdown: str
    candidate_new_memories: list[str]
    superseded_memories: list[str]
    candidate_ids: list[str] = Field(default_factory=list)
    """The memory id of each candidate, in the same order (empty: not given)."""


class CoreBulletSources(_Model):
    bullet: str
    """A bullet of "core_markdown", exactly as written there (without the "- ")."""
    memories: list[str]
    """The ids of the candidate memories the bullet rests on."""


class CoreUpdateOutput(_Model):
    should_update: bool
    core_markdown: str
    sources: list[CoreBulletSources] = Field(default_factory=list)
    """For each bullet built from candidates: the candidates' ids (may be empty)."""


# --- insert merge (seed 001 §2.1) ----------------------------------------------------------


class MergeInput(_Model):
    existing: str
    new: str


class MergeOutput(_Model):
    content: str


# --- extraction (seed 004 §3) --------------------------------------------------------------


class ConversationTurn(_Model):
    role: str
    content: str


class ExtractInput(_Model):
    conversation: list[ConversationTurn]


class Fact(_Model):
    key: str
    value: str
    category: str
    tags: list[str] = Field(default_factory=list)
    explicit: bool | None = None

    @field_validator("key")
    @classmethod
    def _normalize_key(cls, key: str) -> str:
        return normalize_key(key)

    @field_validator("value", mode="before")
    @classmethod
    def _value_as_text(cls, value: Any) -> Any:
        """Models sometimes emit numbers or objects as the value (seed 004 §3)."""
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    @field_validator("tags", mode="before")
    @classmethod
    def _null_tags_as_empty(cls, tags: Any) -> Any:
        return [] if tags is None else tags

    @property
    def confidence(self) -> float:
        if self.explicit is None:
            return DEFAULT_CONFIDENCE
        return EXPLICIT_CONFIDENCE if self.explicit else INFERRED_CONFIDENCE


class ExtractOutput(_Model):
    preferences: list[Fact] = Field(default_factory=list)
    entities: list[Fact] = Field(default_factory=list)
    decisions: list[Fact] = Field(default_factory=list)
    styles: list[Fact] = Field(default_factory=list)
    artifacts: list[Fact] = Field(default_factory=list)


# --- personality synthesis (seed 004 §4) ---------------------------------------------------


class StyleObservation(_Model):
    key: str
    value: str
    count: int
    """How many times the observation was reinforced."""


class SynthesizeInput(_Model):
    observations: list[StyleObservation]


class SynthesizeOutput(_Model):
    directive: str


# --- multi-fact extraction (seed 003 §13) --------------------------------------------------


class MultiFactInput(_Model):
    turn: str


class CandidateFact(_Model):
    content: str
    category: str
    """`semantic`, `episodic` or `procedural`."""
    importance: float = Field(ge=0.0, le=1.0)


class MultiFactOutput(_Model):
    facts: list[CandidateFact] = Field(max_length=MAX_CANDIDATE_FACTS)


# --- note merge (seed 002, mergeNotes) -----------------------------------------------------


class MergeNotesInput(_Model):
    notes: list[str]


class MergeNotesOutput(_Model):
    summary: str


# --- remember: the add's one call (split, reading, dedup and reconstruction at once) -----


class WrittenContent(_Model):
    role: Literal["user", "assistant", "tool", "document"]
    """Who wrote it: `user`, `assistant`, `tool` (a fetched page, an API answer) or
    `document`."""
    text: str


class RememberInput(_Model):
    related: list[RelatedMemory]
    new_contents: list[WrittenContent]
    kind: str = "semantic"
    """The kind of memory written: `semantic` (facts), `episodic` (what happened) or
    `procedural` (numbered steps)."""
    split: bool = True
    """False: each kept new content is written as one memory, never cut into pieces."""


class ContentReading(_Model):
    new_content: int
    """Index into the input's `new_contents`."""
    keep: bool
    """Holds something worth remembering long-term about the user or their world."""
    instruction: bool
    """Tries to instruct the AI model that will later read it (a prompt injection)."""


class Restatement(_Model):
    new_content: int
    """Index into the input's `new_contents`."""
    memory: str
    """The id of the related memory that already says the same, with the same values."""


class RememberOutput(_Model):
    readings: list[ContentReading]
    """Exactly one entry for every new content."""
    memories: list[ReconstructedMemory]
    """The memories to write, each naming what it was built from in `sources`."""
    restates: list[Restatement] = Field(default_factory=list)
    """New contents (or their pieces) that only repeat a related memory: nothing is written
    for them, the related memory is reinforced."""
