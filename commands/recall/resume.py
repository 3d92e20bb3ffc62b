"""engram's resume (seed 001 §7): session recovery in four sections with fixed budgets.

    === Core (N) ===                      core.md, then core-layer memories     ~2k tokens
    <full text, no truncation>            by importance x kind_boost x (1 + rep x 2.5)
    Summary of N more: ...                those past the budget, compressed by a cycle
    === Recent (12h) ===                  non-core memories changed lately      ~1k tokens
    <time descending>
    === Topics (Working: N, Buffer: N) === the topic tree's leaves              ~500 tokens
    kb1: "Topic name" [8]                 member count descending
    Triggers: git-push, deploy            every trigger:* tag                   ~200 tokens

Budgets are counted in estimated tokens (characters / 4). Whole items are kept (never cut):
a section takes items in its order until the next would pass the budget, but always its
first. Topics are the leaves of the user's cached topic tree (the `topics` read model,
seed 001 §6), each counting its members among the memories resume reads; without a tree
the section is omitted, as the seed says. Triggers are sorted by the aggregate access count
of the memories carrying them (each counts at least 1).

Namespaces: with a project namespace, resume reads that namespace and `default` (seed 001
§7, "Namespace Merging"); with none (or `default`), only `default`. Other namespaces (other
projects, Nebo's `tacit/*`, `entity/*`, `daily/*`) never show, in any section.

Resume is read-only (seed 001 §10.9, "resume doesn't touch memories"): it reads the read
models and writes nothing to the log, no RecallServed, no access count. Like every agent
context here, it leaves out expired and sensitive memories (seed 002's filter).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
from eventsourcing.application import AggregateNotFoundError
from pydantic import BaseModel, Field

from mnemoledger.ledger import Ledger
from mnemoledger.ledger.core_summary import CoreSummary
from mnemoledger.ledger.epoch import EngramClock
from mnemoledger.ledger.errors import MemoryNotFound
from mnemoledger.ledger.policy import (
    ACTIVE,
    BUFFER,
    CHARS_PER_TOKEN,
    CORE,
    PROCEDURAL,
    RESUME_COMPACT_MAX_CORE,
    RESUME_COMPACT_MAX_WORKING,
    RESUME_CORE_BUDGET_TOKENS,
    RESUME_CORE_SUMMARY_BUDGET_TOKENS,
    RESUME_CORE_THRESHOLD,
    RESUME_HIGH_RELEVANCE,
    RESUME_HIGH_RELEVANCE_TAGS,
    RESUME_KIND_BOOST,
    RESUME_LOW_RELEVANCE,
    RESUME_LOW_RELEVANCE_TAGS,
    RESUME_RECENT_BUDGET_TOKENS,
    RESUME_RECENT_HOURS,
    RESUME_RELEVANCE_WITHOUT_VECTOR,
    RESUME_REPETITION_WEIGHT,
    RESUME_TOPICS_BUDGET_TOKENS,
    RESUME_TRIGGERS_BUDGET_TOKENS,
    RESUME_WORKING_THRESHOLD,
    SEMANTIC,
    SENSITIVE,
    SHARED_NAMESPACE,
    TRIGGER_TAG_PREFIX,
    WORKING,
)
from mnemoledger.projections.engram_state import EPOCH_EVENT
from mnemoledger.projections.layers import MemoryRow
from mnemoledger.projections.topics import TopicsProjection
from mnemoledger.projections.vectors import VectorsProjection

TRIGGERS_LABEL = "Triggers: "


class ResumeItem(BaseModel):
    """A memory as resume shows it."""

    id: str
    content: str
    layer: str
    kind: str
    namespace: str
    importance: float
    repetition_count: int
    tags: list[str]
    updated_at: str
    weight: float | None = None
    """Core only: importance x kind_boost x (1 + repetition x 2.5)."""


class CoreSection(BaseModel):
    """Permanent rules and identity: core.md, then core-layer memories, full text."""

    document: str | None = None
    """The user's core.md (HAEMA core), when it has one."""
    document_version: int = 0
    memories: list[ResumeItem] = Field(default_factory=list)
    omitted: int = 0
    """Core memories left out by the budget and not in the summary."""
    below_relevance: int = 0
    """Compact mode: Core memories left out as unrelated to what the user does now."""
    summary: str | None = None
    """The compressed summary of the Core memories past the budget (seed 001 §3 step 19),
    written by the last consolidation cycle that found them; shown in their place."""
    summarized: list[str] = Field(default_factory=list)
    """The ids of the memories past the budget that the summary covers."""
    tokens: int = 0
    budget_tokens: int = RESUME_CORE_BUDGET_TOKENS


