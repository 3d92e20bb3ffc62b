"""The data keys beside a PostgreSQL log (see `ledger.data_keys`): the tables
`mnemoledger_data_keys` and `mnemoledger_erasures` in the log's schema.

Its own module so that psycopg is imported only when a PostgreSQL log is opened.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import sql

from mnemoledger.ledger.data_keys import (
    PG_DATA_KEYS,
    PG_ERASURES,
    PG_LOCK_CLASS,
    ErasureRecord,
    KeyRow,
    KeyStore,
    _new_key,
)
from mnemoledger.ledger.pg_connection import SharedConnection


class PostgresKeyStore(KeyStore):
    """The keys of every home whose log is in this PostgreSQL schema."""

    def __init__(self, url: str) -> None:
        self._pg = SharedConnection(url)
        self._keys = self._pg.table(PG_DATA_KEYS)
        self._erasures = self._pg.table(PG_ERASURES)
        with self._pg.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (PG_LOCK_CLASS,))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (kid TEXT PRIMARY KEY, user_id TEXT NOT NULL,"
                    " key BYTEA NOT NULL, created_at TEXT NOT NULL)"
                ).format(self._keys)
            )
            conn.execute(
                sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (user_id)").format(
                    sql.Identifier(PG_DATA_KEYS + "_by_user"), self._keys
                )
            )
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (generation BIGINT PRIMARY KEY,"
                    " user_id TEXT NOT NULL, erased_at TEXT NOT NULL, keys INTEGER NOT NULL)"
                ).format(self._erasures)
            )
        super().__init__()

    def _user_lock(self, conn: psycopg.Connection[Any], user_id: str) -> None:
        """Serialise key creation and destruction for one user across every process."""
        conn.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
            (PG_LOCK_CLASS, f"{self._pg.schema}:{user_id}"),
        )

    def _load_or_create(self, user_id: str) -> tuple[str, bytes]:
        with self._pg.transaction() as conn:
            self._user_lock(conn, user_id)
            row = conn.execute(
                sql.SQL(
                    "SELECT kid, key FROM {} WHERE user_id = %s ORDER BY created_at DESC LIMIT 1"
                ).format(self._keys),
                (user_id,),
            ).fetchone()
            if row is None:
                kid, key, created_at = _new_key()
                conn.execute(
                    sql.SQL("INSERT INTO {} VALUES (%s, %s, %s, %s)").format(self._keys),
                    (kid, user_id, key, created_at),
                )
                return kid, key
        return str(row[0]), bytes(row[1])

    def _load(self, kid: str) -> tuple[str, bytes] | None:
        row = self._pg.run(
            lambda conn: conn.execute(
                sql.SQL("SELECT user_id, key FROM {} WHERE kid = %s").format(self._keys), (kid,)
            ).fetchone()
        )
        return None if row is None else (str(row[0]), bytes(row[1]))

    def _has_keys(self, user_id: str) -> bool:
        row = self._pg.run(
            lambda conn: conn.execute(
                sql.SQL("SELECT 1 FROM {} WHERE user_id = %s LIMIT 1").format(self._keys),
                (user_id,),
            ).fetchone()
        )
        return row is not None

    def _erasure(self, user_id: str) -> ErasureRecord | None:
        row = self._pg.run(
            lambda conn: conn.execute(
                sql.SQL(
                    "SELECT user_id, generation, erased_at, keys FROM {} WHERE user_id = %s"
                    " ORDER BY generation DESC LIMIT 1"
                ).format(self._erasures),
                (user_id,),
            ).fetchone()
        )
        return None if row is None else ErasureRecord(row[0], int(row[1]), row[2], row[3])

    def _erased_after(self, generation: int) -> list[ErasureRecord]:
        rows = self._pg.run(
            lambda conn: conn.execute(
                sql.SQL(
                    "SELECT user_id, generation, erased_at, keys FROM {}"
                    " WHERE generation > %s ORDER BY generation"
                ).format(self._erasures),
                (generation,),
            ).fetchall()
        )
        return [ErasureRecord(r[0], int(r[1]), r[2], r[3]) for r in rows]

    def _latest_generation(self) -> int:
        row = self._pg.run(
            lambda conn: conn.execute(
                sql.SQL("SELECT COALESCE(MAX(generation), 0) FROM {}").format(self._erasures)
            ).fetchone()
        )
        return int(row[0]) if row else 0

    def _destroy(self, user_id: str) -> ErasureRecord:
        erased_at = datetime.now(UTC).isoformat()
        with self._pg.transaction() as conn:
            self._user_lock(conn, user_id)
            # generations must become visible in increasing order: one erasure at a time
            conn.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(self._erasures))
            deleted = conn.execute(
                sql.SQL("DELETE FROM {} WHERE user_id = %s").format(self._keys), (user_id,)
            ).rowcount
            row = conn.execute(
                sql.SQL(
                    "INSERT INTO {} SELECT COALESCE(MAX(generation), 0) + 1, %s, %s, %s FROM {}"
                    " RETURNING generation"
                ).format(self._erasures, self._erasures),
                (user_id, erased_at, deleted),
            ).fetchone()
            assert row is not None
        self._pg.run(lambda conn: conn.execute(sql.SQL("VACUUM FULL {}").format(self._keys)))
        return ErasureRecord(user_id, int(row[0]), erased_at, int(deleted))

    def _import(self, keys: list[KeyRow], erasures: list[ErasureRecord]) -> None:
        with self._pg.transaction() as conn:
            conn.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(self._erasures))
            for row in keys:
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {} VALUES (%s, %s, %s, %s) ON CONFLICT (kid) DO NOTHING"
                    ).format(self._keys),
                    row,
                )
            for record in erasures:
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {} SELECT COALESCE(MAX(generation), 0) + 1, %s, %s, %s FROM {}"
                    ).format(self._erasures, self._erasures),
                    (record.user_id, record.erased_at, record.keys),
                )

    def all_rows(self) -> tuple[list[KeyRow], list[ErasureRecord]]:
        rows = self._pg.run(
            lambda conn: conn.execute(
                sql.SQL("SELECT kid, user_id, key, created_at FROM {}").format(self._keys)
            ).fetchall()
        )
        return [(str(k), str(u), bytes(b), str(c)) for k, u, b, c in rows], self._erased_after(0)

    def close(self) -> None:
        self._pg.close()
