"""A plain psycopg connection to the event store's PostgreSQL database.

The small tables that must live where the log lives (data keys, erasures, API keys) are
kept in the same database and schema as the library's event table, but never in it.

psycopg is imported when a PostgreSQL store is used, not with this module: a SQLite home
does not load the driver (~0.1 s of CPU at every start).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlparse

from mnemoledger.ledger.store import postgres_env

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

T = TypeVar("T")


def schema_of(url: str) -> str:
    """The schema named by `?schema=`, else `public` (as the library chooses)."""
    return parse_qs(urlparse(url).query).get("schema", ["public"])[-1] or "public"


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection to the database of `url`."""
    import psycopg

    env = postgres_env(url)
    return psycopg.connect(
        dbname=env["POSTGRES_DBNAME"],
        host=env["POSTGRES_HOST"],
        port=env["POSTGRES_PORT"],
        user=env["POSTGRES_USER"],
        password=env["POSTGRES_PASSWORD"] or None,
        autocommit=True,
    )


class SharedConnection:
    """One connection shared by a store's threads, reopened once if the server dropped it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.schema = schema_of(url)
        self._lock = threading.Lock()
        self._conn = connect(url)

    def table(self, name: str) -> sql.Composed:
        """`"schema"."name"`, quoted."""
        from psycopg import sql

        return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(name))

    def run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """`work(connection)` under the store's lock; retried once on a fresh connection
        when the old one was closed under it (a server restart)."""
        import psycopg

        with self._lock:
            try:
                return work(self._conn)
            except psycopg.OperationalError:
                if not self._conn.closed:
                    raise
                self._conn = connect(self.url)
                return work(self._conn)

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection inside one transaction, under the store's lock."""
        with self._lock:
            if self._conn.closed:
                self._conn = connect(self.url)
            with self._conn.transaction():
                yield self._conn

    def close(self) -> None:
        with self._lock:
            self._conn.close()
