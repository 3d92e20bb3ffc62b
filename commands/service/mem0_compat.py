"""mem0's `Memory` over the ledger: a mem0 user changes one import and keeps their calls.

    from mnemoledger import Memory   # was: from mem0 import Memory

    m = Memory(home="~/.agent-memory")            # or Memory.from_config({"home": ...})
    m.add([{"role": "user", "content": "I'm vegetarian"}], user_id="alice", run_id="chat-1")
    m.search("what does alice eat?", user_id="alice", limit=5)   # {"results": [...]}
    m.history(memory_id)                                   # ADD / UPDATE / DELETE, oldest first

The signatures and result shapes are those of mem0's open-source `Memory`
(`mem0/memory/main.py`); every call runs a `MnemoLedger` verb, so it is recorded as events
like any other write, and history, replay, export and erasure see it. Where the ledger
differs (see the README's "Coming from mem0"):

- `user_id` is the ledger's user; `agent_id` is the event's agent; `run_id` its thread. A
  write with no `user_id` belongs to a ledger user named after its `agent_id` (else
  `run_id`);
- `infer=True` runs the ledger's add pipeline (split, dedup, reconstruction) over the user
  messages (the assistant's too when `agent_id` is given, as mem0's agent memory does);
  `infer=False` stores each non-system message as it is, with `metadata` and its `role`
  (`infer=True` keeps `metadata` on every memory the add writes);
- `delete` and `delete_all` forget (soft delete: the log keeps every event, `restore`
  brings a memory back); `reset` forgets every active memory it may touch, as events: an
  append-only log is never emptied (`mnemoledger erase` crypto-shreds a user instead);
- a replaced memory keeps its id and gets `superseded` (mem0 updates in place): `add`
  reports the new memory as `ADD` and the replaced one as `DELETE`.
"""

from __future__ import annotations

import builtins
import hashlib
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from mnemoledger.commands.models import AddResult, EventOut
from mnemoledger.commands.write.sanitize import screen
from mnemoledger.ledger import NewMemory, Provenance, Settings
from mnemoledger.ledger.errors import InvalidInput, MemoryNotFound
from mnemoledger.ledger.policy import ACTIVE, PROCEDURAL, SEARCH_MAX_K
from mnemoledger.ledger.validation import identifier, said_at
from mnemoledger.ledger.validation import metadata as checked_metadata
from mnemoledger.projections.layers import MemoryRow, effective_category

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger
    from mnemoledger.commands.service.scoped import ScopedMemory

PROCEDURAL_MEMORY = "procedural_memory"
"""mem0's `memory_type` for procedural memories (`MemoryType.PROCEDURAL.value`)."""

RAW_SOURCE = "mem0"
"""The `source` of memories stored as they are (`infer=False`)."""

DEFAULT_LIMIT = 100
"""mem0's default `limit` of `search` and `get_all`."""

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
PROMOTED_KEYS = ("actor_id", "role")
"""Metadata keys mem0 lifts to the top level of a result."""

CONFIG_KEYS = frozenset({"home", "actor", "db", "embedder"})
MEM0_CONFIG_KEYS = frozenset(
    {"vector_store", "llm", "embedder", "graph_store", "history_db_path", "version"}
    | {"custom_fact_extraction_prompt", "custom_update_memory_prompt", "reranker"}
)
"""mem0 settings the ledger has its own answer for (MNEMOLEDGER_* settings): ignored."""

EVENT_NAMES = {
    "MemoryAdded": "ADD",
    "MemoryUpdated": "UPDATE",
    "MemoryRestored": "ADD",
    "MemorySoftDeleted": "DELETE",
    "MemorySuperseded": "DELETE",
    "MemoryMerged": "DELETE",
    "MemoryExpired": "DELETE",
    "MemoryEvicted": "DELETE",
    "MemoryLapsed": "DELETE",
    "MemoryPurged": "DELETE",
}
"""The ledger's memory events as mem0's history events; `history` leaves any other event out
(a reinforcement, a link, a TTL change), as mem0 writes no history row for them."""


