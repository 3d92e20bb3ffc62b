"""Erasure in a deployment, tried as an attacker and an operator would (issue 16 items 1, 3,
4, 6): a `serve` process started before the erasure, a long-running process that rebuilds
with the keys it had loaded, an `erase` killed at each of its steps and run again, and two
homes on one log. On SQLite and on PostgreSQL (the suite's `--db`)."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from psycopg import sql

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.service.keys import KEYS_FILE as API_KEYS_FILE
from mnemoledger.commands.service.keys import PG_TABLE as PG_API_KEYS
from mnemoledger.commands.service.keys import ApiKeyStore, InvalidKey, open_api_key_store
from mnemoledger.ledger import MemoryNotFound, Settings
from mnemoledger.ledger.data_keys import KEYS_FILE, PG_DATA_KEYS, SQLiteKeyStore, key_file
from mnemoledger.ledger.pg_connection import connect, schema_of
from tests.erasure_checks import data_keys, files_containing, pg_dump_containing

ERASED = "u-erased"
KEPT = "u-kept"
SECRETS = ("Zorblatt", "xylophonic", "Quuxville", "Frobnik")
"""Words only the erased user ever wrote."""
CONTENTS = ["Zorblatt adores xylophonic marmalade", "Zorblatt grew up in Quuxville"]

REPO = Path(__file__).resolve().parent.parent


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def run_json(home: Path, *args: str) -> Any:
    result = run(home, "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def settings_of(home: Path) -> Settings:
    return Settings(home=home, embedder="hashing")


def write_session(home: Path, settings: Settings | None = None) -> list[str]:
    """The erased user's memories (their core.md too) and one of the kept user; the ids of
    the erased user's memories."""
    with MnemoLedger(settings=settings or settings_of(home), actor="tester") as memory:
        added = memory.add(CONTENTS, user=ERASED).memories
        memory.write_note("Zorblatt walks Frobnik every morning", user=ERASED, kind="log")
        memory.add(["Plain oatmeal every morning"], user=KEPT)
        return [m.id for m in added]


def no_secrets_left(settings: Settings, *homes: Path) -> None:
    for home in homes:
        assert files_containing(home, SECRETS) == {}, home
    assert pg_dump_containing(settings, list(SECRETS)) == []


# --- a live server ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve(home: Path) -> Iterator[str]:
    """`mnemoledger serve` in its own process (the environment names the store)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mnemoledger", "--home", str(home), "serve", "--port", str(port)],
        cwd=REPO,
        env={**os.environ, "MNEMOLEDGER_EMBEDDER": "hashing"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"serve did not start: {process.stderr}")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


def test_a_live_server_stops_serving_a_user_the_cli_erased(home: Path) -> None:
    """The attack of issue 16 item 1: a server that has decrypted the user's content with
    a key it holds in memory keeps serving it after `mnemoledger erase` in another process."""
    first = write_session(home)[0]
    key = run_json(
        home, "keys", "create", "--agent", "ops", "--user", ERASED, "--user", KEPT, "--admin"
    )["key"]
    auth = {"Authorization": f"Bearer {key}"}
    with serve(home) as url, httpx.Client(base_url=url, headers=auth, timeout=60) as http:
        history = http.get(f"/memories/{first}/history")
        assert history.status_code == 200 and "xylophonic" in history.text  # key in memory
        listed = http.get("/memories", params={"user_id": ERASED})
        assert "Zorblatt" in listed.text
        assert http.post("/search", json={"query": "xylophonic", "user_id": ERASED}).json()

        erased = run(home, "erase", "--user", ERASED, "--yes")
        assert erased.exit_code == 0, erased.stderr

        history = http.get(f"/memories/{first}/history")
        assert history.status_code == 404  # as for a memory that never existed
        answers = [
            history,
            http.get(f"/memories/{first}"),
            http.get("/memories", params={"user_id": ERASED}),
            http.get("/memories/latest", params={"user_id": ERASED}),
            http.post("/search", json={"query": "xylophonic marmalade", "user_id": ERASED}),
            http.post("/search", json={"query": "Zorblatt", "user_id": ERASED}),
            http.get("/core", params={"user_id": ERASED}),
        ]
        for answer in answers:
            assert answer.status_code < 500, answer.text
            assert not any(word.lower() in answer.text.lower() for word in SECRETS), answer.text
        assert http.get(f"/memories/{first}").status_code == 404
        assert http.get("/memories", params={"user_id": ERASED}).json() == []
        assert http.post("/search", json={"query": "xylophonic", "user_id": ERASED}).json() == []

        # the server keeps working for everyone else, and writes nothing erased back
        kept = http.get("/memories", params={"user_id": KEPT}).json()
        assert [m["content"] for m in kept] == ["Plain oatmeal every morning"]
        added = http.post("/memories", json={"contents": ["Tea at four"], "user_id": KEPT})
        assert added.status_code == 201, added.text
        assert http.get("/memories", params={"user_id": KEPT}).status_code == 200
    no_secrets_left(settings_of(home), home)


ERASE_IN_ANOTHER_PROCESS = """
import sys
from mnemoledger import MnemoLedger
with MnemoLedger(sys.argv[1], actor="tester") as memory:
    memory.erase(user=sys.argv[2])
