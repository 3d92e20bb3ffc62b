"""The FastAPI application: routes, key auth, limits, one error body, OpenAPI at
`/openapi.json`, docs at `/docs` and `/redoc` (served from the package: no CDN).

    app = create_app(lambda: MnemoLedger(home))
    uvicorn.run(app, host="127.0.0.1", port=8765)

Concurrency: two facades per process, each opened in its own thread when the app starts and
closed when it stops: one runs the reads, the other the writes, each one call at a time
(see `commands.serial` and `auth.ServerState`). `mnemoledger serve --workers N` runs N such
processes on one socket (uvicorn workers, each serving `starting.StartingApp`, which builds this
app in the background so that /health answers from the start);
they share the home (or the PostgreSQL log) as any processes do: every read catches the read
models up with the log first, so each sees every write acknowledged by any of them. Each
also extracts, on its writes facade, the conversation threads that went quiet (`routes.turns`),
and processes the adds recorded without waiting that no process finished (`routes.commands`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from importlib.metadata import version
from typing import TYPE_CHECKING

from fastapi import FastAPI

from mnemoledger.commands.service.http.auth import ServerState
from mnemoledger.commands.service.http.docs import install_docs
from mnemoledger.commands.service.http.errors import ERROR_RESPONSES, install_error_handlers
from mnemoledger.commands.service.http.limits import BodyLimit
from mnemoledger.commands.service.http.requests import MAX_BODY_BYTES
from mnemoledger.commands.service.http.routes import (
    checkpoints,
    commands,
    facts,
    maintenance,
    mem0,
    memories,
    recall,
    service,
    turns,
)
from mnemoledger.commands.service.http.schema import install_schema
from mnemoledger.commands.service.http.ui import install_ui
from mnemoledger.commands.service.serial import FacadeThread

if TYPE_CHECKING:
    from mnemoledger.commands.facade import MnemoLedger

TITLE = "mnemoledger"

DESCRIPTION = """An event-sourced memory ledger for AI agents.

Every route but `/health` needs `Authorization: Bearer <key>` (`mnemoledger keys create`).
The key fixes the agent (recorded on every write), the users it may act for and the
categories it may touch (the agent's allowlist). Errors share one body:
`{"error": {"status", "code", "message", "details"}}`."""


def create_app(open_facade: Callable[[], MnemoLedger]) -> FastAPI:
    """The API over the facades `open_facade` opens (called twice when the app starts, each
    time in the thread that will run that facade's calls)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Opened in threads: the event loop keeps answering (`starting.StartingApp`'s /health)
        writes = await asyncio.to_thread(FacadeThread, open_facade)
        try:
            reads = await asyncio.to_thread(FacadeThread, open_facade)
        except BaseException:
            await asyncio.to_thread(writes.close)
            raise
        keys = await writes.run(lambda memory: memory.api_key_store)
        app.state.mnemoledger = ServerState(reads, writes, keys)
        extracting = asyncio.create_task(turns.extract_quiet_threads(writes))
        adding = asyncio.create_task(commands.process_pending_adds(writes))
        try:
            yield
        finally:
            for task in (extracting, adding):
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task
            reads.close()
            writes.close()

    app = FastAPI(
        title=TITLE,
        version=version("mnemoledger"),
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    install_error_handlers(app)
    install_docs(app, TITLE)
    app.include_router(service.router)
    app.include_router(memories.router, responses=ERROR_RESPONSES)
    app.include_router(memories.seed_paths, responses=ERROR_RESPONSES)
    app.include_router(recall.router, responses=ERROR_RESPONSES)
    app.include_router(maintenance.router, responses=ERROR_RESPONSES)
    app.include_router(checkpoints.router, responses=ERROR_RESPONSES)  # seed 003 §15
    app.include_router(facts.router, responses=ERROR_RESPONSES)  # seed 001 §9 fact graph
    app.include_router(turns.router, responses=ERROR_RESPONSES)  # seed 004 §3 Trigger 1
    app.include_router(commands.router, responses=ERROR_RESPONSES)
    app.include_router(mem0.router, responses=ERROR_RESPONSES)  # mem0's server shapes, /mem0
    install_ui(app)  # the read-only explorer under /ui (admin keys)
    install_schema(app)
    return app


def app_from_environment() -> FastAPI:
    """The API over facades opened from the environment `serve` set (`MNEMOLEDGER_HOME`,
    `MNEMOLEDGER_DB`, `MNEMOLEDGER_ACTOR`, ...), as `Settings()` reads it. `serve` itself
    runs `starting.app_from_environment`, which builds this in the background."""
    from mnemoledger.commands.service.http.starting import build_api

    return build_api()
