"""Erasure by crypto-shredding: after `erase`, no byte of the user's content is left in
the data directory (nor in the PostgreSQL tables), the user's memories leave every reader,
their events decode redacted, everyone else is untouched, and `verify` still passes.

Deployments (a live server, an interrupted erase, two homes on one log) are tested in
tests/test_erasure_deployment.py."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mnemoledger import MnemoLedger
from mnemoledger.commands.audit.timetravel import read_models_at
from mnemoledger.commands.cli import cli
from mnemoledger.ledger import Ledger, MemoryNotFound, Settings
from mnemoledger.ledger.data_keys import open_key_store
from mnemoledger.ledger.encryption import PLAINTEXT_FIELDS
from mnemoledger.ledger.errors import UnknownUser
from mnemoledger.ledger.policy import ERASED_TEXT
from tests.erasure_checks import data_keys, files_containing, pg_dump_containing

ERASED = "u-shredded"
KEPT = "u-kept"

SECRET_WORDS = (
    "Zorblatt",
    "xylophonic",
    "Quuxville",
    "glorpberries",
    "snarfle",
    "snorkelwaffles",
    "Wibblequeen",
    "flibbertag",
    "Frobnik",
    "grimoire",
)
"""Words only the erased user ever wrote."""

ERASED_CONTENTS = (
    "Zorblatt adores xylophonic marmalade",
    "Zorblatt's sister Wibblequeen lives in Quuxville",
)
TURNS = [
    {"id": "t1", "role": "user", "content": "Hi! I'm Zorblatt, I live in Quuxville with Frobnik."},
    {"id": "t2", "role": "assistant", "content": "Nice to meet you."},
    {
        "id": "t3",
        "role": "user",
        "content": "I'm allergic to glorpberries, so never suggest them. I prefer snarfle tea.",
    },
]


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def run_json(home: Path, *args: str) -> Any:
    result = run(home, "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def session(memory: MnemoLedger) -> dict[str, str]:
    """Every kind of write for the erased user, and a little for the kept one."""
    first = memory.add(list(ERASED_CONTENTS), user=ERASED, tags=["flibbertag"]).memories
    memory.add(["Plain oatmeal every morning", "Runs along the river on Sundays"], user=KEPT)
    memory.update(first[0].id, "Zorblatt now prefers xylophonic jam", tags=["flibbertag"])
    note = memory.write_note("Zorblatt keeps a grimoire of snorkelwaffles", user=ERASED, kind="log")
    memory.ingest(TURNS, user=ERASED)
    memory.propose_consent(user=ERASED, field="city", value="Quuxville", reason="said Quuxville")
    memory.query("xylophonic marmalade", agent="researcher", user=ERASED)
    memory.consolidate(user=ERASED)
    return {"first": first[0].id, "second": first[1].id, "note": note.note.id}


def test_erase_leaves_no_plaintext_anywhere_in_the_home(memory: MnemoLedger, home: Path) -> None:
    ids = session(memory)
    kept_before = [(m.id, m.content, m.tags) for m in memory.list(user=KEPT)]
    assert memory.core(user=ERASED).markdown.count("Quuxville")  # core.md holds the content
    before = files_containing(home, SECRET_WORDS)
    assert before, "the read models hold the content before the erasure"
    assert not any("ledger.sqlite3" in name for name in before), (
        "the log itself holds only ciphertext, even before the erasure"
    )
    keys = data_keys(memory.settings, ERASED)
    assert len(keys) == 1
    if memory.settings.db:
        assert files_containing(home, keys) == {} and pg_dump_containing(memory.settings, keys)
    else:
        assert files_containing(home, keys) == {"keys.sqlite3": [repr(keys[0])]}
    cached = [hashlib.sha256(text.encode()).digest() for text in ERASED_CONTENTS]
    with sqlite3.connect(home / "embeddings.sqlite3") as db:
        assert db.execute(
            "SELECT COUNT(*) FROM embeddings WHERE text_sha256 IN (?, ?)", cached
        ).fetchone()[0]

    result = memory.erase(user=ERASED)
    assert "layers" in result.projections and result.embeddings_dropped > 0
    assert result.completed[:2] == ["destroyed 1 data key(s)", "recorded UserErased"]

    # no plaintext, no key, no vector of the erased content anywhere under the home or in
    # the PostgreSQL schema
    assert files_containing(home, SECRET_WORDS) == {}
    assert files_containing(home, keys) == {}
    assert pg_dump_containing(memory.settings, [*SECRET_WORDS, *keys]) == []
    with sqlite3.connect(home / "embeddings.sqlite3") as db:
        assert not db.execute(
            "SELECT COUNT(*) FROM embeddings WHERE text_sha256 IN (?, ?)", cached
        ).fetchone()[0]

    # the erased user's memories leave every reader; their events decode redacted
    for memory_id in ids.values():
        with pytest.raises(MemoryNotFound):
            memory.get(memory_id)
    assert memory.list(user=ERASED) == [] and memory.list(state="active", user=ERASED) == []
    assert ERASED not in {m.user_id for m in memory.list()}
    assert memory.core(user=ERASED).markdown == ""
    history = memory.history(ids["first"])
    verbs = [e.type for e in history if e.type != "MemoryLinked"]  # links are incidental
    assert verbs[:2] == ["MemoryAdded", "MemoryUpdated"]
    assert history[0].data["content"] == ERASED_TEXT and history[0].user_id == ERASED
    assert memory.search("xylophonic marmalade", user=ERASED) == []
    assert memory.search("Zorblatt", user=ERASED, fusion="weighted") == []
    log = memory.log(user=ERASED)
    assert [e.data for e in log if e.type == "UserErased"] == [{"generation": 1}]
    assert all(word.lower() not in json.dumps(e.data).lower() for e in log for word in SECRET_WORDS)
    # (a query is recorded: asked after the erasure, its words are new data of the user)
    assert memory.query("xylophonic marmalade", agent="researcher", user=ERASED).results == []

    # everyone else is untouched
    assert [(m.id, m.content, m.tags) for m in memory.list(user=KEPT)] == kept_before
    assert memory.search("oatmeal", user=KEPT)[0].content == "Plain oatmeal every morning"

    # the log still verifies, and the read models rebuild from it without the content
    assert memory.verify().ok
    memory.rebuild()
    assert files_containing(home, SECRET_WORDS) == {}
    assert memory.list(user=ERASED) == []
    assert [(m.id, m.content, m.tags) for m in memory.list(user=KEPT)] == kept_before


def test_a_fresh_ledger_reads_the_erased_user_redacted(memory: MnemoLedger, home: Path) -> None:
    first = memory.add(list(ERASED_CONTENTS), user=ERASED).memories[0]
    memory.erase(user=ERASED)
    with Ledger(memory.settings) as ledger:
        with pytest.raises(MemoryNotFound):
            ledger.memory(first.id)  # erased memories cannot be changed either
        contents = [r.data["content"] for r in ledger.read() if "content" in r.data]
        assert contents == [ERASED_TEXT, ERASED_TEXT]


def test_an_erased_user_can_start_again(memory: MnemoLedger) -> None:
    old = memory.add(["Zorblatt adores xylophonic marmalade"], user=ERASED).memories[0]
    memory.erase(user=ERASED)
    new = memory.add(["A new beginning in a new town"], user=ERASED).memories[0]
    assert memory.get(new.id).content == "A new beginning in a new town"
    assert [m.id for m in memory.list(user=ERASED)] == [new.id]
    with pytest.raises(MemoryNotFound):
        memory.get(old.id)
    memory.erase(user=ERASED)  # the new key goes too
    with pytest.raises(MemoryNotFound):
        memory.get(new.id)
    again = memory.erase(user=ERASED)  # nothing left to do: says so, succeeds
    assert again.completed[:2] == [
        f"data keys already destroyed at {again.completed[0].rsplit(' ', 1)[-1]}",
        "UserErased already recorded",
    ]
    assert again.completed[2] == "read models already purged of the user"
    assert [e.type for e in memory.log(event_type="UserErased")] == ["UserErased"] * 2


def test_unknown_user_is_a_clear_error(memory: MnemoLedger) -> None:
    with pytest.raises(UnknownUser, match="unknown user 'nobody'"):
        memory.erase(user="nobody")


def test_cli_erase_needs_yes_and_a_known_user(home: Path) -> None:
    run_json(home, "add", "Zorblatt adores xylophonic marmalade", "--user", ERASED)
    events = len(run_json(home, "log", "--user", ERASED))

    refused = run(home, "erase", "--user", ERASED)
    assert refused.exit_code == 2 and refused.stderr.startswith("error:")
    assert "--yes" in refused.stderr
    assert len(run_json(home, "log", "--user", ERASED)) == events  # nothing written
    assert run_json(home, "search", "xylophonic", "--user", ERASED)

    unknown = run(home, "erase", "--user", "nobody", "--yes")
    assert unknown.exit_code == 2 and "unknown user 'nobody'" in unknown.stderr

    erased = run_json(home, "erase", "--user", ERASED, "--yes")
    assert erased["user_id"] == ERASED and erased["projections"]
    assert run_json(home, "list", "--user", ERASED) == []
    assert run_json(home, "search", "xylophonic", "--user", ERASED) == []
    assert run_json(home, "verify")["ok"]
    assert len(run_json(home, "log", "--user", ERASED)) == events + 1  # UserErased

    again = run(home, "erase", "--user", ERASED, "--yes")
    assert again.exit_code == 0, again.stderr
    assert "data keys already destroyed" in again.stdout
    assert "read models already purged" in again.stdout
    assert len(run_json(home, "log", "--user", ERASED)) == events + 1


def test_content_fields_are_never_plaintext() -> None:
    content = {
        "content",
        "tags",
        "key",
        "evidence",
        "metadata",
        "input",
        "request",
        "response",
        "markdown",
        "sections",
        "query",
        "proposed_value",
        "reason",
        "outcome",
        "error",
        "pairs",
        "operations",
    }
    assert content.isdisjoint(PLAINTEXT_FIELDS)


def test_a_key_another_process_destroyed_is_not_used_once_destroy_returned(home: Path) -> None:
    """Two key stores on one log (two processes): the reader holds the user's key in memory
    and looked for erasures a moment ago; once the other's `destroy` has returned, the
    reader's next look drops the key."""
    settings = Settings(home=home, embedder="hashing")
    eraser, reader = open_key_store(settings), open_key_store(settings)
    try:
        kid, _ = eraser.for_user(ERASED)
        assert reader.by_id(kid) is not None and reader.sync() == []
        eraser.destroy(ERASED)
        assert reader.sync() == [ERASED]
        assert reader.by_id(kid) is None
        new_kid, _ = reader.for_user(ERASED)  # the user may start again, with a new key
        assert new_kid != kid and eraser.by_id(new_kid) is not None
    finally:
        eraser.close()
        reader.close()


