"""Inputs and outputs of the consolidation stages (seed 001 §2.3, §2.5, §3.1-§3.3, §5, §6)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class CandidateMemory(_Model):
    """A memory as a consolidation stage sees it."""

    id: str
    content: str
    kind: str
    tags: list[str] = Field(default_factory=list)
    importance: float
    access_count: int = 0
    repetition_count: int = 0


# --- triage (seed 001 §2.3) -------------------------------------------------------------


class TriageInput(_Model):
    namespace: str
    memories: list[CandidateMemory]


class TriageVerdict(_Model):
    id: str
    decision: Literal["promote", "keep"]
    kind: Literal["semantic", "episodic", "procedural"] | None = None
    """Set only to re-file a promoted memory as procedural."""
    reason: str = ""


class TriageOutput(_Model):
    decisions: list[TriageVerdict]


# --- gate (seed 001 §2.5) ---------------------------------------------------------------


class GateInput(_Model):
    candidates: list[CandidateMemory]


class GateVerdict(_Model):
    id: str
    decision: Literal["approve", "reject"]
    category: Literal["LESSON", "IDENTITY", "CONSTRAINT", "DECISION RATIONALE"] | None = None
    """The whitelist category of an approved memory."""
    reason: str = ""


class GateOutput(_Model):
    decisions: list[GateVerdict]


# --- merge (seed 001 §3.1) and reconcile (§3.2) -----------------------------------------


class PairInput(_Model):
    older: CandidateMemory
    newer: CandidateMemory
    similarity: float


class MergeContentOutput(_Model):
    content: str
    """One memory holding every detail of both."""


class ReconcileOutput(_Model):
    decision: Literal["update", "absorb", "keep_both"]
    merged_content: str = ""
    """For update/absorb: every specific detail of both entries (names, numbers, rules)."""


# --- session distillation (seed 001 §3.3) -----------------------------------------------


class DistillInput(_Model):
    namespace: str
    notes: list[str]


class DistillOutput(_Model):
    summary: str
    """A project status snapshot of at most 250 characters."""


# --- audit (seed 001 §5) ----------------------------------------------------------------


class AuditMemory(_Model):
    short_id: str
    layer: str
    importance: float
    access_count: int
    age_days: float
    modified_days: float
    """Days since its last change (seed 001 §5.2's `mod=`); serving it is no change."""
    tags: list[str]
    kind: str
    content: str


class AuditInput(_Model):
    memories: list[AuditMemory]
    merge_hints: list[list[str]] = Field(default_factory=list)
    """Groups of short ids whose contents are similar (merge candidates)."""


class AuditOperation(_Model):
    op: Literal["promote", "demote", "adjust", "merge", "delete"]
    ids: list[str]
    """Short ids (8 characters) of the memories the operation touches."""
    target_layer: Literal["buffer", "working", "core"] | None = None
    importance: float | None = None
    content: str | None = None
    """Merged text, for `merge`."""
    reason: str = ""


class AuditOutput(_Model):
    operations: list[AuditOperation]


# --- topic naming (seed 001 §6.3) -------------------------------------------------------


class TopicSample(_Model):
    topic_id: str
    samples: list[str]


class NameTopicsInput(_Model):
    topics: list[TopicSample]
    existing_names: list[str] = Field(default_factory=list)


class TopicName(_Model):
    topic_id: str
    name: str


class NameTopicsOutput(_Model):
    names: list[TopicName]


# --- daily worker (seed 003 §4) and theory-of-mind insights (§3) --------------------------


class FactPair(_Model):
    pair_id: str
    older: str
    newer: str
    similarity: float


class SameFactInput(_Model):
    pairs: list[FactPair]


class SameFactVerdict(_Model):
    pair_id: str
    same_fact: bool
    merged_content: str = ""
    """For a same fact: one memory keeping every detail, the newer winning on conflicts."""


class SameFactOutput(_Model):
    verdicts: list[SameFactVerdict]


class InsightInput(_Model):
    activity: list[str]
    """Latest activity items (at most 5)."""
    new_facts: list[str]
    """New semantic items (at most 3)."""
    snippet: str = ""
    """Recent conversation (at most 1,000 characters)."""


class Insight(_Model):
    summary: str
    """One third-person insight, at most 280 characters, no pronouns for the AI."""
    tags: list[str] = Field(default_factory=list)
    importance: int = 2


class InsightOutput(_Model):
    insights: list[Insight]


# --- resume compress (seed 001 §3 step 19, §7 "Resume compress") ---------------------------


class ResumeCompressInput(_Model):
    namespace: str
    """The resume view: this namespace (with `default`)."""
    memories: list[str]
    """The Core memories past resume's Core budget, most important first."""
    max_chars: int
    """The summary's bound."""


class ResumeCompressOutput(_Model):
    summary: str
    """Every fact of the memories, compressed, within `max_chars`."""
