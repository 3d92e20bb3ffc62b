"""Nebo extraction over conversation turns (seed 004 §3-§5, §14, §15), with the optional
multi-fact pass of seed 003 §13.

    1. parse and check the turns (bad input: `InvalidInput` with the line, nothing written)
    2. save the raw turns as the command's created event (`IngestRequested`)
    3. one EXTRACT call per completed exchange, over its last 6 messages (see `windows`)
    4. FormatForStorage: category -> namespace, normalized key, confidence from `explicit`
    5. sanitize every fact (control characters, 128/2048 limits, the 14 injection
       patterns); a refused fact is skipped with its reason, the others go on
    6. styles reinforce (confidence boosted, value kept); other facts pass IsDuplicate:
       same key + same value -> skipped, same key + new value -> updated (upsert),
       same content under another key of the namespace -> skipped
    7. optional MULTI_FACT pass over long user turns: each fact through the merge bands
       against its nearest stored memory (auto: already held, nothing written; update: the
       held memory rewritten; recreate: a newer value supersedes it; fallback: a new
       memory), at most 3 writes per turn and 30 per user and day
    8. if styles were extracted: decay, then SYNTHESIZE the personality directive from at
       least 3 observations, stored (or updated) as `tacit/personality` / `directive`
    9. what is added or rewritten links to its nearest memories (seed 003 §2, `auto` edges);
       everything decided, the LLM calls and the outcome saved in ONE transaction; a
       concurrent writer of the same user makes it conflict and the run starts again from 3.

Windows. The seed extracts after every completed agentic loop over the "last 6 messages
only" (older ones were seen by earlier extractions). An exchange here is a user turn and
the replies that follow it up to the next user turn; each exchange gets one extraction over
the 6 most recent messages ending where it ends, so there is one LLM call per user turn.
When an exchange (or the messages before the first user turn) is longer than 6 messages,
extra windows are inserted so that every message is seen at least once. Tool messages and
empty ones are skipped (render drops them anyway) and do not take a place in a window.

Within one ingest a fact found again by an overlapping window is the same observation: it
is neither written twice nor, for a style, reinforced twice. Its evidence is the turns that
were new in the window that first found it (`id`, else `turn:<n>`, n counted from 1).

Pre-compaction flush (seed 004 §3 Trigger 2, §10 Memory Flush Guard). A caller about to
compact a thread ingests ALL its messages once more, naming the thread and its compaction
count (`run(..., flush=N)`). At most one flush runs per compaction cycle: when a flush of
the thread is already recorded at count N or later (`projections.flushes.FlushGuard`, read from
the log), nothing is recorded and the outcome says so. The check is made again under the
user's writer lock, so two processes flushing one thread at once run it once. A flush
restates what earlier ingests saw: a fact already held is a duplicate, not a reinforcement.

Keyed store (seed 004 §5 `store`, §15 Content Limits): `remember_keyed` is Nebo's
UpsertMemory by (user, namespace, key), recorded as one ingest command whose input is the
key and value instead of turns, decided by the same machinery: the same key with the same
value is left unchanged, a new value updates the memory (its history keeps the old one), a
new key is a new memory, `tacit/user` keys feed the profile. A key over 128 characters, a
value over 2048 (control characters stripped first) or a value that looks like an
instruction is refused with `InvalidInput`, and the refusal is recorded on the command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from mnemoledger.commands.judge import default_judge
from mnemoledger.commands.judge.decisions import replaces, says_the_same
from mnemoledger.commands.llm.prompts import EXTRACT, MULTI_FACT, SYNTHESIZE
from mnemoledger.commands.llm.render import (
    MAX_CONVERSATION_CHARS,
    MAX_SYNTHESIS_OBSERVATIONS,
    SKIPPED_ROLES,
)
from mnemoledger.commands.llm.rules.text import OWN_WORDS_TAG, words
from mnemoledger.commands.llm.schemas import (
    ConversationTurn,
    ExtractInput,
    ExtractOutput,
    Fact,
    MultiFactInput,
    StyleObservation,
    SynthesizeInput,
)
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.models import memory_out
from mnemoledger.commands.recall.relations import link_written
from mnemoledger.commands.write import consent_gate
from mnemoledger.commands.write.command_run import decide_until_saved
from mnemoledger.commands.write.constraints import conform
from mnemoledger.commands.write.recorded_llm import RecordedLLM, prompt_version
from mnemoledger.commands.write.replaying import recorded_id, recorded_ids
from mnemoledger.commands.write.sanitize import (
    MAX_TOOL_KEY_CHARS,
    MAX_TOOL_VALUE_CHARS,
    instructs_the_agent,
    screen,
)
from mnemoledger.ledger import Ledger, Memory, NewMemory, Provenance, Settings, validation
from mnemoledger.ledger.command import Command, IngestCommand
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    ACTIVE,
    DEFAULT_IMPORTANCE,
    EPISODIC,
    KINDS,
    MAX_EVIDENCE_CHARS,
    MAX_EVIDENCE_ITEMS,
    MAX_INGEST_BYTES,
    MAX_INGEST_TURNS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TURN_BYTES,
    MAX_TURN_CHARS,
    MULTI_FACT_AUTO_SIM,
    MULTI_FACT_MAX_WRITES_PER_DAY,
    MULTI_FACT_NEIGHBOURS,
    MULTI_FACT_RECREATE_SIM,
    MULTI_FACT_UPDATE_SIM,
    PERSONALITY_NAMESPACE,
    SEMANTIC,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.user import UserStream
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.flushes import FlushGuard, FlushRecord
from mnemoledger.projections.layers import LayersProjection, MemoryRow
from mnemoledger.projections.vectors import VectorsProjection

# --- conversation turns: ../shared/CLI.md (`{"role","content","ts"?,"id"?}` per line) -----
TURN_ROLES: Final = ("user", "assistant", "system", "tool")
USER_ROLE: Final = "user"

# --- seed 004 §3, Trigger 1: "Scope: Last 6 messages only" per completed loop ------------
EXTRACTION_WINDOW_MESSAGES: Final = 6

# --- seed 004 §3, FormatForStorage mapping: category -> layer/namespace -----------------
PREFERENCES_NAMESPACE: Final = "tacit/preferences"
ENTITIES_NAMESPACE: Final = "entity/default"
DAILY_LAYER: Final = "daily"  # decisions: daily/<YYYY-MM-DD>
ARTIFACTS_NAMESPACE: Final = "tacit/artifacts"
STYLE_KEY_PREFIX: Final = "style/"  # seed 004 §4: observations are tacit/personality/style/*
EXTRACTION_SOURCE: Final = "extraction"

# --- seed 004 §5 / §14: style reinforcement, newConf = oldConf + (1 - oldConf) * 0.2 -----
STYLE_CONFIDENCE_BOOST: Final = 0.2

# --- seed 004 §4: personality synthesis ----------------------------------------------------
PERSONALITY_DIRECTIVE_KEY: Final = "directive"
PERSONALITY_DIRECTIVE_NAMESPACE: Final = PERSONALITY_NAMESPACE
MIN_STYLE_OBSERVATIONS: Final = 3  # minimum before synthesis
DECAY_THRESHOLD_DAYS: Final = 14  # lifespan = reinforced_count x 14 days

# --- seed 004 §5, User Profile Sync: key -> user_profiles column --------------------------
USER_PROFILE_COLUMNS: Final = {
    "name": "display_name",
    "display_name": "display_name",
    "location": "location",
    "timezone": "timezone",
    "occupation": "occupation",
    "goals": "goals",
    "context": "context",
    "communication_style": "communication_style",
    "interests": "interests",
}
# the user's plain facts the offline extraction states (name, job, employer, city, diet,
# schedules, deadlines, tools): single-valued ones beside the seed's columns, and families
# of several values (`tool/pytest`, `schedule/standup`) shown as one list each
EXTRACTED_PROFILE_COLUMNS: Final = {"employer": "employer", "hometown": "hometown"}
PROFILE_LIST_COLUMNS: Final = {
    "diet": "diet",
    "allergy": "allergies",
    "language": "language",
    "schedule": "schedules",
    "deadline": "deadlines",
    "tool": "tools",
}
PROFILE_LIST_SEPARATOR: Final = "; "
USER_NAMESPACE: Final = "tacit/user"
USER_PROFILE_NAMESPACES: Final = (USER_NAMESPACE, "tacit.user")
USER_KEY_PREFIX: Final = "user/"  # "tacit namespace with user/ key prefix (auto-extraction)"
TACIT_LAYER: Final = "tacit"

# --- seed 003 §13: optional multi-fact pass -------------------------------------------------
MULTI_FACT_MIN_CHARS: Final = 200  # "user turn length > N chars"; the seed leaves N open
MAX_MULTI_FACT_WRITES_PER_TURN: Final = 3  # "Caps: <= 3 final writes/turn"
MULTI_FACT_NAMESPACE: Final = "default"
MULTI_FACT_SOURCE: Final = "multi_fact"
MULTI_FACT_DAY_KEY: Final = "multi_fact_day"
"""Metadata of a memory the pass wrote: the UTC day of its ingest (the daily cap counts them)."""
# the merge bands (seed 003 §13; edges MULTI_FACT_*_SIM in ledger.policy) and what a fact
# does in them
AUTO: Final = "auto"
UPDATE: Final = "update"
RECREATE: Final = "recreate"
FALLBACK: Final = "fallback"
SKIP: Final = "skip"

# --- seed 004 §5 `store`: UpsertMemory by (user, namespace, key) ----------------------------
STORE_SOURCE: Final = "store"
"""The source of a memory stored by key when the caller names none."""
STORE_ADDED: Final = "added"
STORE_UPDATED: Final = "updated"
STORE_UNCHANGED: Final = "unchanged"

SKIPPED_VALUE_PREVIEW_CHARS: Final = 200
"""How much of a skipped fact's value the outcome repeats."""

