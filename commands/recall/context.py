"""Agent context assembly: what an agent's system prompt knows of its user.

Luminary's `buildAgentContext(userId, message?)` (seed 002, "Agent Context") gives the
priority order; Nebo's `LoadContext` + `FormatForSystemPrompt` (seed 004 §9, §14) adds the
tacit memories ("What You Know") and the learned personality:

    1. agent note       who the agent is (Nebo: Agent Identity); with a profile
                        (`agent_profile`), `{name}` filled in and the Character card
    2. soul note        how the agent thinks
       personality      Nebo's synthesized directive (tacit/personality/directive)
       style            with a profile: Nebo's Communication Style (voice, formality,
                        emoji, response length, proactivity)
    3. environment      the OS/platform line, always (correct shell commands)
    4. user note        who the user is, with Nebo's profile (tacit/user) below it
    5. rules            at most 10: the nearest to `message` first (the 15 nearest notes
                        by vector similarity), then the most recent
       tool notes       with a profile that has them (Nebo's Tool Notes)
    6. summaries        at most 5, the same way
    7. what you know    Nebo's tacit memories: pass 1 tacit/personality (at most 10),
                        pass 2 the other tacit/* namespaces (the rest of 50); each pass
                        overfetches max(3 x N, 30) by access count, then keeps the top N
                        by decayScore = access_count x 0.7 ** (days since access / 30)

Parts are joined by `\\n\\n---\\n\\n`, highest priority first (FormatForSystemPrompt).
Filters, for every memory that enters the context: active, not expired, not superseded,
not `sensitive` (seed 002 names rules and summaries; the ledger keeps sensitive memories
out of every agent context), confidence unset or >= 0.65 (seed 004 §14's system prompt
filter). Procedural memories stay out (seed 003 §12) — except the notes Luminary asks for
by kind: rule and soul notes are procedural by the notes pipeline's mapping, and the
context names them explicitly, as seed 003 §12 lets a caller name the procedural category.
Consent (seed 003 §10): the user's preferred name, pronouns, city and language enter only
as granted (`granted`); a sentence of a note or tacit memory that states one nobody
granted is left out, and a memory left with nothing is counted under `consent`.

File-based context (seed 004 §13, `commands.recall.context_files`): with `files`, SOUL.md,
AGENTS.md and MEMORY.md are the fallback of the parts above: when the user has none of them
(no agent, soul or user note, personality, profile, rules, summaries or tacit memories),
the files found are rendered in the seed's format (`# Personality (SOUL.md)`, ...) in
place of those parts, the environment line after them; when the ledger has any, it wins
and the files are not read (`source` says which was used).

Steering (seed 004 §12, `commands.recall.nudge`): with the thread's recent `turns`, the
memoryNudge message is returned in `steering` when its conditions hold. It is not part of
`text` (the system prompt): Nebo injects steering as an ephemeral message.

Nothing is written: assembling a context, reading the files and computing the nudge are
reads (no RecallServed).
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from mnemoledger.commands.recall.agent_profile import (
    AgentProfile,
    character,
    communication_style,
    identity,
    profile_of,
)
from mnemoledger.commands.recall.context_files import ContextFile, format_context_files
from mnemoledger.commands.recall.nudge import NudgeTurn, memory_nudge
from mnemoledger.commands.write.consent_gate import consented_profile, keyed_ungranted, redact
from mnemoledger.commands.write.ingest import (
    PERSONALITY_DIRECTIVE_KEY,
    TACIT_LAYER,
    user_profile,
)
from mnemoledger.commands.write.notes import AGENT, RULE, SOUL, SUMMARY, USER
from mnemoledger.commands.write.procedural import excluded_from_default_context
from mnemoledger.ledger import validation
from mnemoledger.ledger.policy import (
    ACTIVE,
    CONTEXT_MAX_RULES,
    CONTEXT_MAX_SUMMARIES,
    CONTEXT_MIN_CONFIDENCE,
    CONTEXT_SEMANTIC_TOP_K,
    DECAY_SCORE_BASE,
    DECAY_SCORE_PERIOD_DAYS,
    MAX_STYLE_MEMORIES,
    MAX_TACIT_MEMORIES,
    NUDGE_DISCLOSURE_DEFAULT,
    PERSONALITY_NAMESPACE,
    SENSITIVE,
    TACIT_OVERFETCH_FACTOR,
    TACIT_OVERFETCH_MIN,
    NudgeDisclosure,
)
from mnemoledger.projections.layers import MemoryRow

logger = logging.getLogger(__name__)

SECTION_SEPARATOR = "\n\n---\n\n"
"""Seed 004 §9: "Parts joined with `\\n\\n---\\n\\n` separators"."""
WHAT_YOU_KNOW_INTRO = "These are facts you've learned and stored. Reference them naturally:"
"""Seed 004 §9, item 8 and §18 ("## What You Know")."""
TACIT_PREFIX = TACIT_LAYER + "/"
MEMORY_TOOL_INSTRUCTIONS = """You have a long-term memory. Use its tools:
- recall(key): what you stored under a key (e.g. preferences/code-style); falls back to search.
- search(query): find what you know about something before you answer from guesswork.
- store(contents, layer, namespace): save what the user tells you that will matter later:
  preferences (tacit), dated events (daily), people and projects (entity).
