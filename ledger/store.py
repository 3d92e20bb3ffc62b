"""Which event store the ledger uses: the library's persistence modules, chosen by URL."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from ledger.errors import InvalidInput
from ledger.settings import Settings


def persistence_env(settings: Settings) -> dict[str, str]:
    """The library's environment for `settings`: SQLite in `home` unless a URL says otherwise."""
    url = settings.db
    if not url or url.startswith("sqlite:///"):
        # sqlite:///relative/path or sqlite:////absolute/path, as SQLAlchemy spells them
        path = Path(url.removeprefix("sqlite:///")) if url else settings.sqlite_path
        path.parent.mkdir(parents=True, exist_ok=True)
        return {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)}
    if url.startswith(("postgresql://", "postgres://")):
        parsed = urlparse(url)
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": parsed.path.lstrip("/") or "postgres",
            "POSTGRES_HOST": parsed.hostname or "127.0.0.1",
            "POSTGRES_PORT": str(parsed.port or 5432),
            "POSTGRES_USER": unquote(parsed.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(parsed.password or ""),
        }
    raise InvalidInput(f"unsupported database URL {url!r}: use sqlite:///PATH or postgresql://")
