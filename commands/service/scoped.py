"""The facade as one API key sees it: what the HTTP API and the MCP server call (issue 8).

    scoped = ScopedMemory(memory, principal)
    scoped.add(["I moved to Lisbon"], user="maya")   # actor key:<id>, agent_id = key's agent
    scoped.get(memory_id)                            # 404 for another user's memory

Every operation checks, before anything is read or written:

- the user: a key acts only for the users it names (`UserNotAllowed`, HTTP 403); a memory
  id of another user is answered as unknown (`MemoryNotFound`, 404), so ids cannot be used
  to probe other users' memories; no operation reads several users at once;
- the category (seed 003 §5): the memory's effective category (written, else derived from
  kind / note kind / namespace) must be in the key's categories: its agent's allowlist,
  narrowed by the key's own list; admin keys read every category. Lists and searches leave
  the others out; a single memory outside them is `CategoryForbidden` (403). core.md counts
  as the `profile` category (it is HAEMA's durable profile of the user);
- the agent: the key fixes it. A request naming another agent is `AgentMismatch` (403).

`memory.query` keeps its own enforcement (the agent's allowlist, checked before searching);
this layer adds the key's user list and category subset on top.
"""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from mnemoledger.commands.audit.export_api import ExportResult
from mnemoledger.commands.audit.integrity_api import VerifyResult
from mnemoledger.commands.lifecycle.consolidate_api import (
    ConsolidateResult,
    TopicDetail,
    TopicsResult,
)
from mnemoledger.commands.models import (
    AddResult,
    CommandOut,
    CoreOut,
    EdgeOut,
    EventOut,
    MemoryOut,
    SearchHit,
)
from mnemoledger.commands.recall.query import FullResult, QueryResult
from mnemoledger.commands.recall.query_api import DeltaOut
from mnemoledger.commands.recall.recall_api import MAX_RESUME_HOURS
from mnemoledger.commands.recall.resume import (
    ResumeOut,
    build_resume,
    compact_relevance,
    recent_window,
    tree_topics,
)
from mnemoledger.commands.recall.search import Fusion
from mnemoledger.commands.service.keys import Principal
from mnemoledger.commands.write.add_later import CommandNotFound
from mnemoledger.commands.write.ingest_api import StoreResult
from mnemoledger.ledger import Provenance
from mnemoledger.ledger.errors import InvalidInput, LedgerError, MemoryNotFound
from mnemoledger.ledger.policy import (
    ACTIVE,
    DEFAULT_IMPORTANCE,
    DEFAULT_KIND,
    DEFAULT_LINK_STRENGTH,
    DEFAULT_LINK_TYPE,
    FORGOTTEN,
    FULL,
    LATEST_DEFAULT_LIMIT,
    LATEST_MAX_LIMIT,
    MAX_LIST_LIMIT,
    PROCEDURAL_CATEGORY,
    QUERY_OVERFETCH,
    RESUME_RECENT_HOURS,
    SEARCH_DEFAULT_K,
    SEARCH_MAX_K,
    SEARCH_MIN_SCORE,
    TRASH_DEFAULT_LIMIT,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.recall import Recall
from mnemoledger.ledger.validation import identifier, normalize_key, normalize_text
from mnemoledger.projections.layers import effective_category

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

CORE_DOCUMENT_CATEGORY = "profile"
"""Not in the seeds: the category core.md counts as for allowlists (HAEMA's user profile)."""

API_SOURCE = "api"
"""The `source` of memories written through the HTTP API or MCP when the caller names none."""


class Forbidden(LedgerError):
    """The key may not do this (HTTP 403)."""

    code = "forbidden"


class UserNotAllowed(Forbidden):
    """The key does not act for this user."""

    code = "user_not_allowed"


class CategoryForbidden(Forbidden):
    """The memory, or the write, is in a category outside the key's categories."""

    code = "category_not_allowed"


class AgentMismatch(Forbidden):
    """The request names an agent other than the key's."""

    code = "agent_mismatch"


class AdminRequired(Forbidden):
    """A whole-user or whole-log operation (consolidate, export, verify) needs an admin key."""

    code = "admin_required"


class RecallResult(BaseModel):
    """Recall by key: the memories with this exact key, else the best search matches."""

    matched_by: Literal["key", "search"]
    memories: builtins.list[MemoryOut]


class UserStats(BaseModel):
    """`GET /stats` for one user: the memories the key may read, counted."""

    user_id: str
    memories: int
    by_layer: dict[str, int]
    by_state: dict[str, int]
    """active, forgotten (the trash), superseded, and the lifecycle's evicted, expired,
    purged."""
    by_kind: dict[str, int]


class MemoryRecallResult(BaseModel):
    """`POST /recall`: the best matches in full, with their scores."""

    memories: builtins.list[FullResult]
    dry: bool
    """True: nothing was recorded (`dry`: no access counted)."""
    recall_id: str | None = None
    """The `RecallServed` stream that recorded what was served (access counts); None when
    dry."""


def _counted(values: Sequence[str]) -> dict[str, int]:
    """How often each value occurs, by value."""
    return dict(sorted(Counter(values).items()))


def category_of(memory: MemoryOut) -> str:
    """The effective category of a memory (seed 003 §5)."""
    return effective_category(memory.category, memory.kind, memory.namespace, memory.note_kind)


class ScopedMemory:
    """`MnemoLedger` operations with one key's identity and limits applied."""

    def __init__(self, memory: MnemoLedger, principal: Principal) -> None:
        self.memory = memory
        self.principal = principal

    # --- what the key may touch ----------------------------------------------------------

    @property
    def categories(self) -> frozenset[str] | None:
        """The categories the key may read and write (None: all, for admin keys)."""
        if self.principal.admin:
            return None
        try:
            allowed = set(self.memory.categories_config.allowlist(self.principal.agent))
        except InvalidInput:  # an agent no allowlist names reads nothing
            return frozenset()
        if self.principal.categories is not None:
            allowed &= set(self.principal.categories)
        return frozenset(allowed)

    def may_read(self, category: str) -> bool:
        allowed = self.categories
        return allowed is None or category in allowed

    def check_category(self, category: str, what: str = "memory") -> None:
        if not self.may_read(category):
            raise CategoryForbidden(
                f"key {self.principal.key_id} (agent {self.principal.agent!r}) may not touch "
                f"category {category!r} ({what}); its categories: "
                f"{', '.join(sorted(self.categories or ())) or '(none)'}"
            )

    def check_user(self, user: str) -> str:
        user_id = str(identifier("user", user))
        if user_id not in self.principal.users:
            raise UserNotAllowed(
                f"key {self.principal.key_id} may not act for user {user_id!r}; "
                f"its users: {', '.join(self.principal.users)}"
            )
        return user_id

    def check_agent(self, agent: str | None) -> str:
        if agent is not None and agent != self.principal.agent:
            raise AgentMismatch(
                f"key {self.principal.key_id} acts as agent {self.principal.agent!r}, not {agent!r}"
            )
        return self.principal.agent

    def check_admin(self, what: str) -> None:
        if not self.principal.admin:
            raise AdminRequired(
                f"{what} needs an admin key (`mnemoledger keys create --admin`); "
                f"key {self.principal.key_id} is not one"
            )

    def visible(self, memory_id: str) -> MemoryOut:
        """The memory if the key may see it: another user's is unknown, another
        category's is forbidden."""
        found = self.memory.get(memory_id)
        if found.user_id not in self.principal.users:
            raise MemoryNotFound(memory_id)
        self.check_category(category_of(found))
        return found

    @contextmanager
    def _acting(self) -> Iterator[MnemoLedger]:
        """The facade with the key's actor recorded on every event (calls are serial)."""
        previous = self.memory.actor
        self.memory.actor = self.principal.actor
        try:
            yield self.memory
        finally:
            self.memory.actor = previous

    # --- writes --------------------------------------------------------------------------

    def add(
        self,
        contents: Sequence[str],
        *,
        user: str,
        agent: str | None = None,
        thread: str | None = None,
        kind: str = DEFAULT_KIND,
        tags: Sequence[str] = (),
        source: str = API_SOURCE,
        namespace: str = "default",
        importance: float = DEFAULT_IMPORTANCE,
        evidence: Sequence[str] | None = None,
        category: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        role: str = "user",
        keep_all: bool = False,
        at: datetime | str | None = None,
        wait: bool = True,
    ) -> AddResult:
        """The key's add: the category written (`category`, else the one derived from kind
        and namespace) must be one of the key's categories, refused naming them. `at` is
        when the contents were said (an import); with `wait=False` it returns once the
        request is recorded (`MnemoLedger.add`)."""
        user_id = self.check_user(user)
        agent_id = self.check_agent(agent)
        named = identifier("category", category, required=False)
        self.check_category(named or effective_category(None, kind, namespace, None), "write")
        with self._acting() as memory:
            return memory.add(
                contents,
                user=user_id,
                agent=agent_id,
                thread=thread,
                kind=kind,
                tags=tags,
                source=source,
                namespace=namespace,
                importance=importance,
                evidence=evidence,
                category=named,
                metadata=metadata,
                role=role,
                keep_all=keep_all,
                at=at,
                wait=wait,
            )

    def command(self, command_id: str) -> CommandOut:
        """A recorded command of a user the key may act for (any other is not found: the
        key learns nothing of other users' commands)."""
        found = self.memory.command(command_id)
        if found.user_id not in self.principal.users:
            raise CommandNotFound(command_id)
        return found

    def store(
        self,
        key: str,
        value: str,
        *,
        user: str,
        namespace: str = "default",
        agent: str | None = None,
        thread: str | None = None,
        tags: Sequence[str] = (),
        source: str = API_SOURCE,
    ) -> StoreResult:
        """The key's store by key (Nebo's UpsertMemory, seed 004 §5): for one of the key's
        users, in a category it may write: the one the namespace files under and, when the
        key already holds a memory, that memory's."""
        user_id = self.check_user(user)
        agent_id = self.check_agent(agent)
        self.check_category(effective_category(None, DEFAULT_KIND, namespace, None), "write")
        wanted = normalize_key(normalize_text(key)) if isinstance(key, str) else None
        self.memory.refresh()
        for row in self.memory.layers.list(user_id, state=ACTIVE):
            if row.namespace == namespace and row.key == wanted:
                self.check_category(row.effective_category, "write")
        with self._acting() as memory:
            return memory.store(
                key,
                value,
                user=user_id,
                namespace=namespace,
                agent=agent_id,
                thread=thread,
                tags=tags,
                source=source,
            )

    def update(
        self,
        memory_id: str,
        content: str,
        *,
        tags: Sequence[str] | None = None,
        thread: str | None = None,
    ) -> MemoryOut:
        self.visible(memory_id)
        with self._acting() as memory:
            return memory.update(
                memory_id, content, tags=tags, agent=self.principal.agent, thread=thread
            )

    def link(
        self,
        source_id: str,
        target_id: str,
        *,
        link_type: str = DEFAULT_LINK_TYPE,
        strength: float = DEFAULT_LINK_STRENGTH,
    ) -> EdgeOut:
        self.visible(source_id)
        self.visible(target_id)
        with self._acting() as memory:
            return memory.link(
                source_id,
                target_id,
                link_type=link_type,
                strength=strength,
                agent=self.principal.agent,
            )

    def ttl(self, memory_id: str, days: float) -> MemoryOut:
        self.visible(memory_id)
        with self._acting() as memory:
            return memory.ttl(memory_id, days, agent=self.principal.agent)

    def forget(self, memory_id: str) -> MemoryOut:
        self.visible(memory_id)
        with self._acting() as memory:
            return memory.forget(memory_id, agent=self.principal.agent)

    def restore(self, memory_id: str) -> MemoryOut:
        self.visible(memory_id)
        with self._acting() as memory:
            return memory.restore(memory_id, agent=self.principal.agent)

    # --- reads ---------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryOut:
        return self.visible(memory_id)

    def list(
        self, *, user: str, layer: str | None = None, state: str | None = None
    ) -> builtins.list[MemoryOut]:
        user_id = self.check_user(user)
        found = self.memory.list(user=user_id, layer=layer, state=state)
        return [m for m in found if self.may_read(category_of(m))]

    def latest(self, *, user: str, limit: int = LATEST_DEFAULT_LIMIT) -> builtins.list[MemoryOut]:
        """The user's most recently written memories in the key's categories."""
        user_id = self.check_user(user)
        if self.categories is None:
            return self.memory.latest(user=user_id, limit=limit)
        if not 1 <= limit <= LATEST_MAX_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {LATEST_MAX_LIMIT}; got {limit}")
        found = self.memory.latest(user=user_id, limit=LATEST_MAX_LIMIT)
        return [m for m in found if self.may_read(category_of(m))][:limit]

    def history(self, memory_id: str) -> builtins.list[EventOut]:
        self.visible(memory_id)
        return self.memory.history(memory_id)

    def stats(self, *, user: str) -> UserStats:
        """The user's memories in the key's categories (every state) counted by layer,
        state and kind."""
        found = self.list(user=user)
        return UserStats(
            user_id=self.check_user(user),
            memories=len(found),
            by_layer=_counted([m.layer for m in found]),
            by_state=_counted([m.state for m in found]),
            by_kind=_counted([m.kind for m in found]),
        )

    def trash(self, *, user: str, limit: int = TRASH_DEFAULT_LIMIT) -> builtins.list[MemoryOut]:
        """The user's forgotten memories in the key's categories (restorable), the most
        recently changed (forgotten) first, at most `limit`."""
        if isinstance(limit, bool) or not 1 <= limit <= MAX_LIST_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST_LIMIT}; got {limit}")
        found = self.list(user=user, state=FORGOTTEN)
        found.sort(key=lambda m: (m.updated_at, m.id), reverse=True)
        return found[:limit]

    def search(
        self,
        query: str,
        *,
        user: str,
        k: int = SEARCH_DEFAULT_K,
        min_score: float = SEARCH_MIN_SCORE,
        namespace: str | None = None,
        fusion: Fusion | None = None,
        expand: bool | None = None,
        rerank: bool = False,
        at: datetime | None = None,
    ) -> builtins.list[SearchHit]:
        user_id = self.check_user(user)
        restricted = self.categories is not None
        fetch = min(SEARCH_MAX_K, k * QUERY_OVERFETCH) if restricted else k
        hits = self.memory.search(
            query,
            user=user_id,
            k=fetch,
            min_score=min_score,
            namespace=namespace,
            fusion=fusion,
            expand=expand,
            rerank=rerank,
            at=at,
        )
        if restricted:
            rows = self.memory.layers.get_many([h.id for h in hits])
            hits = [
                h for h in hits if h.id in rows and self.may_read(rows[h.id].effective_category)
            ]
        return hits[:k]

    def engram_recall(
        self,
        query: str,
        *,
        user: str,
        limit: int = SEARCH_DEFAULT_K,
        min_score: float | None = None,
        dry: bool = False,
        expand: bool | None = None,
        rerank: bool = False,
    ) -> MemoryRecallResult:
        """engram's recall (seed 001 §4) as this key: `memory.query` with full results,
        which records what it served (engram's touch: access counts), or with `dry` the
        hybrid search alone, which records nothing. `min_score` is the similarity floor
        (the query's `threshold`; the search's `min_score`, default 0.3, when dry)."""
        user_id = self.check_user(user)
        if dry:
            floor = SEARCH_MIN_SCORE if min_score is None else min_score
            hits = self.search(
                query, user=user_id, k=limit, min_score=floor, expand=expand, rerank=rerank
            )
            self.memory.refresh()
            rows = self.memory.layers.get_many([h.id for h in hits])
            shown = [
                FullResult(
                    **{
                        **self.memory.parts.out(rows[h.id]).model_dump(),
                        "category": rows[h.id].effective_category,
                    },
                    score=h.score,
                    relevance=h.vector_score,
                    access_count=rows[h.id].access_count,
                    last_accessed=rows[h.id].last_accessed,
                )
                for h in hits
                if h.id in rows
            ]
            return MemoryRecallResult(memories=shown, dry=True)
        request: dict[str, Any] = {
            "query": query,
            "filters": {"user_id": user_id},
            "top_k": limit,
            "return": FULL,
            "threshold": min_score,
            "expand": expand,
            "rerank": rerank,
        }
        answer = self.query({k: v for k, v in request.items() if v is not None})
        found = [r for r in answer.results if isinstance(r, FullResult)]
        return MemoryRecallResult(memories=found, dry=False, recall_id=answer.recall_id)

    def query(self, request: Mapping[str, Any]) -> QueryResult:
        """`memory.query` (seed 003 §6) as this key: its agent, its users, its categories."""
        body = dict(request)
        body["agent"] = self.check_agent(body.get("agent"))
        filters = body.get("filters")
        if not isinstance(filters, Mapping):
            raise InvalidInput("filters.user_id is required")
        body["filters"] = {**filters, "user_id": self.check_user(filters.get("user_id", ""))}
        if self.principal.categories is not None and not self.principal.admin:
            own = self.principal.categories
            requested = body.get("categories")
            if requested:
                for category in requested:
                    self.check_category(str(category), "query")
            else:  # the default context, within the key's own subset
                body["categories"] = [c for c in own if c != PROCEDURAL_CATEGORY] or list(own)
        with self._acting() as memory:
            return memory.memory_query(body)

    def delta(self, thread: str, since: int | None = None, *, user: str) -> DeltaOut:
        """The delta header (seed 003 §1) of one user's memories in the key's categories,
        since `since` or since the revision this key's agent was last served there."""
        user_id = self.check_user(user)
        thread_id = str(identifier("thread", thread))
        if since is not None and since < 0:
            raise InvalidInput(f"since must be a revision >= 0; got {since}")
        allowed = self.categories
        if allowed is None:
            try:
                allowed = frozenset(self.memory.categories_config.allowlist(self.principal.agent))
            except InvalidInput:
                allowed = None  # an admin key of an agent with no allowlist: every category
        readable = None if allowed is None else set(allowed) - {PROCEDURAL_CATEGORY}
        model = self.memory.delta_model
        self.memory.refresh()
        if since is None:
            since = model.served_revision(thread_id, self.principal.agent) or 0
        header = model.header(thread_id, since, user_id=user_id, categories=readable)
        return DeltaOut(thread=thread_id, rev=model.revision(thread_id), since=since, header=header)

    def core(self, *, user: str) -> CoreOut:
        user_id = self.check_user(user)
        self.check_category(CORE_DOCUMENT_CATEGORY, "core.md")
        return self.memory.core(user=user_id)

    def resume(
        self,
        *,
        user: str,
        namespace: str | None = None,
        hours: float = RESUME_RECENT_HOURS,
        compact: bool = False,
    ) -> ResumeOut:
        """engram's resume (seed 001 §7) built from the memories the key may read only;
        `compact`: by relevance to the recent context (seed 001 §8)."""
        user_id = self.check_user(user)
        if self.categories is None:
            return self.memory.resume(user_id, namespace, hours=hours, compact=compact)
        identifier("namespace", namespace, required=False)
        if not 0 < hours <= MAX_RESUME_HOURS:
            raise InvalidInput(f"hours must be above 0 and at most {MAX_RESUME_HOURS}; got {hours}")
        self.memory.refresh()
        markdown, version = "", 0
        if self.may_read(CORE_DOCUMENT_CATEGORY):
            markdown, version = self.memory.core_model.current(user_id)
        rows = [
            row
            for row in self.memory.layers.list(user_id, state=ACTIVE)
            if self.may_read(row.effective_category)
        ]
        topics, members = tree_topics(self.memory.topics_model, user_id) or (None, None)
        window = recent_window(datetime.now(UTC), hours, None, None)
        relevance = (
            compact_relevance(rows, self.memory.vectors, namespace, window) if compact else None
        )
        return build_resume(
            rows,
            user_id=user_id,
            namespace=namespace,
            core_document=markdown,
            core_version=version,
            topics=topics,
            topic_members=members,
            hours=float(hours),
            relevance=relevance,
        )

    def recall(
        self, *, user: str, key: str | None = None, query: str | None = None, k: int = 5
    ) -> RecallResult:
        """Nebo's recall (seed 004 §5): the user's active memories with exactly this key
        (normalized), else `memory.query` with the key (or `query`) as the question, which
        records what was served (access counts)."""
        user_id = self.check_user(user)
        if key is not None and key.strip():
            wanted = normalize_key(normalize_text(key))
            self.memory.refresh()
            exact = [
                row
                for row in self.memory.layers.list(user_id, state=ACTIVE)
                if row.key == wanted and self.may_read(row.effective_category)
            ][:k]
            if exact:
                served = [self.memory.get(row.id) for row in exact]
                categories = sorted({row.effective_category for row in exact})
                self._record_served(user_id, key, served, categories)
                return RecallResult(matched_by="key", memories=served)
        question = query if query is not None and query.strip() else key
        if question is None or not question.strip():
            raise InvalidInput("recall needs a key or a query")
        answer = self.query(
            {"query": question, "filters": {"user_id": user_id}, "top_k": k, "return": "full"}
        )
        found = [r for r in answer.results if isinstance(r, FullResult)]
        return RecallResult(matched_by="search", memories=list(found))

    def _record_served(
        self, user_id: str, asked: str, served: Sequence[MemoryOut], categories: builtins.list[str]
    ) -> None:
        """A `RecallServed` for memories served by key, as `memory.query` records its
        answers: the access counts move the same whichever way a memory was recalled."""
        who = Provenance(user_id=user_id, actor=self.principal.actor, agent_id=self.principal.agent)
        with acting_as(who):
            recall = Recall(
                query=asked,
                categories=categories,
                memory_ids=[m.id for m in served],
                return_mode="full",
                top_k=len(served),
            )
        self.memory.ledger.save(recall)

    # --- topics and maintenance ------------------------------------------------------------

    def topics(self, *, user: str, rebuild: bool = False) -> TopicsResult:
        """The user's Topiary tree (seed 001 §6); built first when missing or `rebuild`."""
        user_id = self.check_user(user)
        with self._acting() as memory:
            return memory.topics(user=user_id, rebuild=rebuild)

    def topic_memories(self, *, user: str, ids: Sequence[str]) -> dict[str, TopicDetail]:
        """engram's `POST /topic` drill-down, each topic's memories in the key's categories."""
        user_id = self.check_user(user)
        found = self.memory.topic_memories(user=user_id, ids=ids)
        return {
            topic_id: TopicDetail(
                name=detail.name,
                memories=[m for m in detail.memories if self.may_read(category_of(m))],
            )
            for topic_id, detail in found.items()
        }

    def consolidate(self, *, user: str, dry_run: bool = False) -> ConsolidateResult:
        """One engram consolidation cycle for one user (admin keys only)."""
        self.check_admin("consolidate")
        user_id = self.check_user(user)
        with self._acting() as memory:
            return memory.consolidate(user=user_id, dry_run=dry_run, agent=self.principal.agent)

    def export(self, *, user: str, format: str, path: Path) -> ExportResult:
        """The user's whole event timeline to `path` (admin keys only: every category)."""
        self.check_admin("export")
        return self.memory.export(user=self.check_user(user), format=format, path=path)

    def verify(self) -> VerifyResult:
        """Integrity of the whole log: hashes, chains, seals (admin keys only)."""
        self.check_admin("verify")
        return self.memory.verify()
