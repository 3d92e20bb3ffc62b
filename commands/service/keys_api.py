"""`Keys`: per-agent API keys on the Python API (issue 8; see `commands.keys`).

    memory.create_key(agent="planner", users=["maya"]).key   # shown once
    memory.keys()                                            # without the keys themselves
    memory.revoke_key("3f2a9c01b7d4")
    memory.authenticate("mlk_...")                           # Principal, or InvalidKey

The key store lives beside the event log, never in it: a PostgreSQL table when the log is
there (every server on the log shares it), else `api_keys.sqlite3` beside the SQLite log.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from mnemoledger.commands.parts import Parts
from mnemoledger.commands.service.keys import (
    ApiKeyStore,
    IssuedKey,
    KeyInfo,
    Principal,
    open_api_key_store,
)
from mnemoledger.ledger.errors import InvalidInput


class Keys:
    """API keys: create, list, revoke, authenticate (allowlists from the categories config)."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self._store: ApiKeyStore | None = None

    @property
    def api_key_store(self) -> ApiKeyStore:
        """The key store of the log, opened on first use."""
        if self._store is None:
            self._store = open_api_key_store(self.parts.settings)
        return self._store

    def create_key(
        self,
        *,
        agent: str,
        users: Sequence[str],
        categories: Sequence[str] | None = None,
        admin: bool = False,
    ) -> IssuedKey:
        """`MnemoLedger.create_key`: a new key for an agent (documented there)."""
        if not admin:
            allowed = self.parts.categories_config.allowlist(agent)  # UnknownAgent if none
            outside = [c for c in categories or () if c not in allowed]
            if outside:
                raise InvalidInput(
                    f"categories {', '.join(outside)} are not in agent {agent!r}'s allowlist: "
                    f"{', '.join(allowed) or '(empty)'}"
                )
        return self.api_key_store.create(
            agent=agent, users=users, categories=categories, admin=admin
        )

    def keys(self) -> builtins.list[KeyInfo]:
        """`MnemoLedger.keys`: every key, revoked ones included (documented there)."""
        return self.api_key_store.list()

    def revoke_key(self, key_id: str) -> KeyInfo:
        """`MnemoLedger.revoke_key`: revoke a key (documented there)."""
        return self.api_key_store.revoke(key_id)

    def authenticate(self, key: str | None) -> Principal:
        """`MnemoLedger.authenticate`: who a key is (documented there)."""
        return self.api_key_store.authenticate(key)
