"""The FastAPI application: routes, key auth, limits, one error body, OpenAPI at
`/openapi.json` (docs at `/docs`).

    app = create_app(lambda: MnemoLedger(home))
    uvicorn.run(app, host="127.0.0.1", port=8765)

Concurrency: one facade, opened in its own thread when the app starts and closed when it
stops; every request's operation runs in that thread, one at a time (see
`commands.serial`). Run one process per core for more throughput: they share the home
safely.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import TYPE_CHECKING

from fastapi import FastAPI

from mnemoledger.commands.service.http.auth import ServerState
from mnemoledger.commands.service.http.errors import ERROR_RESPONSES, install_error_handlers
from mnemoledger.commands.service.http.limits import BodyLimit
from mnemoledger.commands.service.http.requests import MAX_BODY_BYTES
from mnemoledger.commands.service.http.routes import maintenance, mem0, memories, recall, service
from mnemoledger.commands.service.http.ui import install_ui
from mnemoledger.commands.service.serial import FacadeThread

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

DESCRIPTION = """An event-sourced memory ledger for AI agents.

Every route but `/health` needs `Authorization: Bearer <key>` (`mnemoledger keys create`).
The key fixes the agent (recorded on every write), the users it may act for and the
categories it may touch (the agent's allowlist, seed 003 §5). Errors share one body:
`{"error": {"status", "code", "message", "details"}}`."""


def create_app(open_facade: Callable[[], MnemoLedger]) -> FastAPI:
    """The API over the facade `open_facade` opens (called once, in the facade's thread)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        facade = FacadeThread(open_facade)
        keys = facade.call(lambda memory: memory.api_key_store)
        app.state.mnemoledger = ServerState(facade, keys)
        try:
            yield
        finally:
            facade.close()

    app = FastAPI(
        title="mnemoledger",
        version=version("mnemoledger"),
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    install_error_handlers(app)
    app.include_router(service.router)
    app.include_router(memories.router, responses=ERROR_RESPONSES)
    app.include_router(memories.seed_paths, responses=ERROR_RESPONSES)
    app.include_router(recall.router, responses=ERROR_RESPONSES)
    app.include_router(maintenance.router, responses=ERROR_RESPONSES)
    app.include_router(mem0.router, responses=ERROR_RESPONSES)  # mem0's server shapes, /mem0
    install_ui(app)  # the read-only explorer under /ui (admin keys)
    return app