class RecentSection(BaseModel):
    """Non-core memories created or changed in the last `hours` (or, when `epochs` is set,
    since the consolidation epoch that many epochs back ended), newest first."""

    hours: float
    epochs: int | None = None
    """Seed 001 §7's form of the window: the last N consolidation epochs (None: `hours`)."""
    since: str | None = None
    """Where an epoch window starts (None with `epochs`: fewer epochs ran, all count)."""
    memories: list[ResumeItem] = Field(default_factory=list)
    omitted: int = 0
    below_relevance: int = 0
    """Compact mode: recent Working memories left out as unrelated to the recent context."""
    tokens: int = 0
    budget_tokens: int = RESUME_RECENT_BUDGET_TOKENS


class Topic(BaseModel):
    """A leaf of the topic tree."""

    id: str
    """e.g. `kb1`."""
    name: str
    members: int


class TopicsSection(BaseModel):
    """The topic tree's leaves, most members first, and the layer counts."""

    working: int
    buffer: int
    topics: list[Topic] = Field(default_factory=list)
    omitted: int = 0
    tokens: int = 0
    budget_tokens: int = RESUME_TOPICS_BUDGET_TOKENS


class ResumeOut(BaseModel):
    """What a new session resumes from, for one user (and namespace)."""

    user_id: str
    namespace: str | None
    namespaces: list[str]
    """The namespaces read: the one asked for and `default`."""
    core: CoreSection
    recent: RecentSection
    topics: TopicsSection | None
    """None while no topic tree exists (seed 001 §7: the section is omitted)."""
    triggers: list[str] = Field(default_factory=list)
    triggers_omitted: int = 0
    compact: bool = False
    """Core and Working memories were kept by relevance to the recent context."""
    text: str = ""
    """The four sections as text, for an agent's prompt."""


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: characters / 4, rounded up (seed 004 §8's ratio)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def resume_namespaces(namespace: str | None) -> list[str]:
    """The namespaces a resume reads: the project's and `default` (`default` alone
    without one)."""
    return list(dict.fromkeys([namespace or SHARED_NAMESPACE, SHARED_NAMESPACE]))


def tree_topics(
    model: TopicsProjection, user_id: str
) -> tuple[list[Topic], dict[str, list[str]]] | None:
    """The leaves of the user's cached topic tree and their members' ids (None: no tree)."""
    leaves = [row for row in model.tree(user_id) if not row.children]
    if not leaves:
        return None
    topics = [Topic(id=row.id, name=row.name, members=row.members) for row in leaves]
    return topics, {row.id: model.members(user_id, row.id) for row in leaves}


def compact_markdown(document: str) -> str:
    """core.md without its empty sections (a heading with nothing under it)."""
    kept: list[str] = []
    pending: list[str] = []
    for line in document.strip().splitlines():
        if line.startswith("#"):
            pending = [line]
        elif line.strip():
            kept += [*pending, line]
            pending = []
    return "\n".join(kept)


class CoreSummaryView(BaseModel):
    """A stored compressed Core summary of one resume view (`ledger.core_summary`)."""

    summary: str
    memory_ids: list[str]


def load_core_summary(ledger: Ledger, user_id: str) -> CoreSummary | None:
    """The user's stored Core summaries (None: no cycle wrote one yet)."""
    try:
        summary: object = ledger.repository.get(CoreSummary.create_id(user_id))
    except AggregateNotFoundError:
        return None
    assert isinstance(summary, CoreSummary)
    return summary


def stored_core_summary(
    ledger: Ledger, user_id: str, namespace: str | None
) -> CoreSummaryView | None:
    """The Core summary the last cycle wrote for the resume view of `namespace`, if any."""
    stored = load_core_summary(ledger, user_id)
    view = stored.views.get(resume_view(namespace)) if stored is not None else None
    if view is None:
        return None
    return CoreSummaryView(summary=str(view["summary"]), memory_ids=list(view["memory_ids"]))


def epochs_window_start(ledger: Ledger, user_id: str, epochs: int) -> datetime | None:
    """When the user's consolidation epoch `epochs` epochs back ended: the changes after
    it fall in the last `epochs` epochs (the one in progress counts). None when fewer
    epochs have run: every change counts."""
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1; got {epochs}")
    try:
        records = ledger.stream(EngramClock.create_id(user_id))
    except MemoryNotFound:
        return None
    ended = [r.at for r in records if r.type == EPOCH_EVENT]
    return ended[-epochs] if len(ended) >= epochs else None


def resume_view(namespace: str | None) -> str:
    """The name of the view a resume of `namespace` shows: the namespace (`default`)."""
    return namespace or SHARED_NAMESPACE


def core_overflow(
    rows: Iterable[MemoryRow], namespace: str | None, core_document: str, now: datetime
) -> list[MemoryRow]:
    """The Core memories of the view that a summary must cover: those past the budget
    left once the summary's own room is kept (RESUME_CORE_SUMMARY_BUDGET_TOKENS), most
    important first. Empty when they all fit the whole budget. A consolidation cycle
    summarizes these; resume then shows the same split."""
    ranked = _ranked_core(_shown(rows, resume_namespaces(namespace), now))
    document = compact_markdown(core_document)
    spent = estimate_tokens(document) if document else 0
    if len(_within_budget(ranked, RESUME_CORE_BUDGET_TOKENS, spent)) == len(ranked):
        return []
    kept = _within_budget(
        ranked, RESUME_CORE_BUDGET_TOKENS - RESUME_CORE_SUMMARY_BUDGET_TOKENS, spent
    )
    return ranked[len(kept) :]


def core_weight(row: MemoryRow) -> float:
    """Seed 001 §7 Core sort: importance x kind_boost x (1 + repetition x 2.5)."""
    boost = RESUME_KIND_BOOST.get(row.kind, 1.0)
    return row.importance * boost * (1 + row.repetition_count * RESUME_REPETITION_WEIGHT)


def recent_window(
    now: datetime, hours: float, epochs: int | None, epochs_since: datetime | None
) -> datetime:
    """Where Recent starts: `hours` before `now`, or with `epochs` where that many
    consolidation epochs back ended (`epochs_window_start`; None: every change)."""
    if epochs is None:
        return now - timedelta(hours=hours)
    return epochs_since or datetime.min.replace(tzinfo=UTC)


def compact_relevance(
    rows: Sequence[MemoryRow], vectors: VectorsProjection, namespace: str | None, since: datetime
) -> dict[str, float] | None:
    """`context_relevance` of the rows a resume of `namespace` reads, with the stored
    vectors read on the seeds' reference scale."""
    shown = resume_namespaces(namespace)
    return context_relevance(
        [row for row in rows if row.namespace in shown],
        vectors.vector,
        vectors.calibration.to_reference,
        since,
    )


def context_relevance(
    rows: Iterable[MemoryRow],
    vector_of: Callable[[str], npt.NDArray[np.float32] | None],
    to_reference: Callable[[float], float],
    since: datetime,
) -> dict[str, float] | None:
    """Compact mode (seed 001 §8 resume thresholds): each Core and Working memory's
    similarity (reference scale) to the centroid of the recent context, the Buffer's and
    the memories changed `since`, plus RESUME_HIGH_RELEVANCE for identity, constraint or
    bootstrap tags and RESUME_LOW_RELEVANCE for lessons, procedures and preferences. None
    when no recent memory has a vector (nothing to be relevant to)."""
    listed = list(rows)
    vectors = {row.id: vector_of(row.id) for row in listed}  # each read once
    context = [
        vector
        for row in listed
        if row.layer == BUFFER or datetime.fromisoformat(row.updated_at) >= since
        if (vector := vectors[row.id]) is not None
    ]
    if not context:
        return None
    centroid = np.mean(np.stack(context), axis=0)
    centroid /= max(float(np.linalg.norm(centroid)), 1e-12)
    relevance: dict[str, float] = {}
    for row in listed:
        if row.layer not in (CORE, WORKING):
            continue
        vector = vectors[row.id]
        score = (
            RESUME_RELEVANCE_WITHOUT_VECTOR
            if vector is None
            else to_reference(float(np.dot(centroid, vector)))
        )
        relevance[row.id] = score + _relevance_boost(row)
    return relevance


def _relevance_boost(row: MemoryRow) -> float:
    tags = {tag.casefold() for tag in row.tags}
    if tags & RESUME_HIGH_RELEVANCE_TAGS:
        return RESUME_HIGH_RELEVANCE
    if tags & RESUME_LOW_RELEVANCE_TAGS or row.kind == PROCEDURAL:
        return RESUME_LOW_RELEVANCE
    return 0.0


def build_resume(
    rows: Iterable[MemoryRow],
    *,
    user_id: str,
    namespace: str | None = None,
    core_document: str = "",
    core_version: int = 0,
    topics: Sequence[Topic] | None = None,
    topic_members: Mapping[str, Collection[str]] | None = None,
    hours: float = RESUME_RECENT_HOURS,
    now: datetime | None = None,
    core_summary: CoreSummaryView | None = None,
    recent_epochs: int | None = None,
    recent_since: datetime | None = None,
    relevance: Mapping[str, float] | None = None,
) -> ResumeOut:
    """The resume of `user_id` from the user's memory rows (pure: reads nothing else).
    With `topic_members` (memory ids by topic id), a topic counts only its members among
    the rows read (its namespaces, not expired or sensitive), and one with none is left
    out. `core_summary` (the view's stored one) stands in for the Core memories past the
    budget that it covers. With `recent_epochs` (seed 001 §7), Recent holds the changes
    after `recent_since` (`epochs_window_start`; None: all) instead of the last `hours`.
    With `relevance` (`context_relevance`), compact mode: at most 20 Core memories at
    RESUME_CORE_THRESHOLD or more, recent Working ones at RESUME_WORKING_THRESHOLD or more."""
    moment = now or datetime.now(UTC)
    namespaces = resume_namespaces(namespace)
    live = _shown((row for row in rows if row.user_id == user_id), namespaces, moment)
    dropped: dict[str, int] = {CORE: 0, WORKING: 0}
    if relevance is not None:
        live, dropped = _relevant(live, relevance)
    core = _core(live, core_document, core_version, core_summary)
    core.below_relevance = dropped[CORE]
    if recent_epochs is None:
        recent = _recent(live, hours, moment - timedelta(hours=hours))
    else:
        recent = _recent(live, hours, recent_since)
        recent.epochs = recent_epochs
        recent.since = recent_since.isoformat() if recent_since is not None else None
    section = None
    if topics is not None:
        if topic_members is not None:
            topics = _visible_topics(topics, topic_members, {row.id for row in live})
        section = _topics(
            topics,
            working=sum(row.layer == WORKING for row in live),
            buffer=sum(row.layer == BUFFER for row in live),
        )
    recent.below_relevance = dropped[WORKING]
    triggers, omitted = _triggers(live)
    out = ResumeOut(
        user_id=user_id,
        namespace=namespace,
        namespaces=namespaces,
        core=core,
        recent=recent,
        topics=section,
        triggers=triggers,
        triggers_omitted=omitted,
        compact=relevance is not None,
    )
    out.text = render_resume(out)
    return out


def render_resume(out: ResumeOut) -> str:
    """The seed's text format: Core, Recent, Topics (if any), then the Triggers line."""
    lines = [f"=== Core ({len(out.core.memories)}) ==="]
    if out.core.document:
        lines.append(out.core.document.strip())
    lines += [_line(item) for item in out.core.memories]
    if out.core.summary:
        lines.append(_summary_line(out.core))
    window = (
        f"{_hours(out.recent.hours)}h"
        if out.recent.epochs is None
        else f"{out.recent.epochs} epoch{'s' if out.recent.epochs != 1 else ''}"
    )
    lines += ["", f"=== Recent ({window}) ==="]
    lines += [_line(item) for item in out.recent.memories]
    if out.topics is not None:
        lines += [
            "",
            f"=== Topics (Working: {out.topics.working}, Buffer: {out.topics.buffer}) ===",
        ]
        lines += [_topic_line(topic) for topic in out.topics.topics]
    if out.triggers:
        lines += ["", TRIGGERS_LABEL + ", ".join(out.triggers)]
    return "\n".join(lines) + "\n"


# --- sections ------------------------------------------------------------------------------


def _shown(
    rows: Iterable[MemoryRow], namespaces: Collection[str], now: datetime
) -> list[MemoryRow]:
    """The rows a resume of `namespaces` may show at `now`: active, not expired, not
    sensitive."""
    return [
        row
        for row in rows
        if row.state == ACTIVE
        and not row.is_expired(now)
        and row.sensitivity != SENSITIVE
        and row.namespace in namespaces
    ]


def _relevant(
    live: list[MemoryRow], relevance: Mapping[str, float]
) -> tuple[list[MemoryRow], dict[str, int]]:
    """The rows compact mode keeps, and how many Core and Working rows it dropped."""
    limits = {
        CORE: (RESUME_CORE_THRESHOLD, RESUME_COMPACT_MAX_CORE),
        WORKING: (RESUME_WORKING_THRESHOLD, RESUME_COMPACT_MAX_WORKING),
    }
    kept_ids: set[str] = set()
    dropped: dict[str, int] = {}
    for layer, (threshold, most) in limits.items():
        rows = [row for row in live if row.layer == layer]
        scored = sorted(
            (relevance.get(row.id, RESUME_RELEVANCE_WITHOUT_VECTOR), row.id) for row in rows
        )
        passing = [row_id for score, row_id in reversed(scored) if score >= threshold][:most]
        kept_ids.update(passing)
        dropped[layer] = len(rows) - len(passing)
    kept = [row for row in live if row.layer not in limits or row.id in kept_ids]
    return kept, dropped


def _ranked_core(rows: Iterable[MemoryRow]) -> list[MemoryRow]:
    return sorted(
        (row for row in rows if row.layer == CORE),
        key=lambda row: (-core_weight(row), _newest_first(row), row.id),
    )


def _core(
    live: list[MemoryRow], document: str, version: int, summary: CoreSummaryView | None = None
) -> CoreSection:
    section = CoreSection(document=compact_markdown(document) or None, document_version=version)
    spent = estimate_tokens(section.document) if section.document else 0
    ranked = _ranked_core(live)
    taken = _within_budget(ranked, RESUME_CORE_BUDGET_TOKENS, spent)
    if summary is not None and summary.summary and len(taken) < len(ranked):
        kept = _within_budget(
            ranked, RESUME_CORE_BUDGET_TOKENS - RESUME_CORE_SUMMARY_BUDGET_TOKENS, spent
        )
        covered = set(summary.memory_ids)
        summarized = [row.id for row in ranked[len(kept) :] if row.id in covered]
        if summarized:
            taken = kept
            section.summary = summary.summary
            section.summarized = summarized
            spent += estimate_tokens(_summary_line(section))
    section.memories = [_item(row, core_weight(row)) for row in taken]
    section.omitted = len(ranked) - len(taken) - len(section.summarized)
    section.tokens = spent + sum(estimate_tokens(_line(item)) for item in section.memories)
    return section


def _recent(live: list[MemoryRow], hours: float, since: datetime | None) -> RecentSection:
    changed = sorted(
        (
            row
            for row in live
            if row.layer != CORE
            and (since is None or datetime.fromisoformat(row.updated_at) >= since)
        ),
        key=lambda row: (_newest_first(row), row.id),
    )
    taken = _within_budget(changed, RESUME_RECENT_BUDGET_TOKENS, 0)
    items = [_item(row) for row in taken]
    return RecentSection(
        hours=hours,
        memories=items,
        omitted=len(changed) - len(taken),
        tokens=sum(estimate_tokens(_line(item)) for item in items),
    )


def _topics(topics: Sequence[Topic], *, working: int, buffer: int) -> TopicsSection:
    ranked = sorted(topics, key=lambda topic: (-topic.members, topic.id))
    taken: list[Topic] = []
    spent = 0
    for topic in ranked:
        cost = estimate_tokens(_topic_line(topic))
        if taken and spent + cost > RESUME_TOPICS_BUDGET_TOKENS:
            break
        taken.append(topic)
        spent += cost
    return TopicsSection(
        working=working,
        buffer=buffer,
        topics=taken,
        omitted=len(ranked) - len(taken),
        tokens=spent,
    )


def _visible_topics(
    topics: Sequence[Topic], members: Mapping[str, Collection[str]], visible: set[str]
) -> list[Topic]:
    counted = [
        topic.model_copy(update={"members": sum(m in visible for m in members.get(topic.id, ()))})
        for topic in topics
    ]
    return [topic for topic in counted if topic.members]


def _triggers(live: list[MemoryRow]) -> tuple[list[str], int]:
    """Every `trigger:*` tag once, by aggregate access count, within the budget."""
    counts: dict[str, int] = {}
    for row in live:
        for tag in row.tags:
            if tag.startswith(TRIGGER_TAG_PREFIX) and len(tag) > len(TRIGGER_TAG_PREFIX):
                name = tag[len(TRIGGER_TAG_PREFIX) :]
                counts[name] = counts.get(name, 0) + max(row.access_count, 1)
    ranked = sorted(counts, key=lambda name: (-counts[name], name))
    taken: list[str] = []
    for name in ranked:
        line = TRIGGERS_LABEL + ", ".join([*taken, name])
        if taken and estimate_tokens(line) > RESUME_TRIGGERS_BUDGET_TOKENS:
            break
        taken.append(name)
    return taken, len(ranked) - len(taken)


# --- helpers -------------------------------------------------------------------------------


def _within_budget(rows: Sequence[MemoryRow], budget: int, spent: int) -> list[MemoryRow]:
    """Rows in order until the next would pass `budget`; the first always fits."""
    taken: list[MemoryRow] = []
    for row in rows:
        cost = estimate_tokens(_line(_item(row)))
        if (taken or spent) and spent + cost > budget:
            break
        taken.append(row)
        spent += cost
    return taken


def _item(row: MemoryRow, weight: float | None = None) -> ResumeItem:
    return ResumeItem(
        id=row.id,
        content=row.content,
        layer=row.layer,
        kind=row.kind,
        namespace=row.namespace,
        importance=row.importance,
        repetition_count=row.repetition_count,
        tags=row.tags,
        updated_at=row.updated_at,
        weight=None if weight is None else round(weight, 6),
    )


def _line(item: ResumeItem) -> str:
    """A memory's line: its full text, and its kind unless semantic."""
    return item.content + ("" if item.kind == SEMANTIC else f" ({item.kind})")


def _summary_line(core: CoreSection) -> str:
    """The compressed summary's line, saying how many memories it stands for."""
    return f"Summary of {len(core.summarized)} more: {core.summary}"


def _topic_line(topic: Topic) -> str:
    return f'{topic.id}: "{topic.name}" [{topic.members}]'


def _hours(hours: float) -> str:
    return str(int(hours)) if float(hours).is_integer() else f"{hours:g}"


def _newest_first(row: MemoryRow) -> float:
    """A sort key putting later `updated_at` first."""
    return -datetime.fromisoformat(row.updated_at).timestamp()
