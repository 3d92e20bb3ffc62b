"""`Consolidate`: the engram cycle and the lifecycle rules in the Python API.

    memory.consolidate(user="maya")                  # one cycle: {"epoch", "operations"}
    memory.consolidate(dry_run=True)                 # every user; plans, writes nothing
    memory.consolidate(user="maya", now=datetime(2031, 1, 1, tzinfo=UTC))  # a given clock

Over the shared parts (ledger, layers, vectors, embedder, topics, llm). The clock is
`parts.clock` (a callable returning an aware UTC datetime; `memory.clock = ...` replaces
it), so tests and the worker drive months in seconds.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from mnemoledger.commands.lifecycle.consolidation import (
    ConsolidationPipeline,
    ConsolidationRequest,
    CycleOutcome,
)
from mnemoledger.commands.lifecycle.topics import TopicsPipeline
from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.parts import Parts
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound
from mnemoledger.ledger.policy import ACTIVE, AUDIT_SANDBOX_GUARDS, TOPIC_REBUILD_QUIET_SECONDS
from mnemoledger.ledger.validation import identifier


class TopicNotFound(MemoryNotFound):
    """The user has no topic with this id (HTTP 404)."""

    def __str__(self) -> str:
        return f"user {self.args[0]!r} has no topic {self.args[1]!r}"


class UserCycle(BaseModel):
    """One user's cycle."""

    user: str
    epoch: int
    command_id: str | None
    operations: int
    llm_calls: int


class ConsolidateResult(BaseModel):
    """What `consolidate` did (or, with `dry_run`, would do)."""

    epoch: int | None
    """The epoch number of the cycle (the highest one when several users ran)."""
    operations: list[dict[str, Any]]
    """Every operation, in order, each naming its user, op, rule and memory."""
    users: list[UserCycle] = Field(default_factory=list)
    dry_run: bool = False
    now: str
    """The clock value every decision was taken at."""


class TopicOut(BaseModel):
    """One topic of a user's tree."""

    id: str
    name: str
    parent: str | None
    members: int
    children: list[str] = Field(default_factory=list)


class TopicsResult(BaseModel):
    """A user's named topic tree, and the log position it was built at."""

    user: str
    position: int | None
    built_at: str | None
    topics: list[TopicOut]


class TopicDetail(BaseModel):
    """A topic's name and its memories (the drill-down of `POST /topic`)."""

    name: str
    memories: list[MemoryOut]


class Consolidate:
    """Run consolidation cycles; build and read the users' topic trees."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def consolidate(
        self,
        *,
        user: str | None = None,
        dry_run: bool = False,
        now: datetime | None = None,
        audit: bool | None = None,
        daily: bool | None = False,
        agent: str | None = None,
        llm_level: str | None = None,
        audit_guards: bool = AUDIT_SANDBOX_GUARDS,
    ) -> ConsolidateResult:
        """`MnemoLedger.consolidate`: one consolidation cycle (documented there)."""
        at = now or self.parts.clock()
        if at.tzinfo is None:
            raise InvalidInput("the consolidation clock must be timezone-aware (UTC)")
        at = at.astimezone(UTC)
        self.parts.refresh()
        users = [str(identifier("user", user))] if user is not None else self.users_with_memories()
        pipeline = self.consolidation_pipeline()
        outcomes: list[CycleOutcome] = []
        for name in users:
            request = ConsolidationRequest(
                user=name,
                now=at,
                dry_run=dry_run,
                audit=audit,
                daily=daily,
                buffer_cap=self.parts.settings.buffer_cap,
                llm_level=llm_level or self.parts.settings.llm_level,
                sandbox_guards=audit_guards,
                forgetting=self.parts.settings.forgetting,
            )
            outcomes.append(pipeline.run(request, self.parts.provenance(name, agent, None)))
        return ConsolidateResult(
            epoch=max((o.epoch for o in outcomes), default=None),
            operations=[{"user": o.user, **op.as_json()} for o in outcomes for op in o.operations],
            users=[
                UserCycle(
                    user=o.user,
                    epoch=o.epoch,
                    command_id=o.command_id,
                    operations=len(o.operations),
                    llm_calls=o.llm_calls,
                )
                for o in outcomes
            ],
            dry_run=dry_run,
            now=at.isoformat(),
        )

    def build_topics(self, *, user: str, agent: str | None = None) -> dict[str, Any]:
        """`MnemoLedger.build_topics`: build the user's topic tree now (documented there)."""
        parts = self.parts
        pipeline = TopicsPipeline(
            parts.ledger, parts.layers, parts.vectors, parts.topics_model, parts.llm, parts.refresh
        )
        return pipeline.run(user, parts.provenance(user, agent, None))

    def topics(self, *, user: str, rebuild: bool = False) -> TopicsResult:
        """`MnemoLedger.topics`: the user's topic tree (documented there)."""
        identifier("user", user)
        self.parts.refresh()
        if rebuild or not self.parts.topics_model.tree(user):
            self.build_topics(user=user)
            self.parts.refresh()
        tree = self.parts.topics_model.tree(user)
        return TopicsResult(
            user=user,
            position=tree[0].built_position if tree else None,
            built_at=tree[0].built_at if tree else None,
            topics=[TopicOut(**t.as_json()) for t in tree],
        )

    def topic_memories(self, *, user: str, ids: Sequence[str]) -> dict[str, TopicDetail]:
        """`MnemoLedger.topic_memories`: each named topic's memories (documented there)."""
        identifier("user", user)
        self.parts.refresh()
        names = {t.id: t.name for t in self.parts.topics_model.tree(user)}
        found: dict[str, TopicDetail] = {}
        for topic_id in ids:
            if topic_id not in names:
                raise TopicNotFound(user, topic_id)
            rows = self.parts.layers.get_many(self.parts.topics_model.members(user, topic_id))
            memories = [
                MemoryOut(**row.as_json())
                for row in sorted(rows.values(), key=lambda r: r.id)
                if row.state == ACTIVE
            ]
            found[topic_id] = TopicDetail(name=names[topic_id], memories=memories)
        return found

    def topics_due(
        self, *, now: datetime | None = None, quiet_seconds: float = TOPIC_REBUILD_QUIET_SECONDS
    ) -> dict[str, int]:
        """`MnemoLedger.topics_due`: users whose topic tree is stale (documented there)."""
        self.parts.refresh()
        moment = now or self.parts.clock()
        with self.parts.layers.engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT user_id, MAX(position), MAX(updated_at) FROM memories GROUP BY user_id"
            ).all()
        built = self.parts.topics_model.built_positions()
        return {
            str(user): int(position)
            for user, position, last_change in sorted(rows)
            if position is not None
            and int(position) > built.get(str(user), -1)
            and (moment - datetime.fromisoformat(str(last_change))).total_seconds() >= quiet_seconds
        }

    def users_with_memories(self) -> builtins.list[str]:
        """`MnemoLedger.users_with_memories`: every user with memories (documented there)."""
        with self.parts.layers.engine.connect() as conn:
            return [
                r[0]
                for r in conn.exec_driver_sql(
                    "SELECT DISTINCT user_id FROM memories ORDER BY user_id"
                )
            ]

    def consolidation_pipeline(self) -> ConsolidationPipeline:
        """`MnemoLedger.consolidation_pipeline`: the consolidation pipeline (documented there)."""
        parts = self.parts
        return ConsolidationPipeline(
            parts.ledger,
            parts.layers,
            parts.vectors,
            parts.embedder,
            parts.llm,
            refresh=parts.refresh,
        )
