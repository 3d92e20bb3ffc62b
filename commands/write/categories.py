"""Memory categories and per-agent allowlists (seed 003 §5), read from YAML.

    categories:
      system:
        - {name: profile, context: all}           # always in the agent's context
        - {name: event, context: rag, rag_length: 30}
      custom: []
    allowlists:
      planner: [goals, tasks, projects]

The shipped default is `commands/data/categories.yaml` (the seed's file); a deployment names
its own with the `categories_file` setting or `$MNEMOLEDGER_CATEGORIES`. Enforcement is the
server's (seed 003 §5-6): an agent no allowlist names gets `default_allowlist` (refused
when the file has none, as in the seed), and a query's categories
must be a subset of its agent's allowlist, checked before anything is searched. A category
the file does not list is `rag` with no per-category cap.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml  # type: ignore[import-untyped]
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mnemoledger.ledger.errors import InvalidInput, LedgerError
from mnemoledger.ledger.policy import (
    CATEGORY_BY_NAMESPACE,
    CATEGORY_BY_NOTE_KIND,
    CONTEXT_ALL,
    CONTEXT_RAG,
    DEFAULT_CATEGORY,
    EPISODIC_CATEGORY,
    INSIGHT_CATEGORY,
    PROCEDURAL_CATEGORY,
)
from mnemoledger.ledger.settings import Settings
from mnemoledger.ledger.validation import identifier

CATEGORIES_ENV = "MNEMOLEDGER_CATEGORIES"
"""Environment variable naming a categories YAML file (the `categories_file` setting wins)."""

DEFAULT_CATEGORIES_RESOURCE = "data/categories.yaml"
"""The shipped default, inside the `commands` package."""


class CategoryNotAllowed(InvalidInput):
    """A query asked for categories outside its agent's allowlist (seed 003 §5)."""

    def __init__(self, agent: str, disallowed: Sequence[str], allowed: Sequence[str]) -> None:
        self.agent = agent
        self.disallowed = list(disallowed)
        self.allowed = list(allowed)
        super().__init__(
            f"agent {agent!r} may not read categor{'y' if len(disallowed) == 1 else 'ies'} "
            f"{', '.join(disallowed)}; its allowlist is: {', '.join(allowed) or '(empty)'}"
        )


class CategoryNotWritable(CategoryNotAllowed):
    """A write named a category outside its writer's allowlist (the agent's, or the API
    key's categories): refused, naming the categories the writer may write."""

    def __init__(self, writer: str, category: str, allowed: Sequence[str]) -> None:
        InvalidInput.__init__(
            self,
            f"{writer} may not write category {category!r}; "
            f"it may write: {', '.join(allowed) or '(none)'}",
        )
        self.agent = writer
        self.disallowed = [category]
        self.allowed = list(allowed)


class UnknownAgent(CategoryNotAllowed):
    """No allowlist names the agent: it may read nothing (seed 003 §5)."""

    def __init__(self, agent: str, known: Sequence[str]) -> None:
        InvalidInput.__init__(
            self,
            f"unknown agent {agent!r}: no allowlist names it "
            f"(known agents: {', '.join(sorted(known)) or 'none'})",
        )
        self.agent = agent
        self.disallowed = []
        self.allowed = []


class CategoriesConfigError(LedgerError):
    """The categories file is missing, unreadable or invalid (a deployment error)."""


class CategorySpec(BaseModel):
    """One category and its context mode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    context: Literal["all", "rag"] = CONTEXT_RAG
    """`all`: always in context (no similarity threshold); `rag`: retrieved by search."""
    rag_length: int | None = Field(default=None, ge=1)
    """`rag` only: at most this many memories of the category per query (None: no cap)."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return str(identifier("category", value))

    @model_validator(mode="after")
    def _length_for_rag_only(self) -> CategorySpec:
        if self.context == CONTEXT_ALL and self.rag_length is not None:
            raise ValueError(f"category {self.name!r}: rag_length applies to rag categories only")
        return self