- list(namespace) to browse; delete(key) or forget(id) when the user asks you to forget.
Store facts, not chatter; never store secrets the user did not ask you to keep."""
"""Seed 004 §9 item 9, "Memory Tool Instructions — recall, search, store usage guide"
(the seed gives no text; this names the MCP tools of `mnemoledger mcp`)."""
CONTEXT_NOTE_KINDS = (AGENT, SOUL, USER, RULE, SUMMARY)
"""Seed 002: the note kinds buildAgentContext reads (logs stay out)."""

Similarity = Callable[[Sequence[MemoryRow]], Mapping[str, float]]
"""Given candidate notes, their similarity to the message, by memory id (missing: none)."""

Via = Literal["profile", "semantic", "recent"]


class ContextNote(BaseModel):
    """A Luminary note in the context."""

    id: str
    kind: str
    """The note kind: agent, soul, user, rule or summary."""
    content: str
    created_at: str
    confidence: float | None
    similarity: float | None = None
    """Similarity to the message, when the note was chosen for it."""
    via: Via
    """profile (the one agent/soul/user note), semantic (near the message) or recent."""


class TacitMemory(BaseModel):
    """A Nebo tacit memory in "What You Know"."""

    id: str
    namespace: str
    key: str | None
    content: str
    tags: list[str]
    confidence: float | None
    access_count: int
    accessed_at: str
    decay_score: float


class AgentContext(BaseModel):
    """The assembled context: every section, and the rendered system prompt text."""

    user_id: str
    message: str | None
    agent: ContextNote | None = None
    agent_profile: AgentProfile | None = None
    """The agent's name, character and communication style (seed 004 §9), when its agent
    note carries a profile (`set_agent_profile`)."""
    soul: ContextNote | None = None
    directive: str | None = None
    """Nebo's learned personality directive (Personality (Learned))."""
    environment: str
    user: ContextNote | None = None
    profile: dict[str, str] = Field(default_factory=dict)
    """Nebo's user profile fields from tacit/user (seed 004 §5)."""
    rules: list[ContextNote] = Field(default_factory=list)
    summaries: list[ContextNote] = Field(default_factory=list)
    tacit: list[TacitMemory] = Field(default_factory=list)
    """What You Know: tacit/personality first (pass 1), then the rest (pass 2)."""
    excluded: dict[str, int] = Field(default_factory=dict)
    """How many otherwise eligible memories each filter kept out (sensitive, low
    confidence, procedural; consent, when any: nothing was left without the profile
    fields nobody granted)."""
    source: Literal["ledger", "files"] = "ledger"
    """Where the memory parts come from: the ledger, or (seed 004 §13 fallback, when the
    ledger has none for the user) the context files."""
    files: list[ContextFile] = Field(default_factory=list)
    """The context files rendered (SOUL.md, AGENTS.md, MEMORY.md), when `source` is files."""
    onboarding_needed: bool = False
    """No user note and no profile fields: the agent knows nothing of who the user is yet
    (seed 004 §9 OnboardingNeeded), e.g. to ask for their name."""
    tool_instructions: bool = False
    """Whether `text` ends with the memory tool instructions (the agent has the tools)."""
    steering: list[str] = Field(default_factory=list)
    """Ephemeral steering messages (seed 004 §12 memoryNudge), given the thread's turns."""
    text: str = ""
    """FormatForSystemPrompt: the sections joined, highest priority first."""


