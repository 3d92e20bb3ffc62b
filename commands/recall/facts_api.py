"""`Facts`: the fact graph of the Python API: subject-predicate-object facts
stated by a user's memories, each valid from a time until another replaces it.

    memory.state_fact("Maya", "lives_in", "Lisbon", memory=memory_id)
    memory.state_fact("Maya", "lives_in", "Porto", memory=other_id)   # ends the Lisbon fact
    memory.facts(user="maya", entity="Porto", hops=2)                 # and what Porto leads to
    memory.facts(user="maya", at="2026-05-01T00:00:00+00:00")         # what held then

A fact belongs to the memory that states it (its events are the memory's, so history,
export and erasure cover it). The seed's engram leaves extraction of facts out of
consolidation ("low quality") and keeps the API; so does this: `extract_facts(memory_id)`
runs the recorded `fact_extract` stage over one memory and states what it finds.
"""

from __future__ import annotations

import builtins
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Final

from pydantic import BaseModel

from mnemoledger.commands.llm.fact_prompts import FACT_EXTRACT, FactExtractInput
from mnemoledger.commands.parts import Parts
from mnemoledger.commands.recall.search import telling_tokens
from mnemoledger.commands.write.recorded_llm import RecordedLLM
from mnemoledger.commands.write.replaying import recorded_id
from mnemoledger.ledger import InvalidInput, Memory, MemoryNotFound, validation
from mnemoledger.ledger.application import retry_on_conflict
from mnemoledger.ledger.command import Command
from mnemoledger.ledger.policy import ACTIVE
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.facts import FactRow, FactsProjection, entity_key

MAX_FACT_PART_CHARS = 200
"""A subject, predicate or object is a name, not a paragraph."""
DEFAULT_FACT_HOPS = 1
MAX_FACT_HOPS = 2  # seed 001 §4.1: "Multi-hop traversal (up to 2 hops)"
DEFAULT_FACTS_LIMIT = 50
FACT_CHANNEL_WORDS = 8
"""Words of a query looked up as entities by the search's fact channel, at most."""
FACT_CHANNEL_LIMIT = 20
"""Facts each word brings into a search, at most."""


def fact_linked_memories(model: FactsProjection, user_id: str, query: str, at: str) -> list[str]:
    """Seed 001 §4.1, the fact graph channel of a search: the memories stating a fact that
    holds at `at` and names one of the query's words as its subject or object, or is up to
    2 hops from one (`FactsProjection.about`), in the order found."""
    found: list[str] = []
    for word in telling_tokens(query)[:FACT_CHANNEL_WORDS]:
        rows = model.about(user_id, word, at=at, hops=MAX_FACT_HOPS, limit=FACT_CHANNEL_LIMIT)
        found.extend(row.memory_id for row in rows)
    return list(dict.fromkeys(found))


SINGLE_VALUED_PREDICATES: Final = frozenset(
    {"lives_in", "works_at", "works_as", "named", "diet", "comes_from"}
)
"""Predicates that hold one object at a time: an extracted fact ends the subject's earlier
one. Any other predicate (speaks, uses, likes, ...) keeps the others."""


@dataclass
class FactExtractCommand(Command, created_event_name="FactExtractRequested"):
    """One run of the fact-extract stage over a memory: its LLM call and what it stated."""


class FactNotFound(MemoryNotFound):
    """No fact with this id (HTTP 404)."""

    def __str__(self) -> str:
        return f"no fact {self.args[0]}"


class FactOut(BaseModel):
    """One fact: who or what (`subject`), how (`predicate`), to whom or what (`object`)."""

    id: str
    user_id: str
    memory_id: str
    """The memory that states it."""
    subject: str
    predicate: str
    object: str
    valid_from: str
    valid_until: str | None = None
    """When it stopped holding (None: it holds)."""
    superseded_by: str | None = None
    """The fact that replaced it."""
    hop: int = 0
    """In an entity query: 1 about the entity itself, 2 one step further."""


class FactExtraction(BaseModel):
    """What a fact extraction stated (facts already holding are returned as they are)."""

    command_id: str
    facts: list[FactOut]


