"""`ConsolidateMixin`: the engram cycle and the lifecycle rules in the Python API.

    memory.consolidate(user="maya")                  # one cycle: {"epoch", "operations"}
    memory.consolidate(dry_run=True)                 # every user; plans, writes nothing
    memory.consolidate(user="maya", now=datetime(2031, 1, 1, tzinfo=UTC))  # a given clock

Mixed into `MnemoLedger`, which provides `ledger`, `layers`, `vectors`, `embedder`, `llm`,
`refresh()` and `_provenance()`. The clock is `self.clock` (a callable returning an aware
UTC datetime), replaceable so tests and the worker drive months in seconds.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mnemoledger.commands.lifecycle.consolidation import (
    ConsolidationPipeline,
    ConsolidationRequest,
    CycleOutcome,
)
from mnemoledger.commands.lifecycle.topics import TopicsPipeline
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.write import replaying
from mnemoledger.ledger import Ledger, Provenance, Settings
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import ACTIVE
from mnemoledger.ledger.validation import identifier
from mnemoledger.projections.embeddings.cache import CachedEmbedder
from mnemoledger.projections.layers import LayersProjection
from mnemoledger.projections.topics import TopicsProjection
from mnemoledger.projections.vectors import VectorsProjection

if TYPE_CHECKING:
    from mnemoledger.projections.runner import Progress


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
    """One topic of a user's tree (seed 001 §6)."""

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
    """A topic's name and its memories (the drill-down, like engram's POST /topic)."""

    name: str
    memories: list[MemoryOut]


class ConsolidateMixin:
    """Run engram consolidation cycles."""

    ledger: Ledger
    settings: Settings
    layers: LayersProjection
    vectors: VectorsProjection
    embedder: CachedEmbedder
    llm: LLMProvider
    topics_model: TopicsProjection
    clock: Callable[[], datetime] = staticmethod(replaying.now)
    """Now, in UTC: the original run's time inside a replay; tests and the worker set it."""

    if TYPE_CHECKING:

        def refresh(self, progress: Progress | None = None) -> int:
            raise NotImplementedError

        def _provenance(self, user: str, agent: str | None, thread: str | None) -> Provenance:
            raise NotImplementedError

    def consolidate(
        self,
        *,
        user: str | None = None,
        dry_run: bool = False,
        now: datetime | None = None,
        audit: bool | None = None,
        daily: bool | None = False,
        agent: str | None = None,
    ) -> ConsolidateResult:
        """One engram cycle for `user` (or for every user with memories): lifecycle rules,
        promotion, triage, gate, reconcile, distillation, dedup, merge, audit, decay. With
        `dry_run`, the planned operations are returned and nothing is written. `daily`
        adds seed 003's daily pass and insights (None: when 24 h have passed)."""
        at = now or self.clock()
        if at.tzinfo is None:
            raise InvalidInput("the consolidation clock must be timezone-aware (UTC)")
        at = at.astimezone(UTC)
        self.refresh()
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
                buffer_cap=self.settings.buffer_cap,
            )
            outcomes.append(pipeline.run(request, self._provenance(name, agent, None)))
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
        """Build and name the user's Topiary tree now (a `TopicsRequested` command); the
        previous tree stays when a topic could not be named."""
        pipeline = TopicsPipeline(
            self.ledger, self.layers, self.vectors, self.topics_model, self.llm, self.refresh
        )
        return pipeline.run(user, self._provenance(user, agent, None))

    def topics(self, *, user: str, rebuild: bool = False) -> TopicsResult:
        """The user's topic tree: leaves (`kb1`, ...) most members first, then parents
        (`kp1`, ...). Built first when the user has none yet, or when `rebuild`."""
        identifier("user", user)
        self.refresh()
        if rebuild or not self.topics_model.tree(user):
            self.build_topics(user=user)
            self.refresh()
        tree = self.topics_model.tree(user)
        return TopicsResult(
            user=user,
            position=tree[0].built_position if tree else None,
            built_at=tree[0].built_at if tree else None,
            topics=[TopicOut(**t.as_json()) for t in tree],
        )

    def topic_memories(self, *, user: str, ids: Sequence[str]) -> dict[str, TopicDetail]:
        """Drill down: each named topic's memories, as they are now (active ones)."""
        identifier("user", user)
        self.refresh()
        names = {t.id: t.name for t in self.topics_model.tree(user)}
        found: dict[str, TopicDetail] = {}
        for topic_id in ids:
            if topic_id not in names:
                raise InvalidInput(f"user {user!r} has no topic {topic_id!r}")
            rows = self.layers.get_many(self.topics_model.members(user, topic_id))
            memories = [
                MemoryOut(**row.as_json())
                for row in sorted(rows.values(), key=lambda r: r.id)
                if row.state == ACTIVE
            ]
            found[topic_id] = TopicDetail(name=names[topic_id], memories=memories)
        return found

    def users_with_memories(self) -> builtins.list[str]:
        """Every user the layers read model knows, ordered."""
        with self.layers.engine.connect() as conn:
            return [
                r[0]
                for r in conn.exec_driver_sql(
                    "SELECT DISTINCT user_id FROM memories ORDER BY user_id"
                )
            ]

    def consolidation_pipeline(self) -> ConsolidationPipeline:
        return ConsolidationPipeline(
            self.ledger, self.layers, self.vectors, self.embedder, self.llm, refresh=self.refresh
        )