Progress = Callable[[int, int], None]
"""Called with (turns done, turns in all) as extraction moves through the conversation."""

_NORMALIZED_PROFILE_COLUMNS: Final = {
    validation.normalize_key(key): column
    for key, column in {**USER_PROFILE_COLUMNS, **EXTRACTED_PROFILE_COLUMNS}.items()
}


# --- turns ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One message of a conversation."""

    role: str
    content: str
    ts: datetime | None = None
    id: str | None = None
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """The JSON object the turn was read from, kept as the command's raw input."""

    def as_input(self) -> dict[str, Any]:
        """The turn as recorded in `IngestRequested`: exactly as given when read from JSON."""
        if self.raw is not None:
            return dict(self.raw)
        given: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.ts is not None:
            given["ts"] = self.ts.isoformat()
        if self.id is not None:
            given["id"] = self.id
        return given


def parse_turns(text: str, *, source: str = "input") -> list[Turn]:
    """The turns of a JSONL conversation; `InvalidInput` naming the first bad line, or the
    limit (ledger.policy) the input passes: nothing is recorded of a refused input."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_INGEST_BYTES:
        raise InvalidInput(too_large(source, size, MAX_INGEST_BYTES, "one ingest"))
    turns: list[Turn] = []
    for number, line in enumerate(text.lstrip("\ufeff").split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        line_size = len(line.encode("utf-8", "surrogatepass"))
        if line_size > MAX_TURN_BYTES:
            raise InvalidInput(too_large(where, line_size, MAX_TURN_BYTES, "one turn"))
        try:
            obj = json.loads(validation.json_text_depth(line, where))
        except json.JSONDecodeError as error:
            raise InvalidInput(f"{where}: not a JSON object ({error.msg})") from None
        turns.append(turn_from(obj, where))
        if len(turns) > MAX_INGEST_TURNS:
            raise InvalidInput(f"{source}: more than {MAX_INGEST_TURNS} turns in one ingest")
    if not turns:
        raise InvalidInput(f"{source}: no conversation turns")
    return turns


def load_turns(path: str | Path) -> list[Turn]:
    """The turns of a JSONL file (refused unread when it is larger than one ingest may be)."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            data = file.read(MAX_INGEST_BYTES + 1)  # a pipe or device has no size to check
        if len(data) > MAX_INGEST_BYTES:
            size = path.stat().st_size  # 0 for a pipe: "more than" the limit is all we know
            known = size if size > MAX_INGEST_BYTES else None
            raise InvalidInput(too_large(str(path), known, MAX_INGEST_BYTES, "one ingest"))
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(f"cannot read {path}: {error}") from None
    return parse_turns(text, source=str(path))


def too_large(where: str, size: int | None, limit: int, what: str) -> str:
    """The refusal of an input over a size limit (`size` None: known only to be over)."""
    given = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    return f"{where}: {given}; {what} may have at most {limit} (nothing was recorded)"


def turn_bytes(turn: Turn) -> int:
    """The size of the turn as `IngestRequested` records it (UTF-8 JSON)."""
    encoded = json.dumps(turn.as_input(), ensure_ascii=False, default=str)
    return len(encoded.encode("utf-8", "surrogatepass"))


def turn_from(obj: object, where: str) -> Turn:
    """One turn from a JSON object (or an already built `Turn`, checked again)."""
    if isinstance(obj, Turn):
        obj = obj.as_input() if obj.raw is None else obj.raw
    if not isinstance(obj, Mapping):
        raise InvalidInput(f"{where}: a turn must be a JSON object with role and content")
    for name in ("role", "content"):
        if name not in obj:
            raise InvalidInput(f"{where}: missing {name!r}")
    role = obj["role"]
    if role not in TURN_ROLES:
        raise InvalidInput(f"{where}: role must be one of {', '.join(TURN_ROLES)}; got {role!r}")
    content = obj["content"]
    if not isinstance(content, str):
        raise InvalidInput(f"{where}: content must be text, not {type(content).__name__}")
    if len(content) > MAX_TURN_CHARS:
        raise InvalidInput(
            f"{where}: content has {len(content)} characters; one turn may have at most "
            f"{MAX_TURN_CHARS} (nothing was recorded)"
        )
    validation.json_depth(obj, where)
    turn = Turn(
        role=role,
        content=content,
        ts=_timestamp(obj.get("ts"), where),
        id=_turn_id(obj.get("id"), where),
        raw=dict(obj),
    )
    size = turn_bytes(turn)
    if size > MAX_TURN_BYTES:
        raise InvalidInput(too_large(where, size, MAX_TURN_BYTES, "one turn"))
    return turn


def _timestamp(value: object, where: str) -> datetime | None:
    if value is None:
        return None
    try:
        if isinstance(value, str):
            return as_utc(datetime.fromisoformat(value.strip()))
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, UTC)
    except (ValueError, OverflowError, OSError):
        pass
    raise InvalidInput(f"{where}: ts must be an ISO-8601 time or epoch seconds; got {value!r}")