class Facts:
    """State, end and query facts."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def state_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        memory: str,
        valid_from: str | None = None,
        keep_others: bool = False,
        agent: str | None = None,
        thread: str | None = None,
    ) -> FactOut:
        """`MnemoLedger.state_fact`: record a fact a memory states (documented there)."""
        subject, object = _part("subject", subject), _part("object", object)
        predicate = _predicate(predicate)
        since = _moment("valid_from", valid_from) or self.parts.clock().isoformat()
        parts = self.parts
        provenance = parts.provenance("", agent, thread)

        def attempt() -> FactOut:
            parts.refresh()  # a retry after a concurrent write sees what it wrote
            stating = parts.ledger.memory(memory)
            if stating.state != ACTIVE:
                raise InvalidInput(f"memory {stating.id.hex} is {stating.state}, not active")
            holding = parts.facts_model.holding(stating.user_id, subject, predicate, since)
            same = [f for f in holding if entity_key(f.object) == entity_key(object)]
            if same:
                return _fact_out(same[0])
            fact_id = uuid.uuid4().hex
            changed: dict[str, Memory] = {stating.id.hex: stating}
            with acting_as(replace(provenance, user_id=stating.user_id)):
                stating.state_fact(fact_id, subject, predicate, object, since)
                for old in [] if keep_others else holding:
                    owner = changed.get(old.memory_id) or parts.ledger.memory(old.memory_id)
                    changed[owner.id.hex] = owner
                    if owner.facts.get(old.id, {}).get("valid_until") is None:
                        owner.end_fact(old.id, since, fact_id)
            parts.ledger.save(*changed.values())
            return self._get(fact_id)

        return retry_on_conflict(attempt)

    def extract_facts(
        self, memory: str, *, agent: str | None = None, thread: str | None = None
    ) -> FactExtraction:
        """`MnemoLedger.extract_facts`: state the facts of one memory (documented there)."""
        parts = self.parts
        parts.refresh()
        stating = parts.ledger.memory(memory)
        if stating.state != ACTIVE:
            raise InvalidInput(f"memory {stating.id.hex} is {stating.state}, not active")
        provenance = replace(parts.provenance("", agent, thread), user_id=stating.user_id)
        with acting_as(provenance):
            command = recorded_id(FactExtractCommand(input={"memory_id": stating.id.hex}))
        parts.ledger.save(command)  # the request is in the log before anything is decided
        decided = replace(provenance, causation_id=command.id.hex)
        llm = RecordedLLM(parts.llm, command, decided)
        try:
            found = llm.run(
                FACT_EXTRACT, FactExtractInput(subject=stating.user_id, content=stating.content)
            )
        except Exception as error:  # the failure, and any call made, stay on the command
            with acting_as(decided):
                command.fail(str(error)[:500] or type(error).__name__, type(error).__name__)
            parts.ledger.save(command)
            raise
        stated = [
            self.state_fact(
                triple.subject,
                triple.predicate,
                triple.object,
                memory=stating.id.hex,
                keep_others=_predicate(triple.predicate) not in SINGLE_VALUED_PREDICATES,
                agent=agent,
                thread=thread,
            )
            for triple in found.facts
        ]
        with acting_as(decided):
            command.complete({"facts": [fact.id for fact in stated]})
        parts.ledger.save(command)
        return FactExtraction(command_id=command.id.hex, facts=stated)

    def end_fact(
        self,
        fact_id: str,
        *,
        valid_until: str | None = None,
        agent: str | None = None,
        thread: str | None = None,
    ) -> FactOut:
        """`MnemoLedger.end_fact`: say a fact stopped holding (documented there)."""
        until = _moment("valid_until", valid_until) or self.parts.clock().isoformat()
        parts = self.parts
        found = self._get(fact_id)
        if found.valid_until is not None:
            raise InvalidInput(f"fact {fact_id} already ended at {found.valid_until}")
        if until < found.valid_from:
            raise InvalidInput(f"valid_until {until} is before the fact's start")
        provenance = parts.provenance("", agent, thread)

        def attempt() -> FactOut:
            owner = parts.ledger.memory(found.memory_id)
            with acting_as(replace(provenance, user_id=owner.user_id)):
                owner.end_fact(found.id, until, None)
            parts.ledger.save(owner)
            return self._get(found.id)

        return retry_on_conflict(attempt)

    def facts(
        self,
        *,
        user: str,
        entity: str | None = None,
        predicate: str | None = None,
        hops: int = DEFAULT_FACT_HOPS,
        at: str | None = None,
        history: bool = False,
        limit: int = DEFAULT_FACTS_LIMIT,
    ) -> builtins.list[FactOut]:
        """`MnemoLedger.facts`: the user's facts that hold now (documented there)."""
        user_id = str(validation.identifier("user", user))
        if isinstance(hops, bool) or hops not in range(1, MAX_FACT_HOPS + 1):
            raise InvalidInput(f"hops must be 1 to {MAX_FACT_HOPS}; got {hops!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"limit must be a whole number of at least 1; got {limit!r}")
        if history and at is not None:
            raise InvalidInput("give either at or history, not both")
        moment = None if history else _moment("at", at) or self.parts.clock().isoformat()
        self.parts.refresh()
        model = self.parts.facts_model
        if entity is not None:
            rows = model.about(user_id, _part("entity", entity), at=moment, hops=hops, limit=limit)
            if predicate is not None:
                rows = [r for r in rows if r.predicate == _predicate(predicate)]
        else:
            wanted = None if predicate is None else _predicate(predicate)
            rows = model.list(user_id, at=moment, limit=limit, predicate=wanted)
        return [_fact_out(row) for row in rows]

    def fact(self, fact_id: str) -> FactOut:
        """`MnemoLedger.fact`: one fact by id (documented there)."""
        return self._get(fact_id)

    def _get(self, fact_id: str) -> FactOut:
        self.parts.refresh()
        row = self.parts.facts_model.get(str(fact_id).strip().lower())
        if row is None:
            raise FactNotFound(fact_id)
        return _fact_out(row)


def _part(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} must be non-empty text")
    if "\x00" in value:
        raise InvalidInput(f"{name} must not contain a NUL character")
    text = " ".join(value.split())
    if len(text) > MAX_FACT_PART_CHARS:
        raise InvalidInput(f"{name} is longer than {MAX_FACT_PART_CHARS} characters")
    return text


def _predicate(value: object) -> str:
    """A predicate as stored: lower case, words joined by `_` (`Lives in` -> `lives_in`)."""
    return "_".join(_part("predicate", value).lower().split())


def _moment(name: str, value: str | None) -> str | None:
    """An ISO 8601 time with its zone, as UTC text; None stays None."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"{name} must be an ISO 8601 time; got {value!r}") from None
    if moment.tzinfo is None:
        raise InvalidInput(f"{name} needs a time zone (e.g. +00:00); got {value!r}")
    return moment.astimezone(UTC).isoformat()


def _fact_out(row: FactRow) -> FactOut:
    return FactOut(
        id=row.id,
        user_id=row.user_id,
        memory_id=row.memory_id,
        subject=row.subject,
        predicate=row.predicate,
        object=row.object,
        valid_from=row.valid_from,
        valid_until=row.valid_until,
        superseded_by=row.superseded_by,
        hop=row.hop,
    )