def environment_line() -> str:
    """The OS/platform line Luminary always injects (so the agent picks the right shell)."""
    system = platform.system() or "unknown OS"
    release = platform.release()
    shell = os.environ.get("SHELL") or os.environ.get("COMSPEC") or "unknown"
    os_name = f"{system} {release}".strip()
    return f"Operating system: {os_name} ({platform.machine() or 'unknown'}); shell: {shell}"


def decay_score(access_count: int, accessed_at: datetime, now: datetime) -> float:
    """Seed 004 §9: access_count x 0.7 ** (days since access / 30)."""
    days = max((now - accessed_at).total_seconds(), 0.0) / 86400.0
    return access_count * math.pow(DECAY_SCORE_BASE, days / DECAY_SCORE_PERIOD_DAYS)


def accessed_at(row: MemoryRow) -> datetime:
    """When a memory was last served, else when it was written (Nebo's accessed_at
    defaults to the insert time)."""
    return datetime.fromisoformat(row.last_accessed or row.created_at)


def build_context(
    rows: Iterable[MemoryRow],
    *,
    user_id: str,
    message: str | None = None,
    similarity: Similarity | None = None,
    environment: str | None = None,
    now: datetime | None = None,
    granted: Mapping[str, str] | None = None,
    files: Callable[[], Sequence[ContextFile]] | None = None,
    turns: Sequence[NudgeTurn] | None = None,
    tool_instructions: bool = False,
    nudge_disclosure: NudgeDisclosure = NUDGE_DISCLOSURE_DEFAULT,
) -> AgentContext:
    """Assemble the context of `user_id` from the user's memory rows (pure: `similarity`
    and `files` are the only ways out; `similarity` is used when `message` is given,
    `files` only when the rows give the user no context). `granted`: the user's granted
    profile fields (none when not given). `turns`: the thread's recent turns, oldest
    first, for the memoryNudge. `tool_instructions`: end with how to use the memory tools
    (for an agent that has them)."""
    moment = now or datetime.now(UTC)
    consented = dict(granted or {})
    excluded = {"sensitive": 0, "low_confidence": 0, "procedural": 0}
    eligible: list[MemoryRow] = []
    for row in rows:
        if (
            row.user_id != user_id
            or row.state != ACTIVE
            or row.superseded_by is not None
            or row.is_expired(moment)
        ):
            continue
        reason = _excluded_by(row)
        if reason is None and _candidate(row):
            content = redact(row.content, consented, named_is_user=row.note_kind == USER)
            if not content or keyed_ungranted(row.key, content, consented):
                reason = "consent"
            elif content != row.content:
                row = replace(row, content=content)
        if reason is None:
            eligible.append(row)
        elif _candidate(row):
            excluded[reason] = excluded.get(reason, 0) + 1
    notes = [row for row in eligible if row.note_kind in CONTEXT_NOTE_KINDS]
    tacit = [row for row in eligible if row.note_kind is None and _is_tacit(row.namespace)]
    rules = _of_kind(notes, RULE)
    summaries = _of_kind(notes, SUMMARY)
    near = _nearest(rules + summaries, message, similarity)
    context = AgentContext(
        user_id=user_id,
        message=message,
        agent=_profile_note(notes, AGENT),
        agent_profile=_agent_profile(notes),
        soul=_profile_note(notes, SOUL),
        directive=_directive(eligible),
        environment=environment if environment is not None else environment_line(),
        user=_profile_note(notes, USER),
        profile=consented_profile(user_profile(eligible), consented),
        rules=_relevant(rules, near, CONTEXT_MAX_RULES),
        summaries=_relevant(summaries, near, CONTEXT_MAX_SUMMARIES),
        tacit=load_tacit(tacit, moment),
        excluded=excluded,
        tool_instructions=tool_instructions,
    )
    context.onboarding_needed = not (context.user or context.profile)
    if files is not None and not has_ledger_context(context):
        context.files = list(files())
        context.source = "files" if context.files else "ledger"
    if turns is not None and (nudge := memory_nudge(turns, nudge_disclosure)) is not None:
        context.steering = [nudge]
    context.text = format_for_system_prompt(context)
    return context


def has_ledger_context(context: AgentContext) -> bool:
    """Does the ledger give the user any context part (seed 004 §13: then the files are
    not used)? The environment line does not count: it is always there."""
    return bool(
        context.agent
        or context.soul
        or context.directive
        or context.user
        or context.profile
        or context.rules
        or context.summaries
        or context.tacit
    )


