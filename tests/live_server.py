"""A real uvicorn serving the HTTP API on 127.0.0.1 (a free port) in a thread, for tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from mnemoledger import MnemoLedger
from mnemoledger.commands.service.http import create_app
from mnemoledger.commands.service.http.auth import ServerState
from mnemoledger.ledger import Settings


@dataclass
class LiveServer:
    url: str
    state: ServerState

    def key(
        self,
        agent: str,
        users: Sequence[str],
        categories: Sequence[str] | None = None,
        admin: bool = False,
    ) -> str:
        """A new API key, created through the running server's own facade."""
        issued = self.state.facade.call(
            lambda m: m.create_key(agent=agent, users=users, categories=categories, admin=admin)
        )
        return issued.key


@contextmanager
def live_server(home: Path, *, sqlite: bool = False) -> Iterator[LiveServer]:
    """Start uvicorn on a socket bound to 127.0.0.1:0; stop it on exit. The event store is
    the test run's (`$MNEMOLEDGER_DB`), or SQLite in `home` with `sqlite` (for servers that
    outlive one test, and so the per-test PostgreSQL schema)."""
    settings = Settings(home=home, embedder="hashing")
    if sqlite:
        settings = Settings(home=home, embedder="hashing", db=None)
    app = create_app(lambda: MnemoLedger(settings=settings, actor="tester"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", app.state.mnemoledger)
    finally:
        server.should_exit = True
        thread.join(60)
        sock.close()
