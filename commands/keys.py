"""Per-agent API keys for the HTTP API and the MCP server (issue 8).

    store = ApiKeyStore(home / "api_keys.sqlite3")
    issued = store.create(agent="planner", users=["maya"], categories=["tasks"])
    issued.key                 # "mlk_...": shown once, never stored
    store.authenticate(issued.key)   # Principal(agent="planner", users=("maya",), ...)

A key fixes who is acting: its agent is the `agent_id`, and `key:<id>` the `actor`, of every
write made with it; it names the users it may act for and, optionally, a subset of its
agent's category allowlist (seed 003 §5). Admin keys read every category.

Keys live in a small SQLite file in the home, not in the event log: they are deployment
credentials, not memory. The log is immutable, exported per user and replayed into scratch
ledgers; a credential (even hashed) does not belong in any of those, and a revoked key must
be checkable on every request with one indexed lookup, whatever the projections' state.
Only the sha256 of each key is stored: a key is 256 random bits, so a plain hash cannot be
reversed by guessing and needs no salt or slow hash.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from ledger.errors import InvalidInput, LedgerError
from ledger.validation import identifier

KEY_PREFIX = "mlk_"
"""Every key starts with this, so a leaked one is recognisable in logs and scanners."""

KEY_BYTES = 32
"""Random bytes of a key (256 bits)."""

API_KEY_ENV = "MNEMOLEDGER_API_KEY"
"""Environment variable holding the key of `mnemoledger mcp` (its `--key` wins)."""

KEYS_FILE = "api_keys.sqlite3"
"""The key store's file in the home."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    key_sha256 TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    users TEXT NOT NULL,
    categories TEXT,
    admin INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
)
"""


class InvalidKey(LedgerError):
    """No key, an unknown key or a revoked one (HTTP 401)."""


class KeyNotFound(InvalidInput):
    """`keys revoke` named a key id the store does not have."""


@dataclass(frozen=True)
class Principal:
    """Who an authenticated request is: the key's agent, users and categories."""

    key_id: str
    agent: str
    users: tuple[str, ...]
    categories: tuple[str, ...] | None
    """The key's own category subset (None: the agent's whole allowlist)."""
    admin: bool = False

    @property
    def actor(self) -> str:
        """The `actor` recorded on every event this key causes."""
        return f"key:{self.key_id}"


class KeyInfo(BaseModel):
    """One key as `keys list` shows it (never the key itself)."""

    id: str
    agent: str
    users: list[str]
    categories: list[str] | None
    admin: bool
    created_at: str
    revoked_at: str | None


class IssuedKey(KeyInfo):
    """A key just created: `key` is shown this once and never stored."""

    key: str


def key_digest(key: str) -> str:
    """The stored form of a key: its sha256, hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _names(kind: str, values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(str(identifier(kind, v)) for v in values))


class ApiKeyStore:
    """The API keys of one home, in `api_keys.sqlite3`; safe to share between threads."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.execute(_SCHEMA)

    def create(
        self,
        *,
        agent: str,
        users: Sequence[str],
        categories: Sequence[str] | None = None,
        admin: bool = False,
    ) -> IssuedKey:
        """A new key for `agent`, acting for `users` (at least one)."""
        agent_id = str(identifier("agent", agent))
        if isinstance(users, str):
            users = [users]
        user_ids = _names("user", users)
        if not user_ids:
            raise InvalidInput("a key needs at least one --user")
        chosen = None if categories is None else _names("category", categories)
        if chosen is not None and not chosen:
            raise InvalidInput("--categories is empty: omit it to use the agent's allowlist")
        key = KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)
        info = KeyInfo(
            id=secrets.token_hex(6),
            agent=agent_id,
            users=user_ids,
            categories=chosen,
            admin=admin,
            created_at=datetime.now(UTC).isoformat(),
            revoked_at=None,
        )
        with self._lock:
            self._db.execute(
                "INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                (
                    info.id,
                    key_digest(key),
                    info.agent,
                    json.dumps(info.users),
                    None if chosen is None else json.dumps(chosen),
                    int(admin),
                    info.created_at,
                ),
            )
        return IssuedKey(**info.model_dump(), key=key)

    def list(self) -> list[KeyInfo]:
        """Every key, oldest first, revoked ones included."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, agent, users, categories, admin, created_at, revoked_at"
                " FROM api_keys ORDER BY created_at, id"
            ).fetchall()
        return [
            KeyInfo(
                id=r[0],
                agent=r[1],
                users=json.loads(r[2]),
                categories=None if r[3] is None else json.loads(r[3]),
                admin=bool(r[4]),
                created_at=r[5],
                revoked_at=r[6],
            )
            for r in rows
        ]

    def revoke(self, key_id: str) -> KeyInfo:
        """Revoke a key by id: every later request with it is refused (401)."""
        with self._lock:
            self._db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (datetime.now(UTC).isoformat(), key_id),
            )
        for info in self.list():
            if info.id == key_id:
                return info
        raise KeyNotFound(f"no key with id {key_id!r}")

    def authenticate(self, key: str | None) -> Principal:
        """The principal of a valid, unrevoked key; `InvalidKey` otherwise."""
        if not key:
            raise InvalidKey("missing API key: send `Authorization: Bearer <key>`")
        with self._lock:
            row = self._db.execute(
                "SELECT id, agent, users, categories, admin, revoked_at FROM api_keys"
                " WHERE key_sha256 = ?",
                (key_digest(key),),
            ).fetchone()
        if row is None:
            raise InvalidKey("invalid API key")
        if row[5] is not None:
            raise InvalidKey("this API key was revoked")
        return Principal(
            key_id=row[0],
            agent=row[1],
            users=tuple(json.loads(row[2])),
            categories=None if row[3] is None else tuple(json.loads(row[3])),
            admin=bool(row[4]),
        )

    def close(self) -> None:
        with self._lock:
            self._db.close()
