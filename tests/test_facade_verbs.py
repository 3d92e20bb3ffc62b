"""`MnemoLedger`'s verbs are plain methods that a reader and an IDE can follow; each one
calls one capability method (`add` calls `self._writes.add`) and must keep its parameters.

The pairs are read from the code, not from a table: each method of the facade whose body
calls `self.<capability>.<method>(...)` is paired with that method of the object the open
facade holds in that attribute. Both signatures are compared as text (annotations are
postponed, so they are the strings written in the source), and the call must pass every
parameter on unchanged.

`add`'s surfaces (the CLI, `POST /memories`, the MCP `add` and `store` tools, mem0's `Memory`
and route, the scoped facade) are read the same way: each of their parameters is one of the
facade's, under the surface's own name or as one of the few a surface keeps for a stated
reason.
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


# --- add's surfaces ------------------------------------------------------------------------

ADD_RENAMED = {
    "text": "contents",  # the CLI's arguments
    "user_id": "user",
    "agent_id": "agent",
    "thread_id": "thread",
    "timestamp": "at",  # mem0's Unix seconds
    "messages": "contents",  # mem0's messages
}
"""A surface's name for a parameter of `MnemoLedger.add`, where it has its own."""
ADD_SURFACE_ONLY = {
    "cli": {"home", "as_json", "actor"},  # every command's global options
    "http": {"layer"},  # taken from engram's clients and ignored (documented)
    "mcp add": set(),
    "mcp store": {"key", "value", "layer"},  # Nebo's store by key, beside add's contents
    "mem0": {"infer", "memory_type", "prompt", "run_id"},  # mem0's own (run_id is the thread)
}
"""Parameters a surface has that `MnemoLedger.add` has not, each for a stated reason."""


def add_surfaces() -> dict[str, set[str]]:
    """The parameter names of every surface of `add`: the CLI command, `POST /memories`, the
    MCP `add` and `store` tools, mem0's `Memory.add` and its HTTP body, the scoped facade."""
    import asyncio

    import click

    from mnemoledger.commands.cli import cli
    from mnemoledger.commands.service.http.requests import AddMemoriesRequest
    from mnemoledger.commands.service.http.routes.mem0 import MemoryCreate
    from mnemoledger.commands.service.mcp_server import build_server
    from mnemoledger.commands.service.mem0_compat import Memory
    from mnemoledger.commands.service.scoped import ScopedMemory

    command = cli.get_command(click.Context(cli), "add")
    assert command is not None
    tools = {t.name: t for t in asyncio.run(build_server(None, lambda: None).list_tools())}  # type: ignore[arg-type]

    def parameters(function: Callable[..., Any]) -> set[str]:
        return set(list(inspect.signature(function).parameters)[1:])  # self

    surfaces = {
        "cli": {str(p.name) for p in command.params},
        "http": set(AddMemoriesRequest.model_fields),
        "mcp add": set(tools["add"].input_schema["properties"]),
        "mcp store": set(tools["store"].input_schema["properties"]),
        "mem0": parameters(Memory.add),
        "mem0 http": set(MemoryCreate.model_fields),
        "scoped": parameters(ScopedMemory.add),
    }
    return surfaces


def test_every_surface_of_add_takes_the_facades_parameters_and_its_time() -> None:
    """Each surface's parameters are `MnemoLedger.add`'s (under the surface's own names, or
    one of the few it has for a stated reason), and every surface takes `at`, the time the
    contents were said (mem0: `timestamp`)."""
    facade = set(list(inspect.signature(MnemoLedger.add).parameters)[1:])
    for surface, names in add_surfaces().items():
        own = ADD_SURFACE_ONLY.get(surface.replace(" http", ""), set())
        mapped = {ADD_RENAMED.get(name, name) for name in names - own}
        assert mapped <= facade, (surface, mapped - facade)
        assert "at" in mapped, surface
