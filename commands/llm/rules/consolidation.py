"""Offline rules of the consolidation stages (seed 001 §7: with the LLM off, "triage/gate
use pure heuristics"; merge, reconcile, distill and naming keep every detail they are given).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

from mnemoledger.commands.judge import Turn, default_judge
from mnemoledger.commands.judge.decisions import replaces, says_the_same
from mnemoledger.commands.judge.kinds import LASTING
from mnemoledger.commands.llm.consolidation_schemas import (
    AuditInput,
    AuditOutput,
    DistillInput,
    DistillOutput,
    GateInput,
    GateOutput,
    GateVerdict,
    Insight,
    InsightInput,
    InsightOutput,
    MergeContentOutput,
    NameTopicsInput,
    NameTopicsOutput,
    PairInput,
    ReconcileOutput,
    SameFactInput,
    SameFactOutput,
    SameFactVerdict,
    TopicName,
    TriageInput,
    TriageOutput,
    TriageVerdict,
)
from mnemoledger.commands.llm.rules.stopwords import stop_words
from mnemoledger.commands.llm.rules.text import (
    comparison_key,
    overlap,
    sentences,
    single_line,
    words,
)
from mnemoledger.commands.write.attribution import speaker_and_body
from mnemoledger.ledger.policy import (
    DISTILL_MAX_CHARS,
    INSIGHT_MAX_CHARS,
    INSIGHT_MAX_COUNT,
    PROMOTE_MIN_IMPORTANCE,
    WORTH_KEEPING_CUT,
)

_I = re.IGNORECASE
GATE_CATEGORY: Final[dict[str, str]] = {
    "lesson": "LESSON",
    "decision": "DECISION RATIONALE",
    "rule": "CONSTRAINT",
    "profile": "IDENTITY",
    "health": "IDENTITY",
    "preference": "IDENTITY",
    "agent": "IDENTITY",
}
"""The gate's whitelist (seed 001 §2.5) by what kind of memory the judge reads: a lesson, a
decision and its rationale, a constraint, who the user (or the agent) is."""
ABSORB_OVERLAP: Final = 0.5
"""Word overlap from which the offline reconcile folds two memories into one."""
_USER_WORDS: Final = frozenset({"user", "user's"})
"""How a memory names its owner: no topic of its own."""


def _function_word(word: str) -> bool:
    return word in stop_words() or word in _USER_WORDS


def triage(inputs: TriageInput) -> TriageOutput:
    """Promote what states something lasting (a fact about the user or someone, a taste, a
    rule, lesson, decision or procedure), an event worth keeping as history, or what matters
    (importance >= 0.6); keep what holds only for the moment and what says nothing, as the
    judge reads them (a Buffer memory that is kept decays and is evicted, seed 001 §2.4, so
    a fact left here would be lost within days of cycles)."""
    judge = default_judge()
    texts = [memory.content for memory in inputs.memories]
    kinds = judge.kinds(texts)
    worth = judge.worth_keeping([Turn(speaker_and_body(text)[1]) for text in texts])
    decisions = []
    for memory, kind, keep in zip(inputs.memories, kinds, worth, strict=True):
        durable = kind in LASTING or keep >= WORTH_KEEPING_CUT
        promote = (durable or memory.importance >= PROMOTE_MIN_IMPORTANCE) and kind != "passing"
        decisions.append(
            TriageVerdict(
                id=memory.id,
                decision="promote" if promote else "keep",
                kind="procedural" if promote and kind == "procedure" else None,
                reason=f"durable content ({kind})" if promote else f"{kind}: kept to decay",
            )
        )
    return TriageOutput(decisions=decisions)


def gate(inputs: GateInput) -> GateOutput:
    """The whitelist (`GATE_CATEGORY`): LESSON, DECISION RATIONALE, CONSTRAINT, IDENTITY."""
    kinds = default_judge().kinds([memory.content for memory in inputs.candidates])
    decisions = []
    for memory, kind in zip(inputs.candidates, kinds, strict=True):
        category = GATE_CATEGORY.get(kind)
        decisions.append(
            GateVerdict(
                id=memory.id,
                decision="approve" if category else "reject",
                category=category,  # type: ignore[arg-type]
                reason=f"whitelisted: {category}"
                if category
                else f"outside the whitelist ({kind})",
            )
        )
    return GateOutput(decisions=decisions)


def merge(inputs: PairInput) -> MergeContentOutput:
    return MergeContentOutput(
        content=union_of_sentences([inputs.older.content, inputs.newer.content])
    )


def reconcile(inputs: PairInput) -> ReconcileOutput:
    """A newer value of what the older states -> update (the newer wins); the same fact said
    again with large word overlap -> absorb (every sentence of both); else keep both, so
    distinct facts are never folded together."""
    older, newer = inputs.older.content, inputs.newer.content
    if replaces(older, newer):
        return ReconcileOutput(decision="update", merged_content=single_line(newer))
    if overlap(older, newer) >= ABSORB_OVERLAP and says_the_same(older, newer):
        return ReconcileOutput(decision="absorb", merged_content=union_of_sentences([older, newer]))
    return ReconcileOutput(decision="keep_both")


def distill(inputs: DistillInput) -> DistillOutput:
    """The newest notes first, sentence by sentence, until 250 characters."""
    summary = ""
    for note in reversed(inputs.notes):
        for sentence in sentences(note):
            piece = single_line(sentence).rstrip(" .;") + "."
            candidate = f"{summary} {piece}".strip()
            if len(candidate) > DISTILL_MAX_CHARS:
                return DistillOutput(summary=summary or candidate[:DISTILL_MAX_CHARS])
            summary = candidate
    return DistillOutput(summary=summary)


def audit(inputs: AuditInput) -> AuditOutput:
    """Offline, the audit proposes nothing: decay and the cycle's rules do the cleanup."""
    return AuditOutput(operations=[])


