"""One error body for every failure the API answers:

    {"error": {"status": 403, "code": "user_not_allowed", "message": "key 3f2a... may not act
     for user 'bob'; its users: maya", "details": null}}

400 bad_request (the ledger refused the input), 401 unauthorized (missing, unknown or revoked
key), 403 user_not_allowed / category_not_allowed / unknown_agent / agent_mismatch, 404
not_found (no such memory, or one of a user the key does not act for), 405, 409 conflict (a
state change the memory's state does not allow), 413 payload_too_large, 422
validation_error (the request does not match its schema; `details` lists the fields),
500 internal_error (a bug: the message says nothing of the internals), 503 busy (another
writer of the same user held its lock past the timeout, or adds sent without waiting are
still being processed after a read waited 5 minutes for them: try again).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from mnemoledger.commands.service.http.requests import IDENTIFIER, KEY, VISIBLE, WORDS
from mnemoledger.commands.service.keys import InvalidKey
from mnemoledger.commands.service.scoped import Forbidden
from mnemoledger.commands.write.add_later import AddsStillProcessing
from mnemoledger.commands.write.categories import CategoryNotAllowed, UnknownAgent
from mnemoledger.ledger.errors import InvalidInput, InvalidTransition, LedgerError, MemoryNotFound
from mnemoledger.ledger.store import WriterBusy

logger = logging.getLogger(__name__)

CODE_BY_STATUS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    422: "validation_error",
    500: "internal_error",
    503: "busy",
}


class ErrorDetail(BaseModel):
    """What went wrong."""

    status: int
    code: str
    """A stable machine-readable reason, e.g. `user_not_allowed`."""
    message: str
    """One line for a person."""
    details: list[dict[str, Any]] | None = None
    """422 only: one entry per invalid field (`loc`, `msg`, `type`)."""


class ErrorBody(BaseModel):
    """The body of every 4xx/5xx answer."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": code.replace("_", " ")}
    for status, code in CODE_BY_STATUS.items()
    if status in (400, 401, 403, 404, 409, 413, 422)
}
"""The documented error answers of every authenticated route (OpenAPI)."""


def error_response(
    status: int,
    message: str,
    code: str | None = None,
    details: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    first_line = message.strip().splitlines()[0] if message.strip() else code or "error"
    body = ErrorBody(
        error=ErrorDetail(
            status=status,
            code=code or CODE_BY_STATUS.get(status, "error"),
            message=first_line,
            details=details,
        )
    )
    return JSONResponse(body.model_dump(mode="json"), status_code=status, headers=headers)


PATTERN_MESSAGES = {
    IDENTIFIER: "must not be empty or contain white space or control characters",
    VISIBLE: "must not be empty or only white space or control characters",
    KEY: "must have a character other than white space, control characters, -, _ and /",
    WORDS: "must not be empty, only white space, or hold a NUL character",
}
"""What a schema pattern means, in words (pydantic says "String should match pattern")."""


def validation_message(e: Mapping[str, Any]) -> Any:
    """One pydantic error in words: what a pattern or a choice means, the value given."""
    context = e.get("ctx") or {}
    if e.get("type") == "string_pattern_mismatch":
        return PATTERN_MESSAGES.get(str(context.get("pattern")), e.get("msg"))
    if e.get("type") == "literal_error" and isinstance(e.get("input"), str):
        given = repr(e["input"])
        given = given if len(given) <= 40 else given[:37] + "..."
        return f"{given} is none of {context.get('expected')}"
    return e.get("msg")


def _validation_details(error: RequestValidationError) -> list[dict[str, Any]]:
    return [
        {
            "loc": [str(part) for part in e.get("loc", ())],
            "msg": validation_message(e),
            "type": e.get("type"),
        }
        for e in error.errors()
    ]


def allowed_methods(request: Request) -> list[str]:
    """The methods of every route of the request's path, sorted. The router's own 405 names
    those of the first route that matched the path alone: `/memories` has a GET route and a
    POST route, and `Allow` must name both."""
    methods: set[str] = set()
    for route in iter_route_contexts(request.app.routes):
        path = route.path
        if route.methods and path and compile_path(path)[0].fullmatch(request.url.path):
            methods |= route.methods
    return sorted(methods)


def install_error_handlers(app: FastAPI) -> None:
    """Map the ledger's named errors, FastAPI's and Starlette's onto the one error body."""

    async def invalid_key(_: Request, error: Exception) -> JSONResponse:
        return error_response(401, str(error), headers={"WWW-Authenticate": "Bearer"})

    async def forbidden(_: Request, error: Exception) -> JSONResponse:
        code = "unknown_agent" if isinstance(error, UnknownAgent) else "category_not_allowed"
        if isinstance(error, Forbidden):
            code = error.code
        return error_response(403, str(error), code)

    async def not_found(_: Request, error: Exception) -> JSONResponse:
        return error_response(404, str(error))

    async def conflict(_: Request, error: Exception) -> JSONResponse:
        return error_response(409, str(error))

    async def bad_input(_: Request, error: Exception) -> JSONResponse:
        return error_response(400, str(error))

    async def busy(_: Request, error: Exception) -> JSONResponse:
        return error_response(503, str(error), headers={"Retry-After": "1"})

    async def ledger_error(_: Request, error: Exception) -> JSONResponse:
        logger.error("ledger error: %s", error)
        return error_response(500, "the server could not complete the request", "server_error")

    async def validation(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        details = _validation_details(error)
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(p for p in first["loc"] if p != "body") or "request"
        return error_response(422, f"{where}: {first['msg']}", details=details)

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, StarletteHTTPException)
        headers = error.headers
        if error.status_code == 405:
            headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(request))}
        return error_response(error.status_code, str(error.detail), headers=headers)

    async def crash(_: Request, error: Exception) -> JSONResponse:
        logger.exception("unexpected error", exc_info=error)
        return error_response(500, "internal server error")

    app.add_exception_handler(InvalidKey, invalid_key)
    app.add_exception_handler(Forbidden, forbidden)
    app.add_exception_handler(CategoryNotAllowed, forbidden)
    app.add_exception_handler(MemoryNotFound, not_found)
    app.add_exception_handler(InvalidTransition, conflict)
    app.add_exception_handler(InvalidInput, bad_input)
    app.add_exception_handler(WriterBusy, busy)
    app.add_exception_handler(AddsStillProcessing, busy)
    app.add_exception_handler(LedgerError, ledger_error)
    app.add_exception_handler(RequestValidationError, validation)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, crash)