class CategoryGroups(BaseModel):
    """The seed's `system` categories and a deployment's `custom` ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: list[CategorySpec] = Field(default_factory=list)
    custom: list[CategorySpec] = Field(default_factory=list)


@dataclass(frozen=True)
class Scope:
    """What one query may read: the categories, each with its context mode."""

    agent: str
    categories: tuple[str, ...]
    """The categories the query serves (requested, else the allowlist minus procedural)."""
    requested: tuple[str, ...] | None
    """The categories the query named; None is the default conversational context."""
    specs: tuple[CategorySpec, ...]
    """One spec per served category, in the same order."""

    @property
    def always(self) -> tuple[str, ...]:
        """The `context: all` categories."""
        return tuple(s.name for s in self.specs if s.context == CONTEXT_ALL)

    @property
    def searched(self) -> dict[str, int | None]:
        """The `context: rag` categories and their rag_length."""
        return {s.name: s.rag_length for s in self.specs if s.context == CONTEXT_RAG}


class CategoriesConfig(BaseModel):
    """The categories file: categories with context modes, and agent allowlists."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    categories: CategoryGroups = Field(default_factory=CategoryGroups)
    allowlists: dict[str, list[str]]
    default_allowlist: list[str] | None = None
    """What an agent no allowlist names may read and write; without it such an agent is
    refused (the seed's policy)."""

    @field_validator("allowlists")
    @classmethod
    def _allowlists(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return {
            str(identifier("agent", agent)): _category_names(names)
            for agent, names in value.items()
        }

    @field_validator("default_allowlist")
    @classmethod
    def _default_allowlist(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _category_names(value)

    @model_validator(mode="after")
    def _unique_names(self) -> CategoriesConfig:
        seen: set[str] = set()
        for spec in (*self.categories.system, *self.categories.custom):
            if spec.name in seen:
                raise ValueError(f"category {spec.name!r} is listed twice")
            seen.add(spec.name)
        return self

    def spec(self, name: str) -> CategorySpec:
        """The listed spec of `name`, else `rag` with no cap."""
        for spec in (*self.categories.system, *self.categories.custom):
            if spec.name == name:
                return spec
        return CategorySpec(name=name)

    def allowlist(self, agent: str) -> list[str]:
        """The categories `agent` may read: its own allowlist, else the default one; an
        agent neither covers is refused."""
        if agent in self.allowlists:
            return list(self.allowlists[agent])
        if self.default_allowlist is not None:
            return list(self.default_allowlist)
        raise UnknownAgent(agent, list(self.allowlists))

    def check_write(self, agent: str | None, category: str | None) -> str | None:
        """The category a write names, checked: an identifier, and in the
        writer's allowlist when the writer is an agent (its own, else the default one; a
        write with no agent, or by an agent neither covers, is the owner's: any category).
        None (no category named) stays None: readers derive one (`effective_category`)."""
        name = identifier("category", category, required=False)
        if name is None or agent is None:
            return name
        if agent not in self.allowlists and self.default_allowlist is None:
            return name
        allowed = self.allowlist(agent)
        if name not in allowed:
            raise CategoryNotWritable(f"agent {agent!r}", name, allowed)
        return name

    def scope(self, agent: str, requested: Sequence[str] | None = None) -> Scope:
        """Seed 003 §5: requested categories must be a subset of the agent's allowlist
        (refused otherwise, naming the disallowed ones); none requested (None or empty) is
        the whole allowlist except `procedural`, which is served only when named (§12)."""
        agent = str(identifier("agent", agent))
        allowed = self.allowlist(agent)
        if isinstance(requested, str):
            raise InvalidInput("categories must be a list of names, not one string")
        names = [str(identifier("category", c)) for c in requested or ()]
        if names:
            disallowed = [c for c in dict.fromkeys(names) if c not in allowed]
            if disallowed:
                raise CategoryNotAllowed(agent, disallowed, allowed)
            chosen = tuple(dict.fromkeys(names))
            named: tuple[str, ...] | None = chosen
        else:
            chosen = tuple(c for c in allowed if c != PROCEDURAL_CATEGORY)
            named = None
        return Scope(agent, chosen, named, tuple(self.spec(c) for c in chosen))


def _category_names(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(str(identifier("category", n)) for n in names))


SYSTEM_CATEGORIES: tuple[str, ...] = tuple(
    dict.fromkeys(
        (
            DEFAULT_CATEGORY,  # plain facts
            EPISODIC_CATEGORY,  # what happened
            PROCEDURAL_CATEGORY,  # seed 003 §12
            INSIGHT_CATEGORY,  # seed 003 §3: theory-of-mind insights
            "profile",  # core.md (`commands.scoped.CORE_DOCUMENT_CATEGORY`)
            *CATEGORY_BY_NOTE_KIND.values(),
            *(category for _, category in CATEGORY_BY_NAMESPACE),
        )
    )
)
"""Every category the system itself files memories under when the writer names none
(each must be readable by at least one agent of the shipped config)."""


def unreadable(config: CategoriesConfig, names: Sequence[str] = SYSTEM_CATEGORIES) -> list[str]:
    """The categories of `names` no agent's allowlist in `config` lets it read."""
    readable = {c for allowed in config.allowlists.values() for c in allowed}
    return [name for name in names if name not in readable]


def categories_path(settings: Settings | None = None) -> Path | None:
    """The configured categories file: the setting, else `$MNEMOLEDGER_CATEGORIES`, else
    None (the shipped default)."""
    if settings is not None and settings.categories_file is not None:
        return settings.categories_file
    named = os.environ.get(CATEGORIES_ENV)
    return Path(named).expanduser() if named else None


def parse_categories(text: str, origin: str = "categories file") -> CategoriesConfig:
    """A categories config from YAML text."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise CategoriesConfigError(f"{origin} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise CategoriesConfigError(f"{origin} must be a mapping with `allowlists`")
    try:
        return CategoriesConfig.model_validate(data)
    except (ValidationError, InvalidInput) as error:
        first = str(error).strip().splitlines()
        raise CategoriesConfigError(f"{origin} is invalid: {' '.join(first[:3])}") from None


def load_categories(settings: Settings | None = None) -> CategoriesConfig:
    """The configured categories (see `categories_path`), or the shipped default."""
    path = categories_path(settings)
    if path is None:
        shipped = resources.files("mnemoledger.commands").joinpath(DEFAULT_CATEGORIES_RESOURCE)
        text = shipped.read_text()
        return parse_categories(text, "the default categories file")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CategoriesConfigError(f"cannot read categories file {path}: {error}") from None
    return parse_categories(text, f"categories file {path}")
