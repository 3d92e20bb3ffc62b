"""Per-agent API keys: stored hashed, shown once, revocable; `mnemoledger keys ...`."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from psycopg import sql

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.service.keys import (
    KEY_PREFIX,
    KEYS_FILE,
    ApiKeyStore,
    InvalidKey,
    KeyNotFound,
    key_digest,
)
from mnemoledger.commands.service.keys import PG_TABLE as PG_API_KEYS
from mnemoledger.ledger import Settings
from mnemoledger.ledger.data_keys import KEYS_FILE as DATA_KEYS_FILE
from mnemoledger.ledger.data_keys import PG_DATA_KEYS, holds_rows
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.pg_connection import connect, schema_of


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def run_json(home: Path, *args: str) -> Any:
    result = run(home, "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_key_is_stored_hashed_and_authenticates_until_revoked(tmp_path: Path) -> None:
    store = ApiKeyStore(tmp_path / KEYS_FILE)
    issued = store.create(agent="planner", users=["maya", "bob", "maya"], categories=["tasks"])
    assert issued.key.startswith(KEY_PREFIX) and len(issued.key) > 40
    assert issued.users == ["maya", "bob"]

    principal = store.authenticate(issued.key)
    assert (principal.agent, principal.users, principal.categories) == (
        "planner",
        ("maya", "bob"),
        ("tasks",),
    )
    assert principal.actor == f"key:{issued.id}" and not principal.admin

    raw = sqlite3.connect(tmp_path / KEYS_FILE).execute("SELECT * FROM api_keys").fetchall()
    stored = json.dumps(raw)
    assert issued.key not in stored
    assert key_digest(issued.key) in stored

    listed = store.list()
    assert [k.id for k in listed] == [issued.id]
    assert "key" not in listed[0].model_dump()

    store.revoke(issued.id)
    with pytest.raises(InvalidKey, match="revoked"):
        store.authenticate(issued.key)
    assert store.list()[0].revoked_at is not None


def test_missing_and_unknown_keys_are_refused(tmp_path: Path) -> None:
    store = ApiKeyStore(tmp_path / KEYS_FILE)
    with pytest.raises(InvalidKey, match="missing"):
        store.authenticate(None)
    with pytest.raises(InvalidKey, match="invalid"):
        store.authenticate(KEY_PREFIX + "not-a-key")
    with pytest.raises(KeyNotFound):
        store.revoke("nope")
    with pytest.raises(InvalidInput):
        store.create(agent="planner", users=[])
    with pytest.raises(InvalidInput):
        store.create(agent="has space", users=["maya"])


def test_keys_commands(home: Path) -> None:
    created = run_json(home, "keys", "create", "--agent", "researcher", "--user", "maya")
    assert created["key"].startswith(KEY_PREFIX)
    assert created["agent"] == "researcher" and created["users"] == ["maya"]

    human = run(home, "keys", "create", "--agent", "planner", "--user", "maya", "--user", "bob")
    assert human.exit_code == 0, human.stderr
    assert human.stdout.splitlines()[0].startswith(KEY_PREFIX)
    assert "not shown again" in human.stderr

    listed = run_json(home, "keys", "list")
    assert [k["agent"] for k in listed] == ["researcher", "planner"]
    assert all("key" not in k for k in listed)
    assert created["key"] not in json.dumps(listed)

    revoked = run_json(home, "keys", "revoke", created["id"])
    assert revoked["revoked_at"] is not None
    missing = run(home, "keys", "revoke", "nope")
    assert missing.exit_code == 2 and missing.stderr.startswith("error: no key")


def test_keys_create_checks_the_categories_config(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    helper = run_json(home, "keys", "create", "--agent", "helper", "--user", "maya")
    assert helper["agent"] == "helper", "any agent name gets the default allowlist"
    strict = tmp_path / "strict.yaml"
    strict.write_text("allowlists:\n  scribe: [notes]\n")
    monkeypatch.setenv("MNEMOLEDGER_CATEGORIES", str(strict))
    unknown = run(home, "keys", "create", "--agent", "nobody", "--user", "maya")
    assert unknown.exit_code == 2
    assert "unknown agent 'nobody'" in unknown.stderr
    monkeypatch.delenv("MNEMOLEDGER_CATEGORIES")

    outside = run(
        home, "keys", "create", "--agent", "stylist", "--user", "maya", "--categories", "tasks"
    )
    assert outside.exit_code == 2
    assert "not in agent 'stylist'" in outside.stderr

    subset = run_json(
        home, "keys", "create", "--agent", "stylist", "--user", "maya", "--categories", "tone"
    )
    assert subset["categories"] == ["tone"]

    admin = run_json(home, "keys", "create", "--agent", "ops", "--user", "maya", "--admin")
    assert admin["admin"] is True and admin["key"].startswith(KEY_PREFIX)
    assert run_json(home, "keys", "list")[-1]["admin"] is True


def test_keys_live_where_the_log_is(home: Path, postgres_url: str | None) -> None:
    """Data keys and API keys are stored with the event store: PostgreSQL tables beside a
    PostgreSQL log (nothing in the home), else files beside the SQLite log, created 0600."""
    settings = Settings(home=home, embedder="hashing")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        issued = memory.create_key(agent="ops", users=["maya"], admin=True)
        memory.add(["I like green tea"], user="maya")
    if postgres_url:
        assert not (home / KEYS_FILE).exists()
        assert not holds_rows(home / DATA_KEYS_FILE, ("data_keys",))
        with connect(postgres_url) as conn:
            schema = sql.Identifier(schema_of(postgres_url))
            for table, column, value in (
                (PG_DATA_KEYS, "user_id", "maya"),
                (PG_API_KEYS, "id", issued.id),
            ):
                statement = sql.SQL("SELECT COUNT(*) FROM {}.{} WHERE {} = %s").format(
                    schema, sql.Identifier(table), sql.Identifier(column)
                )
                assert conn.execute(statement, (value,)).fetchone() == (1,)
    else:
        for name in (KEYS_FILE, DATA_KEYS_FILE):
            assert stat.S_IMODE((home / name).stat().st_mode) == 0o600, name
        assert holds_rows(home / DATA_KEYS_FILE, ("data_keys",))