def name_topics(inputs: NameTopicsInput) -> NameTopicsOutput:
    """The topic's most frequent content words (3), made distinct from existing names."""
    taken = {name.casefold() for name in inputs.existing_names}
    names = []
    for topic in inputs.topics:
        counts = Counter(
            w for text in topic.samples for w in words(text) if not _function_word(w) and len(w) > 2
        )
        ranked = [w for w, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
        name = " ".join(ranked[:3]).capitalize() or topic.topic_id
        if name.casefold() in taken:
            name = f"{name} ({topic.topic_id})"
        taken.add(name.casefold())
        names.append(TopicName(topic_id=topic.topic_id, name=name))
    return NameTopicsOutput(names=names)


def union_of_sentences(texts: list[str]) -> str:
    """Every sentence of every text, in order, each once (nothing is lost)."""
    seen: set[str] = set()
    kept: list[str] = []
    for text in texts:
        for sentence in sentences(text):
            key = comparison_key(sentence)
            if key and key not in seen:
                seen.add(key)
                kept.append(single_line(sentence).rstrip(" .;"))
    return ". ".join(kept) + "." if kept else ""


SAME_FACT_OVERLAP: Final = 0.6
"""Word overlap from which the offline rule calls two memories the same fact."""


def same_fact(inputs: SameFactInput) -> SameFactOutput:
    """A newer value of what the older states (the newer wins), or the same fact said again
    with large word overlap (every sentence of both kept)."""
    verdicts = []
    for pair in inputs.pairs:
        if replaces(pair.older, pair.newer):
            verdicts.append(
                SameFactVerdict(pair_id=pair.pair_id, same_fact=True, merged_content=pair.newer)
            )
        elif overlap(pair.older, pair.newer) >= SAME_FACT_OVERLAP and says_the_same(
            pair.older, pair.newer
        ):
            merged = union_of_sentences([pair.older, pair.newer])
            verdicts.append(
                SameFactVerdict(pair_id=pair.pair_id, same_fact=True, merged_content=merged)
            )
        else:
            verdicts.append(SameFactVerdict(pair_id=pair.pair_id, same_fact=False))
    return SameFactOutput(verdicts=verdicts)


# --- seed 003 §3, theory-of-mind insights offline: only dynamics the items state ----------

_NEGATED: Final = re.compile(
    r"\b(not|never|no longer|isn't|wasn't|aren't|weren't)\s+(\w+\s+)?$", _I
)
"""Words just before a cue that deny it ("not worried", "wasn't really upset")."""
EMOTIONS: Final = (
    (re.compile(r"\bfrustrat\w*", _I), "frustration"),
    (re.compile(r"\b(annoyed|annoying|annoyance|irritated)\b", _I), "annoyance"),
    (re.compile(r"\b(angry|anger|furious|mad at)\b", _I), "anger"),
    (re.compile(r"\b(stressed|stressful|stress)\b", _I), "stress"),
    (re.compile(r"\b(anxious|anxiety|nervous)\b", _I), "anxiety"),
    (re.compile(r"\b(worried|worries|worry|worrying)\b", _I), "worry"),
    (re.compile(r"\boverwhelm\w*", _I), "feeling overwhelmed"),
    (re.compile(r"\bdisappoint\w*", _I), "disappointment"),
    (re.compile(r"\b(upset|sad|unhappy|heartbroken)\b", _I), "sadness"),
    (re.compile(r"\b(exhausted|burned out|burnt out|drained)\b", _I), "exhaustion"),
    (re.compile(r"\b(excited|exciting|thrilled|can't wait)\b", _I), "excitement"),
    (re.compile(r"\b(relieved|relief)\b", _I), "relief"),
    (re.compile(r"\b(proud|pride)\b", _I), "pride"),
    (re.compile(r"\b(grateful|thankful|gratitude)\b", _I), "gratitude"),
    (re.compile(r"\b(happy|glad|delighted|thrilled)\b", _I), "happiness"),
)
"""Stated feelings and the name an insight gives them (seed 003 §3: "emotions")."""
TRUSTS: Final = re.compile(
    r"\b(thank(s|ed)? (the )?(assistant|bot|ai)|thanks for (the|your) help|trusts? (the )?"
    r"(assistant|bot|ai|your|its)|relies on (the )?(assistant|bot|ai)|(the )?(assistant|ai|bot)"
    r"('s)? (advice|suggestion|answer)s? (worked|helped|was right)|you were right"
    r"|admit(s|ted)? (a|the|my|his|her|their) mistakes?)\b",
    _I,
)
"""The user relying on the assistant or being open with it (seed 003 §3: "trust")."""
DISTRUSTS: Final = re.compile(
    r"\b(double[- ]check(s|ed|ing)?|(does ?n't|did ?n't|do not|does not) trust|second[- ]guess\w*"
    r"|corrected (the )?(assistant|bot|ai)|(the )?(assistant|ai|bot)('s)? (answer|advice)s? "
    r"(was|were) wrong|verif(y|ies|ied) (the |every )?(answer|output|suggestion)s?)\b",
    _I,
)
"""The user checking or doubting the assistant's answers."""
EVOLVES: Final = re.compile(
    r"\b((?<!got )(?<!get )(?<!getting )(?<!is )(?<!am )(?<!are )(?<!was )(?<!were )used to"
    r"|no longer|any ?more|switched (from|to)|changed (my|his|her|their) mind|now prefers?"
    r"|(prefers?|likes?|loves?) \w+(?: \w+)? (now|these days)|stopped \w+ing|gave up \w+)\b",
    _I,
)
"""A preference or habit that changed (seed 003 §3: "how preferences evolve")."""
_EXCERPT_CHARS: Final = 160
"""How much of the item an insight quotes as its evidence."""


def insight(inputs: InsightInput) -> InsightOutput:
    """At most 3 insights, each only when an item states it: a feeling the user expressed,
    the user trusting or doubting the assistant, a preference that changed, and a topic the
    user keeps coming back to (a content word in at least three recent items). Items that
    state none of these give no insight."""
    items = _insight_items(inputs)
    found = [
        *_emotion_insights(items),
        *_cue_insight(items, TRUSTS, "User shows trust in the assistant", "trust"),
        *_cue_insight(items, DISTRUSTS, "User checks the assistant's answers", "trust"),
        *_cue_insight(items, EVOLVES, "User's preferences are changing", "preference-change"),
        *_recurring_insight(items),
    ]
    return InsightOutput(insights=found[:INSIGHT_MAX_COUNT])


def _insight_items(inputs: InsightInput) -> list[str]:
    """Activity, new facts and the conversation's pieces, each once, in that order."""
    seen: dict[str, str] = {}
    pieces = [*inputs.activity, *inputs.new_facts, *inputs.snippet.split(" / ")]
    for text in map(single_line, pieces):
        for sentence in sentences(text):
            seen.setdefault(comparison_key(sentence), sentence)
    return [s for s in seen.values() if s]


def _stated(cue: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of `cue` in `text` that no negation just before denies."""
    for match in cue.finditer(text):
        if not _NEGATED.search(text[: match.start()]):
            return match
    return None


_SECOND_PERSON: Final = (
    (re.compile(r"\byour\b", _I), "the assistant's"),
    (re.compile(r"\byours\b", _I), "the assistant's"),
    (re.compile(r"\byou\b", _I), "the assistant"),
)
"""A quoted item speaks to the assistant as "you": an insight names it instead (seed 003 §3:
no pronouns referring to the AI)."""


def _summary(lead: str, evidence: str) -> str:
    for pronoun, name in _SECOND_PERSON:
        evidence = pronoun.sub(name, evidence)
    quoted = evidence if len(evidence) <= _EXCERPT_CHARS else evidence[: _EXCERPT_CHARS - 3] + "..."
    return f'{lead}: "{quoted.rstrip(" .")}".'[:INSIGHT_MAX_CHARS]


def _emotion_insights(items: list[str]) -> list[Insight]:
    """One insight: the feelings stated, named in the order they come, with the first item."""
    named: list[str] = []
    first: str | None = None
    for text in items:
        for cue, name in EMOTIONS:
            if _stated(cue, text) and name not in named:
                named.append(name)
                first = first or text
    if first is None:
        return []
    feelings = " and ".join(named[:2]) if len(named) <= 2 else f"{', '.join(named[:2])} and more"
    return [Insight(summary=_summary(f"User expresses {feelings}", first), tags=["emotion"])]


def _cue_insight(items: list[str], cue: re.Pattern[str], lead: str, tag: str) -> list[Insight]:
    for text in items:
        if _stated(cue, text):
            return [Insight(summary=_summary(lead, text), tags=[tag])]
    return []


def _recurring_insight(items: list[str]) -> list[Insight]:
    """The user keeps coming back to a content word (three items or more)."""
    counts = Counter(
        w for text in items for w in set(words(text)) if not _function_word(w) and len(w) > 3
    )
    # who the items are about (the word most of them begin with: "Maya ...") is no topic
    subjects = Counter(words(text)[0] for text in items if words(text))
    recurring = sorted(
        (w for w, n in counts.items() if n >= 3 and subjects[w] * 2 < n),
        key=lambda w: (-counts[w], w),
    )
    if not recurring:
        return []
    topic = recurring[0]
    summary = f"User keeps returning to {topic}: it came up in {counts[topic]} recent items."
    return [Insight(summary=summary[:INSIGHT_MAX_CHARS], tags=["recurring", topic[:32]])]