def _turn_id(value: object, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{where}: id must be non-empty text or a number")
    if len(value.strip()) > MAX_EVIDENCE_CHARS:
        raise InvalidInput(f"{where}: id is longer than {MAX_EVIDENCE_CHARS} characters")
    return value.strip()


def as_utc(moment: datetime) -> datetime:
    """`moment` in UTC; a time without a zone is taken to be UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def turn_ref(turns: Sequence[Turn], index: int) -> str:
    """How evidence names a turn: its `id`, else `turn:<n>` (n counted from 1)."""
    return turns[index].id or f"turn:{index + 1}"


# --- windows --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """The turns one extraction sees (at most 6, oldest first) and those no earlier one saw."""

    indices: tuple[int, ...]
    new: tuple[int, ...]


def windows(turns: Sequence[Turn], size: int = EXTRACTION_WINDOW_MESSAGES) -> list[Window]:
    """One window per completed exchange, plus gap fillers so every message is seen once."""
    seen = [i for i, t in enumerate(turns) if t.role not in SKIPPED_ROLES and t.content.strip()]
    ends: list[int] = []
    has_user = False
    for position, index in enumerate(seen):
        has_user = has_user or turns[index].role == USER_ROLE
        last = position == len(seen) - 1
        if has_user and (last or turns[seen[position + 1]].role == USER_ROLE):
            ends.append(position)
            has_user = False
    if seen and (not ends or ends[-1] != len(seen) - 1):
        ends.append(len(seen) - 1)

    found: list[Window] = []
    covered = -1

    def window(end: int) -> Window:
        return Window(
            indices=tuple(seen[max(0, end - size + 1) : end + 1]),
            new=tuple(seen[covered + 1 : end + 1]),
        )

    for end in ends:
        while end - covered > size:
            found.append(window(covered + size))
            covered += size
        found.append(window(end))
        covered = end
    return found


# --- FormatForStorage (seed 004 §3) ---------------------------------------------------------


@dataclass(frozen=True)
class MemoryEntry:
    """A fact on its way to the ledger (seed 004 §3 `MemoryEntry`), with its provenance."""

    namespace: str
    key: str | None
    value: str
    kind: str = SEMANTIC
    tags: tuple[str, ...] = ()
    is_style: bool = False
    """Style observations are reinforced instead of overwritten (seed 004 §5)."""
    confidence: float | None = None
    importance: float = DEFAULT_IMPORTANCE
    evidence: tuple[str, ...] = ()
    source: str = EXTRACTION_SOURCE
    prompt_version: str | None = None
    observations: int = 1
    """How many user turns of this ingest stated it (each after the first reinforces)."""
    supersedes: str | None = None
    """The stored memory this new one replaces (the multi-fact pass's recreate band)."""
    day: str | None = None
    """The UTC day of the ingest, for a memory the multi-fact pass writes."""
    explicit: bool = False
    """Stored by key by the caller (seed 004 §5 `store`, UpsertMemory): its key is kept
    even when another key of the namespace holds the same text (IsDuplicate is the
    extraction's check)."""


def daily_namespace(moment: datetime) -> str:
    """`daily/<YYYY-MM-DD>` of `moment` in UTC."""
    return f"{DAILY_LAYER}/{as_utc(moment).date().isoformat()}"


def format_for_storage(output: ExtractOutput, day: datetime) -> list[MemoryEntry]:
    """Seed 004 §3: preferences -> tacit/preferences, entities -> entity/default, decisions
    -> daily/<day> (episodic), styles -> tacit/personality (IsStyle, `style/` keys),
    artifacts -> tacit/artifacts; a preference keyed `user/<key>` (the auto-extraction
    format of the user's own facts, §5) -> tacit/user, `<key>`. Keys normalized; confidence
    from `explicit` (§14)."""
    groups: list[tuple[list[Fact], str, str, bool]] = [
        (output.preferences, PREFERENCES_NAMESPACE, SEMANTIC, False),
        (output.entities, ENTITIES_NAMESPACE, SEMANTIC, False),
        (output.decisions, daily_namespace(day), EPISODIC, False),
        (output.styles, PERSONALITY_NAMESPACE, SEMANTIC, True),
        (output.artifacts, ARTIFACTS_NAMESPACE, SEMANTIC, False),
    ]
    entries: list[MemoryEntry] = []
    for facts, group_namespace, kind, is_style in groups:
        for fact in facts:
            key = validation.normalize_key(fact.key)
            namespace = group_namespace
            if is_style and not key.startswith(STYLE_KEY_PREFIX):
                key = STYLE_KEY_PREFIX + key
            if namespace == PREFERENCES_NAMESPACE and key.startswith(USER_KEY_PREFIX):
                # the user's own facts: the profile namespace, `user/` being its prefix (§5)
                namespace, key = USER_NAMESPACE, key.removeprefix(USER_KEY_PREFIX)
            entries.append(
                MemoryEntry(
                    namespace=namespace,
                    key=key,
                    value=fact.value,
                    kind=kind,
                    tags=tuple(fact.tags),
                    is_style=is_style,
                    confidence=fact.confidence,
                )
            )
    return entries


# --- sanitization (seed 004 §15) ------------------------------------------------------------


class FactRefused(Exception):
    """A fact the sanitizer refuses; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def sanitize_entry(entry: MemoryEntry) -> MemoryEntry:
    """The entry with control characters stripped and key/tags cleaned; `FactRefused` when
    the key or value breaks the tool-path limits (128/2048) or the value looks like an
    injection."""
    key = entry.key
    if key is not None:
        key = validation.normalize_key(validation.without_controls(key))
        if not key:
            raise FactRefused("key is empty")
        if len(key) > MAX_TOOL_KEY_CHARS:
            raise FactRefused(f"key has {len(key)} characters; the limit is {MAX_TOOL_KEY_CHARS}")
    value = validation.normalize_text(entry.value)
    if not value:
        raise FactRefused("value is empty")
    if len(value) > MAX_TOOL_VALUE_CHARS:
        raise FactRefused(f"value has {len(value)} characters; the limit is {MAX_TOOL_VALUE_CHARS}")
    try:
        screen(value, instructs=entry.is_style or instructs_the_agent(None, entry.namespace))
    except InvalidInput as error:
        raise FactRefused(str(error)) from None
    tags: list[str] = []
    for tag in entry.tags:
        cleaned = validation.normalize_text(validation.without_controls(tag))
        if cleaned and len(cleaned) <= MAX_TAG_CHARS and cleaned not in tags:
            tags.append(cleaned)
    return replace(entry, key=key, value=value, tags=tuple(tags[:MAX_TAGS]))


# --- styles, decay and the directive (seed 004 §4, §5) --------------------------------------


@dataclass(frozen=True)
class StyleState:
    """A style observation as synthesis sees it."""

    key: str
    value: str
    reinforced_count: int
    last_reinforced: datetime


def boosted_confidence(confidence: float, times: int = 1) -> float:
    """Seed 004 §14: newConf = oldConf + (1 - oldConf) * 0.2, `times` times (tends to 1,
    never reaches it)."""
    for _ in range(times):
        confidence = confidence + (1.0 - confidence) * STYLE_CONFIDENCE_BOOST
    return round(confidence, 6)


def apply_decay(observations: Iterable[StyleState], now: datetime) -> list[StyleState]:
    """Seed 004 §4: drop observations not reinforced within reinforced_count x 14 days."""
    return [
        o
        for o in observations
        if as_utc(now) - as_utc(o.last_reinforced)
        < timedelta(days=DECAY_THRESHOLD_DAYS * max(1, o.reinforced_count))
    ]


def strongest(observations: Iterable[StyleState]) -> list[StyleState]:
    """Most reinforced first (then by key), at most 15 (seed 004 §4 steps 4-5)."""
    ranked = sorted(observations, key=lambda o: (-o.reinforced_count, o.key))
    return ranked[:MAX_SYNTHESIS_OBSERVATIONS]


def style_state(row: MemoryRow) -> StyleState:
    """A stored style observation; rows without Nebo metadata count their repetitions."""
    metadata = row.metadata or {}
    count = metadata.get("reinforced_count")
    last = _parse_time(metadata.get("last_reinforced")) or _parse_time(row.updated_at)
    return StyleState(
        key=row.key or "",
        value=row.content,
        reinforced_count=count if isinstance(count, int) else row.repetition_count + 1,
        last_reinforced=last or datetime.now(UTC),
    )


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return as_utc(datetime.fromisoformat(value))
    except ValueError:
        return None


def _rfc3339(moment: datetime) -> str:
    return as_utc(moment).isoformat(timespec="seconds")


# --- user profile (seed 004 §5) -------------------------------------------------------------


def profile_column(namespace: str, key: str | None) -> str | None:
    """The user_profiles column a memory feeds: keys of `tacit/user` (or `tacit.user`), and
    `user/<key>` keys anywhere in the tacit layer (the auto-extraction format)."""
    if key is None:
        return None
    in_tacit = namespace == TACIT_LAYER or namespace.startswith(TACIT_LAYER + "/")
    if namespace not in USER_PROFILE_NAMESPACES and not (
        in_tacit and key.startswith(USER_KEY_PREFIX)
    ):
        return None
    name = validation.normalize_key(key.removeprefix(USER_KEY_PREFIX))
    column = _NORMALIZED_PROFILE_COLUMNS.get(name)
    return column if column is not None else PROFILE_LIST_COLUMNS.get(name.split("/")[0])


def user_profile(rows: Iterable[MemoryRow]) -> dict[str, str]:
    """The user's profile, derived: per column, the latest active memory that feeds it; a
    list column (tools, schedules, ...) holds every active value, oldest first."""
    latest: dict[str, tuple[tuple[str, int], str]] = {}
    listed: dict[str, list[tuple[int, str]]] = {}
    list_columns = set(PROFILE_LIST_COLUMNS.values())
    for row in rows:
        column = profile_column(row.namespace, row.key) if row.state == ACTIVE else None
        if column is None:
            continue
        if column in list_columns:
            listed.setdefault(column, []).append((row.position, row.content))
            continue
        stamp = (row.updated_at, row.position)
        if column not in latest or stamp > latest[column][0]:
            latest[column] = (stamp, row.content)
    profile = {column: value for column, (_, value) in latest.items()}
    for column, values in listed.items():
        profile[column] = PROFILE_LIST_SEPARATOR.join(value for _, value in sorted(values))
    return {column: profile[column] for column in sorted(profile)}


# --- outcome ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Skipped:
    """A fact the ingest did not write, and why."""

    namespace: str
    key: str | None
    value: str
    reason: str
    evidence: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "key": self.key,
            "value": self.value[:SKIPPED_VALUE_PREVIEW_CHARS],
            "reason": self.reason,
            "evidence": list(self.evidence),
        }


@dataclass
class IngestOutcome:
    """What one ingest did."""

    command_id: str
    added: list[Memory] = field(default_factory=list)
    updated: list[Memory] = field(default_factory=list)
    """Non-style facts whose key held another value (upsert), and a re-synthesized directive."""
    reinforced: list[Memory] = field(default_factory=list)
    """Style observations seen again (confidence boosted, value kept)."""
    skipped: list[Skipped] = field(default_factory=list)
    directive_updated: bool = False
    profile_updated: list[str] = field(default_factory=list)
    """user_profiles columns this ingest wrote (seed 004 §5)."""
    turns: int = 0
    extractions: int = 0
    llm_calls: int = 0
    writing: list[dict[str, object]] = field(default_factory=list)
    """Extracted values the writing constraints trimmed (seed 003 §9; refused ones are
    skipped)."""
    superseded: list[Memory] = field(default_factory=list)
    """Stored memories a newer value from the multi-fact pass replaced (recreate band)."""
    multi_fact_capped: int = 0
    """Long user turns the multi-fact pass left alone: the user's daily cap was reached."""
    unchanged: list[Memory] = field(default_factory=list)
    """A keyed store whose key already held the value: the memory, left as it was."""
    flush: FlushAnswer | None = None
    """A pre-compaction flush: whether it ran, and why not (seed 004 §10)."""

    def as_outcome(self) -> dict[str, Any]:
        """What `CommandCompleted` records."""
        return {
            "added": [m.id.hex for m in self.added],
            "updated": [m.id.hex for m in self.updated],
            "reinforced": [m.id.hex for m in self.reinforced],
            "skipped": [s.as_json() for s in self.skipped],
            "directive_updated": self.directive_updated,
            "profile_updated": self.profile_updated,
            "turns": self.turns,
            "extractions": self.extractions,
            # absent when none: older recordings stay as they were
            **({"writing": self.writing} if self.writing else {}),
            **({"superseded": [m.id.hex for m in self.superseded]} if self.superseded else {}),
            **({"multi_fact_capped": self.multi_fact_capped} if self.multi_fact_capped else {}),
            **({"unchanged": [m.id.hex for m in self.unchanged]} if self.unchanged else {}),
            **({"flush": self.flush.as_json()} if self.flush is not None else {}),
        }

    def as_json(self) -> dict[str, Any]:
        """The CLI's `--json`: `add`'s result summed over the conversation, plus what only
        ingest does (updated, skipped with reasons, the directive, the profile)."""
        return {
            "command_id": self.command_id,
            "memories": [memory_json(m) for m in self.added],
            "superseded": [m.id.hex for m in self.superseded],
            "reinforced": [memory_json(m) for m in self.reinforced],
            "core_updated": False,
            "fallback": False,
            "llm_calls": self.llm_calls,
            "updated": [memory_json(m) for m in self.updated],
            "skipped": [s.as_json() for s in self.skipped],
            "directive_updated": self.directive_updated,
            "profile_updated": self.profile_updated,
            "turns": self.turns,
            "extractions": self.extractions,
            "unchanged": [memory_json(m) for m in self.unchanged],
            "flush": self.flush.as_json() if self.flush is not None else None,
        }


@dataclass(frozen=True)
class FlushAnswer:
    """What a pre-compaction flush request came to (seed 004 §3 Trigger 2, §10)."""

    thread: str
    compaction: int
    ran: bool
    reason: str | None = None
    """Why it did not run: the flush already recorded for this compaction cycle."""
    flushed_at: int | None = None
    """The compaction count of the latest flush recorded before this request."""
    flushed_by: str | None = None
    """The command id of that flush."""

    def as_json(self) -> dict[str, Any]:
        return {
            "thread": self.thread,
            "compaction": self.compaction,
            "ran": self.ran,
            "reason": self.reason,
            "flushed_at": self.flushed_at,
            "flushed_by": self.flushed_by,
        }


def flush_answer(thread: str, compaction: int, last: FlushRecord | None) -> FlushAnswer:
    """The guard's answer (seed 004 §10 ShouldRunMemoryFlush): a flush runs only when the
    last one recorded for the thread is of an earlier compaction count (or there is none)."""
    if last is None:
        return FlushAnswer(thread, compaction, ran=True)
    if last.compaction < compaction:
        return FlushAnswer(
            thread, compaction, ran=True, flushed_at=last.compaction, flushed_by=last.command_id
        )
    return FlushAnswer(
        thread,
        compaction,
        ran=False,
        reason=(
            f"thread {thread!r} was already flushed at compaction {last.compaction} "
            f"(command {last.command_id}); one flush per compaction cycle"
        ),
        flushed_at=last.compaction,
        flushed_by=last.command_id,
    )


def memory_json(memory: Memory) -> dict[str, Any]:
    """A memory aggregate in the shape of `commands.models.MemoryOut`."""
    return memory_out(memory).model_dump()


# --- the decisions of one run ----------------------------------------------------------------


def _same(text: str) -> str:
    """What two values share when they are the same text (case and spacing aside)."""
    return " ".join(text.split()).casefold()


def _held(content: str, entry: MemoryEntry) -> bool:
    """Whether a stored value already says `entry`'s: the same text, case and spacing aside
    for extracted facts, exactly for a value the caller stored by key."""
    if entry.explicit:
        return content == entry.value
    return _same(content) == _same(entry.value)


@dataclass
class _Decision:
    entry: MemoryEntry
    row: MemoryRow | None
    """The stored memory it changes; None for a new one."""
    observations: int = 1
    """How many user turns of this run stated it."""


def merge_band(similarity: float) -> str:
    """Seed 003 §13's merge band of a similarity on the reference scale."""
    if similarity >= MULTI_FACT_AUTO_SIM:
        return AUTO
    if similarity >= MULTI_FACT_UPDATE_SIM:
        return UPDATE
    if similarity >= MULTI_FACT_RECREATE_SIM:
        return RECREATE
    return FALLBACK


def band_act(band: str, held: str, fact: str, *, keyed: bool = False) -> str:
    """What a candidate fact does to the stored memory `held` in `band`; the words decide
    with the band, a close vector alone never folds two facts:

    - auto: the same fact (`says_the_same`): SKIP, nothing written;
    - update: the same fact with words the held one lacks: UPDATE (the held memory takes
      the fact's text); without any: SKIP;
    - recreate, or any band above it: a newer value of what the held memory states
      (`replaces`): RECREATE, a new memory that supersedes it;
    - fallback, or nothing of the above: FALLBACK, a new memory.

    A keyed memory (an extracted profile fact) is only ever a duplicate: it keeps its key."""
    if band == FALLBACK:
        return FALLBACK
    if band in (AUTO, UPDATE) and says_the_same(held, fact):
        adds = bool(set(words(fact)) - set(words(held)))
        return UPDATE if band == UPDATE and adds and not keyed else SKIP
    if not keyed and replaces(held, fact):
        return RECREATE
    return FALLBACK


def reinforces(entry: MemoryEntry) -> bool:
    """Whether an extracted fact stated again reinforces its memory (seed 004 §5: confidence
    boosted, value kept) rather than being skipped: styles, and the user's own facts and
    preferences, which are stated again in other words as a conversation goes on."""
    return entry.is_style or (
        entry.source == EXTRACTION_SOURCE
        and entry.namespace in (USER_NAMESPACE, PREFERENCES_NAMESPACE)
    )


_GENERIC_WORDS: Final = frozenset(
    {
        "user",
        "users",
        "likes",
        "like",
        "prefers",
        "prefer",
        "loves",
        "love",
        "enjoys",
        "dislikes",
        "hates",
        "does",
        "not",
        "don't",
        "the",
        "and",
        "for",
        "with",
        "without",
        "due",
        "every",
        "replies",
        "reply",
        "responses",
        "tone",
        "want",
        "wants",
        "uses",
        "use",
    }
)
"""Words many facts share: they do not show a fact stated again."""


def _negative(value: str) -> bool:
    """Whether an extracted value says the item does not hold ("not vegan", "no beef")."""
    return value.casefold().startswith(("not ", "no ", "does not ", "dislikes "))


def _item(item: str, value: str) -> tuple[bool, set[str], str]:
    """A many-valued fact as its items are compared: whether it is said not to hold
    ("style/no-emoji", "not vegan"), its words, and its value without the words written
    around every item ("Prefers replies without emojis": "emojis")."""
    plain = " ".join(w for w in value.split() if w.casefold() not in _GENERIC_WORDS)
    return item.startswith("no-") or _negative(value), _fact_words(value), plain


def _group(namespace: str, key: str) -> tuple[str, str]:
    """A key as (the many-valued attribute it is an item of, the item): `user/tool/pytest` is
    an item of `user/tool`; every key of the likes and dislikes is an item of one group;
    `location` is of none."""
    group, _, item = key.rpartition("/")
    if not group and namespace == PREFERENCES_NAMESPACE:
        return "preference", item
    return group, item


def _fact_words(text: str) -> set[str]:
    """The words by which a user turn can be seen to state a fact again."""
    found = set()
    for word in re.findall(r"[a-z0-9]+", text.casefold()):
        if len(word) > 2 and word not in _GENERIC_WORDS:
            found.add(word.removesuffix("s"))
    return found


class _Decisions:
    """IsDuplicate (seed 004 §5) over the stored rows and what this run already decided."""

    def __init__(self, rows: Iterable[MemoryRow], *, restating: bool = False) -> None:
        self.restating = restating
        """A flush: the messages were seen before, so a fact held is not stated again."""
        self.by_key: dict[tuple[str, str], MemoryRow] = {}
        self.holders: dict[tuple[str, str], str] = {}
        """(namespace, value) -> who holds it: a key, or a memory id for keyless ones."""
        self.styles: dict[str, MemoryRow] = {}
        self.active: dict[str, MemoryRow] = {}
        """Active stored memories by id (the multi-fact pass's neighbours)."""
        for row in sorted(rows, key=lambda r: (r.updated_at, r.position)):
            if row.state != ACTIVE:
                continue
            self.active[row.id] = row
            if row.key is not None:
                self.by_key[(row.namespace, row.key)] = row
                if row.namespace == PERSONALITY_NAMESPACE and row.key.startswith(STYLE_KEY_PREFIX):
                    self.styles[row.key] = row
            self.holders[(row.namespace, _same(row.content))] = row.key or f"memory {row.id}"
        self.keyed: dict[tuple[str, str], _Decision] = {}
        self.keyless: list[MemoryEntry] = []
        self.rewrites: dict[str, MemoryEntry] = {}
        """Stored memories the multi-fact pass rewrites (update band), by id."""
        self.multi_fact_today = 0
        """Memories the multi-fact pass wrote for this user on the ingest's day, this run's
        included."""
        self.multi_fact_capped = 0
        """Long user turns the pass left alone because the daily cap was reached."""
        self.skipped: list[Skipped] = []
        self.styles_extracted = False
        self._seen: set[tuple[str, str | None, str]] = set()
        self._skip_reasons: set[tuple[str, str | None, str]] = set()
        self._said: set[str] = set()
        """Words of the user turns new in the current window."""
        self._counted: set[tuple[str, str]] = set()
        """Keys already observed in the current window."""

    def next_window(self, new_user_turns: Iterable[str]) -> None:
        """The next window's new user turns: a fact found again counts as stated again (a
        reinforcement) only when one of them holds its words, so a turn that stays in view
        of overlapping windows is one observation."""
        self._said = set().union(*(_fact_words(text) for text in new_user_turns))
        self._counted = set()

    def _observed_again(self, planned: _Decision, entry: MemoryEntry) -> None:
        slot = (entry.namespace, entry.key or "")
        merged = dict.fromkeys(planned.entry.evidence + entry.evidence)
        if slot in self._counted:
            return
        self._counted.add(slot)
        if self._said & _fact_words(f"{entry.key} {entry.value}"):
            planned.observations += 1
            planned.entry = replace(planned.entry, evidence=tuple(merged)[:MAX_EVIDENCE_ITEMS])

    def skip(self, entry: MemoryEntry, reason: str) -> None:
        signature = (entry.namespace, entry.key, reason)
        if signature not in self._skip_reasons:
            self._skip_reasons.add(signature)
            self.skipped.append(
                Skipped(entry.namespace, entry.key, entry.value, reason, entry.evidence)
            )

    def consider(self, raw: MemoryEntry) -> bool:
        """Sanitize and dedup one entry; True when the run will write it."""
        try:
            entry = sanitize_entry(raw)
        except FactRefused as refused:
            self.skip(raw, f"refused: {refused.reason}")
            return False
        value = _same(entry.value)
        signature = (entry.namespace, entry.key, value)
        if signature in self._seen:
            planned = self.keyed.get((entry.namespace, entry.key or ""))
            if planned is not None:
                self._observed_again(planned, entry)
            return False  # the same fact, found again: never a second memory
        self._seen.add(signature)
        self.styles_extracted = self.styles_extracted or entry.is_style
        holder = self.holders.get((entry.namespace, value))
        if entry.key is None:
            if holder is not None:
                self.skip(entry, f"duplicate: the same content is held by {holder}")
                return False
            self.keyless.append(entry)
            self.holders[(entry.namespace, value)] = "a memory of this ingest"
            return True
        slot = (entry.namespace, entry.key)
        planned = self.keyed.get(slot)
        if planned is not None:
            return self._again(planned, entry, holder)
        if OWN_WORDS_TAG in entry.tags and self._says_again(entry):
            self.skip(entry, "duplicate: another memory already says most of its words")
            return False
        row = self.by_key.get(slot)
        if row is None and planned is None:
            same = self._same_item(entry)
            if isinstance(same, _Decision):
                self._observed_again(same, entry)  # the same item in other words
                return False
            if same is not None:
                self.skip(entry, f"duplicate: {same.key!r} holds the same item in other words")
                return False
        self._counted.add(slot)
        if row is not None and self.restating and (entry.is_style or _same(row.content) == value):
            self.skip(entry, f"duplicate: {entry.key!r} already holds it (flush: seen before)")
            return False
        if row is not None and (
            entry.is_style or (reinforces(entry) and _same(row.content) == value)
        ):
            self.keyed[slot] = _Decision(entry, row)  # reinforced, value kept
            return True
        if row is not None and _held(row.content, entry):
            self.skip(entry, f"duplicate: {entry.key!r} already holds this value")
            return False
        if holder is not None and holder != entry.key and not entry.explicit:
            self.skip(entry, f"duplicate: the same content is stored under {holder!r}")
            return False
        self.keyed[slot] = _Decision(entry, row)
        if row is not None:  # its old value leaves the namespace
            self._release(entry.namespace, row.content, entry.key)
        self.holders[(entry.namespace, value)] = entry.key
        return True

    def _same_item(self, entry: MemoryEntry) -> _Decision | MemoryRow | None:
        """The planned or stored fact of the same many-valued attribute (`user/tool/...`, a
        like or dislike) that states the same item in other words ("pytest fixtures" after
        "pytest", "meetings" after "long meetings"): the same side, a word in common, and the
        judge reads the two as one fact restated (neither the relation model nor the embedder
        tells "brief" after "short" from "formal" after "casual": docs/benchmarks.md). Items
        are compared without the words written around each ("Prefers replies without ...")."""
        group, item = _group(entry.namespace, entry.key or "")
        side, words, plain = _item(item, entry.value)
        if not group or not words:  # one value per key: `location`
            return None
        held: list[tuple[tuple[bool, set[str], str], _Decision | MemoryRow]] = [
            (_item(_group(namespace, other)[1], d.entry.value), d)
            for (namespace, other), d in self.keyed.items()
            if namespace == entry.namespace and _group(namespace, other)[0] == group
        ]
        held += [
            (_item(_group(namespace, other)[1], row.content), row)
            for (namespace, other), row in self.by_key.items()
            if namespace == entry.namespace and _group(namespace, other)[0] == group
        ]
        close = [
            (text, holder) for (sign, seen, text), holder in held if sign == side and words & seen
        ]
        if not close:
            return None
        attribute = group.rpartition("/")[2]
        answers = default_judge().relations(
            [(f"{attribute}: {text}", f"{attribute}: {plain}") for text, _ in close]
        )
        for (_, holder), answer in zip(close, answers, strict=True):
            if answer.label == "restates":
                return holder
        return None

    def _says_again(self, entry: MemoryEntry) -> bool:
        """Whether a stored or planned memory holds most of a kept clause's words ("I drink
        green tea every day" after "User enjoys green tea")."""
        said = _fact_words(entry.value)
        held = [row.content for row in self.active.values()]
        held += [d.entry.value for d in self.keyed.values()] + [e.value for e in self.keyless]
        for text in held:
            other = _fact_words(text)
            if said and other and len(said & other) * 2 >= min(len(said), len(other)):
                return True
        return False

    def _release(self, namespace: str, content: str, holder: str) -> None:
        if self.holders.get((namespace, _same(content))) == holder:
            del self.holders[(namespace, _same(content))]

    def _again(self, planned: _Decision, entry: MemoryEntry, holder: str | None) -> bool:
        """A key this run already decided on: one observation per style per ingest; a newer
        value of another fact replaces the planned one."""
        merged = dict.fromkeys(planned.entry.evidence + entry.evidence)
        evidence = tuple(merged)[:MAX_EVIDENCE_ITEMS]
        if entry.is_style:
            self._observed_again(planned, entry)
            return False
        if holder is not None and holder != entry.key:
            self.skip(entry, f"duplicate: the same content is stored under {holder!r}")
            return False
        if _fact_words(planned.entry.value) & _fact_words(entry.value):
            self._observed_again(planned, entry)  # the same fact in other words
        else:
            planned.observations = 1  # a new value: what counted was the old one's
        self._release(entry.namespace, planned.entry.value, entry.key or "")
        self.holders[(entry.namespace, _same(entry.value))] = entry.key or ""
        planned.entry = replace(entry, evidence=evidence)
        return True


def _written(
    entry: MemoryEntry, decisions: _Decisions, outcome: IngestOutcome
) -> MemoryEntry | None:
    """The entry with its value as the writing constraints let it be stored (seed 003 §9):
    kept, trimmed (recorded on the outcome) or refused (skipped, with the reason). A value
    past the tool path's limit is left for `consider` to refuse with its own reason."""
    if len(entry.value) > MAX_TOOL_VALUE_CHARS:
        return entry
    written = conform(entry.value, SEMANTIC, EXTRACT.name)
    if written.text is None:
        decisions.skip(entry, "writing constraints: " + "; ".join(written.violations))
        return None
    if not written.passed:
        outcome.writing.append(written.as_record())
    return replace(entry, value=written.text)


# --- the pipeline ------------------------------------------------------------------------------


@dataclass
class IngestPipeline:
    """Everything `ingest` reads and writes."""

    ledger: Ledger
    layers: LayersProjection
    provider: LLMProvider
    settings: Settings
    refresh: Callable[[], object] = lambda: None
    """Brings `layers` up to date; called before every run of the decisions."""
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    """The time of an ingest when the caller gives none (decay, style timestamps, dates)."""
    before_save: Callable[[], None] = lambda: None
    """Called just before the decisive save (tests inject faults here)."""
    consent: ConsentProjection | None = None
    """The consent read model: which sensitive fields were already proposed or decided."""
    embedder: Embedder | None = None
    vectors: VectorsProjection | None = None
    flushes: FlushGuard | None = None
    """The flushes read model (seed 004 §10 guard), kept up to date by `refresh`."""
    """With both: what an ingest adds or rewrites links to its neighbours (seed 003 §2)."""

    def run(
        self,
        turns: Sequence[Turn | Mapping[str, Any]],
        provenance: Provenance,
        *,
        multi_fact: bool = False,
        now: datetime | None = None,
        source: str | None = None,
        progress: Progress | None = None,
        flush: int | None = None,
        queued: Sequence[str] = (),
    ) -> IngestOutcome:
        """Extract from `turns` and store what they teach about `provenance.user_id`.

        `queued`: the hand-overs (`TurnsQueued` streams) the turns come from, recorded so
        that they stop being pending once this command ends.

        `flush`: the turns are ALL the messages of `provenance.thread_id` before its
        compaction number `flush` (seed 004 §3 Trigger 2); nothing runs, and nothing is
        recorded, when the thread was already flushed at that compaction count or later."""
        user_id = str(validation.identifier("user", provenance.user_id))
        provenance = replace(provenance, user_id=user_id)
        if len(turns) > MAX_INGEST_TURNS:
            raise InvalidInput(
                f"{len(turns)} turns; one ingest may have at most {MAX_INGEST_TURNS}"
            )
        checked = [turn_from(t, f"turn {n}") for n, t in enumerate(turns, start=1)]
        if not checked:
            raise InvalidInput("nothing to ingest: give at least one turn")
        size = sum(turn_bytes(t) for t in checked)
        if size > MAX_INGEST_BYTES:
            raise InvalidInput(too_large("the turns", size, MAX_INGEST_BYTES, "one ingest"))
        flushing: dict[str, Any] = {}
        if flush is not None:
            thread = _flush_thread(provenance, flush)
            answer = flush_answer(thread, flush, self._last_flush(user_id, thread))
            if not answer.ran:  # seed 004 §10: nothing runs, nothing is recorded
                return IngestOutcome(command_id="", turns=len(checked), flush=answer)
            flushing = {"flush": {"thread": thread, "compaction": flush}}
        moment = as_utc(now or self.clock())
        with acting_as(provenance):
            command: Command = recorded_id(
                IngestCommand(
                    input={
                        "turns": [t.as_input() for t in checked],
                        "multi_fact": multi_fact,
                        "now": moment.isoformat(),
                        "source": source,
                        **flushing,  # absent from plain ingests: older recordings unchanged
                        **({"queued": list(queued)} if queued else {}),
                    }
                )
            )
        self.ledger.save(command)
        decided = replace(provenance, causation_id=command.id.hex)
        self.refresh()
        return decide_until_saved(
            self.ledger,
            command,
            decided,
            lambda fresh, user: self._decide(
                fresh, user, checked, decided, multi_fact, moment, progress, flush
            ),
            self.refresh,
        )

    def remember_keyed(
        self,
        namespace: str,
        key: str,
        value: str,
        provenance: Provenance,
        *,
        tags: Sequence[str] = (),
        source: str = STORE_SOURCE,
        now: datetime | None = None,
    ) -> IngestOutcome:
        """Seed 004 §5 `store`: UpsertMemory of `value` under (user, `namespace`, `key`),
        one recorded command. The outcome's `added`, `updated` or `unchanged` holds the
        memory; a key over 128 characters, a value over 2048 or an injection is refused
        (`InvalidInput`, recorded on the command)."""
        user_id = str(validation.identifier("user", provenance.user_id))
        provenance = replace(provenance, user_id=user_id)
        namespace = str(validation.identifier("namespace", namespace))
        for name, text in (("key", key), ("value", value)):
            if not isinstance(text, str):
                raise InvalidInput(f"{name} must be text, not {type(text).__name__}")
        checked_tags = validation.tags(tags)
        checked_source = validation.source(source)
        moment = as_utc(now or self.clock())
        with acting_as(provenance):
            command: Command = recorded_id(
                IngestCommand(
                    input={
                        "store": {
                            "namespace": namespace,
                            "key": key,
                            "value": value,
                            "tags": checked_tags,
                            "source": checked_source,
                        },
                        "now": moment.isoformat(),
                    }
                )
            )
        self.ledger.save(command)
        decided = replace(provenance, causation_id=command.id.hex)
        entry = MemoryEntry(
            namespace=namespace,
            key=key,
            value=value,
            tags=tuple(checked_tags),
            source=checked_source,
            explicit=True,
        )
        self.refresh()
        return decide_until_saved(
            self.ledger,
            command,
            decided,
            lambda fresh, user: self._decide_keyed(fresh, user, entry, decided, moment),
            self.refresh,
        )

    def _last_flush(self, user_id: str, thread: str) -> FlushRecord | None:
        """The latest flush of the thread the log records (its read model caught up)."""
        if self.flushes is None:
            raise InvalidInput("a flush needs the home's flushes read model")
        self.refresh()
        return self.flushes.last(user_id, thread)

    def _decide_keyed(
        self,
        command: Command,
        user: UserStream,
        raw: MemoryEntry,
        provenance: Provenance,
        now: datetime,
    ) -> IngestOutcome:
        llm = RecordedLLM(self.provider, command, provenance)
        outcome = IngestOutcome(command_id=command.id.hex)
        decisions = _Decisions(self.layers.list(provenance.user_id))
        if not decisions.consider(raw):
            [skipped] = decisions.skipped
            if skipped.reason.startswith(REFUSED):
                raise InvalidInput(f"store refused: {skipped.reason.removeprefix(REFUSED)}")
            held = decisions.by_key[(skipped.namespace, skipped.key or "")]
            outcome.unchanged = [self.ledger.memory(held.id)]
            with acting_as(provenance):
                command.complete(outcome.as_outcome())
            self.ledger.save(command)
            return outcome
        said = [raw.value]
        return self._finish(command, user, llm, decisions, outcome, provenance, now, said)

    def _decide(
        self,
        command: Command,
        user: UserStream,
        turns: list[Turn],
        provenance: Provenance,
        multi_fact: bool,
        now: datetime,
        progress: Progress | None,
        flush: int | None = None,
    ) -> IngestOutcome:
        llm = RecordedLLM(self.provider, command, provenance)
        outcome = IngestOutcome(command_id=command.id.hex, turns=len(turns))
        if flush is not None:  # again under the writer lock: another process may have run it
            thread = _flush_thread(provenance, flush)
            outcome.flush = flush_answer(thread, flush, self._last_flush(user.user_id, thread))
            if not outcome.flush.ran:
                with acting_as(provenance):
                    command.complete(outcome.as_outcome())
                self.ledger.save(command)
                return outcome
        rows = self.layers.list(provenance.user_id)
        decisions = _Decisions(rows, restating=flush is not None)
        day = now.date().isoformat()
        decisions.multi_fact_today = sum(
            1 for row in rows if (row.metadata or {}).get(MULTI_FACT_DAY_KEY) == day
        )
        extract_version = prompt_version(EXTRACT)
        for window in windows(turns):
            output = llm.run(
                EXTRACT,
                ExtractInput(
                    conversation=[
                        ConversationTurn(role=turns[i].role, content=turns[i].content)
                        for i in window.indices
                    ]
                ),
            )
            outcome.extractions += 1
            evidence = tuple(turn_ref(turns, i) for i in window.new)[:MAX_EVIDENCE_ITEMS]
            decisions.next_window(
                turns[i].content for i in window.new if turns[i].role == USER_ROLE
            )
            for found in format_for_storage(output, self._day(turns, window, now)):
                entry = _written(found, decisions, outcome)
                if entry is not None:
                    decisions.consider(
                        replace(entry, evidence=evidence, prompt_version=extract_version)
                    )
            if multi_fact:
                for index in window.new:
                    self._multi_fact(llm, turns, index, decisions, provenance.user_id, day)
            if progress is not None:
                progress(window.indices[-1] + 1, len(turns))
        said = [t.content for t in turns if t.role == USER_ROLE]
        finished = self._finish(command, user, llm, decisions, outcome, provenance, now, said)
        if progress is not None:
            progress(len(turns), len(turns))
        return finished

    def _finish(
        self,
        command: Command,
        user: UserStream,
        llm: RecordedLLM,
        decisions: _Decisions,
        outcome: IngestOutcome,
        provenance: Provenance,
        now: datetime,
        said: list[str],
    ) -> IngestOutcome:
        """The decisions as events, the directive, the outcome, consent proposals for what
        the user `said`, links, and everything saved in one transaction."""
        added, updated, reinforced, superseded = self._apply(decisions, provenance, now)
        outcome.superseded = superseded
        outcome.multi_fact_capped = decisions.multi_fact_capped
        directive = self._directive(llm, decisions, provenance, now, added + reinforced)
        if directive is not None:
            memory, is_new = directive
            (added if is_new else updated).append(memory)
            outcome.directive_updated = True
        outcome.added, outcome.updated, outcome.reinforced = added, updated, reinforced
        outcome.skipped = decisions.skipped
        outcome.profile_updated = sorted(
            {
                column
                for m in added + updated
                if (column := profile_column(m.namespace, m.key)) is not None
            }
        )
        outcome.llm_calls = command.llm_calls
        with acting_as(provenance):
            command.complete(outcome.as_outcome())
            user.changed(
                command.id.hex,
                [m.id.hex for m in added],
                [m.id.hex for m in superseded],
                [m.id.hex for m in updated + reinforced],
            )
        consents = consent_gate.proposals(
            said + [m.content for m in added + updated],
            provenance,
            self.consent,
            keyed=[(m.key, m.content) for m in added + updated],
            now=consent_gate.asked_at(command),
        )
        if self.embedder is not None and self.vectors is not None:
            link_written(_unique(added + updated), self.embedder, self.vectors, provenance)
        self.before_save()
        self.ledger.save(
            command, user, *_unique(added + updated + reinforced + superseded), *consents
        )
        return outcome

    @staticmethod
    def _day(turns: list[Turn], window: Window, now: datetime) -> datetime:
        """When a window's decisions were made: its latest turn time, else `now`."""
        for index in reversed(window.indices):
            ts = turns[index].ts
            if ts is not None:
                return ts
        return now

    def _multi_fact(
        self,
        llm: RecordedLLM,
        turns: list[Turn],
        index: int,
        decisions: _Decisions,
        user_id: str,
        day: str,
    ) -> None:
        """Seed 003 §13: a long user turn's candidate facts, strongest first, each through
        the merge bands (`_banded`); at most 3 written per turn and
        MULTI_FACT_MAX_WRITES_PER_DAY per user and day (past it the turn is not sent to the
        LLM). Each is also deduplicated like any other fact (same content is skipped)."""
        turn = turns[index]
        text = turn.content.strip()
        if turn.role != USER_ROLE or len(text) <= MULTI_FACT_MIN_CHARS:
            return
        if decisions.multi_fact_today >= MULTI_FACT_MAX_WRITES_PER_DAY:
            decisions.multi_fact_capped += 1
            return
        output = llm.run(MULTI_FACT, MultiFactInput(turn=text[:MAX_CONVERSATION_CHARS]))
        version = prompt_version(MULTI_FACT)
        written = 0
        for fact in sorted(output.facts, key=lambda f: -f.importance):
            if (
                written >= MAX_MULTI_FACT_WRITES_PER_TURN
                or decisions.multi_fact_today >= MULTI_FACT_MAX_WRITES_PER_DAY
            ):
                break
            entry = MemoryEntry(
                namespace=MULTI_FACT_NAMESPACE,
                key=None,
                value=fact.content,
                kind=fact.category if fact.category in KINDS else SEMANTIC,
                tags=(fact.category,),
                importance=fact.importance,
                evidence=(turn_ref(turns, index),),
                source=MULTI_FACT_SOURCE,
                prompt_version=version,
                day=day,
            )
            if (entry.namespace, _same(entry.value)) in decisions.holders:
                decisions.consider(entry)  # the same text is held: skipped as a duplicate
                continue
            act, held, similarity = self._banded(entry.value, decisions, user_id)
            if held is not None and act == SKIP:
                decisions.skip(
                    entry,
                    f"duplicate: memory {held.id} holds the same fact "
                    f"({merge_band(similarity)} band, similarity {similarity:.2f})",
                )
                continue
            if held is not None and act == UPDATE:
                decisions.rewrites[held.id] = entry
                del decisions.active[held.id]
            elif held is not None and act == RECREATE:
                if not decisions.consider(replace(entry, supersedes=held.id)):
                    continue
                del decisions.active[held.id]
            elif not decisions.consider(entry):
                continue
            written += 1
            decisions.multi_fact_today += 1

    def _banded(
        self, fact: str, decisions: _Decisions, user_id: str
    ) -> tuple[str, MemoryRow | None, float]:
        """What a fact does, by the merge band of its nearest stored memories (best first;
        the first that allows an act decides): FALLBACK (a new memory) when none does or
        there are no vectors to compare with."""
        if self.embedder is None or self.vectors is None:
            return FALLBACK, None, 0.0
        [vector] = self.embedder.passages([fact])
        for memory_id, similarity in self.vectors.similar(user_id, vector, MULTI_FACT_NEIGHBOURS):
            held = decisions.active.get(memory_id)
            if held is None:
                continue
            act = band_act(merge_band(similarity), held.content, fact, keyed=held.key is not None)
            if act != FALLBACK:
                return act, held, similarity
        return FALLBACK, None, 0.0

    def _apply(
        self, decisions: _Decisions, provenance: Provenance, now: datetime
    ) -> tuple[list[Memory], list[Memory], list[Memory], list[Memory]]:
        """The decided entries as events: new memories, upserts (and the multi-fact pass's
        rewrites), style reinforcements, and the memories the new ones supersede."""
        stamp = _rfc3339(now)
        new: list[MemoryEntry] = list(decisions.keyless)
        updated: list[Memory] = []
        reinforced: list[Memory] = []
        for decision in decisions.keyed.values():
            entry = replace(decision.entry, observations=decision.observations)
            memory = self.ledger.memory(decision.row.id) if decision.row is not None else None
            if memory is None or memory.state != ACTIVE:
                new.append(entry)
                continue
            with acting_as(replace(provenance, prompt_version=entry.prompt_version)):
                if entry.is_style or (
                    reinforces(entry) and _same(memory.content) == _same(entry.value)
                ):
                    metadata = dict(memory.metadata or {})
                    base = metadata.get("confidence", memory.confidence)
                    confidence = boosted_confidence(
                        float(base) if isinstance(base, int | float) else entry.confidence or 0,
                        entry.observations,
                    )
                    count = metadata.get("reinforced_count")
                    count = count if isinstance(count, int) else memory.repetition_count + 1
                    metadata.update(
                        confidence=confidence,
                        reinforced_count=count + entry.observations,
                        first_observed=metadata.get("first_observed")
                        or _rfc3339(memory.created_on),
                        last_reinforced=stamp,
                    )
                    memory.reinforce(confidence=confidence, metadata=metadata)
                    reinforced.append(memory)
                elif not _held(memory.content, entry):
                    memory.update(validation.content(entry.value), validation.tags(entry.tags))
                    updated.append(memory)
        for memory_id, entry in decisions.rewrites.items():  # the update band
            memory = self.ledger.memory(memory_id)
            if memory is not None and memory.state == ACTIVE:
                with acting_as(replace(provenance, prompt_version=entry.prompt_version)):
                    memory.update(validation.content(entry.value), None)
                updated.append(memory)
        added: list[Memory] = []
        superseded: list[Memory] = []
        for version in dict.fromkeys(e.prompt_version for e in new):
            entries = [e for e in new if e.prompt_version == version]
            decided = replace(provenance, prompt_version=version)
            drafted = recorded_ids(
                self.ledger.draft(decided, [_new_memory(e, stamp) for e in entries])
            )
            added += drafted
            for entry, memory in zip(entries, drafted, strict=True):
                old = self.ledger.memory(entry.supersedes) if entry.supersedes else None
                if old is not None and old.state == ACTIVE:  # the recreate band
                    with acting_as(decided):
                        old.supersede(memory.id.hex, MULTI_FACT_SOURCE)
                    superseded.append(old)
        return added, updated, reinforced, superseded

    def _directive(
        self,
        llm: RecordedLLM,
        decisions: _Decisions,
        provenance: Provenance,
        now: datetime,
        written: list[Memory],
    ) -> tuple[Memory, bool] | None:
        """Seed 004 §4: when styles were extracted, synthesize the directive from the
        observations that survive decay (at least 3); (memory, is new) when it changed."""
        if not decisions.styles_extracted:
            return None
        states = {key: style_state(row) for key, row in decisions.styles.items()}
        for memory in written:
            if memory.namespace == PERSONALITY_NAMESPACE and (memory.key or "").startswith(
                STYLE_KEY_PREFIX
            ):
                metadata = memory.metadata or {}
                count = metadata.get("reinforced_count")
                states[memory.key or ""] = StyleState(
                    key=memory.key or "",
                    value=memory.content,
                    reinforced_count=count if isinstance(count, int) else 1,
                    last_reinforced=_parse_time(metadata.get("last_reinforced")) or now,
                )
        observations = strongest(apply_decay(states.values(), now))
        if len(observations) < MIN_STYLE_OBSERVATIONS:
            return None
        output = llm.run(
            SYNTHESIZE,
            SynthesizeInput(
                observations=[
                    StyleObservation(key=o.key, value=o.value, count=o.reinforced_count)
                    for o in observations
                ]
            ),
        )
        entry = MemoryEntry(
            namespace=PERSONALITY_DIRECTIVE_NAMESPACE,
            key=PERSONALITY_DIRECTIVE_KEY,
            value=output.directive,
            prompt_version=prompt_version(SYNTHESIZE),
        )
        try:
            entry = sanitize_entry(entry)
        except FactRefused as refused:
            decisions.skip(entry, f"refused: {refused.reason}")
            return None
        metadata = {"synthesized_at": _rfc3339(now), "observation_count": len(observations)}
        decided = replace(provenance, prompt_version=entry.prompt_version)
        row = decisions.by_key.get((entry.namespace, PERSONALITY_DIRECTIVE_KEY))
        current = self.ledger.memory(row.id) if row is not None else None
        if current is None or current.state != ACTIVE:
            [created] = recorded_ids(
                self.ledger.draft(decided, [_new_memory(entry, metadata=metadata)])
            )
            return created, True
        if _same(current.content) == _same(entry.value):
            return None
        with acting_as(decided):
            current.update(validation.content(entry.value), None)
            current.reinforce(metadata={**(current.metadata or {}), **metadata})
        return current, False


def _new_memory(
    entry: MemoryEntry, stamp: str = "", metadata: Mapping[str, Any] | None = None
) -> NewMemory:
    confidence = entry.confidence
    if reinforces(entry):
        # stated n times in this ingest: created as if reinforced n - 1 times (seed 004 §5)
        if confidence is not None:
            confidence = boosted_confidence(confidence, entry.observations - 1)
        metadata = {
            "confidence": confidence,
            "reinforced_count": entry.observations,
            "first_observed": stamp,
            "last_reinforced": stamp,
        }
    if entry.day is not None:
        metadata = {**(metadata or {}), MULTI_FACT_DAY_KEY: entry.day}
    return NewMemory(
        content=entry.value,
        kind=entry.kind,
        tags=entry.tags,
        source=entry.source,
        namespace=entry.namespace,
        importance=entry.importance,
        key=entry.key,
        confidence=confidence,
        evidence=entry.evidence or None,
        metadata=metadata,
    )


def _unique(memories: Iterable[Memory]) -> list[Memory]:
    return list({m.id: m for m in memories}.values())


REFUSED: Final = "refused: "
"""How the reason of a fact the sanitizer refused begins."""


def _flush_thread(provenance: Provenance, compaction: int) -> str:
    """The thread a flush names (its provenance's), refused when missing; the compaction
    count must be a whole number >= 0."""
    if isinstance(compaction, bool) or not isinstance(compaction, int) or compaction < 0:
        raise InvalidInput(f"compaction must be a whole number >= 0; got {compaction!r}")
    if not provenance.thread_id:
        raise InvalidInput("a flush names the thread it flushes: give thread")
    return provenance.thread_id