def load_tacit(rows: Sequence[MemoryRow], now: datetime) -> list[TacitMemory]:
    """Seed 004 §9 two-pass loading: tacit/personality (at most 10), then the other tacit
    namespaces (the rest of 50, at most 50 - 10); rows are already filtered."""
    personality = [row for row in rows if row.namespace == PERSONALITY_NAMESPACE]
    others = [row for row in rows if row.namespace != PERSONALITY_NAMESPACE]
    first = _tacit_pass(personality, MAX_STYLE_MEMORIES, now)
    remaining = min(MAX_TACIT_MEMORIES - len(first), MAX_TACIT_MEMORIES - MAX_STYLE_MEMORIES)
    return first + _tacit_pass(others, remaining, now)


def format_for_system_prompt(context: AgentContext) -> str:
    """FormatForSystemPrompt (seed 004 §9) in Luminary's priority order (seed 002); with
    `source` files, the files in the seed 004 §13 format, then the environment line."""
    if context.source == "files":
        return SECTION_SEPARATOR.join(
            [format_context_files(context.files), "## Environment\n" + context.environment]
        )
    parts: list[str] = []
    profile = context.agent_profile
    if context.agent and profile:
        parts.append("## Agent\n" + identity(profile, context.agent.content))
        if card := character(profile):
            parts.append("## Character\n" + card)
    elif context.agent:
        parts.append("## Agent\n" + format_structured_content(context.agent.content))
    if context.soul:
        parts.append("## Soul\n" + context.soul.content)
    if context.directive:
        parts.append("## Personality (Learned)\n" + context.directive)
    if profile:
        parts.append("## Communication Style\n" + communication_style(profile))
    parts.append("## Environment\n" + context.environment)
    if context.user or context.profile:
        lines = [context.user.content] if context.user else []
        lines += [f"- {name}: {value}" for name, value in context.profile.items()]
        parts.append("## User Information\n" + "\n".join(lines))
    if context.rules:
        parts.append(
            "## Rules\n"
            + "\n".join(_bullet(format_structured_content(r.content)) for r in context.rules)
        )
    if profile and profile.tool_notes:
        parts.append("## Tool Notes\n" + format_structured_content(profile.tool_notes))
    if context.summaries:
        parts.append("## Summaries\n" + "\n".join(_bullet(s.content) for s in context.summaries))
    if context.tacit:
        lines = [WHAT_YOU_KNOW_INTRO] + [_tacit_line(m) for m in context.tacit]
        parts.append("## What You Know\n" + "\n".join(lines))
    if context.tool_instructions:
        parts.append("## Memory Tools\n" + MEMORY_TOOL_INSTRUCTIONS)
    return SECTION_SEPARATOR.join(parts)


def format_structured_content(text: str) -> str:
    """Seed 004 §9 formatStructuredContent: versioned JSON sections of enabled items as
    markdown (`## Section` then `- item`); anything else as it is."""
    try:
        data: Any = json.loads(validation.json_text_depth(text, "content"))
    except ValueError:  # InvalidInput (too deep) is a ValueError too
        return text
    if not isinstance(data, dict) or not isinstance(data.get("sections"), list):
        return text
    lines: list[str] = []
    for section in data["sections"]:
        if not isinstance(section, dict):
            return text
        items = [
            str(item.get("text", ""))
            for item in section.get("items") or []
            if isinstance(item, dict) and item.get("enabled", True) and item.get("text")
        ]
        if items:
            lines.append(f"## {section.get('name') or 'Rules'}")
            lines += [f"- {item}" for item in items]
    return "\n".join(lines) if lines else text


# --- internals -------------------------------------------------------------------------------


def _is_tacit(namespace: str) -> bool:
    return namespace.startswith(TACIT_PREFIX)


def _candidate(row: MemoryRow) -> bool:
    """Would the memory enter the context but for the filters?"""
    return row.note_kind in CONTEXT_NOTE_KINDS or (
        row.note_kind is None and _is_tacit(row.namespace)
    )


def _excluded_by(row: MemoryRow) -> str | None:
    """The filter that keeps a live memory out of every agent context, if any."""
    if row.sensitivity == SENSITIVE:
        return "sensitive"
    if row.confidence is not None and row.confidence < CONTEXT_MIN_CONFIDENCE:
        return "low_confidence"
    if row.note_kind is None and excluded_from_default_context(row.kind):
        return "procedural"
    return None


