"""Per-agent API keys for the HTTP API and the MCP server (issue 8).

    store = ApiKeyStore(home / "api_keys.sqlite3")
    issued = store.create(agent="planner", users=["maya"], categories=["tasks"])
    issued.key                 # "mlk_...": shown once, never stored
    store.authenticate(issued.key)   # Principal(agent="planner", users=("maya",), ...)

A key fixes who is acting: its agent is the `agent_id`, and `key:<id>` the `actor`, of every
write made with it; it names the users it may act for and, optionally, a subset of its
agent's category allowlist (seed 003 §5). Admin keys read every category.

Keys live beside the event log, never in it: in PostgreSQL (the table
`mnemoledger_api_keys` in the log's schema) when the log is there, so every server and host
on one log accepts the same keys and a revocation holds for all of them; else in
`api_keys.sqlite3` beside the SQLite log (in the home by default). They are deployment
credentials, not memory. The log is immutable, exported per user and replayed into scratch
ledgers; a credential (even hashed) does not belong in any of those, and a revoked key must
be checkable on every request with one indexed lookup, whatever the projections' state.
Only the sha256 of each key is stored: a key is 256 random bits, so a plain hash cannot be
reversed by guessing and needs no salt or slow hash.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from mnemoledger.ledger.data_keys import (
    PG_LOCK_CLASS,
    create_private_file,
    holds_rows,
    key_file,
    wipe_sqlite_tables,
)
from mnemoledger.ledger.errors import InvalidInput, LedgerError
from mnemoledger.ledger.pg_connection import SharedConnection
from mnemoledger.ledger.settings import Settings
from mnemoledger.ledger.sqlite_files import connect_shared
from mnemoledger.ledger.store import is_postgres
from mnemoledger.ledger.validation import identifier

if TYPE_CHECKING:
    from psycopg import sql

KEY_PREFIX = "mlk_"
"""Every key starts with this, so a leaked one is recognisable in logs and scanners."""

KEY_BYTES = 32
"""Random bytes of a key (256 bits)."""

API_KEY_ENV = "MNEMOLEDGER_API_KEY"
"""Environment variable holding the key of `mnemoledger mcp` (its `--key` wins)."""

KEYS_FILE = "api_keys.sqlite3"
"""The key store's file beside a SQLite log."""

PG_TABLE = "mnemoledger_api_keys"

_COLUMNS = "id, key_sha256, agent, users, categories, admin, created_at, revoked_at"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
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
    """API keys in `api_keys.sqlite3` (created 0600); safe to share between threads."""

    table = "api_keys"

    def __init__(self, path: Path) -> None:
        create_private_file(path)
        self.path = path
        self._lock = threading.Lock()
        self._db = connect_shared(path)
        self._db.execute(_SCHEMA.format(table=self.table))

    def _run(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (`?` placeholders, `{table}` for the table); its rows."""
        with self._lock:
            return self._db.execute(statement.format(table=self.table), params).fetchall()

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
        self._run(
            "INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
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
        rows = self._run(
            "SELECT id, agent, users, categories, admin, created_at, revoked_at"
            " FROM {table} ORDER BY created_at, id"
        )
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
        self._run(
            "UPDATE {table} SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
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
        rows = self._run(
            "SELECT id, agent, users, categories, admin, revoked_at FROM {table}"
            " WHERE key_sha256 = ?",
            (key_digest(key),),
        )
        if not rows:
            raise InvalidKey("invalid API key")
        row = rows[0]
        if row[5] is not None:
            raise InvalidKey("this API key was revoked")
        return Principal(
            key_id=row[0],
            agent=row[1],
            users=tuple(json.loads(row[2])),
            categories=None if row[3] is None else tuple(json.loads(row[3])),
            admin=bool(row[4]),
        )

    def rows(self) -> builtins.list[tuple[Any, ...]]:
        """Every stored row (to move the keys into another store)."""
        return self._run(f"SELECT {_COLUMNS} FROM {{table}}")

    def adopt(self, other: ApiKeyStore) -> int:
        """Take over another store's keys (unless present); returns how many were new."""
        taken = 0
        for row in other.rows():
            if not self._run("SELECT 1 FROM {table} WHERE id = ?", (row[0],)):
                self._run("INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
                taken += 1
        return taken

    def close(self) -> None:
        with self._lock:
            self._db.close()


API_KEYS_LOCK = 1
"""Second key of the advisory lock taken while creating the API keys' table (see
`ledger.data_keys.PG_LOCK_CLASS`)."""


class PostgresApiKeyStore(ApiKeyStore):
    """API keys in the table `mnemoledger_api_keys` beside a PostgreSQL log: every server
    and host on the log authenticates against it, so a revocation holds for all."""

    def __init__(self, url: str) -> None:
        self._pg = SharedConnection(url)
        self._table = self._pg.table(PG_TABLE)
        # two server workers starting together both create the table: CREATE TABLE IF NOT
        # EXISTS alone races on PostgreSQL's catalog (UniqueViolation on pg_type)
        with self._pg.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (PG_LOCK_CLASS, API_KEYS_LOCK))
            conn.execute(self._statement(_SCHEMA))

    def _statement(self, statement: str) -> sql.Composed:
        from psycopg import sql

        return sql.SQL(statement.replace("?", "%s")).format(table=self._table)

    def _run(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        def work(conn: Any) -> list[tuple[Any, ...]]:
            cursor = conn.execute(self._statement(statement), params)
            return list(cursor.fetchall()) if cursor.description else []

        return self._pg.run(work)

    def close(self) -> None:
        self._pg.close()


def open_api_key_store(settings: Settings) -> ApiKeyStore:
    """The API keys of the log `settings` name: PostgreSQL beside a PostgreSQL log, else
    `api_keys.sqlite3` beside the SQLite log. A home's own older file elsewhere is taken
    over by that store, then wiped."""
    store: ApiKeyStore
    if is_postgres(settings.db):
        store = PostgresApiKeyStore(str(settings.db))
    else:
        store = ApiKeyStore(key_file(settings).parent / KEYS_FILE)
    own = settings.home / KEYS_FILE
    shared = isinstance(store, PostgresApiKeyStore) or not (
        own.exists() and own.samefile(store.path)
    )
    if shared and holds_rows(own, (ApiKeyStore.table,)):
        old = ApiKeyStore(own)
        try:
            store.adopt(old)
        finally:
            old.close()
        wipe_sqlite_tables(own, (ApiKeyStore.table,))
    return store
