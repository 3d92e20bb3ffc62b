"""The service itself: health (no key needed) and who the key is."""

from __future__ import annotations

from importlib.metadata import version
from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from mnemoledger.commands.service.http.auth import Authenticated
from mnemoledger.commands.service.http.errors import ERROR_RESPONSES

router = APIRouter(tags=["service"])


class Health(BaseModel):
    """`ready`: the API serves. Under `mnemoledger serve`, /health answers from the moment
    the server starts: `starting` while the API is built and its stores are opened (other
    requests wait until then), `failed` (503) if that failed."""

    status: Literal["starting", "ready", "failed"]
    version: str


class WhoAmI(BaseModel):
    """The calling key: its agent, users and the categories it may touch."""

    key_id: str
    agent: str
    users: list[str]
    categories: list[str] | None
    """None: every category (admin keys)."""
    admin: bool


@router.get("/health")
async def health() -> Health:
    """Liveness and readiness: answers without a key."""
    return Health(status="ready", version=version("mnemoledger"))


@router.get("/whoami", responses={401: ERROR_RESPONSES[401]})
async def whoami(caller: Authenticated) -> WhoAmI:
    """The calling key's identity and limits."""
    allowed = await caller.run(lambda scoped: scoped.categories)
    principal = caller.principal
    return WhoAmI(
        key_id=principal.key_id,
        agent=principal.agent,
        users=list(principal.users),
        categories=None if allowed is None else sorted(allowed),
        admin=principal.admin,
    )