def _of_kind(notes: Sequence[MemoryRow], kind: str) -> list[MemoryRow]:
    """getNotes order: newest first."""
    found = [row for row in notes if row.note_kind == kind]
    found.sort(key=lambda row: (row.created_at, row.position), reverse=True)
    return found


def _note(row: MemoryRow, via: Via, similarity: float | None = None) -> ContextNote:
    return ContextNote(
        id=row.id,
        kind=row.note_kind or "",
        content=row.content,
        created_at=row.created_at,
        confidence=row.confidence,
        similarity=None if similarity is None else round(similarity, 6),
        via=via,
    )


def _profile_note(notes: Sequence[MemoryRow], kind: str) -> ContextNote | None:
    """The newest active note of a single-active kind (agent, soul, user)."""
    found = _of_kind(notes, kind)
    return _note(found[0], "profile") if found else None


def _agent_profile(notes: Sequence[MemoryRow]) -> AgentProfile | None:
    """The profile the newest agent note carries, if it carries one."""
    found = _of_kind(notes, AGENT)
    return profile_of(found[0].metadata) if found else None


def _directive(rows: Sequence[MemoryRow]) -> str | None:
    """GetDirective (seed 004 §4): tacit/personality, key `directive`, the newest."""
    found = [
        row
        for row in rows
        if row.namespace == PERSONALITY_NAMESPACE and row.key == PERSONALITY_DIRECTIVE_KEY
    ]
    found.sort(key=lambda row: (row.updated_at, row.position), reverse=True)
    return found[0].content if found else None


def _nearest(
    candidates: Sequence[MemoryRow], message: str | None, similarity: Similarity | None
) -> dict[str, float]:
    """The 15 candidates nearest to `message` (seed 002 searchSimilar(queryVec, 15)), by
    id; empty without a message or similarity (the recency fallback)."""
    if not message or not message.strip() or similarity is None or not candidates:
        return {}
    scores = similarity(candidates)
    ranked = sorted(
        (row for row in candidates if row.id in scores),
        key=lambda row: (-scores[row.id], row.id),
    )
    return {row.id: scores[row.id] for row in ranked[:CONTEXT_SEMANTIC_TOP_K]}


def _relevant(
    newest: Sequence[MemoryRow], near: Mapping[str, float], limit: int
) -> list[ContextNote]:
    """The notes near the message, nearest first, then the most recent others."""
    semantic = sorted(
        (row for row in newest if row.id in near), key=lambda row: (-near[row.id], row.id)
    )
    chosen = [_note(row, "semantic", near[row.id]) for row in semantic[:limit]]
    for row in newest:
        if len(chosen) >= limit:
            break
        if row.id not in near:
            chosen.append(_note(row, "recent"))
    return chosen


def _tacit_pass(rows: Sequence[MemoryRow], limit: int, now: datetime) -> list[TacitMemory]:
    """Overfetch max(3 x limit, 30) by access count, re-rank by decayScore, keep `limit`."""
    if limit <= 0:
        return []
    by_access = sorted(rows, key=lambda row: (-row.access_count, _newest_first(row), row.id))
    fetched = by_access[: max(limit * TACIT_OVERFETCH_FACTOR, TACIT_OVERFETCH_MIN)]
    scored = [(decay_score(row.access_count, accessed_at(row), now), row) for row in fetched]
    scored.sort(key=lambda pair: (-pair[0], _newest_first(pair[1]), pair[1].id))
    return [
        TacitMemory(
            id=row.id,
            namespace=row.namespace,
            key=row.key,
            content=row.content,
            tags=row.tags,
            confidence=row.confidence,
            access_count=row.access_count,
            accessed_at=accessed_at(row).isoformat(),
            decay_score=round(score, 6),
        )
        for score, row in scored[:limit]
    ]


def _newest_first(row: MemoryRow) -> float:
    return -datetime.fromisoformat(row.updated_at).timestamp()


def _tacit_line(memory: TacitMemory) -> str:
    """`- preferences/code-style: Prefers 4-space indentation` (seed 004 §9)."""
    namespace = memory.namespace.removeprefix(TACIT_PREFIX)
    label = f"{namespace}/{memory.key}" if memory.key else namespace
    return f"- {label}: {memory.content}"


def _bullet(text: str) -> str:
    """A note as a bullet; a note that is already markdown stays as it is."""
    return text if text.lstrip().startswith(("#", "-", "*")) else f"- {text}"
