"""Offline `remember` (the add's one call), composed of the offline rules of the stages it
folds together: each content cut by the `split` rule, its pieces read by the judge's
fine-tuned models (worth keeping, an instruction to the model), a piece that says the same
as a close related memory (words in common and the judge reads "restates", as the quick
dedup decides) restated, and the rest rebuilt by the `reconstruct` rule."""

from __future__ import annotations

from mnemoledger.commands.judge import Turn, default_judge
from mnemoledger.commands.judge.decisions import says_the_same
from mnemoledger.commands.llm.rules.reconstruct import rebuild
from mnemoledger.commands.llm.rules.split import split
from mnemoledger.commands.llm.schemas import (
    ContentReading,
    ReconstructedMemory,
    RelatedMemory,
    RememberInput,
    RememberOutput,
    Restatement,
    SplitInput,
    new_source,
)
from mnemoledger.commands.write.similarity import jaccard
from mnemoledger.ledger.policy import (
    DEDUP_JACCARD_PREFILTER,
    INJECTION_CUT,
    INSERT_DEDUP_SIM,
    WORTH_KEEPING_CUT,
)


def remember(inputs: RememberInput) -> RememberOutput:
    from mnemoledger.commands.write.sanitize import passages  # write imports llm

    judge = default_judge()
    contents = inputs.new_contents
    pieces = [_pieces(c.text, inputs.split) for c in contents]
    owners = [i for i, cut in enumerate(pieces) for _ in cut]
    flat = [p for cut in pieces for p in cut]
    keep = judge.worth_keeping(
        [Turn(p, contents[i].role) for p, i in zip(flat, owners, strict=True)]
    )
    read = [(p, i) for i, c in enumerate(contents) for p in passages(c.text)]
    said = judge.instructions([Turn(p, contents[i].role) for p, i in read]) if read else []
    instruction = {i for (_, i), s in zip(read, said, strict=True) if s >= INJECTION_CUT}
    kept = [
        (p, i)
        for p, i, k in zip(flat, owners, keep, strict=True)
        if k >= WORTH_KEEPING_CUT and i not in instruction
    ]
    readings = [
        ContentReading(
            new_content=i, keep=any(o == i for _, o in kept), instruction=i in instruction
        )
        for i in range(len(contents))
    ]
    restates: list[Restatement] = []
    written: list[tuple[str, int]] = []
    for piece, owner in kept:
        repeated = _restated(piece, inputs.related)
        if repeated is None:
            written.append((piece, owner))
        else:
            restates.append(Restatement(new_content=owner, memory=repeated))
    rebuilt = rebuild(inputs.related, [p for p, _ in written])
    memories = [
        ReconstructedMemory(content=m.content, sources=_owned(m.sources, written))
        for m in rebuilt.memories
    ]
    return RememberOutput(readings=readings, memories=memories, restates=restates)


def _pieces(text: str, cut: bool) -> list[str]:
    """The split rule's pieces of `text` (the whole text when it finds none, or when
    splitting is not allowed), each once."""
    if not cut:
        return [text]
    return list(dict.fromkeys(split(SplitInput(raw_input=text)).contents)) or [text]


def _restated(piece: str, related: list[RelatedMemory]) -> str | None:
    """The closest related memory that `piece` only repeats, if any."""
    for memory in related:
        if (
            memory.similarity >= INSERT_DEDUP_SIM
            and jaccard(memory.content, piece) > DEDUP_JACCARD_PREFILTER
            and says_the_same(memory.content, piece, default_judge())
        ):
            return memory.id
    return None


def _owned(sources: list[str], written: list[tuple[str, int]]) -> list[str]:
    """`sources` with each `new:<piece>` named by the content the piece came from."""
    named: list[str] = []
    for source in sources:
        index = source.removeprefix("new:")
        if source.startswith("new:") and index.isdigit():
            source = new_source(written[int(index)][1])
        if source not in named:
            named.append(source)
    return named
