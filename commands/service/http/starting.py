"""What `mnemoledger serve` runs in each worker: the API, built after the socket answers.

Importing the API (FastAPI, every route, the whole memory stack) and opening its two facades
(catching the read models up with the log, loading the embedding model) takes seconds of
CPU, more on a busy machine. uvicorn serves nothing until its app is imported and its
startup has finished, so a server built the plain way answered its first request, /health
included, only once all of that was done, long after it printed "Uvicorn running".

`StartingApp` is a plain ASGI app, light to import, that uvicorn serves at once. Its startup
returns immediately and builds the API in the background (the imports in a thread, then the
API's own startup, which opens the facades in their threads), so the event loop answers
from the first moment:

- `GET /health` answers 200 `{"status": "starting", ...}` until the API is built and its
  facades are open, then the API's own /health: `{"status": "ready", ...}`;
- every other request waits until the API is ready, then is served by it as usual (nothing
  is refused while starting: a client that does not poll /health is served, only later);
- if building the API fails, the error is logged, requests are answered 503 in the API's
  error body, /health says `"failed"`, and the worker stops, as a failed startup did.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger("mnemoledger.serve")

STARTING = "starting"
READY = "ready"
FAILED = "failed"
"""The values of /health's `status`: the API is being built, it serves, it could not start."""


def build_api() -> FastAPI:
    """The API over facades opened from the environment `serve` set (`MNEMOLEDGER_HOME`,
    `MNEMOLEDGER_DB`, `MNEMOLEDGER_ACTOR`, ...), as `Settings()` reads it."""
    from mnemoledger.commands.facade import MnemoLedger
    from mnemoledger.commands.service.http.app import create_app

    return create_app(lambda: MnemoLedger())


class StartingApp:
    """Serves /health at once and the API built by `build` (in a thread) once it is ready."""

    def __init__(self, build: Callable[[], ASGIApp] = build_api) -> None:
        self._build = build
        self._api: ASGIApp | None = None
        self._ready = asyncio.Event()
        self._failure: BaseException | None = None
        self._starting: asyncio.Task[None] | None = None
        self._running = AsyncExitStack()

    @property
    def status(self) -> str:
        if self._failure is not None:
            return FAILED
        return READY if self._ready.is_set() else STARTING

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self._api is None and _is_health(scope):  # the API's own /health once it serves
            status = 503 if self._failure is not None else 200
            await _json(send, status, {"status": self.status, "version": _version()})
            return
        await self._ready.wait()  # set once the API is ready, or could not start
        if self._api is None:
            await self._unavailable(scope, send)
            return
        await self._api(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._starting = asyncio.create_task(self._start())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._starting is not None and not self._starting.done():
                    self._starting.cancel()
                    await asyncio.gather(self._starting, return_exceptions=True)
                await self._running.aclose()  # the API's shutdown: its facades close
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start(self) -> None:
        try:
            api = await asyncio.to_thread(self._build)
            lifespan = getattr(getattr(api, "router", None), "lifespan_context", None)
            if lifespan is not None:  # the API's startup: its facades open in their threads
                await self._running.enter_async_context(lifespan(api))
        except Exception as error:
            self._failure = error
            self._ready.set()
            logger.error("the API could not start: %s", error, exc_info=error)
            os.kill(os.getpid(), signal.SIGTERM)  # the worker stops, as a failed startup did
            return
        self._api = api
        self._ready.set()

    async def _unavailable(self, scope: Scope, send: Send) -> None:
        if scope["type"] != "http":
            return  # a websocket: nothing is served over one
        await _json(
            send,
            503,
            {
                "error": {
                    "status": 503,
                    "code": "busy",
                    "message": f"the server could not start: {self._failure}",
                    "details": None,
                }
            },
        )


def _is_health(scope: Scope) -> bool:
    return bool(scope["type"] == "http" and scope["path"] == "/health" and scope["method"] == "GET")


def _version() -> str:
    return version("mnemoledger")


async def _json(send: Send, status: int, body: dict[str, Any]) -> None:
    content = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(content)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": content})


def app_from_environment() -> StartingApp:
    """The app of one `serve` worker (a uvicorn factory): /health at once, the API once
    built from the environment `serve` set."""
    return StartingApp()
