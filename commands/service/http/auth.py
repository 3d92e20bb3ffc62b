"""Who is calling: `Authorization: Bearer <key>` resolved to the key's principal.

A missing, unknown or revoked key is 401 before any route runs. Revocation is checked on
every request (one indexed lookup in the key store beside the log: PostgreSQL when the log
is there), so `mnemoledger keys revoke` takes effect at once, on every running server of
the log and every worker of each (`serve --workers`).

Each server process holds two facades, each in its own thread (`ServerState`): reads run on
one, writes on the other, so a read never waits in line behind a long write (an add's
embedding and reconstruction) of the same process. Which one a request uses is fixed by its
method and path (`reads_only`); both are complete facades on one home, safe together as two
processes are, so the choice only decides who waits for whom. Every write that takes a user's
writer lock (add, notes, ingest, consolidation) runs on the writers' facade: that lock is a
POSIX record lock between processes, which two facades of one process would not exclude
each other with, so `READ_POSTS` must never name such a route.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from mnemoledger.commands.service.keys import ApiKeyStore, Principal
from mnemoledger.commands.service.scoped import ScopedMemory
from mnemoledger.commands.service.serial import FacadeThread

T = TypeVar("T")

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="A key from `mnemoledger keys create` (it fixes the agent and its users).",
)


READ_POSTS = frozenset({"/query", "/recall", "/search", "/topic", "/mem0/search"})
"""POST routes that only read memory (a query records what it served, nothing else)."""


def reads_only(request: Request) -> bool:
    """Whether the request only reads: GET/HEAD, and the searches sent as POST."""
    return request.method in ("GET", "HEAD") or request.url.path in READ_POSTS


@dataclass(frozen=True)
class ServerState:
    """What the app holds while it runs: the readers' and the writers' facade threads and
    the key store."""

    reads: FacadeThread
    writes: FacadeThread
    keys: ApiKeyStore

    @property
    def facade(self) -> FacadeThread:
        """The writers' facade (for callers that write, and tests)."""
        return self.writes

    def for_request(self, request: Request) -> FacadeThread:
        """The facade thread `request` runs on."""
        return self.reads if reads_only(request) else self.writes


@dataclass(frozen=True)
class Caller:
    """An authenticated request: its principal, and the facade to run its operation on."""

    principal: Principal
    facade: FacadeThread

    async def run(self, operation: Callable[[ScopedMemory], T]) -> T:
        """Run `operation` on the facade as this key sees it, in the facade's thread."""
        principal = self.principal
        return await self.facade.run(lambda memory: operation(ScopedMemory(memory, principal)))


def server_state(request: Request) -> ServerState:
    state = request.app.state.mnemoledger
    assert isinstance(state, ServerState)
    return state


async def caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Caller:
    state = server_state(request)
    principal = state.keys.authenticate(credentials.credentials if credentials else None)
    return Caller(principal, state.for_request(request))


Authenticated = Annotated[Caller, Depends(caller)]
"""A route parameter that requires a valid key."""
