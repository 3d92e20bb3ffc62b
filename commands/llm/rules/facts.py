"""The offline fact-extract stage: the triples the offline extraction (`extract`) finds in a
memory about its user, one per attribute it reads (lives_in Lisbon, works_at Stripe,
speaks Portuguese, ...)."""

from __future__ import annotations

from typing import Final

from mnemoledger.commands.llm.fact_prompts import (
    MAX_TRIPLES,
    FactExtractInput,
    FactExtractOutput,
    FactTriple,
)
from mnemoledger.commands.llm.rules.extract import extract
from mnemoledger.commands.llm.schemas import ConversationTurn, ExtractInput

PREDICATE_BY_ATTRIBUTE: Final = {
    "location": "lives_in",
    "hometown": "comes_from",
    "employer": "works_at",
    "occupation": "works_as",
    "name": "named",
    "diet": "diet",
    "language": "speaks",
    "allergy": "allergic_to",
    "tool": "uses",
    "schedule": "has_schedule",
    "deadline": "has_deadline",
}
"""The predicate of each attribute of the user the extraction reads (`user/<attribute>`)."""


def fact_extract(inputs: FactExtractInput) -> FactExtractOutput:
    found = extract(
        ExtractInput(conversation=[ConversationTurn(role="user", content=inputs.content)])
    )
    triples: list[FactTriple] = []
    for fact in found.preferences:
        parts = fact.key.split("/")
        if len(parts) < 2 or parts[0] != "user":
            continue
        predicate = PREDICATE_BY_ATTRIBUTE.get(parts[1])
        value = fact.value.strip()
        if predicate is None or not value or len(value) > 200:
            continue
        triple = FactTriple(subject=inputs.subject, predicate=predicate, object=value)
        if triple not in triples:
            triples.append(triple)
    return FactExtractOutput(facts=triples[:MAX_TRIPLES])