def test_a_view_of_the_past_leaves_an_erased_user_out(memory: MnemoLedger) -> None:
    """Time travel to before the erasure shows the user's memories neither as they were
    (their key is gone) nor as `[erased]` rows."""
    memory.add(list(ERASED_CONTENTS), user=ERASED)
    memory.add(["Plain oatmeal every morning"], user=KEPT)
    before = memory.ledger.last_position()
    memory.erase(user=ERASED)
    with read_models_at(memory, before) as past:
        assert past.list(user=ERASED) == []
        assert past.search("xylophonic marmalade", user=ERASED) == []
        assert [m.content for m in past.list(user=KEPT)] == ["Plain oatmeal every morning"]


def test_history_of_an_erased_memory_reads_erased(home: Path) -> None:
    """The README's promise: after `erase`, `history ID` shows the memory's raw events with
    their content `[erased]` (not "no memory with id")."""
    [added] = run_json(home, "add", "Zorblatt adores xylophonic marmalade", "--user", ERASED)[
        "memories"
    ]
    run_json(home, "update", added["id"], "Zorblatt adores snarfle tea")
    before = run_json(home, "history", added["id"])
    run_json(home, "erase", "--user", ERASED, "--yes")

    after = run_json(home, "history", added["id"])
    assert [(e["position"], e["type"]) for e in after] == [
        (e["position"], e["type"]) for e in before
    ]
    assert [e["data"]["content"] for e in after] == [ERASED_TEXT, ERASED_TEXT]
    shown = run(home, "history", added["id"])
    assert shown.exit_code == 0 and shown.stdout.count(ERASED_TEXT) == 2, shown.stdout
    assert not any(word in shown.stdout for word in SECRET_WORDS)
    assert run(home, "get", added["id"]).exit_code == 2  # gone for every other reader