"""


def test_a_long_running_process_does_not_rebuild_erased_plaintext_back(home: Path) -> None:
    """A process that decrypted the user's content before the erasure, then rebuilds (or
    just catches up) after another process erased the user."""
    ids = write_session(home)
    with MnemoLedger(settings=settings_of(home), actor="tester") as long_running:
        assert long_running.get(ids[0]).content == CONTENTS[0]  # its key is in memory
        assert "xylophonic" in json.dumps([e.data for e in long_running.history(ids[0])])
        subprocess.run(
            [sys.executable, "-c", ERASE_IN_ANOTHER_PROCESS, str(home), ERASED],
            cwd=REPO,
            check=True,
        )
        long_running.rebuild()
        no_secrets_left(long_running.settings, home)
        assert long_running.list(user=ERASED) == []
        assert "xylophonic" not in json.dumps([e.data for e in long_running.history(ids[0])])
        with pytest.raises(MemoryNotFound):
            long_running.get(ids[0])
        long_running.add(["Coffee at eight"], user=KEPT)  # a catch-up after the rebuild
        assert long_running.core(user=ERASED).markdown == ""
    no_secrets_left(settings_of(home), home)


# --- an erase killed at each step -----------------------------------------------------------

KILLED_ERASE = """
import os, sys
from mnemoledger import MnemoLedger
from mnemoledger.ledger import Provenance
step, home, user = sys.argv[1:4]
memory = MnemoLedger(home, actor="tester")
if step == "after-keys":  # what `erase` does first, then the process dies
    memory.ledger.keys.destroy(user)
elif step == "after-event":  # keys destroyed and UserErased recorded, nothing rebuilt
    memory.ledger.erase(Provenance(user_id=user, actor="tester"), user)
else:  # killed by its own progress report, inside the rebuild, before compaction
    memory.erase(user=user, progress=lambda done, total: os._exit(9))
os._exit(9)
"""

REDONE = {
    "after-keys": ["data keys already destroyed", "recorded UserErased", "rebuilt"],
    "after-event": ["data keys already destroyed", "UserErased already recorded", "rebuilt"],
    "in-rebuild": ["data keys already destroyed", "UserErased already recorded", "rebuilt"],
}


@pytest.mark.parametrize("step", list(REDONE))
def test_an_erase_killed_at_each_step_is_finished_by_running_it_again(
    home: Path, step: str
) -> None:
    ids = write_session(home)
    settings = settings_of(home)
    keys = data_keys(settings, ERASED)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_ERASE, step, str(home), ERASED], cwd=REPO, check=False
    )
    assert killed.returncode == 9
    assert data_keys(settings, ERASED) == []  # the key went first, in every case
    if step != "in-rebuild":
        assert files_containing(home, SECRETS), "the interrupted erase left plaintext"

    again = run(home, "erase", "--user", ERASED, "--yes")
    assert again.exit_code == 0, again.stderr
    for done in REDONE[step]:
        assert done in again.stdout, again.stdout

    no_secrets_left(settings, home)
    assert files_containing(home, keys) == {} and pg_dump_containing(settings, keys) == []
    assert run_json(home, "list", "--user", ERASED) == []
    assert run_json(home, "search", "xylophonic", "--user", ERASED) == []
    assert run(home, "get", ids[0]).exit_code != 0
    assert len(run_json(home, "log", "--type", "UserErased")) == 1
    assert run_json(home, "verify")["ok"]
    assert [m["content"] for m in run_json(home, "list", "--user", KEPT)] == [
        "Plain oatmeal every morning"
    ]

    third = run(home, "erase", "--user", ERASED, "--yes")
    assert third.exit_code == 0 and "read models already purged" in third.stdout


# --- two homes on one log -------------------------------------------------------------------


@pytest.fixture
def shared_log(tmp_path: Path, postgres_url: str | None) -> str:
    """One log for two homes: the run's PostgreSQL schema, else one SQLite file."""
    return postgres_url or f"sqlite:///{tmp_path / 'shared' / 'ledger.sqlite3'}"