class MemoryNotFoundError(MemoryNotFound, ValueError):
    """No active memory has this id: a `ValueError`, as mem0 raises, and the ledger's
    `MemoryNotFound` (HTTP 404)."""


@dataclass(frozen=True)
class _Scope:
    """mem0's `user_id` / `agent_id` / `run_id`, as given."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(
        cls,
        user_id: str | None,
        agent_id: str | None,
        run_id: str | None,
        filters: Mapping[str, Any] | None = None,
    ) -> tuple[_Scope, dict[str, Any]]:
        """The scope (top-level ids win over `filters`' ones, mem0 2.x puts them there)
        and the remaining filters."""
        rest = dict(filters or {})
        given = {
            key: value if value is not None else rest.pop(key, None)
            for key, value in zip(SCOPE_KEYS, (user_id, agent_id, run_id), strict=True)
        }
        for key in SCOPE_KEYS:
            rest.pop(key, None)
            value = given[key]
            if value is not None:
                identifier(key, value)
        return cls(**given), rest

    def require(self) -> None:
        if not (self.user_id or self.agent_id or self.run_id):
            raise InvalidInput(
                "At least one of 'user_id', 'agent_id', or 'run_id' must be specified."
            )

    @property
    def owner(self) -> str:
        """The ledger user a write belongs to."""
        self.require()
        return str(self.user_id or self.agent_id or self.run_id)

    def holds(self, row: MemoryRow) -> bool:
        return (
            (self.user_id is None or row.user_id == self.user_id)
            and (self.agent_id is None or row.agent_id == self.agent_id)
            and (self.run_id is None or row.thread_id == self.run_id)
        )


class _Access:
    """What the caller may do: everything (the Python API), or what one API key may."""

    def __init__(self, facade: MnemoLedger, scoped: ScopedMemory | None = None) -> None:
        self.facade = facade
        self.scoped = scoped

    @property
    def verbs(self) -> MnemoLedger | ScopedMemory:
        return self.scoped if self.scoped is not None else self.facade

    @property
    def actor(self) -> str:
        return self.scoped.principal.actor if self.scoped is not None else self.facade.actor

    def user(self, user_id: str) -> str:
        return self.scoped.check_user(user_id) if self.scoped is not None else user_id

    def agent(self, agent_id: str | None) -> str | None:
        return self.scoped.check_agent(agent_id) if self.scoped is not None else agent_id

    def users(self, scope: _Scope) -> builtins.list[str] | None:
        """The users a read covers; None: every user of the home."""
        if scope.user_id is not None:
            return [self.user(scope.user_id)]
        return list(self.scoped.principal.users) if self.scoped is not None else None

    def readable(self, row: MemoryRow) -> bool:
        return self.scoped is None or (
            row.user_id in self.scoped.principal.users
            and self.scoped.may_read(row.effective_category)
        )

    def check_write(self, category: str) -> None:
        if self.scoped is not None:
            self.scoped.check_category(category, "write")

    def check_admin(self, what: str) -> None:
        if self.scoped is not None:
            self.scoped.check_admin(what)


class Memory:
    """mem0's open-source `Memory` API, every call an event in a mnemoledger home."""

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        actor: str | None = None,
        settings: Settings | None = None,
        ledger: MnemoLedger | None = None,
    ) -> None:
        """A home's ledger (opened here and closed by `close`), or an open `ledger`."""
        if ledger is None:
            from mnemoledger.commands.facade import MnemoLedger

            ledger = MnemoLedger(home, actor=actor, settings=settings)
            self._owns = True
        else:
            self._owns = False
        self.ledger = ledger
        self._access = _Access(ledger)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """`{"home": DIR, "actor": NAME, "db": URL, "embedder": NAME}`; mem0's own keys
        (`vector_store`, `llm`, `embedder` as a dict, ...) are ignored: the ledger takes
        them from its `MNEMOLEDGER_*` settings."""
        unknown = set(config_dict) - CONFIG_KEYS - MEM0_CONFIG_KEYS
        if unknown:
            raise InvalidInput(f"unknown config keys: {', '.join(sorted(unknown))}")
        update: dict[str, Any] = {}
        if config_dict.get("db") is not None:
            update["db"] = config_dict["db"]
        if isinstance(config_dict.get("embedder"), str):
            update["embedder"] = config_dict["embedder"]
        settings = Settings().model_copy(update=update) if update else None
        return cls(config_dict.get("home"), actor=config_dict.get("actor"), settings=settings)

    @classmethod
    def scoped(cls, scoped: ScopedMemory) -> Memory:
        """The API as one API key sees it (the HTTP routes): its users, agent, categories."""
        instance = cls(ledger=scoped.memory)
        instance._access = _Access(scoped.memory, scoped)
        return instance

    # --- writes --------------------------------------------------------------------------

    def add(
        self,
        messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        timestamp: int | float | None = None,
    ) -> dict[str, Any]:
        """Remember `messages` (a text, a `{"role", "content"}` message or a list of them)
        for the scope; `{"results": [{"id", "memory", "event"}, ...]}`. `timestamp` (Unix
        seconds, as mem0's platform takes it) is when the messages were said, for importing
        a history: the ledger's `at` (`MnemoLedger.add`)."""
        scope, _ = _Scope.of(user_id, agent_id, run_id)
        said = said_at_timestamp(timestamp)
        owner = self._access.user(scope.owner)
        agent = self._access.agent(scope.agent_id)
        if memory_type is not None and memory_type != PROCEDURAL_MEMORY:
            raise InvalidInput(
                f"Invalid 'memory_type'. Please pass {PROCEDURAL_MEMORY} to create "
                "procedural memories."
            )
        if prompt is not None:
            raise InvalidInput(
                "prompt is not supported: the ledger's prompts are versioned files "
                "(commands/llm/prompts.py); try a new one with `mnemoledger replay --prompt`"
            )
        extra = checked_metadata(metadata) or {}
        turns = _messages(messages)
        if memory_type == PROCEDURAL_MEMORY:
            steps = "\n".join(str(t["content"]) for t in turns)
            return self._add_inferred(
                [steps], owner, agent, scope.run_id, extra, kind=PROCEDURAL, said_at=said
            )
        if not infer:
            return self._add_raw(turns, owner, agent, scope.run_id, extra, said)
        roles = {"assistant"} if scope.agent_id and _has_role(turns, "assistant") else {"user"}
        contents = [str(t["content"]) for t in turns if t["role"] in roles]
        if not contents:
            return {"results": []}
        return self._add_inferred(contents, owner, agent, scope.run_id, extra, said_at=said)

    def update(
        self, memory_id: str, data: str, metadata: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Replace the memory's text (a `MemoryUpdated` event)."""
        if metadata:
            raise InvalidInput("metadata cannot be changed: the ledger has no event for it")
        self._active(memory_id)
        verbs = self._access.verbs
        verbs.update(memory_id, data)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, Any]:
        """Forget the memory (soft delete: its events stay, `restore` brings it back)."""
        self._active(memory_id)
        self._access.verbs.forget(memory_id)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Forget every active memory of the scope, one event each."""
        scope, _ = _Scope.of(user_id, agent_id, run_id)
        if not (scope.user_id or scope.agent_id or scope.run_id):
            raise InvalidInput(
                "At least one filter is required to delete all memories. If you want to "
                "delete all memories, use the `reset()` method."
            )
        for row in self._rows(scope):
            self._access.verbs.forget(row.id)
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Forget every active memory the caller may touch (every user of the home from
        Python; an admin key's users over HTTP). The log is append-only: nothing is
        dropped, every forget is an event, and `restore` undoes any of them. Returns None,
        as mem0's does."""
        self._access.check_admin("reset")
        for row in self._rows(_Scope()):
            self._access.verbs.forget(row.id)

    # --- reads ---------------------------------------------------------------------------

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory, or None when no active memory has this id (as mem0)."""
        try:
            row = self._active(memory_id)
        except MemoryNotFound:
            return None
        return _item(row)

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = DEFAULT_LIMIT,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """The scope's active memories, newest first; `filters` match metadata (mem0's
        operators: eq, ne, in, nin, gt, gte, lt, lte, contains, icontains, `*`, AND, OR,
        NOT). `top_k` is mem0 2.x's name for `limit`."""
        scope, rest = _Scope.of(user_id, agent_id, run_id, filters)
        scope.require()
        wanted = _limit(top_k if top_k is not None else limit)
        rows = [row for row in self._rows(scope) if _matches(_fields(row), rest)]
        rows.sort(key=lambda row: (row.created_at, row.id), reverse=True)
        return {"results": [_item(row) for row in rows[:wanted]]}

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int = DEFAULT_LIMIT,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """Hybrid search (vectors + keywords) in the scope, best first; `score` is the
        ledger's recall score (0-1), which `threshold` bounds."""
        scope, rest = _Scope.of(user_id, agent_id, run_id, filters)
        scope.require()
        wanted = _limit(top_k if top_k is not None else limit)
        narrowed = bool(rest) or scope.agent_id is not None or scope.run_id is not None
        fetch = SEARCH_MAX_K if narrowed else min(wanted, SEARCH_MAX_K)
        users = self._access.users(scope)
        if users is None:  # no user_id: the users whose memories the scope holds
            users = sorted({row.user_id for row in self._rows(scope)})
        found: list[tuple[float, MemoryRow]] = []
        for user in users:
            hits = self._access.verbs.search(query, user=user, k=fetch)
            rows = self.ledger.layers.get_many([hit.id for hit in hits])
            for hit in hits:
                row = rows.get(hit.id)
                if row is None or not (scope.holds(row) and _matches(_fields(row), rest)):
                    continue
                if threshold is None or hit.score >= threshold:
                    found.append((hit.score, row))
        found.sort(key=lambda pair: -pair[0])
        return {"results": [_item(row, score) for score, row in found[:wanted]]}

    def history(self, memory_id: str) -> builtins.list[dict[str, Any]]:
        """The memory's additions, updates and deletions, oldest first, as mem0's history
        rows (`ADD`, `UPDATE`, `DELETE`; events mem0 keeps no row for, such as a
        reinforcement or a link, are left out), with the ledger's own event type, actor and
        agent beside them."""
        try:
            events = self._access.verbs.history(memory_id)
        except MemoryNotFound:
            raise MemoryNotFoundError(memory_id) from None
        return _history(events)

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        if self._owns:
            self.ledger.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- internals -----------------------------------------------------------------------

    def _add_inferred(
        self,
        contents: builtins.list[str],
        user: str,
        agent: str | None,
        thread: str | None,
        metadata: dict[str, Any],
        kind: str | None = None,
        said_at: str | None = None,
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {"kind": kind} if kind is not None else {}
        verbs = self._access.verbs
        result = verbs.add(
            contents,
            user=user,
            agent=agent,
            thread=thread,
            metadata=metadata or None,
            at=said_at,
            **extra,
        )
        return {"results": self._outcome(result)}

    def _add_raw(
        self,
        turns: builtins.list[dict[str, Any]],
        user: str,
        agent: str | None,
        thread: str | None,
        metadata: dict[str, Any],
        said_at: str | None = None,
    ) -> dict[str, Any]:
        """Each non-system message as it is, in one save (screened like every write)."""
        items = []
        for turn in turns:
            if turn["role"] == "system":
                continue
            meta = {**metadata, "role": turn["role"]}
            if turn.get("name"):
                meta["actor_id"] = turn["name"]
            items.append(
                NewMemory(
                    content=screen(str(turn["content"])),
                    source=RAW_SOURCE,
                    metadata=meta,
                    said_at=said_at,
                )
            )
        if not items:
            return {"results": []}
        self._access.check_write(effective_category(None, items[0].kind, "default", None))
        provenance = Provenance(
            user_id=user,
            actor=self._access.actor,
            agent_id=identifier("agent", agent, required=False),
            thread_id=identifier("thread", thread, required=False),
        )
        added = self.ledger.ledger.add(provenance, items)
        return {
            "results": [
                {
                    "id": m.id.hex,
                    "memory": m.content,
                    "event": "ADD",
                    "actor_id": (m.metadata or {}).get("actor_id"),
                    "role": (m.metadata or {}).get("role"),
                }
                for m in added
            ]
        }

    def _outcome(self, result: AddResult) -> builtins.list[dict[str, Any]]:
        """mem0's ADD / DELETE / UPDATE / NONE entries for what one add did."""
        entries: list[dict[str, Any]] = [
            {"id": m.id, "memory": m.content, "event": "ADD"} for m in result.memories
        ]
        self.ledger.refresh()
        replaced = self.ledger.layers.get_many(result.superseded)
        for memory_id in result.superseded:
            row = replaced.get(memory_id)
            entries.append(
                {
                    "id": memory_id,
                    "memory": row.content if row else None,
                    "event": "DELETE",
                    "superseded_by": row.superseded_by if row else None,
                }
            )
        for m in result.reinforced:
            previous = _previous_content(self.ledger.history(m.id), result.command_id)
            if previous is not None and previous != m.content:
                entries.append(
                    {
                        "id": m.id,
                        "memory": m.content,
                        "event": "UPDATE",
                        "previous_memory": previous,
                    }
                )
            else:
                entries.append({"id": m.id, "memory": m.content, "event": "NONE"})
        return entries

    def _active(self, memory_id: str) -> MemoryRow:
        """The active memory the caller may see, else `MemoryNotFoundError`."""
        if not isinstance(memory_id, str) or not memory_id:
            raise MemoryNotFoundError(memory_id)
        try:
            self._access.verbs.get(memory_id)
        except (MemoryNotFound, InvalidInput):
            raise MemoryNotFoundError(memory_id) from None
        row = self.ledger.layers.get(self.ledger.ledger.memory(memory_id).id.hex)
        if row is None or row.state != ACTIVE or row.is_expired():
            raise MemoryNotFoundError(memory_id)
        return row

    def _rows(self, scope: _Scope) -> builtins.list[MemoryRow]:
        """The active, unexpired memories of the scope the caller may read."""
        self.ledger.refresh()
        users = self._access.users(scope)
        listed: Iterable[MemoryRow] = (
            self.ledger.layers.list(None, None, ACTIVE)
            if users is None
            else (row for user in users for row in self.ledger.layers.list(user, None, ACTIVE))
        )
        return [
            row
            for row in listed
            if scope.holds(row) and self._access.readable(row) and not row.is_expired()
        ]


# --- shapes ------------------------------------------------------------------------------

MEM0_ROLES: Final = ("user", "assistant", "system")
"""The roles of mem0's messages (`parse_messages`): another would be stored as nothing."""


class UnknownRole(InvalidInput):
    """A message's role is none of `MEM0_ROLES`."""


def _messages(messages: object) -> list[dict[str, Any]]:
    """mem0's accepted inputs as a list of `{"role", "content"}` dicts."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, list | tuple):
        raise InvalidInput("messages must be str, dict, or list[dict]")
    turns: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            raise InvalidInput("messages must be str, dict, or list[dict]")
        role, content = message.get("role"), message.get("content")
        if not isinstance(role, str) or not isinstance(content, str):
            raise InvalidInput("each message needs a text 'role' and a text 'content'")
        if role not in MEM0_ROLES:
            raise UnknownRole(
                f"message {len(turns) + 1} has role {role!r}: a message is from "
                f"{', '.join(MEM0_ROLES[:-1])} or {MEM0_ROLES[-1]}"
            )
        turns.append(dict(message))
    if not turns:
        raise InvalidInput("nothing to add: give at least one message")
    return turns


def _has_role(turns: Iterable[Mapping[str, Any]], role: str) -> bool:
    return any(t["role"] == role for t in turns)


def _limit(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"limit must be a positive integer; got {value!r}")
    return value


def _fields(row: MemoryRow) -> dict[str, Any]:
    """What mem0's filters see: the metadata and the scope ids."""
    return {
        **(row.metadata or {}),
        "user_id": row.user_id,
        "agent_id": row.agent_id,
        "run_id": row.thread_id,
    }


def _item(row: MemoryRow, score: float | None = None) -> dict[str, Any]:
    """A memory as mem0's `MemoryItem` with the promoted keys."""
    meta = dict(row.metadata or {})
    item: dict[str, Any] = {
        "id": row.id,
        "memory": row.content,
        "hash": hashlib.md5(row.content.encode()).hexdigest(),  # mem0's hash: md5 of the text
        "metadata": {k: v for k, v in meta.items() if k not in PROMOTED_KEYS} or None,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "user_id": row.user_id,
        "agent_id": row.agent_id,
        "run_id": row.thread_id,
    }
    if score is not None:
        item["score"] = score
    for key in PROMOTED_KEYS:
        if key in meta:
            item[key] = meta[key]
    return item


def _previous_content(events: Sequence[EventOut], command_id: str) -> str | None:
    """The text before `command_id`'s `MemoryUpdated`, if that command changed it."""
    content: str | None = None
    for event in events:
        if event.type == "MemoryUpdated" and event.causation_id == command_id:
            return content
        text = event.data.get("content")
        if isinstance(text, str):
            content = text
    return None


def said_at_timestamp(timestamp: object) -> str | None:
    """mem0's `timestamp` (Unix seconds) as the ledger's said time (`validation.said_at`),
    refused naming `timestamp` when it is not a number of seconds a time can hold, or is in
    the future."""
    if timestamp is None:
        return None
    if isinstance(timestamp, bool) or not isinstance(timestamp, int | float):
        raise InvalidInput(f"timestamp must be Unix seconds (a number); got {timestamp!r}")
    try:
        moment = datetime.fromtimestamp(timestamp, UTC)
    except (OverflowError, OSError, ValueError):
        raise InvalidInput(f"timestamp is out of range: {timestamp!r}") from None
    return said_at(moment, name="timestamp")


def _history(events: Sequence[EventOut]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    content: str | None = None
    created: str | None = None
    for event in events:
        name = EVENT_NAMES.get(event.type)
        old = content
        text = event.data.get("content")
        if isinstance(text, str):
            content = text
        created = created or event.at
        if name is None:
            continue
        rows.append(
            {
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{event.stream}/{event.version}")),
                "memory_id": event.stream,
                "old_memory": None if event.type == "MemoryAdded" else old,
                "new_memory": None if name == "DELETE" else content,
                "event": name,
                "created_at": created,
                "updated_at": event.at,
                "is_deleted": name == "DELETE",
                "actor_id": event.actor,
                "role": None,
                "ledger_event": event.type,
                "agent_id": event.agent_id,
                "run_id": event.thread_id,
            }
        )
    return rows


FilterOperator = Literal["eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains", "icontains"]
"""The operators of mem0's metadata conditions (`{"key": {"gte": 3}}`)."""

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "in": lambda a, b: a in b,
    "nin": lambda a, b: a not in b,
    "gt": lambda a, b: a is not None and a > b,
    "gte": lambda a, b: a is not None and a >= b,
    "lt": lambda a, b: a is not None and a < b,
    "lte": lambda a, b: a is not None and a <= b,
    "contains": lambda a, b: isinstance(a, str) and str(b) in a,
    "icontains": lambda a, b: isinstance(a, str) and str(b).lower() in a.lower(),
}
assert set(_COMPARE) == set(get_args(FilterOperator))


def _matches(fields: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    """mem0's metadata filters: `{"key": value}`, `{"key": {"op": value}}`, `"*"`, and
    `AND` / `OR` / `NOT` over lists of filters."""
    if not isinstance(filters, Mapping):
        raise InvalidInput(f"a filter must be an object; got {filters!r}")
    for key, condition in filters.items():
        if key in ("AND", "OR", "NOT"):
            parts = condition if isinstance(condition, list) else [condition]
            results = [_matches(fields, part) for part in parts]
            if key == "AND" and not all(results):
                return False
            if key == "OR" and not any(results):
                return False
            if key == "NOT" and any(results):
                return False
            continue
        value = fields.get(key)
        if condition == "*":
            if key not in fields or value is None:
                return False
        elif isinstance(condition, Mapping):
            for op, operand in condition.items():
                compare = _COMPARE.get(op)
                if compare is None:
                    raise InvalidInput(f"unknown filter operator {op!r} for {key!r}")
                try:
                    if not compare(value, operand):
                        return False
                except TypeError:
                    return False
        elif value != condition:
            return False
    return True
