"""The writing constraints' acceptance figure (seed 003 §9: ">= 95% of new items pass format
checks on first pass"), read back from the log.

Every LLM call is recorded with its exact request and response (`LLMCallRecorded`), so the
texts each stage wrote as memories can be checked as they first came back, before
`commands.constraints.conform` repaired or refused anything. A reconstruction that hands
back a text its prompt already held (the user's own words, a related memory) wrote
nothing: only the stage's own texts count.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from mnemoledger.commands.write.constraints import format_violations, normalize
from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.policy import WRITING_FIRST_PASS_TARGET

LLM_CALL = "LLMCallRecorded"

Texts = Callable[[dict[str, Any]], list[str]]


def _each(field: str, key: str) -> Texts:
    return lambda out: [str(item.get(key, "")) for item in out.get(field) or []]


def _one(key: str) -> Texts:
    return lambda out: [str(out[key])] if out.get(key) else []


def _extracted(out: dict[str, Any]) -> list[str]:
    groups = ("preferences", "entities", "decisions", "styles", "artifacts")
    return [str(fact.get("value", "")) for group in groups for fact in out.get(group) or []]


WRITTEN_TEXTS: dict[str, Texts] = {
    "reconstruct": _each("memories", "content"),
    "refine": _each("memories", "content"),
    "insert_merge": _one("content"),
    "extract": _extracted,
    "multi_fact": _each("facts", "content"),
    "merge": _one("content"),
    "reconcile": _one("merged_content"),
    "same_fact": _one("merged_content"),
    "distill": _one("summary"),
    "insight": _each("insights", "summary"),
}
"""Per stage, the texts of its output that become (or rewrite) memories."""


class StageAcceptance(BaseModel):
    stage: str
    texts: int
    passed: int
    failures: dict[str, int]
    """How many texts broke each check: empty, length, sentences."""

    @property
    def rate(self) -> float:
        return self.passed / self.texts if self.texts else 1.0


class Acceptance(BaseModel):
    """The share of stage-written texts that passed the format checks on first pass."""

    texts: int
    passed: int
    rate: float
    target: float = WRITING_FIRST_PASS_TARGET
    meets_target: bool
    stages: list[StageAcceptance]


def acceptance(events: Iterable[EventRecord]) -> Acceptance:
    """The acceptance figure of every recorded call of a writing stage in `events`."""
    texts: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    failures: dict[str, Counter[str]] = {}
    for record in events:
        stage = str(record.data.get("stage", ""))
        if record.type != LLM_CALL or stage not in WRITTEN_TEXTS:
            continue
        output = _parsed(str(record.data.get("response", "")))
        if output is None:
            continue
        prompt = _prompt(record.data.get("request"))
        for text in WRITTEN_TEXTS[stage](output):
            if stage in ("reconstruct", "refine") and normalize(text) in prompt:
                continue  # handed back, not written
            texts[stage] += 1
            violations = format_violations(text)
            if not violations:
                passed[stage] += 1
            for violation in violations:
                failures.setdefault(stage, Counter())[_check_of(violation)] += 1
    stages = [
        StageAcceptance(
            stage=stage,
            texts=texts[stage],
            passed=passed[stage],
            failures=dict(failures.get(stage, {})),
        )
        for stage in sorted(texts)
    ]
    total, ok = sum(texts.values()), sum(passed.values())
    rate = ok / total if total else 1.0
    return Acceptance(
        texts=total,
        passed=ok,
        rate=round(rate, 4),
        meets_target=rate >= WRITING_FIRST_PASS_TARGET,
        stages=stages,
    )


def _check_of(violation: str) -> str:
    """Which format check a violation message names: empty, length or sentences."""
    if violation.startswith("empty"):
        return "empty"
    return "sentences" if "sentences;" in violation else "length"


def _parsed(response: str) -> dict[str, Any] | None:
    text = response.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        found = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _prompt(request: object) -> str:
    if not isinstance(request, dict):
        return ""
    messages = request.get("messages") or []
    return normalize(" ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict)))
