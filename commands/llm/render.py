"""User messages of the stages: inputs as boundary-tagged blocks (seed 000, "Prompt Contract").

The tags mark where each input begins and ends for the model; nothing parses them back.
Lists go in as JSON so that multi-line items keep their boundaries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from mnemoledger.commands.llm.schemas import (
    ConversationTurn,
    CoreUpdateInput,
    ExtractInput,
    MergeInput,
    MergeNotesInput,
    MultiFactInput,
    ReconstructInput,
    RefineInput,
    RememberInput,
    SplitInput,
    StyleObservation,
    SynthesizeInput,
)

# --- seed 004 §3 ("Input Limits"): what of a conversation the extraction prompt sees -----
MAX_CHARS_PER_MESSAGE: Final = 500
MAX_CONVERSATION_CHARS: Final = 15_000
SKIPPED_ROLES: Final = frozenset({"tool"})  # tool results hold no user facts

# --- seed 004 §4 (SynthesizeDirective): strongest observations first, at most 15 -------
MAX_SYNTHESIS_OBSERVATIONS: Final = 15


def block(tag: str, body: str) -> str:
    """`<tag>`, the body, `</tag>`, each on its own line."""
    return f"<{tag}>\n{body}\n</{tag}>"


def blocks(*tagged: tuple[str, str]) -> str:
    return "\n\n".join(block(tag, body) for tag, body in tagged)


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def render_split(inputs: SplitInput) -> str:
    return block("raw_input", inputs.raw_input)


def _related_and_new(inputs: ReconstructInput | RefineInput) -> list[tuple[str, str]]:
    related = [
        {"id": m.id, "content": m.content, "similarity": round(m.similarity, 4)}
        for m in inputs.related
    ]
    new = [{"index": i, "content": c} for i, c in enumerate(inputs.new_contents)]
    return [("related_memories", as_json(related)), ("new_contents", as_json(new))]


def render_reconstruct(inputs: ReconstructInput) -> str:
    return blocks(*_related_and_new(inputs))


def render_refine(inputs: RefineInput) -> str:
    problems = "\n".join(f"- {problem}" for problem in inputs.problems)
    return blocks(
        *_related_and_new(inputs),
        ("previous_output", as_json(inputs.previous.model_dump(mode="json"))),
        ("problems", problems),
    )


def render_remember(inputs: RememberInput) -> str:
    related = [
        {"id": m.id, "content": m.content, "similarity": round(m.similarity, 4)}
        for m in inputs.related
    ]
    new = [
        {"index": i, "role": c.role, "content": c.text} for i, c in enumerate(inputs.new_contents)
    ]
    split = "new contents may be split" if inputs.split else "each new content stays one memory"
    return blocks(
        ("related_memories", as_json(related)),
        ("new_contents", as_json(new)),
        ("kind", f"{inputs.kind}; {split}"),
    )


def render_core_update(inputs: CoreUpdateInput) -> str:
    return blocks(
        ("current_core_markdown", inputs.current_core_markdown.strip()),
        ("candidate_new_memories", as_json(_core_candidates(inputs))),
        ("superseded_memories", as_json(inputs.superseded_memories)),
    )


def _core_candidates(inputs: CoreUpdateInput) -> list[Any]:
    """The candidates, each with its memory id when the ids are given."""
    ids, contents = inputs.candidate_ids, inputs.candidate_new_memories
    if len(ids) != len(contents) or not ids:
        return list(contents)
    return [{"id": i, "content": c} for i, c in zip(ids, contents, strict=True)]


def render_insert_merge(inputs: MergeInput) -> str:
    return blocks(("existing_memory", inputs.existing), ("new_memory", inputs.new))


def conversation_excerpt(turns: Sequence[ConversationTurn]) -> list[ConversationTurn]:
    """The turns the extraction sees: tool turns skipped, each cut to 500 characters, and
    only the most recent ones that fit in 15,000 characters (recent turns matter most)."""
    kept: list[ConversationTurn] = []
    total = 0
    for turn in reversed(turns):
        if turn.role in SKIPPED_ROLES or not turn.content.strip():
            continue
        content = turn.content.strip()[:MAX_CHARS_PER_MESSAGE]
        if total + len(content) > MAX_CONVERSATION_CHARS:
            break
        kept.append(ConversationTurn(role=turn.role, content=content))
        total += len(content)
    return kept[::-1]


def render_extract(inputs: ExtractInput) -> str:
    lines = [f"{t.role}: {t.content}" for t in conversation_excerpt(inputs.conversation)]
    return block("conversation", "\n".join(lines))


def strongest_observations(observations: Sequence[StyleObservation]) -> list[StyleObservation]:
    """Most reinforced first (ties keep their order), at most 15."""
    ranked = sorted(observations, key=lambda o: -o.count)
    return ranked[:MAX_SYNTHESIS_OBSERVATIONS]


def render_synthesize(inputs: SynthesizeInput) -> str:
    lines = [
        f"- {o.key}: {o.value} (observed {o.count} {'time' if o.count == 1 else 'times'})"
        for o in strongest_observations(inputs.observations)
    ]
    return block("observations", "\n".join(lines))


def render_multi_fact(inputs: MultiFactInput) -> str:
    return block("turn", inputs.turn)


def render_merge_notes(inputs: MergeNotesInput) -> str:
    return block("notes", as_json(inputs.notes))
