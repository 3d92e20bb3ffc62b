"""The `remember` stage's answer read against its inputs: what makes it unusable, and the
reconstruction it amounts to once the pieces not kept and the restatements are set aside.

    remember_problems(inputs, output)   # ["readings: new content 1 has no entry", ...]
    coverage_of(output, count)          # {new content index: [memory positions]}
"""

from __future__ import annotations

from mnemoledger.commands.llm.schemas import (
    NEW_SOURCE_PREFIX,
    RememberInput,
    RememberOutput,
    new_source,
)
from mnemoledger.ledger.validation import normalize_text

WRITING_PROBLEM_PREFIX = "writing constraints: "
"""How a problem that breaks the writing constraints (seed 003 §9) begins."""


def remember_problems(inputs: RememberInput, output: RememberOutput) -> list[str]:
    """Why an answer cannot be used: a new content read twice or not at all, a source or
    restated memory the inputs do not have, a kept new content neither written nor restated,
    a rewritten memory that breaks the writing constraints."""
    from mnemoledger.commands.write.constraints import format_violations  # write imports llm

    count = len(inputs.new_contents)
    problems: list[str] = []
    read = [r.new_content for r in output.readings]
    if sorted(read) != list(range(count)):
        problems.append(
            f"readings must have exactly one entry for each new content 0-{count - 1}, "
            f"not {sorted(read)}"
        )
    related = {r.id for r in inputs.related}
    known = related | {new_source(i) for i in range(count)}
    verbatim = {c.text for c in inputs.new_contents} | {r.content for r in inputs.related}
    for index, memory in enumerate(output.memories):
        if not memory.sources:
            problems.append(f"memory {index} names no sources")
        unknown = [s for s in memory.sources if s not in known]
        if unknown:
            problems.append(f"memory {index} names unknown sources {unknown}")
        text = normalize_text(memory.content)
        if not text:
            problems.append(f"memory {index} is empty")
        elif text not in verbatim and (violations := format_violations(text, inputs.kind)):
            problems.append(f"{WRITING_PROBLEM_PREFIX}memory {index}: {'; '.join(violations)}")
    for restated in output.restates:
        if not 0 <= restated.new_content < count:
            problems.append(
                f"restates names new content {restated.new_content}, not in 0-{count - 1}"
            )
        if restated.memory not in related:
            problems.append(f"restates names {restated.memory!r}, not a related memory")
    kept = {r.new_content for r in output.readings if r.keep}
    said = set(coverage_of(output, count)) | {r.new_content for r in output.restates}
    missing = sorted(kept - said)
    if missing:
        problems.append(f"kept new contents neither written nor restated: {missing}")
    return problems


def coverage_of(output: RememberOutput, count: int) -> dict[int, list[int]]:
    """For each new content a memory names in its sources, the positions of those memories."""
    covered: dict[int, list[int]] = {}
    for position, memory in enumerate(output.memories):
        for source in memory.sources:
            index = source.removeprefix(NEW_SOURCE_PREFIX)
            if source.startswith(NEW_SOURCE_PREFIX) and index.isdigit() and int(index) < count:
                covered.setdefault(int(index), []).append(position)
    return covered
