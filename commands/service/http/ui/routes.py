"""The ledger explorer's pages: server-rendered (Jinja2), read-only, admin keys only.

The key comes from `Authorization: Bearer <key>` (scripts) or the HttpOnly cookie the login
form sets. No key, or an invalid one: a redirect to `/ui/login`; a key that is not an admin
key: a 403 page. Every page reads through the server's facade thread, like the API.

An admin key sees its own users only, as in the API: another user's pages and memories are
answered 404 whether or not the user or memory exists. `/ui/diff` compares this home with
itself and with ledgers under the directories the operator lists in
`MNEMOLEDGER_UI_DIFF_ROOTS` (none by default); any other path gets one answer, which does
not say whether a ledger is there.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from mnemoledger.commands.audit.diff import DiffReport, diff_ledgers
from mnemoledger.commands.facade import MnemoLedger
from mnemoledger.commands.models import MemoryOut
from mnemoledger.commands.service.http.auth import server_state
from mnemoledger.commands.service.http.ui import views
from mnemoledger.commands.service.keys import InvalidKey, Principal
from mnemoledger.ledger.errors import InvalidInput, LedgerError, MemoryNotFound
from mnemoledger.ledger.policy import ACTIVE, LAYERS, MAX_POSITION, STATES

T = TypeVar("T")

DIFF_ROOTS_ENV = "MNEMOLEDGER_UI_DIFF_ROOTS"
"""Directories (separated by the platform's path separator) under which `/ui/diff` may open
other ledgers, e.g. replays; unset, it compares only this home."""

OUT_OF_REACH = (
    "the explorer compares this home and ledgers under the directories in "
    f"{DIFF_ROOTS_ENV} only; use `mnemoledger diff` for any other directory"
)
"""The one answer for every path outside them (it must not tell what is there)."""

COOKIE = "mnemoledger_ui_key"
"""The login form's cookie: the admin key itself, HttpOnly, SameSite=Strict, path /ui."""

PAGE_SIZE = 50
"""Events per page of a user's timeline."""

HERE = Path(__file__).parent
STATIC_FILES = {"ui.css": "text/css", "ui.js": "text/javascript"}

templates = Jinja2Templates(directory=HERE / "templates")
templates.env.filters["pretty"] = lambda value: json.dumps(value, indent=2, sort_keys=True)
router = APIRouter(prefix="/ui", include_in_schema=False)


class LoginRequired(Exception):
    """No key, or one the store does not accept: go to the login page."""


class NotAdmin(Exception):
    """A valid key that is not an admin key."""


class PageError(Exception):
    """A page the ledger refused (no such memory, bad input)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def request_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return request.cookies.get(COOKIE)


def admin(request: Request) -> Principal:
    """The admin principal of the request's key; `LoginRequired` or `NotAdmin` otherwise."""
    try:
        principal = server_state(request).keys.authenticate(request_key(request))
    except InvalidKey as error:
        raise LoginRequired(str(error)) from error
    if not principal.admin:
        raise NotAdmin(f"key {principal.key_id} is not an admin key")
    return principal


def own_user(principal: Principal, user: str) -> str:
    """`user` if the key acts for them; else 404, as for a user with no data at all."""
    if user not in principal.users:
        raise PageError(404, f"no user {user!r} for this key")
    return user


def own_memory(principal: Principal, found: MemoryOut) -> MemoryOut:
    """`found` if it belongs to one of the key's users; else unknown, like a missing id."""
    if found.user_id not in principal.users:
        raise MemoryNotFound(found.id)
    return found


async def read(
    request: Request, operation: Callable[[MnemoLedger], T], *, user: str | None = None
) -> T:
    """Run a read on the facade for an admin request (for `user`, who must be one of the
    key's users); ledger errors become error pages."""
    principal = admin(request)
    if user is not None:
        own_user(principal, user)
    return await run(request, operation)


async def run(request: Request, operation: Callable[[MnemoLedger], T]) -> T:
    """Run `operation` on the facade; ledger errors become error pages."""
    try:
        return await server_state(request).reads.run(operation)  # the explorer only reads
    except MemoryNotFound as error:
        raise PageError(404, f"no memory {error}") from error
    except InvalidInput as error:
        raise PageError(400, str(error)) from error
    except LedgerError as error:
        raise PageError(500, str(error)) from error


def page(request: Request, template: str, code: int = 200, **context: Any) -> HTMLResponse:
    """Render `template` with `context` as the answer, with HTTP status `code`."""
    return templates.TemplateResponse(request, template, context, status_code=code)


# --- login --------------------------------------------------------------------------------


@router.get("/login", response_class=HTMLResponse)
async def login_form(request: Request) -> HTMLResponse:
    return page(request, "login.html", error=None)


@router.post("/login", response_model=None)
async def login(request: Request) -> Response:
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    key = (form.get("key") or [""])[0].strip()
    try:
        principal = server_state(request).keys.authenticate(key)
    except InvalidKey as error:
        return page(request, "login.html", 401, error=str(error))
    if not principal.admin:
        return page(request, "login.html", 403, error="only admin keys may use the explorer")
    response = RedirectResponse("/ui/users", status_code=303)
    response.set_cookie(COOKIE, key, httponly=True, samesite="strict", path="/ui")
    return response


@router.get("/logout")
async def logout() -> RedirectResponse:
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response


@router.get("/static/{name}")
async def static(name: str) -> FileResponse:
    if name not in STATIC_FILES:
        raise PageError(404, f"no file {name}")
    return FileResponse(HERE / "static" / name, media_type=STATIC_FILES[name])


# --- pages --------------------------------------------------------------------------------


@router.get("", response_class=HTMLResponse)
async def home(request: Request) -> RedirectResponse:
    admin(request)
    return RedirectResponse("/ui/users", status_code=303)


@router.get("/users", response_class=HTMLResponse)
async def users(request: Request) -> HTMLResponse:
    principal = admin(request)

    def load(memory: MnemoLedger) -> list[dict[str, Any]]:
        rows = []
        present = set(memory.users_with_memories())
        for user in [u for u in principal.users if u in present]:
            everything = memory.list(user=user)
            active = [m for m in everything if m.state == ACTIVE]
            rows.append(
                {
                    "user": user,
                    "total": len(everything),
                    "states": Counter(m.state for m in everything),
                    "layers": Counter(m.layer for m in active),
                }
            )
        return rows

    rows = await run(request, load)
    return page(request, "users.html", rows=rows, layers=LAYERS, states=STATES)


@router.get("/users/{user}", response_class=HTMLResponse)
async def timeline(
    request: Request,
    user: str,
    type: str = "",
    actor: str = "",
    agent: str = "",
    since: str = "",
    until: str = "",
    page_number: Annotated[int, Query(alias="page", ge=1, le=MAX_POSITION)] = 1,
) -> HTMLResponse:
    def load(memory: MnemoLedger) -> dict[str, Any]:
        events = memory.timeline(
            user=user,
            types=[type] if type else (),
            since=since or None,
            until=until or None,
            actor=actor or None,
        )
        if agent:
            events = [e for e in events if e.agent_id == agent]
        events.reverse()  # newest first
        start = (page_number - 1) * PAGE_SIZE
        shown = events[start : start + PAGE_SIZE]
        memory.refresh()
        calls = {
            e.causation_id: memory.history_model.llm_calls(e.causation_id)
            for e in shown
            if e.causation_id
        }
        deciding = {
            f"{e.stream}:{e.version}": memory.history_model.deciding_call(
                e.causation_id, e.prompt_version
            )
            for e in shown
        }
        memories = {m.id for m in memory.list(user=user)}
        return {
            "events": shown,
            "total": len(events),
            "calls": calls,
            "deciding": deciding,
            "memories": memories,
            "types": sorted({e.type for e in memory.timeline(user=user)}),
        }

    data = await read(request, load, user=user)
    filters = {"type": type, "actor": actor, "agent": agent, "since": since, "until": until}
    pages = max(1, -(-data["total"] // PAGE_SIZE))

    def page_link(number: int) -> str:
        return "?" + urlencode({**{k: v for k, v in filters.items() if v}, "page": number})

    return page(
        request,
        "timeline.html",
        user=user,
        filters=filters,
        page_number=page_number,
        pages=pages,
        previous=page_link(page_number - 1) if page_number > 1 else None,
        next=page_link(page_number + 1) if page_number < pages else None,
        **data,
    )


@router.get("/memories/{memory_id}", response_class=HTMLResponse)
async def memory_page(request: Request, memory_id: str) -> HTMLResponse:
    principal = admin(request)

    def load(memory: MnemoLedger) -> dict[str, Any]:
        current = own_memory(principal, memory.get(memory_id))
        replaced = [
            m.id
            for m in memory.list(user=current.user_id)
            if m.superseded_by == current.id and m.id != current.id
        ]
        return {
            "memory": current,
            "timeline": views.memory_timeline(memory.memory_history(memory_id)),
            "replaced": replaced,
        }

    data = await run(request, load)
    return page(request, "memory.html", user=data["memory"].user_id, **data)


@router.get("/users/{user}/layers", response_class=HTMLResponse)
async def layers(
    request: Request,
    user: str,
    as_of: Annotated[int | None, Query(ge=0, le=MAX_POSITION)] = None,
) -> HTMLResponse:
    def load(memory: MnemoLedger) -> dict[str, Any]:
        last = memory.ledger.last_position()
        position = last if as_of is None else min(max(as_of, 0), last)
        with memory.as_of(position) as past:
            shown = past.list(user=user, state=ACTIVE)
        return {"last": last, "position": position, "groups": views.layer_groups(shown)}

    data = await read(request, load, user=user)
    return page(request, "layers.html", user=user, **data)


@router.get("/users/{user}/core", response_class=HTMLResponse)
async def core(
    request: Request,
    user: str,
    a: Annotated[int | None, Query(ge=0, le=MAX_POSITION)] = None,
    b: Annotated[int | None, Query(ge=0, le=MAX_POSITION)] = None,
) -> HTMLResponse:
    versions = await read(request, lambda memory: _core_versions(memory, user), user=user)
    numbers = [int(str(v["version"])) for v in versions]
    diff = None
    if len(numbers) >= 2:
        a = a if a in numbers else numbers[-2]
        b = b if b in numbers else numbers[-1]
        text = {int(str(v["version"])): str(v["markdown"]) for v in versions}
        diff = views.side_by_side(text[a], text[b], f"version {a}", f"version {b}")
    return page(
        request, "core.html", user=user, versions=versions, numbers=numbers, a=a, b=b, diff=diff
    )


def _core_versions(memory: MnemoLedger, user: str) -> list[dict[str, object]]:
    memory.refresh()
    return memory.core_model.versions(user)


@router.get("/users/{user}/graph", response_class=HTMLResponse)
async def graph(request: Request, user: str) -> HTMLResponse:
    def load(memory: MnemoLedger) -> dict[str, Any]:
        nodes = memory.list(user=user, state=ACTIVE)
        edges = memory.graph_edges(user=user)
        tree = memory.topics_model.tree(user)
        return {"svg": views.graph_svg(nodes, edges), "edges": edges, "topics": tree}

    data = await read(request, load, user=user)
    children: dict[str | None, list[Any]] = {}
    for topic in data["topics"]:
        children.setdefault(topic.parent, []).append(topic)
    return page(
        request,
        "graph.html",
        user=user,
        colours=views.LAYER_COLOURS,
        children=children,
        **data,
    )


@router.get("/users/{user}/report", response_class=HTMLResponse)
async def report(request: Request, user: str, bucket: str = "day") -> HTMLResponse:
    result = await read(request, lambda memory: memory.report(user=user, bucket=bucket), user=user)
    return page(
        request,
        "report.html",
        user=user,
        bucket=bucket,
        report=result,
        charts=views.report_charts(result),
        chart_width=views.CHART_WIDTH,
    )


@router.get("/diff", response_class=HTMLResponse)
async def diff(request: Request, a: str = "", b: str = "", user: str = "") -> HTMLResponse:
    principal = admin(request)
    users = [own_user(principal, user)] if user else list(principal.users)
    result = None
    if a and b:

        def compare(memory: MnemoLedger) -> DiffReport:
            home = memory.settings.home
            first, second = reachable(home, a), reachable(home, b)
            with memory._opened(first) as left, memory._opened(second) as right:
                return diff_ledgers(left, right, users)

        result = await run(request, compare)
    patches = result.core if result else {}
    core = {u: views.unified_lines_from_patch(patch) for u, patch in patches.items()}
    return page(request, "diff.html", a=a, b=b, user=user, result=result, core=core)


def diff_roots() -> list[Path]:
    """The directories of `MNEMOLEDGER_UI_DIFF_ROOTS` (absolute ones; others are ignored)."""
    listed = os.environ.get(DIFF_ROOTS_ENV, "").split(os.pathsep)
    return [Path(entry).resolve() for entry in listed if entry and Path(entry).is_absolute()]


def reachable(home: Path, text: str) -> Path:
    """The directory `text` names, if it is this home or under a configured root; every
    other path gets the same 404 before anything there is looked at."""
    if "\x00" in text:
        raise PageError(400, "a path cannot contain a NUL character")
    path = Path(text).expanduser()
    if path.is_absolute():
        resolved = path.resolve()
        if resolved == home.resolve() or any(resolved.is_relative_to(r) for r in diff_roots()):
            return resolved
    raise PageError(404, OUT_OF_REACH)


# --- wiring ---------------------------------------------------------------------------------


def install_ui(app: FastAPI) -> None:
    """Serve the explorer under `/ui` on `app`, with its login redirect and error pages."""

    async def to_login(request: Request, _: Exception) -> Response:
        return RedirectResponse("/ui/login", status_code=303)

    async def forbidden(request: Request, error: Exception) -> Response:
        return page(request, "error.html", 403, status=403, message=str(error))

    async def refused(request: Request, error: Exception) -> Response:
        assert isinstance(error, PageError)
        return page(request, "error.html", error.status, status=error.status, message=str(error))

    app.include_router(router)
    app.add_exception_handler(LoginRequired, to_login)
    app.add_exception_handler(NotAdmin, forbidden)
    app.add_exception_handler(PageError, refused)
