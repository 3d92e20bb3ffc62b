"""The Buffer rules (seed 001 §2.2-§2.4, §3 steps 2, 7-11, 15-16): mechanical promotion,
capacity cap, dropping decayed memories, cosine dedup and LLM triage."""

from __future__ import annotations

import re
from itertools import groupby
from typing import Final

from mnemoledger.commands.judge.decisions import says_the_same
from mnemoledger.commands.lifecycle.consolidation.context import Cycle, candidate, winner_of
from mnemoledger.commands.lifecycle.consolidation.state import (
    MemoryState,
    by_age,
    namespaces_compatible,
)
from mnemoledger.commands.llm.consolidation_prompts import TRIAGE
from mnemoledger.commands.llm.consolidation_schemas import TriageInput
from mnemoledger.commands.llm.rules.consolidation import union_of_sentences
from mnemoledger.commands.llm.rules.stopwords import stop_words
from mnemoledger.commands.write.attribution import speaker_and_body
from mnemoledger.ledger.policy import (
    BUFFER,
    BUFFER_THRESHOLD,
    DECAY_DROP_THRESHOLD,
    DECAY_RATE_BY_KIND,
    DISTILLED_TAG,
    EPHEMERAL_TAG,
    EVICTED,
    IMPORTANCE_DECAY,
    KIND_PROMOTE_EPOCHS,
    LESSON_TAG,
    PAIR_SCAN_NEIGHBOURS,
    PROCEDURAL,
    PROVISIONAL_MAX_CONFIDENCE,
    SEMANTIC,
    TRIAGE_BATCH,
    TRIAGE_DEDUP_SIM,
    TRIAGE_MIN_AGE_SECS,
    WORKING,
)


def promote_mechanically(cycle: Cycle) -> None:
    """§2.2: reinforcement score >= 5, or a lesson / procedural after 4 epochs in Buffer
    (distilled session notes excluded)."""
    for memory in cycle.state.active(BUFFER):
        epochs_in_buffer = cycle.epoch - 1 - memory.entered_epoch
        if memory.reinforcement >= BUFFER_THRESHOLD:
            reason = f"reinforcement {memory.reinforcement:g} >= {BUFFER_THRESHOLD}"
        elif (
            (LESSON_TAG in memory.tags or memory.kind == PROCEDURAL)
            and DISTILLED_TAG not in memory.tags
            and epochs_in_buffer >= KIND_PROMOTE_EPOCHS
        ):
            reason = f"{'lesson' if LESSON_TAG in memory.tags else 'procedural'} after "
            reason += f"{epochs_in_buffer} epochs"
        else:
            continue
        promote(cycle, memory, "mechanical", "buffer-promotion", reason=reason)


def promote(
    cycle: Cycle,
    memory: MemoryState,
    via: str,
    rule: str,
    prompt: str | None = None,
    **data: object,
) -> None:
    to = WORKING if memory.layer == BUFFER else "core"
    cycle.plan.add(
        "promote", memory.id, rule, prompt, via=via, **{"from": memory.layer, "to": to}, **data
    )
    memory.layer = to
    memory.entered_epoch = cycle.epoch


def cap_buffer(cycle: Cycle) -> None:
    """§2.4: above 200 Buffer entries, the lowest-weight ones are evicted. Weight (the seed
    names no formula): importance, then reinforcement score, then age (newest kept). A
    memory triage has not judged yet is never evicted by the cap (a fast writer would lose
    facts unread); triage takes extra batches while the Buffer is over its cap instead."""
    buffer = cycle.state.active(BUFFER)
    excess = len(buffer) - cycle.buffer_cap
    if excess <= 0:
        return
    judged = [m for m in buffer if not _awaits_triage(m, cycle)]
    ranked = sorted(judged, key=lambda m: (m.importance, m.reinforcement, m.created_at, m.id))
    for memory in ranked[:excess]:
        evict(cycle, memory, "buffer-cap", f"buffer above {cycle.buffer_cap}")


def drop_decayed(cycle: Cycle) -> None:
    """§2.4 / §3 step 10: a Buffer memory whose importance falls below 0.01 with this
    epoch's decay is evicted; Working and Core are never deleted."""
    for memory in cycle.state.active(BUFFER):
        rate = DECAY_RATE_BY_KIND.get(memory.kind, DECAY_RATE_BY_KIND[SEMANTIC])
        after = memory.importance - IMPORTANCE_DECAY * rate
        if after < DECAY_DROP_THRESHOLD:
            evict(cycle, memory, "decay", f"importance {after:.4f} < {DECAY_DROP_THRESHOLD}")


def evict(cycle: Cycle, memory: MemoryState, rule: str, reason: str) -> None:
    cycle.plan.add("evict", memory.id, rule, reason=reason)
    memory.state = EVICTED


