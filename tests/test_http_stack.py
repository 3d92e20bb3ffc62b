"""What `mnemoledger serve` runs on: uvicorn's C HTTP parser (httptools) and libuv event
loop (uvloop), both dependencies of the package, as its "auto" choices resolve them here.
Without them uvicorn silently falls back to pure-Python h11 and asyncio, which cost the
server CPU per request and a single client two to three times the latency
(scripts/bench_http.py)."""

from __future__ import annotations

import asyncio

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from mnemoledger.commands.service.serve_cli import APP_FACTORY, EVENT_LOOP, HTTP_PARSER


def served_config() -> uvicorn.Config:
    config = uvicorn.Config(APP_FACTORY, factory=True, http=HTTP_PARSER, loop=EVENT_LOOP)
    config.load()
    return config


def test_serve_parses_http_with_httptools() -> None:
    assert served_config().http_protocol_class is HttpToolsProtocol


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
