"""Who is calling: `Authorization: Bearer <key>` resolved to the key's principal.

A missing, unknown or revoked key is 401 before any route runs. Revocation is checked on
every request (one indexed lookup in the key store beside the log: PostgreSQL when the log
is there), so `mnemoledger keys revoke` takes effect at once, on every running server of
the log.
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


@dataclass(frozen=True)
class ServerState:
    """What the app holds while it runs: the facade's thread and the key store."""

    facade: FacadeThread
    keys: ApiKeyStore


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
    return Caller(principal, state.facade)


Authenticated = Annotated[Caller, Depends(caller)]
"""A route parameter that requires a valid key."""