def test_two_homes_on_one_log_read_each_other_and_both_stop_serving_an_erased_user(
    tmp_path: Path, shared_log: str
) -> None:
    """Issue 16 item 4: home B showed A's users as `[erased]`, wrote for them with a key of
    its own and kept serving its own writes after A erased the user."""
    home_a, home_b = tmp_path / "a", tmp_path / "b"
    a = MnemoLedger(settings=Settings(home=home_a, db=shared_log, embedder="hashing"))
    b = MnemoLedger(settings=Settings(home=home_b, db=shared_log, embedder="hashing"))
    try:
        written_by_a = a.add([CONTENTS[0]], user=ERASED).memories[0]
        assert [m.content for m in b.list(user=ERASED)] == [CONTENTS[0]]
        assert b.search("xylophonic marmalade", user=ERASED)[0].id == written_by_a.id
        written_by_b = b.add([CONTENTS[1]], user=ERASED).memories[0]
        assert {m.content for m in a.list(user=ERASED)} == set(CONTENTS)
        assert b.get(written_by_b.id).content == CONTENTS[1]
        b.add(["Plain oatmeal every morning"], user=KEPT)
        assert len(data_keys(a.settings, ERASED)) == 1  # one key, shared

        a.erase(user=ERASED)

        for home in (a, b):  # b has not been told: it learns from the log
            assert home.list(user=ERASED) == []
            assert home.search("xylophonic marmalade", user=ERASED) == []
            assert home.search("Quuxville", user=ERASED) == []
            for memory_id in (written_by_a.id, written_by_b.id):
                with pytest.raises(MemoryNotFound):
                    home.get(memory_id)
                history = json.dumps([e.data for e in home.history(memory_id)])
                assert not any(word.lower() in history.lower() for word in SECRETS)
            assert [m.content for m in home.list(user=KEPT)] == ["Plain oatmeal every morning"]
        no_secrets_left(a.settings, home_a, home_b)

        again = b.erase(user=ERASED)  # from the other home: already done, says so
        assert again.completed[1] == "UserErased already recorded"
        restarted = b.add(["Maya started a new job at the library"], user=ERASED).memories[0]
        assert [m.id for m in a.list(user=ERASED)] == [restarted.id]
    finally:
        a.close()
        b.close()


def test_api_keys_of_one_log_hold_on_every_home(tmp_path: Path, shared_log: str) -> None:
    home_a, home_b = tmp_path / "a", tmp_path / "b"
    a = MnemoLedger(settings=Settings(home=home_a, db=shared_log, embedder="hashing"))
    b = MnemoLedger(settings=Settings(home=home_b, db=shared_log, embedder="hashing"))
    try:
        issued = a.create_key(agent="ops", users=[ERASED], admin=True)
        assert b.authenticate(issued.key).users == (ERASED,)
        b.revoke_key(issued.id)
        with pytest.raises(InvalidKey, match="revoked"):
            a.authenticate(issued.key)
    finally:
        a.close()
        b.close()


def test_a_homes_own_key_files_move_to_where_the_log_is(tmp_path: Path, shared_log: str) -> None:
    """A home written when keys lived in the home, beside a log elsewhere: its keys are
    taken over by the log's store and its own files wiped, so that an erasure destroys the
    only copy and other homes can read its users."""
    home = tmp_path / "old"
    settings = Settings(home=home, db=shared_log, embedder="hashing")
    first = write_session(home, settings)[0]
    with MnemoLedger(settings=settings) as memory:
        api_key = memory.create_key(agent="ops", users=[ERASED], admin=True)
        keys, _ = memory.ledger.keys.all_rows()
    # the layout before: the keys only in the home's own files
    legacy = SQLiteKeyStore(home / KEYS_FILE)
    legacy._import(keys, [])
    legacy.close()
    legacy_api = ApiKeyStore(home / API_KEYS_FILE)
    with closing(open_api_key_store(settings)) as shared_api:
        legacy_api.adopt(shared_api)
    legacy_api.close()
    delete_shared_keys(settings)

    with MnemoLedger(settings=settings) as memory:
        assert memory.get(first).content == CONTENTS[0]
        assert memory.authenticate(api_key.key).agent == "ops"
        assert not (home / API_KEYS_FILE).exists()
        assert files_containing(home, [k[2] for k in keys]) == {}
        with MnemoLedger(settings=Settings(home=tmp_path / "other", db=shared_log)) as other:
            assert other.get(first).content == CONTENTS[0]
        memory.erase(user=ERASED)
    no_secrets_left(settings, home)
    assert data_keys(settings, ERASED) == []


def delete_shared_keys(settings: Settings) -> None:
    """Empty the log's key tables (data keys and API keys), as before they existed."""
    if settings.db and settings.db.startswith("postgres"):
        with connect(settings.db) as conn:
            for table in (PG_DATA_KEYS, PG_API_KEYS):
                conn.execute(
                    sql.SQL("DELETE FROM {}.{}").format(
                        sql.Identifier(schema_of(settings.db)), sql.Identifier(table)
                    )
                )
        return
    for path, table in (
        (key_file(settings), "data_keys"),
        (key_file(settings).parent / API_KEYS_FILE, "api_keys"),
    ):
        with sqlite3.connect(path) as db:
            db.execute(f"DELETE FROM {table}")
