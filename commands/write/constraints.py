"""Writing constraints on memory texts (seed 003 §9) and procedural steps (§12).

The prompts ask for them (`commands.llm.prompts.SEMANTIC_STYLE` / `EPISODIC_STYLE`); these
checks verify what came back:

- every kind: not empty after normalization;
- semantic and episodic: at most `MAX_WRITTEN_MEMORY_CHARS` (280) characters and
  `MAX_WRITTEN_MEMORY_SENTENCES` (2) sentences;
- semantic: third person. The seed's guard says "no pronouns", but the prompt's intent
  (`SEMANTIC_STYLE`: "no pronouns that need outside context") is a self-contained
  third-person statement, and "Maya moved to Lisbon; she works remotely" is one. So only
  first- and second-person pronouns (I, me, my, we, us, our, you, your, ...) are flagged,
  as whole words, case-insensitively; "US" in capitals is taken for the country;
- procedural: 1-N numbered steps (`1. ...`, `2. ...`), numbered from 1 without gaps, no
  other lines, and no step starting with a pronoun (a light imperative-mood heuristic).

The episodic guard's "past tense" and "exclude stable facts" are left to the prompt: no
heuristic for them is reliable enough to reject a write.

`enforce` normalizes (trims, collapses runs of spaces) and raises `InvalidInput` naming
every violation; `pass_rate` is the acceptance metric (>= 95% pass on first pass).

What an LLM stage writes (extraction, reconstruction, merges, distillations, insights) goes
through `conform` before it becomes a memory: the seed's validator ("reject/trim outputs
violating length or empty after normalization") on the format rules — not empty, at most
280 characters, at most 2 sentences. A text that passes is kept (normalized); one that is
empty is refused; one of more sentences is repaired (the sentences past the second joined
onto it with semicolons, nothing dropped), one still too long is trimmed at a word boundary
within 280 characters — or either is refused where its stage has a better fallback (the
caller decides). Each result says what
was done, for the stage's record. Third person is checked by `check` but never refuses a
write: the offline rules keep the user's own first-person words on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mnemoledger.commands.write.procedural import parse_steps
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    EPISODIC,
    KINDS,
    MAX_WRITTEN_MEMORY_CHARS,
    MAX_WRITTEN_MEMORY_SENTENCES,
    PROCEDURAL,
    SEMANTIC,
    WRITING_FIRST_PASS_TARGET,
)
from mnemoledger.ledger.validation import normalize_text

FIRST_PERSON_PRONOUNS = ("i", "me", "my", "mine", "myself", "we", "us", "our", "ours")
SECOND_PERSON_PRONOUNS = ("you", "your", "yours", "yourself", "yourselves")
_PERSONAL = (*FIRST_PERSON_PRONOUNS, "ourselves", *SECOND_PERSON_PRONOUNS)
_PRONOUN = re.compile(r"\b(" + "|".join(_PERSONAL) + r")\b", re.IGNORECASE)
_NOT_PRONOUNS = frozenset({"US"})
"""Tokens that match a pronoun case-insensitively but are not one as written."""

_STEP_SUBJECTS = frozenset((*_PERSONAL, "he", "she", "they", "it"))
"""A step that opens with one of these is a statement, not an instruction."""

_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*\s+(?=\S)")
_ABBREVIATIONS = frozenset(
    ("mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "e.g", "i.e", "cf")
)
"""Words whose trailing period does not end a sentence."""


def normalize(text: str, kind: str = SEMANTIC) -> str:
    """NFC, no control characters, trimmed; runs of spaces collapsed. Semantic and
    episodic texts become one line; procedural texts keep one line per step."""
    text = normalize_text(text)
    if kind == PROCEDURAL:
        lines = (re.sub(r"[ \t]+", " ", line).rstrip() for line in text.splitlines())
        return "\n".join(line for line in lines if line.strip())
    return " ".join(text.split())


def count_sentences(text: str) -> int:
    """Sentences in `text` (see `sentences_of`): a period after a known abbreviation or a
    single-letter initial ends nothing."""
    return len(sentences_of(text))


def personal_pronouns(text: str) -> list[str]:
    """The first- and second-person pronouns `text` uses, each once, as written."""
    found: list[str] = []
    for match in _PRONOUN.finditer(text):
        word = match.group()
        if word not in _NOT_PRONOUNS and word not in found:
            found.append(word)
    return found


def check_semantic(text: str) -> list[str]:
    """Violations of the semantic guard: empty, too long, too many sentences, not third
    person."""
    normalized = normalize(text, SEMANTIC)
    violations = _common(normalized)
    if pronouns := personal_pronouns(normalized):
        violations.append(
            f"not third person: uses {', '.join(repr(p) for p in pronouns)} "
            "(write about the user by name, e.g. 'Maya lives in Paris')"
        )
    return violations


def check_episodic(text: str) -> list[str]:
    """Violations of the episodic guard: empty, too long, too many sentences."""
    return _common(normalize(text, EPISODIC))


def check_procedural(text: str) -> list[str]:
    """Violations of the procedural form: 1-N numbered steps, one per line, from 1."""
    normalized = normalize(text, PROCEDURAL)
    if not normalized:
        return ["empty after normalization"]
    parsed = parse_steps(normalized)
    violations: list[str] = []
    if not parsed.steps:
        violations.append("no numbered steps: write '1. ...', '2. ...', one step per line")
    expected = list(range(1, len(parsed.numbers) + 1))
    if parsed.steps and parsed.numbers != expected:
        violations.append(
            f"steps are numbered {', '.join(map(str, parsed.numbers))}; "
            f"expected {', '.join(map(str, expected))}"
        )
    for line in parsed.stray:
        violations.append(f"line {line[:40]!r} is not a numbered step")
    for number, step in zip(parsed.numbers, parsed.steps, strict=True):
        first = step.split()[0].strip(",;:").lower()
        if first in _STEP_SUBJECTS:
            violations.append(
                f"step {number} is not an instruction (starts with {step.split()[0]!r}); "
                "use the imperative mood"
            )
    return violations


CHECKS: dict[str, Callable[[str], list[str]]] = {
    SEMANTIC: check_semantic,
    EPISODIC: check_episodic,
    PROCEDURAL: check_procedural,
}
"""The check of each memory kind."""


def check(text: str, kind: str) -> list[str]:
    """The violations of `text` as a memory of `kind` (empty when it passes)."""
    if kind not in CHECKS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return CHECKS[kind](text)


def enforce(text: str, kind: str) -> str:
    """`text` normalized, if it meets the constraints of `kind`; else `InvalidInput`
    naming every violation."""
    violations = check(text, kind)
    if violations:
        raise InvalidInput(
            f"{kind} memory breaks the writing constraints (seed 003 §9): " + "; ".join(violations)
        )
    return normalize(text, kind)


def pass_rate(texts: Sequence[str], kind: str) -> float:
    """The share of `texts` that pass the checks of `kind` as written (the first pass).
    An empty batch has nothing failing: 1.0."""
    if not texts:
        return 1.0
    return sum(1 for text in texts if not check(text, kind)) / len(texts)


def meets_first_pass_target(texts: Sequence[str], kind: str) -> bool:
    """Seed 003 §9 acceptance: at least 95% of new items pass on first pass."""
    return pass_rate(texts, kind) >= WRITING_FIRST_PASS_TARGET


KEPT = "kept"
REPAIRED = "repaired"
"""Sentences past the second joined onto it: all that was said, in the format."""
TRIMMED = "trimmed"
"""Cut at a word boundary to fit the length: the end is lost."""
REFUSED = "refused"


@dataclass(frozen=True)
class Conformed:
    """What the writing constraints made of one text a stage wrote."""

    stage: str
    text: str | None
    """The text to store (normalized, maybe trimmed); None when refused."""
    violations: tuple[str, ...]
    """What the text as written broke (empty: it passed on first pass)."""
    action: str
    """kept, repaired, trimmed or refused."""

    @property
    def passed(self) -> bool:
        return not self.violations

    def as_record(self) -> dict[str, object]:
        """The stage's record of a text that did not pass (for the command's outcome)."""
        return {"stage": self.stage, "violations": list(self.violations), "action": self.action}


def format_violations(text: str, kind: str = SEMANTIC) -> list[str]:
    """The seed's format checks only (empty, length, sentences); procedural texts have
    their own form and are not held to them."""
    if kind == PROCEDURAL:
        return [] if normalize(text, kind) else ["empty after normalization"]
    return _common(normalize(text, kind))


def conform(text: str, kind: str, stage: str, *, trim: bool = True) -> Conformed:
    """`text` as a stage wrote it, made to meet the format checks: kept, repaired or
    trimmed (when `trim`), or refused."""
    violations = tuple(format_violations(text, kind))
    normalized = normalize(text, kind)
    if not violations:
        return Conformed(stage, normalized, (), KEPT)
    trimmed = trimmed_text(normalized) if trim and normalized else ""
    if not trimmed:
        return Conformed(stage, None, violations, REFUSED)
    whole = joined_sentences(normalized, MAX_WRITTEN_MEMORY_SENTENCES)
    return Conformed(stage, trimmed, violations, REPAIRED if trimmed == whole else TRIMMED)


def trimmed_text(text: str) -> str:
    """`text` within the format: sentences past the second joined onto it with semicolons
    (nothing said is dropped), then cut at the last word boundary within
    `MAX_WRITTEN_MEMORY_CHARS` if still longer."""
    kept = joined_sentences(text, MAX_WRITTEN_MEMORY_SENTENCES)
    if len(kept) <= MAX_WRITTEN_MEMORY_CHARS:
        return kept
    head = kept[: MAX_WRITTEN_MEMORY_CHARS + 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else head[:MAX_WRITTEN_MEMORY_CHARS]
    return cut.rstrip(" ,;:-–—")


def sentences_of(text: str) -> list[str]:
    """The sentences of `text`, as `count_sentences` reads them."""
    found: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[: match.start()].split()
        word = before[-1].strip("(\"'").lower() if before else ""
        single_period = match.group().startswith(".") and not match.group().startswith("..")
        if single_period and (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
            continue
        found.append(text[start : match.end()].strip())
        start = match.end()
    if text[start:].strip():
        found.append(text[start:].strip())
    return found


def joined_sentences(text: str, count: int) -> str:
    """`text` as at most `count` sentences: the last one takes every sentence after it,
    joined with semicolons."""
    parts = sentences_of(text)
    if len(parts) <= count:
        return text
    head, tail = parts[: count - 1], parts[count - 1 :]
    last = "; ".join(p.rstrip(".!?… ") for p in tail[:-1]) + "; " + tail[-1]
    return " ".join([*head, last])


def _common(normalized: str) -> list[str]:
    if not normalized:
        return ["empty after normalization"]
    violations: list[str] = []
    if len(normalized) > MAX_WRITTEN_MEMORY_CHARS:
        violations.append(f"{len(normalized)} characters; the limit is {MAX_WRITTEN_MEMORY_CHARS}")
    sentences = count_sentences(normalized)
    if sentences > MAX_WRITTEN_MEMORY_SENTENCES:
        violations.append(f"{sentences} sentences; the limit is {MAX_WRITTEN_MEMORY_SENTENCES}")
    return violations
