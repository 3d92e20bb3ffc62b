"""What `mnemoledger serve` runs on: h11 parses HTTP whatever else is installed (httptools
would refuse some requests h11 hands to the app, so they would miss the API's one error
body), and uvloop, a dependency of the package, runs the event loop: without it uvicorn
falls back to asyncio, with which one client waited two to three times as long
(scripts/bench_http.py)."""

from __future__ import annotations

import asyncio

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from mnemoledger.commands.service.serve_cli import APP_FACTORY, EVENT_LOOP, HTTP_PARSER


def served_config() -> uvicorn.Config:
    config = uvicorn.Config(APP_FACTORY, factory=True, http=HTTP_PARSER, loop=EVENT_LOOP)
    config.load()
    return config


def test_serve_parses_http_with_h11() -> None:
    assert served_config().http_protocol_class is H11Protocol


def test_serve_runs_on_uvloop() -> None:
    import uvloop

    factory = served_config().get_loop_factory()
    assert factory is not None
    loop = factory()
    try:
        assert isinstance(loop, uvloop.Loop)
        assert loop.run_until_complete(asyncio.sleep(0, result="ran")) == "ran"
    finally:
        loop.close()