_VALUE: Final = re.compile(r"[\w.+-]+@[\w.-]+\w|\d[\d:./-]*|[A-Z][\w&.'’-]*")
"""An e-mail address, a number (a time, a date, a version) or a capitalised word."""
_PRONOUN_I: Final = re.compile(r"I(?:['’]\w+)?")
"""The one function word English always capitalises ("I", "I'm")."""


def values_of(text: str) -> set[str]:
    """The specific values a text states, as its typography shows them: numbers, e-mail
    addresses and capitalised words that do not open a sentence (names: "Ana", "Berlin"),
    lower-cased; a function word ("I'm", "The") is none."""
    _, body = speaker_and_body(text)
    found = set()
    for match in _VALUE.finditer(body):
        token = match.group(0).rstrip(".,").removesuffix("'s").removesuffix("’s")
        opens = match.start() == 0 or body[: match.start()].rstrip()[-1:] in ".!?:"
        function_word = token.lower() in stop_words() or _PRONOUN_I.fullmatch(token)
        if token[:1].isdigit() or "@" in token or not (opens or function_word):
            found.add(token.lower())
    return found


def dedup_buffer(cycle: Cycle) -> None:
    """§3 step 15: cosine >= 0.75 (reference scale) within Buffer, no LLM: the stronger
    memory absorbs a restatement of itself (its content unchanged unless the other names a
    value it lacks, then both are kept; tags, counts and evidence joined). Two statements
    whose values differ are never folded, however similar their vectors."""
    for memory in by_age(cycle.state.active(BUFFER)):
        if not memory.active:
            continue
        for other, similarity in cycle.state.neighbours(memory, PAIR_SCAN_NEIGHBOURS):
            if (
                other.layer == BUFFER
                and other.active
                and memory.active
                and similarity >= TRIAGE_DEDUP_SIM
                and namespaces_compatible(memory, other)
                and says_the_same(memory.content, other.content)
            ):
                winner, loser = winner_of(memory, other)
                content = (
                    winner.content
                    if values_of(loser.content) <= values_of(winner.content)
                    else union_of_sentences([winner.content, loser.content])
                )
                cycle.absorb(winner, [loser], content, "buffer-dedup", None, similarity)


def _awaits_triage(memory: MemoryState, cycle: Cycle) -> bool:
    return (
        memory.age_seconds(cycle.now) > TRIAGE_MIN_AGE_SECS
        and not memory.triaged
        and DISTILLED_TAG not in memory.tags
        and EPHEMERAL_TAG not in memory.tags
        and not (memory.confidence is not None and memory.confidence < PROVISIONAL_MAX_CONFIDENCE)
    )


def triage(cycle: Cycle) -> None:
    """§2.3: Buffer memories older than 10 min, not distilled/ephemeral/triaged, 20 per
    cycle (oldest first; as many more as the Buffer is over its cap), one LLM call per
    namespace and batch of 20: promote or keep (`_triaged`).
    Provisional memories (seed 004 §14: confidence < 0.65) are not triaged: they stay in
    Buffer until reinforced (or cleaned up after 30 days, §20)."""
    buffer = by_age(cycle.state.active(BUFFER))
    # one batch a cycle; more while the Buffer is over its cap (see cap_buffer)
    limit = max(TRIAGE_BATCH, len(buffer) - cycle.buffer_cap)
    eligible = [m for m in buffer if _awaits_triage(m, cycle)][:limit]
    version = cycle.prompt_of(TRIAGE)
    by_namespace = sorted(eligible, key=lambda m: (m.namespace, m.created_at, m.id))
    batches = [
        group[start : start + TRIAGE_BATCH]
        for _, members in groupby(by_namespace, key=lambda m: m.namespace)
        for group in [list(members)]
        for start in range(0, len(group), TRIAGE_BATCH)
    ]
    for members in batches:
        namespace = members[0].namespace
        batch = {m.id: m for m in members}
        output = cycle.ask(
            TRIAGE,
            TriageInput(namespace=namespace, memories=[candidate(m) for m in batch.values()]),
        )
        for verdict in output.decisions:
            memory = batch.pop(verdict.id, None)
            if memory is None:
                continue  # an id the model made up, or a repeat
            kind = verdict.kind if verdict.decision == "promote" and verdict.kind else None
            cycle.plan.add(
                "triage",
                memory.id,
                "triage",
                version,
                decision=verdict.decision,
                kind=kind,
                reason=verdict.reason[:200],
            )
            memory.triaged = True
            if kind is not None:
                memory.kind = kind
            if verdict.decision == "promote":
                promote(cycle, memory, "triage", "triage", version)
