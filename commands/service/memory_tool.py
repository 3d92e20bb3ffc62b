"""Nebo's memory-tool actions that work on many memories at once (seed 004 §5): `list` by
namespace prefix, `delete` by key, `clear` a namespace prefix. MCP and HTTP serve the same
functions; a delete or clear forgets, one event per memory, so `restore` undoes it."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel

from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.service.scoped import ScopedMemory
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import ACTIVE
from mnemoledger.ledger.validation import normalize_key, normalize_text

NeboLayer = Literal["tacit", "daily", "entity"]
"""Seed 004 §2: Nebo's three namespace layers."""

LIST_MAX: Final = 50
"""Seed 004 §5: `list` returns at most 50 memories."""


class ListedMemory(MemoryOut):
    """A memory with how often it has been served to agents."""

    access_count: int


class ListResult(BaseModel):
    """Active memories under a namespace prefix, most accessed first."""

    namespace: str
    memories: list[ListedMemory]


class ForgetResult(BaseModel):
    """What a `delete` or `clear` forgot (each one a `MemoryForgotten` event)."""

    count: int
    forgotten: list[str]
    """The ids of the memories forgotten; `restore` brings any of them back."""


def effective_namespace(layer: str | None, namespace: str | None) -> str:
    """Seed 004 §2: `layer + "/" + namespace` (unless they are the same); the layer alone;
    else `default`."""
    if layer and namespace and namespace != layer:
        return f"{layer}/{namespace}"
    return layer or namespace or "default"


def namespace_prefix(layer: str | None, namespace: str | None) -> str:
    """The namespace prefix a read or a clear names: `layer/namespace` as `store` files it
    when a layer is given, else the namespace as given ("" matches every namespace)."""
    return effective_namespace(layer, namespace) if layer else namespace or ""


def listed(
    scoped: ScopedMemory,
    user: str,
    prefix: str,
    limit: int | None = None,
    *,
    expired: bool = False,
) -> list[ListedMemory]:
    """Seed 004 §5 `list`: the user's active memories (unexpired unless `expired`) whose
    namespace starts with `prefix`, most accessed first (then most recently changed), at
    most `limit`."""
    user = scoped.check_user(user)
    visible = {m.id: m for m in scoped.list(user=user, state=ACTIVE) if expired or not m.expired}
    rows = [
        row
        for row in scoped.memory.layers.list(user, state=ACTIVE)
        if row.id in visible and row.namespace.startswith(prefix)
    ]
    rows.sort(key=lambda row: row.updated_at, reverse=True)
    rows.sort(key=lambda row: -row.access_count)  # stable: ties stay newest first
    return [
        ListedMemory(**visible[row.id].model_dump(), access_count=row.access_count)
        for row in rows[:limit]
    ]


def list_prefix(scoped: ScopedMemory, user: str, prefix: str, limit: int = LIST_MAX) -> ListResult:
    """`list`: at most `limit` (50) memories under `prefix`, most accessed first."""
    return ListResult(namespace=prefix, memories=listed(scoped, user, prefix, limit))


def forget_all(scoped: ScopedMemory, ids: list[str]) -> ForgetResult:
    """Forget each memory (one event each); the log keeps them all."""
    for memory_id in ids:
        scoped.forget(memory_id)
    return ForgetResult(count=len(ids), forgotten=ids)


def delete_key(
    scoped: ScopedMemory, user: str, key: str, namespace: str | None = None
) -> ForgetResult:
    """`delete`: forget the memories stored under `key` (matched as `store` normalises
    keys), in `namespace` only or in every namespace."""
    user = scoped.check_user(user)
    wanted = normalize_key(normalize_text(key))
    if not wanted:
        raise InvalidInput("key must not be empty")
    scoped.memory.refresh()
    ids = [
        row.id
        for row in scoped.memory.layers.list(user, state=ACTIVE)
        if row.key == wanted
        and (namespace is None or row.namespace == namespace)
        and scoped.may_read(row.effective_category)
    ]
    return forget_all(scoped, ids)


def clear_prefix(scoped: ScopedMemory, user: str, prefix: str) -> ForgetResult:
    """`clear`: forget every memory of the user whose namespace starts with `prefix`."""
    if not prefix:
        raise InvalidInput("clear needs a namespace or a layer")
    ids = [m.id for m in listed(scoped, user, prefix, expired=True)]
    return forget_all(scoped, sorted(ids))
