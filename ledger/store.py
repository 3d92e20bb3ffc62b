"""Which event store the ledger uses: the library's persistence modules, chosen by URL.

`sqlite:///PATH` (or nothing: `ledger.sqlite3` in the data directory) selects
`eventsourcing.sqlite`; `postgresql://USER:PASSWORD@HOST:PORT/DBNAME?schema=NAME` selects
`eventsourcing.postgres` (install the `postgres` extra). The schema must exist; without
`schema` the tables go in `public`.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from ledger.errors import InvalidInput
from ledger.settings import Settings

POSTGRES_SCHEMES = ("postgresql://", "postgres://")

POSTGRES_RECORDER = "ledger.postgres_recorder:LedgerPostgresRecorder"
"""The library's recorder with large saves chunked and table creation retried (see
ledger/postgres_recorder.py)."""


def is_postgres(url: str | None) -> bool:
    return bool(url) and str(url).startswith(POSTGRES_SCHEMES)


def persistence_env(settings: Settings) -> dict[str, str]:
    """The library's environment for `settings`: SQLite in `home` unless a URL says otherwise."""
    url = settings.db
    if not url or url.startswith("sqlite:///"):
        # sqlite:///relative/path or sqlite:////absolute/path, as SQLAlchemy spells them
        path = Path(url.removeprefix("sqlite:///")) if url else settings.sqlite_path
        path.parent.mkdir(parents=True, exist_ok=True)
        return {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)}
    if is_postgres(url):
        return postgres_env(url)
    raise InvalidInput(f"unsupported database URL {url!r}: use sqlite:///PATH or postgresql://")


def postgres_env(url: str) -> dict[str, str]:
    """`eventsourcing.postgres` settings from a `postgresql://` URL."""
    parsed = urlparse(url)
    query = parse_qs(parsed.query)
    unknown = set(query) - {"schema"}
    if unknown:
        raise InvalidInput(f"unsupported database URL option(s): {', '.join(sorted(unknown))}")
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": unquote(parsed.path.lstrip("/")) or "postgres",
        "POSTGRES_HOST": parsed.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(parsed.port or 5432),
        "POSTGRES_USER": unquote(parsed.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parsed.password or ""),
        "APPLICATION_RECORDER_TOPIC": POSTGRES_RECORDER,
        # the library's insert function does not take the table lock that keeps
        # positions in commit order (followers rely on it)
        "POSTGRES_ENABLE_DB_FUNCTIONS": "n",
    }
    if schema := query.get("schema", [""])[-1]:
        env["POSTGRES_SCHEMA"] = schema
    return env
