"""`MnemoLedger`'s verbs are plain methods that a reader and an IDE can follow; each one
calls one capability method (`add` calls `self._writes.add`) and must keep its parameters.

The pairs are read from the code, not from a table: each method of the facade whose body
calls `self.<capability>.<method>(...)` is paired with that method of the object the open
facade holds in that attribute. Both signatures are compared as text (annotations are
postponed, so they are the strings written in the source), and the call must pass every
parameter on unchanged.

The surfaces of `add`, `search` and `query` (the CLI, the HTTP bodies and `GET /search`, the
MCP tools, mem0's `Memory` and routes, the scoped facade) are read the same way and checked
both ways: each of their parameters is one of the facade's, under the surface's own name or
as one a surface keeps for a stated reason, and each of the facade's a surface lacks is
listed absent for it with a reason.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType
from typing import Any

import pytest

from mnemoledger import MnemoLedger


@dataclass(frozen=True)
class Delegation:
    """A facade method and the capability method its body calls."""

    name: str
    method: Callable[..., Any]
    call: ast.Call
    capability: object
    target: Callable[..., Any]


def _calls_on_attributes_of_self(function: Callable[..., Any]) -> list[ast.Call]:
    """The calls `self.<attribute>.<method>(...)` in the body of `function`."""
    source = textwrap.dedent(inspect.getsource(inspect.unwrap(function)))
    return [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Attribute)
        and isinstance(node.func.value.value, ast.Name)
        and node.func.value.value.id == "self"
    ]


def _methods_of_the_facade() -> dict[str, FunctionType]:
    """The functions defined in `MnemoLedger`'s body (a `@contextmanager` one too),
    dunders left out."""
    return {
        name: value
        for name, value in vars(MnemoLedger).items()
        if isinstance(value, FunctionType) and not name.startswith("__")
    }


def delegations(memory: MnemoLedger) -> list[Delegation]:
    found = []
    for name, method in _methods_of_the_facade().items():
        calls = _calls_on_attributes_of_self(method)
        if not calls:
            continue
        assert len(calls) == 1, f"{name} calls {len(calls)} capability methods, not one"
        (call,) = calls
        assert isinstance(call.func, ast.Attribute)
        assert isinstance(call.func.value, ast.Attribute)
        capability = getattr(memory, call.func.value.attr)
        target = getattr(type(capability), call.func.attr)
        found.append(Delegation(name, method, call, capability, target))
    return found


def signature_text(function: Callable[..., Any], facade_as: tuple[str, ...] = ()) -> str:
    """`function`'s signature as written, with `self`; the type variables in `facade_as`
    (a generic capability's parameter that the facade fills with itself) read as
    `MnemoLedger`."""
    text = str(inspect.signature(function))
    for variable in facade_as:
        text = re.sub(rf"\b{re.escape(variable)}\b", "MnemoLedger", text)
    return text


def facade_variables(delegation: Delegation) -> tuple[str, ...]:
    """The type variables of a generic capability (`TimeTravel[Live]`, `Replay[Live]`),
    which hold the facade that built it as `live`."""
    return tuple(v.__name__ for v in getattr(type(delegation.capability), "__parameters__", ()))


def test_every_public_method_of_the_facade_calls_one_capability_method(
    memory: MnemoLedger,
) -> None:
    delegating = {d.name for d in delegations(memory)}
    public = {name for name in _methods_of_the_facade() if not name.startswith("_")}
    assert public - delegating == set()
    assert len(delegating) >= 80  # the verbs: a parsing slip that finds none fails here
    for d in delegations(memory):
        if facade_variables(d):  # TimeTravel / Replay: generic in the facade they hold
            assert vars(d.capability)["live"] is memory, d.name


def test_each_verb_has_the_signature_of_the_capability_method_it_calls(
    memory: MnemoLedger,
) -> None:
    differing = [
        f"{d.name}{signature_text(d.method)} != "
        f"{type(d.capability).__name__}.{d.target.__name__}"
        f"{signature_text(d.target, facade_variables(d))}"
        for d in delegations(memory)
        if signature_text(d.method) != signature_text(d.target, facade_variables(d))
    ]
    assert differing == []


def test_each_verb_passes_every_parameter_on_unchanged(memory: MnemoLedger) -> None:
    for d in delegations(memory):
        parameters = list(inspect.signature(d.method).parameters.values())[1:]  # self
        positional = [
            ast.unparse(a) if not isinstance(a, ast.Starred) else "*" + ast.unparse(a.value)
            for a in d.call.args
        ]
        keywords = [
            f"{k.arg}={ast.unparse(k.value)}" if k.arg else "**" + ast.unparse(k.value)
            for k in d.call.keywords
        ]
        expected_positional, expected_keywords = [], []
        for p in parameters:
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                expected_positional.append(p.name)
            elif p.kind is p.VAR_POSITIONAL:
                expected_positional.append("*" + p.name)
            elif p.kind is p.KEYWORD_ONLY:
                expected_keywords.append(f"{p.name}={p.name}")
            else:
                expected_keywords.append("**" + p.name)
        assert (positional, keywords) == (expected_positional, expected_keywords), d.name


def test_a_public_verb_is_documented_once_on_the_facade(memory: MnemoLedger) -> None:
    """The docs site and `help()` read the facade: the full docstring is there, and the
    capability method's is one line pointing to it."""
    for d in delegations(memory):
        if d.name.startswith("_"):
            continue
        assert d.method.__doc__, d.name
        pointer = inspect.getdoc(d.target) or ""
        assert "\n" not in pointer and f"`MnemoLedger.{d.name}`" in pointer, d.name


@pytest.mark.parametrize(
    ("verb", "capability"),
    [("add", "Writes"), ("as_of", "TimeTravel"), ("close", "Parts"), ("list", "Reads")],
)
def test_the_pairs_are_the_expected_ones(memory: MnemoLedger, verb: str, capability: str) -> None:
    """A few pairs spelled out, so the derivation above is seen to find the right ones."""
    (found,) = [d for d in delegations(memory) if d.name == verb]
    assert type(found.capability).__name__ == capability
    assert found.target.__name__ == verb


# --- the surfaces of add, search and query ------------------------------------------------

GLOBAL_OPTIONS = {
    "home": "every command's --home",
    "as_json": "every command's --json",
    "actor": "every command's --actor",
}
"""The CLI's global options, which every command takes."""

MEM0 = "mem0's API has no such parameter: a mem0 client never sends it"
STORE = "`store` is Nebo's upsert of one value by key; `add` takes the rest"
SCOPED_AGENT = "the key's agent acts: a surface of a key takes no other"


@dataclass(frozen=True)
class Surface:
    """One surface of a verb: its parameter names, how they map to the facade's, the ones
    it has of its own and the facade's it leaves out, each with its reason."""

    names: set[str]
    renamed: dict[str, str]
    own: dict[str, str]
    absent: dict[str, str]


def _parameters(function: Callable[..., Any]) -> set[str]:
    return set(list(inspect.signature(function).parameters)[1:])  # self


def _cli_parameters(verb: str) -> set[str]:
    import click

    from mnemoledger.commands.cli import cli

    command = cli.get_command(click.Context(cli), verb)
    assert command is not None
    return {str(p.name) for p in command.params}


def _tool_parameters() -> dict[str, set[str]]:
    import asyncio

    from mnemoledger.commands.service.mcp_server import build_server

    tools = asyncio.run(build_server(None, lambda: None).list_tools())  # type: ignore[arg-type]
    return {t.name: set(t.input_schema["properties"]) for t in tools}


def _route_query_parameters(path: str) -> set[str]:
    from mnemoledger.commands.service.http import create_app

    operation = create_app(lambda: None).openapi()["paths"][path]["get"]  # type: ignore[arg-type,return-value]
    return {p["name"] for p in operation["parameters"] if p["in"] == "query"}


def add_surfaces() -> dict[str, Surface]:
    """`add`: the CLI command, `POST /memories`, the MCP `add` and `store` tools, mem0's
    `Memory.add` and its HTTP body, the scoped facade."""
    from mnemoledger.commands.service.http.requests import AddMemoriesRequest
    from mnemoledger.commands.service.http.routes.mem0 import MemoryCreate
    from mnemoledger.commands.service.mem0_compat import Memory
    from mnemoledger.commands.service.scoped import ScopedMemory

    tools = _tool_parameters()
    ids = {"user_id": "user", "agent_id": "agent", "thread_id": "thread"}
    mem0_own = {
        "infer": "mem0's switch between extracting facts and storing the messages as they are",
        "memory_type": "mem0's procedural memory: the steps in one memory",
        "prompt": "mem0's own extraction prompt: refused, the ledger's prompts are versioned",
        "run_id": "mem0's run is the thread, and scopes its reads too",
    }
    mem0_absent = {
        name: MEM0
        for name in (
            [
                "kind",
                "tags",
                "source",
                "namespace",
                "importance",
                "evidence",
                "category",
                "role",
                "keep_all",
                "wait",
            ]
        )
    }
    mem0_absent["thread"] = "mem0's run_id is the thread (listed as its own)"
    mem0_absent["role"] = "mem0 reads each message's own role, and keeps the user's"
    mcp_agent = "the tool writes as the server's agent (the key's, or --agent)"
    return {
        "cli": Surface(
            _cli_parameters("add"),
            {"text": "contents"},
            GLOBAL_OPTIONS,
            {
                "metadata": "flat key-value metadata is for programs that tag their records "
                "(Python, HTTP, MCP, mem0); from a shell --tags says it",
            },
        ),
        "http": Surface(
            set(AddMemoriesRequest.model_fields),
            ids,
            {"layer": "engram's clients send it; ignored, every write enters the buffer"},
            {},
        ),
        "mcp add": Surface(
            tools["add"],
            ids,
            {},
            {
                "agent": mcp_agent,
                "source": "recorded as `api`, as every key's write: where a text came from "
                "is what `evidence` and `role` say",
            },
        ),
        "mcp store": Surface(
            tools["store"],
            ids,
            {
                "key": "Nebo's key, beside add's contents",
                "value": "Nebo's value under the key",
                "layer": "Nebo's layer, combined with the namespace",
            },
            {
                "agent": mcp_agent,
                **{
                    n: STORE
                    for n in [
                        "source",
                        "importance",
                        "evidence",
                        "metadata",
                        "role",
                        "keep_all",
                        "wait",
                    ]
                },
            },
        ),
        "mem0": Surface(
            _parameters(Memory.add),
            {**ids, "messages": "contents", "timestamp": "at"},
            mem0_own,
            mem0_absent,
        ),
        "mem0 http": Surface(
            set(MemoryCreate.model_fields),
            {**ids, "messages": "contents", "timestamp": "at"},
            mem0_own,
            mem0_absent,
        ),
        "scoped": Surface(_parameters(ScopedMemory.add), {}, {}, {}),
    }


def search_surfaces() -> dict[str, Surface]:
    """`search`: the CLI command, `POST /search` and `GET /search`, the MCP `search` tool,
    mem0's `Memory.search` and its HTTP body, the scoped facade."""
    from mnemoledger.commands.service.http.requests import SearchRequest
    from mnemoledger.commands.service.http.routes.mem0 import SearchRequest as Mem0Search
    from mnemoledger.commands.service.mem0_compat import Memory
    from mnemoledger.commands.service.scoped import ScopedMemory

    mem0_own = {
        "agent_id": "mem0's scope: only the memories this agent wrote",
        "run_id": "mem0's scope: only the memories of this run (thread)",
        "filters": "mem0's filters on its scope and metadata",
        "threshold": "mem0's floor on the score a hit reports, after the search",
        "top_k": "mem0's newer name for limit",
    }
    mem0_absent = {n: MEM0 for n in ["fusion", "min_score", "expand", "rerank", "at", "namespace"]}
    return {
        "cli": Surface(
            _cli_parameters("search"),
            {},
            {
                **GLOBAL_OPTIONS,
                "with_transcripts": "--transcripts also searches ingested conversations "
                "(`search_all`)",
                "as_of": "--as-of searches the memories as they were then (`as_of`)",
            },
            {},
        ),
        "http": Surface(set(SearchRequest.model_fields), {"user_id": "user"}, {}, {}),
        "http get": Surface(
            _route_query_parameters("/search"), {"user_id": "user", "q": "query"}, {}, {}
        ),
        "mcp": Surface(
            _tool_parameters()["search"],
            {"user_id": "user"},
            {
                "namespace": "Nebo's namespace prefix (with layer), not the facade's exact one",
                "layer": "Nebo's layer, combined with the namespace as a prefix",
            },
            {
                "namespace": "the tool's namespace is Nebo's prefix (listed as its own)",
                "fusion": "a ranking knob: the tool's hits leave out the ranking fields that "
                "would show what it changed",
                "min_score": "a ranking knob, as fusion; the server's floor applies",
                "at": "a model asks about now; reproducing a past ranking is an operator's "
                "job (CLI, HTTP)",
            },
        ),
        "mem0": Surface(
            _parameters(Memory.search), {"user_id": "user", "limit": "k"}, mem0_own, mem0_absent
        ),
        "mem0 http": Surface(
            set(Mem0Search.model_fields), {"user_id": "user", "limit": "k"}, mem0_own, mem0_absent
        ),
        "scoped": Surface(_parameters(ScopedMemory.search), {}, {}, {}),
    }


def query_surfaces() -> dict[str, Surface]:
    """`query`: the CLI command, `POST /query` (its body and `filters`), the MCP `query`
    tool, the scoped facade (which takes `memory_query`'s request: its fields)."""
    from mnemoledger.commands.recall.query import QueryRequest
    from mnemoledger.commands.service.http.requests import QueryBody, QueryFiltersRequest

    filter_options = [
        "agent_id",
        "run_id",
        "actor_id",
        "role",
        "category_filter",
        "pinned",
        "importance_min",
        "importance_max",
        "importance_scale",
        "updated_after",
        "updated_before",
    ]
    body_filters = set(QueryFiltersRequest.model_fields) - {"user_id"}
    return {
        "cli": Surface(
            _cli_parameters("query"),
            {"query_text": "query", **{n: "filters" for n in filter_options}},
            GLOBAL_OPTIONS,
            {},
        ),
        "http": Surface(
            set(QueryBody.model_fields) | set(QueryFiltersRequest.model_fields),
            {"user_id": "user", **{n: "filters" for n in body_filters}},
            {},
            {},
        ),
        "mcp": Surface(
            _tool_parameters()["query"],
            {"user_id": "user"},
            {},
            {"agent": SCOPED_AGENT},
        ),
        "scoped": Surface(set(QueryRequest.model_fields), {}, {}, {"user": "in filters.user_id"}),
    }


SURFACES: dict[str, Callable[[], dict[str, Surface]]] = {
    "add": add_surfaces,
    "search": search_surfaces,
    "query": query_surfaces,
}


@pytest.mark.parametrize("verb", sorted(SURFACES))
def test_every_surface_takes_the_facades_parameters_or_says_why_not(verb: str) -> None:
    """Both ways, for each surface of `add`, `search` and `query`: each of its parameters is
    one of `MnemoLedger.<verb>`'s (under the surface's own name) or one of its own with a
    reason; each of the facade's it lacks is listed absent with a reason. A parameter added
    to the facade and to no surface, or surfaced while listed absent, fails here."""
    facade = _parameters(getattr(MnemoLedger, verb))
    for name, surface in SURFACES[verb]().items():
        assert set(surface.own) <= surface.names, (name, set(surface.own) - surface.names)
        assert set(surface.absent) <= facade, (name, set(surface.absent) - facade)
        mapped = {surface.renamed.get(n, n) for n in surface.names - set(surface.own)}
        assert mapped <= facade, (name, "not the facade's", mapped - facade)
        lacking = facade - mapped
        assert lacking == set(surface.absent), (
            name,
            "lacking but not listed",
            lacking - set(surface.absent),
            "listed absent but there",
            set(surface.absent) - lacking,
        )
        assert all(reason.strip() for reason in (*surface.own.values(), *surface.absent.values()))


def test_every_surface_of_add_takes_its_time() -> None:
    """Every surface of `add` takes `at`, the time the contents were said (mem0:
    `timestamp`)."""
    for name, surface in add_surfaces().items():
        assert "at" in {surface.renamed.get(n, n) for n in surface.names}, name
