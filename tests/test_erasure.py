"""Erasure by crypto-shredding: after `erase`, no byte of the user's content is left in
the data directory, the user's events decode redacted, everyone else is untouched, and
`verify` still passes."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from commands import MnemoLedger
from commands.cli import cli
from ledger import Ledger, Settings
from ledger.encryption import PLAINTEXT_FIELDS
from ledger.errors import AlreadyErased, UnknownUser
from ledger.policy import ERASED_TEXT

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


def data_keys(home: Path, user: str) -> list[bytes]:
    with sqlite3.connect(home / "keys.sqlite3") as db:
        return [
            bytes(r[0]) for r in db.execute("SELECT key FROM data_keys WHERE user_id = ?", (user,))
        ]


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
    keys = data_keys(home, ERASED)
    assert len(keys) == 1 and files_containing(home, keys) == {"keys.sqlite3": [repr(keys[0])]}
    cached = [hashlib.sha256(text.encode()).digest() for text in ERASED_CONTENTS]
    with sqlite3.connect(home / "embeddings.sqlite3") as db:
        assert db.execute(
            "SELECT COUNT(*) FROM embeddings WHERE text_sha256 IN (?, ?)", cached
        ).fetchone()[0]

    result = memory.erase(user=ERASED)
    assert "layers" in result.projections and result.embeddings_dropped > 0

    # no plaintext, no key, no vector of the erased content anywhere under the home
    assert files_containing(home, SECRET_WORDS) == {}
    assert files_containing(home, keys) == {}
    with sqlite3.connect(home / "embeddings.sqlite3") as db:
        assert not db.execute(
            "SELECT COUNT(*) FROM embeddings WHERE text_sha256 IN (?, ?)", cached
        ).fetchone()[0]

    # the erased user's events decode redacted: reads keep working
    erased = memory.get(ids["first"])
    assert erased.content == ERASED_TEXT and erased.tags == []
    assert {m.content for m in memory.list(user=ERASED)} == {ERASED_TEXT}
    assert memory.get(ids["note"]).content == ERASED_TEXT
    assert memory.core(user=ERASED).markdown == ERASED_TEXT
    history = memory.history(ids["first"])
    verbs = [e.type for e in history if e.type != "MemoryLinked"]  # links are incidental
    assert verbs[:2] == ["MemoryAdded", "MemoryUpdated"]
    assert history[0].data["content"] == ERASED_TEXT and history[0].user_id == ERASED
    hits = memory.search("xylophonic marmalade", user=ERASED)
    assert all(hit.content == ERASED_TEXT for hit in hits)
    log = memory.log(user=ERASED)
    assert log[-1].type == "UserErased" and log[-1].data == {}
    assert all(word.lower() not in json.dumps(e.data).lower() for e in log for word in SECRET_WORDS)

    # everyone else is untouched
    assert [(m.id, m.content, m.tags) for m in memory.list(user=KEPT)] == kept_before
    assert memory.search("oatmeal", user=KEPT)[0].content == "Plain oatmeal every morning"

    # the log still verifies, and the read models rebuild from it without the content
    assert memory.verify().ok
    memory.rebuild()
    assert files_containing(home, SECRET_WORDS) == {}
    assert memory.get(ids["second"]).content == ERASED_TEXT
    assert [(m.id, m.content, m.tags) for m in memory.list(user=KEPT)] == kept_before


def test_a_fresh_ledger_reads_the_erased_user_redacted(memory: MnemoLedger, home: Path) -> None:
    first = memory.add(list(ERASED_CONTENTS), user=ERASED).memories[0]
    memory.erase(user=ERASED)
    with Ledger(Settings(home=home, embedder="hashing")) as ledger:
        assert ledger.memory(first.id).content == ERASED_TEXT
        contents = [r.data["content"] for r in ledger.read() if "content" in r.data]
        assert contents == [ERASED_TEXT, ERASED_TEXT]


def test_an_erased_user_can_start_again(memory: MnemoLedger) -> None:
    old = memory.add(["Zorblatt adores xylophonic marmalade"], user=ERASED).memories[0]
    memory.erase(user=ERASED)
    new = memory.add(["A new beginning in a new town"], user=ERASED).memories[0]
    assert memory.get(new.id).content == "A new beginning in a new town"
    assert memory.get(old.id).content == ERASED_TEXT
    memory.erase(user=ERASED)  # the new key goes too
    assert memory.get(new.id).content == ERASED_TEXT
    with pytest.raises(AlreadyErased):
        memory.erase(user=ERASED)


def test_unknown_user_is_a_clear_error(memory: MnemoLedger) -> None:
    with pytest.raises(UnknownUser, match="unknown user 'nobody'"):
        memory.erase(user="nobody")


def test_cli_erase_needs_yes_and_a_known_user(home: Path) -> None:
    run_json(home, "add", "Zorblatt adores xylophonic marmalade", "--user", ERASED)
    events = run_json(home, "verify")["events"]

    refused = run(home, "erase", "--user", ERASED)
    assert refused.exit_code == 2 and refused.stderr.startswith("error:")
    assert "--yes" in refused.stderr
    assert run_json(home, "verify")["events"] == events  # nothing written
    assert run_json(home, "search", "xylophonic", "--user", ERASED)

    unknown = run(home, "erase", "--user", "nobody", "--yes")
    assert unknown.exit_code == 2 and "unknown user 'nobody'" in unknown.stderr

    erased = run_json(home, "erase", "--user", ERASED, "--yes")
    assert erased["user_id"] == ERASED and erased["projections"]
    assert [m["content"] for m in run_json(home, "list", "--user", ERASED)] == [ERASED_TEXT]
    report = run_json(home, "verify")
    assert report["ok"] and report["events"] == events + 1


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
