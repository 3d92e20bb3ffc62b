"""`diff`: what differs between two ledgers' state (typically an original and a replay).

Memories added, removed and changed (field by field), each user's core.md as a unified
diff, decisions that flipped (every `*Decided` event, e.g. the consolidation gate's and
triage's, matched by type, memory and occurrence), and the LLM calls and tokens of each.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mnemoledger.commands.models import MemoryOut

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

READ_PAGE = 5000


class MemoryChange(BaseModel):
    """A memory present in both ledgers whose fields differ: name -> [a, b]."""

    id: str
    user_id: str
    fields: dict[str, list[Any]]


class DecisionFlip(BaseModel):
    """A decision about one memory that came out differently."""

    type: str
    memory_id: str
    occurrence: int
    """Which of that memory's decisions of this type (1 = first)."""
    a: str | None
    b: str | None


class LLMUsage(BaseModel):
    """The LLM calls one ledger recorded."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_stage: dict[str, dict[str, int]] = Field(default_factory=dict)
    """stage -> {calls, prompt_tokens, completion_tokens}."""


class DiffReport(BaseModel):
    """Everything that differs between ledger `a` and ledger `b`."""

    a: str
    b: str
    identical: bool
    added: list[MemoryOut] = Field(default_factory=list)
    """In b, not in a."""
    removed: list[MemoryOut] = Field(default_factory=list)
    """In a, not in b."""
    changed: list[MemoryChange] = Field(default_factory=list)
    core: dict[str, str] = Field(default_factory=dict)
    """user -> unified diff of core.md (a -> b), for users whose core.md differs."""
    decisions_flipped: list[DecisionFlip] = Field(default_factory=list)
    llm: dict[str, LLMUsage] = Field(default_factory=dict)
    """"a" and "b"."""


def diff_ledgers(
    a: MnemoLedger, b: MnemoLedger, user: str | Collection[str] | None = None
) -> DiffReport:
    """Compare the state of two ledgers: one user's, some users' (the explorer passes the
    users of the caller's key), or everyone's."""
    users = _users(user)
    a_memories = {m.id: m for m in _memories(a, users)}
    b_memories = {m.id: m for m in _memories(b, users)}
    report = DiffReport(a=str(a.settings.home), b=str(b.settings.home), identical=False)
    report.added = [b_memories[i] for i in sorted(b_memories.keys() - a_memories.keys())]
    report.removed = [a_memories[i] for i in sorted(a_memories.keys() - b_memories.keys())]
    for memory_id in sorted(a_memories.keys() & b_memories.keys()):
        old = a_memories[memory_id].model_dump(mode="json", by_alias=True)
        new = b_memories[memory_id].model_dump(mode="json", by_alias=True)
        fields = {k: [old.get(k), new.get(k)] for k in old.keys() | new.keys()}
        fields = {k: v for k, v in sorted(fields.items()) if v[0] != v[1]}
        if fields:
            report.changed.append(MemoryChange(id=memory_id, user_id=old["user_id"], fields=fields))
    present = {m.user_id for m in [*a_memories.values(), *b_memories.values()]}
    for name in sorted(users if users is not None else present):
        before, after = a.core(user=name).markdown, b.core(user=name).markdown
        if before != after:
            report.core[name] = "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"a/{name}/core.md",
                    f"b/{name}/core.md",
                )
            )
    a_decisions, a_usage = _log_facts(a, users)
    b_decisions, b_usage = _log_facts(b, users)
    for key in sorted(a_decisions.keys() | b_decisions.keys()):
        was, now = a_decisions.get(key), b_decisions.get(key)
        if was != now:
            kind, memory_id, occurrence = key
            report.decisions_flipped.append(
                DecisionFlip(type=kind, memory_id=memory_id, occurrence=occurrence, a=was, b=now)
            )
    report.llm = {"a": a_usage, "b": b_usage}
    report.identical = not (
        report.added
        or report.removed
        or report.changed
        or report.core
        or report.decisions_flipped
        or a_usage != b_usage
    )
    return report


def _users(user: str | Collection[str] | None) -> frozenset[str] | None:
    if user is None:
        return None
    return frozenset([user] if isinstance(user, str) else user)


def _memories(memory: MnemoLedger, users: frozenset[str] | None) -> list[MemoryOut]:
    if users is not None and len(users) == 1:
        return memory.list(user=next(iter(users)))
    return [m for m in memory.list() if users is None or m.user_id in users]


def _log_facts(
    memory: MnemoLedger, users: frozenset[str] | None
) -> tuple[dict[tuple[str, str, int], str | None], LLMUsage]:
    """The decisions (`*Decided` events by type, memory, occurrence) and LLM usage."""
    decisions: dict[tuple[str, str, int], str | None] = {}
    seen: Counter[tuple[str, str]] = Counter()
    usage = LLMUsage()
    stages: dict[str, dict[str, int]] = defaultdict(
        lambda: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    )
    after = 0
    while page := memory.ledger.read(after, READ_PAGE):
        for record in page:
            if users is not None and record.user_id not in users:
                continue
            if record.type.endswith("Decided"):
                seen[(record.type, record.stream_id)] += 1
                key = (record.type, record.stream_id, seen[(record.type, record.stream_id)])
                decision = record.data.get("decision")
                decisions[key] = None if decision is None else str(decision)
            elif record.type == "LLMCallRecorded":
                prompt = int(record.data.get("prompt_tokens") or 0)
                completion = int(record.data.get("completion_tokens") or 0)
                stage = stages[str(record.data.get("stage", "?"))]
                stage["calls"] += 1
                stage["prompt_tokens"] += prompt
                stage["completion_tokens"] += completion
                usage.calls += 1
                usage.prompt_tokens += prompt
                usage.completion_tokens += completion
        after = page[-1].position or after
    usage.by_stage = dict(sorted(stages.items()))
    return decisions, usage
