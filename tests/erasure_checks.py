"""Where an erased user's content or keys could hide: files under a home, the PostgreSQL
schema of the log (read whole with `pg_dump`), the data-key tables."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import psycopg
from psycopg import sql

from mnemoledger.ledger import Settings
from mnemoledger.ledger.data_keys import PG_DATA_KEYS, key_file
from mnemoledger.ledger.pg_connection import connect, schema_of
from mnemoledger.ledger.store import is_postgres, postgres_env

PG_DUMP = "/usr/lib/postgresql/15/bin/pg_dump"


def files_containing(home: Path, needles: tuple[str, ...] | list[bytes]) -> dict[str, list[str]]:
    """Every file under `home` whose bytes contain a needle (texts case-insensitively)."""
    found: dict[str, list[str]] = {}
    for path in sorted(home.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        lowered = data.lower()
        hits = [
            repr(n)
            for n in needles
            if (n.lower().encode() in lowered if isinstance(n, str) else n in data)
        ]
        if hits:
            found[str(path.relative_to(home))] = hits
    return found


def pg_dump_containing(
    settings: Settings, needles: list[str] | list[bytes] | list[str | bytes]
) -> list[str]:
    """The needles found in a `pg_dump` of the log's schema, as text or as the hex of a
    bytea column ([] when the log is not on PostgreSQL)."""
    if not is_postgres(settings.db):
        return []
    env = postgres_env(settings.db)
    dumped = subprocess.run(
        [
            PG_DUMP,
            "--host",
            env["POSTGRES_HOST"],
            "--port",
            env["POSTGRES_PORT"],
            "--username",
            env["POSTGRES_USER"],
            "--schema",
            schema_of(settings.db),
            env["POSTGRES_DBNAME"],
        ],
        capture_output=True,
        check=True,
    ).stdout.lower()
    found = []
    for needle in needles:
        raw = needle.lower().encode() if isinstance(needle, str) else needle
        as_hex = (needle.encode() if isinstance(needle, str) else needle).hex().encode()
        if raw in dumped or as_hex in dumped:
            found.append(repr(needle))
    return found


def data_keys(settings: Settings, user: str) -> list[bytes]:
    """The user's stored data keys, wherever the log keeps them."""
    if settings.db and is_postgres(settings.db):
        with connect(settings.db) as conn:
            table = sql.SQL("{}.{}").format(
                sql.Identifier(schema_of(settings.db)), sql.Identifier(PG_DATA_KEYS)
            )
            try:
                rows = conn.execute(
                    sql.SQL("SELECT key FROM {} WHERE user_id = %s").format(table), (user,)
                ).fetchall()
            except psycopg.errors.UndefinedTable:
                return []
        return [bytes(r[0]) for r in rows]
    with sqlite3.connect(key_file(settings)) as db:
        return [
            bytes(r[0]) for r in db.execute("SELECT key FROM data_keys WHERE user_id = ?", (user,))
        ]
