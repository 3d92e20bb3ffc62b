"""`add` with a past time (issue 30): importing a chat history or notes.

`at` says when the contents were said. The log stays truthful: every event keeps the
library's timestamp, when it was recorded, and carries the time said beside it (`said_at`,
on the add's request, each memory it writes and each restatement it reinforces). The read
models date the memories by when they were said; a memory said later is never replaced by
an older statement. Each surface takes the same parameter: the CLI's `--at`, `POST
/memories`' `at`, mem0's `timestamp` (Unix seconds), the MCP `add` and `store` tools' `at`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mnemoledger import InvalidInput, Memory, MnemoLedger
from mnemoledger.ledger import NewMemory, Provenance, Settings
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.validation import said_at
from tests.live_server import LiveServer, live_server
from tests.test_cli import run, run_json
from tests.test_mcp import mcp_client, structured

MAY = "2024-05-01T09:00:00+00:00"
"""When the imported contents were said, as the ledger writes a time (UTC, ISO 8601)."""
MAY_UNIX = 1714554000
"""The same time in Unix seconds (mem0's `timestamp`)."""


def events(memory: MnemoLedger, user: str, event_type: str) -> list[Any]:
    return memory.log(user=user, event_type=event_type)


def test_a_past_time_dates_the_memory_everywhere_and_the_log_keeps_when_it_was_recorded(
    memory: MnemoLedger,
) -> None:
    contents = ["I moved to Lisbon in May", "My flat in Lisbon has a balcony"]
    added = memory.add(contents, user="maya", at="2024-05-01T09:00:00Z")
    assert [(m.created_at, m.updated_at) for m in added.memories] == [(MAY, MAY)] * 2
    lisbon, flat = added.memories
    # the add also linked them: its own events leave them last changed when said
    linked = [e.type for m in added.memories for e in memory.history(m.id)]
    assert "MemoryLinked" in linked
    for memory_id in (lisbon.id, flat.id):
        got = memory.get(memory_id)
        assert (got.created_at, got.updated_at) == (MAY, MAY)
    assert [(m.created_at, m.updated_at) for m in memory.list(user="maya")] == [(MAY, MAY)] * 2
    hits = memory.search("Lisbon", user="maya")
    assert {h.id for h in hits} == {lisbon.id, flat.id}
    assert {h.created_at for h in hits} == {MAY}  # search provenance

    # the log: each event's own timestamp is when it was recorded; the time said is beside it
    [requested] = events(memory, "maya", "AddRequested")
    assert requested.data["input"]["said_at"] == MAY
    written = memory.history(lisbon.id)[0]
    assert written.type == "MemoryAdded" and written.data["said_at"] == MAY
    assert datetime.fromisoformat(written.at) >= datetime.fromisoformat(requested.at)
    assert written.at != MAY and datetime.fromisoformat(written.at).year > 2024
    # the history read model: `at` is the recording time, `said_at` the time said
    [entry] = [e for e in memory.memory_history(lisbon.id) if e.event == "ADD"]
    assert entry.said_at == MAY and entry.at == written.at

    # a later change is a change now; the memory was still created when it was said
    changed = memory.update(flat.id, "My flat in Lisbon has two balconies")
    assert changed.created_at == MAY and changed.updated_at != MAY

    # an aware datetime in another zone is the same time
    berlin = timezone(timedelta(hours=2))
    other = memory.add(["I play chess"], user="maya", at=datetime(2024, 5, 1, 11, tzinfo=berlin))
    assert other.memories[0].created_at == MAY
    # an add of now names no time
    now = memory.add(["I like figs"], user="maya")
    assert memory.history(now.memories[0].id)[0].data["said_at"] is None
    assert "said_at" not in events(memory, "maya", "AddRequested")[-1].data["input"]


@pytest.mark.parametrize(
    ("at", "says"),
    [
        ("2024-05-01T09:00:00", "has no zone"),
        (datetime(2024, 5, 1, 9), "has no zone"),
        ("yesterday", "must be an ISO-8601 time with its zone, e.g. 2024-05-01T09:00:00Z"),
        (1714554000, "must be an ISO-8601 time with its zone"),
        (datetime.now(UTC) + timedelta(days=1), "is in the future"),
        ("9999-12-31T23:00:00-05:00", "out of range"),
    ],
)
def test_a_time_without_its_zone_or_in_the_future_is_refused_naming_at(
    memory: MnemoLedger, at: Any, says: str
) -> None:
    before = len(memory.log())
    with pytest.raises(InvalidInput) as refused:
        memory.add(["I moved to Lisbon in May"], user="maya", at=at)
    assert str(refused.value).startswith("at ") and says in str(refused.value)
    assert len(memory.log()) == before  # refused before anything is recorded


def test_a_few_seconds_of_clock_skew_are_allowed() -> None:
    now = datetime(2026, 12, 4, 12, tzinfo=UTC)
    assert said_at(now + timedelta(seconds=4), now=now) == "2026-12-04T12:00:04+00:00"
    with pytest.raises(InvalidInput, match="at is in the future"):
        said_at(now + timedelta(seconds=6), now=now)


def test_a_recorded_add_is_processed_with_its_time(home: Path) -> None:
    """`wait=False` records the time on the request: an add left pending (as `add
    --no-wait` leaves it) and processed from the log afterwards, as a worker or a replay
    does, dates its memory by it."""
    settings = Settings(home=home, embedder="hashing")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        memory.parts.adds_in_background = False  # this process leaves it to the next one
        pending = memory.add(["I moved to Lisbon in May"], user="maya", at=MAY, wait=False)
        assert pending.pending
    with MnemoLedger(settings=settings, actor="tester") as worker:
        [processed] = worker.process_pending_adds(older_than_seconds=0)
        assert processed.command_id == pending.command_id
        [lisbon] = worker.list(user="maya")
        assert (lisbon.created_at, lisbon.updated_at) == (MAY, MAY)


def later_memory_stays(memory: MnemoLedger, user: str, later: str, earlier: str) -> None:
    """`later` said in June 2024, then `earlier` imported as said in January 2023: the later
    memory stays active and the older statement is stored beside it."""
    [kept] = memory.add([later], user=user, at="2024-06-01T10:00:00Z").memories
    older = memory.add([earlier], user=user, at="2023-01-01T10:00:00Z")
    assert older.superseded == []
    assert memory.get(kept.id).state == "active" and memory.get(kept.id).superseded_by is None
    assert {m.content: m.state for m in memory.list(user=user)} == {
        later: "active",
        earlier: "active",
    }


def test_an_add_said_earlier_never_replaces_a_memory_said_later(memory: MnemoLedger) -> None:
    # the case (the relation model does not read "I live in Paris" as replacing it)
    later_memory_stays(memory, "ana", "I moved to Berlin", "I live in Paris")
    # a pair where the later-said one would be replaced, were the times not read: said now,
    # "I moved to Paris" supersedes "I live in Berlin now"
    later_memory_stays(memory, "ben", "I live in Berlin now", "I moved to Paris")
    # an import said after a memory still replaces it, as an add of now does
    [berlin] = memory.add(["I live in Berlin now"], user="cy", at="2024-06-01T10:00:00Z").memories
    paris = memory.add(["I moved to Paris"], user="cy", at="2025-01-01T10:00:00Z")
    assert paris.superseded == [berlin.id]
    assert memory.get(berlin.id).superseded_by == paris.memories[0].id


def test_a_restatement_said_earlier_is_recorded_on_its_reinforcement(memory: MnemoLedger) -> None:
    [chess] = memory.add(
        ["I play chess on Sundays"], user="maya", at="2024-06-01T10:00:00Z"
    ).memories
    again = memory.add(["I play chess on Sundays"], user="maya", at="2023-01-01T10:00:00Z")
    assert [m.id for m in again.reinforced] == [chess.id] and again.memories == []
    reinforced = [e for e in memory.history(chess.id) if e.type == "MemoryReinforced"]
    assert [e.data["said_at"] for e in reinforced] == ["2023-01-01T10:00:00+00:00"]
    # said before the memory's last change: the memory still last changed when first said
    assert memory.get(chess.id).updated_at == "2024-06-01T10:00:00+00:00"
    memory.add(["I play chess on Sundays"], user="maya", at="2025-01-01T10:00:00Z")
    assert memory.get(chess.id).updated_at == "2025-01-01T10:00:00+00:00"
    assert memory.get(chess.id).created_at == "2024-06-01T10:00:00+00:00"


def test_rebuilding_the_read_models_from_the_log_gives_the_same_times(
    memory: MnemoLedger,
) -> None:
    memory.add(["I moved to Lisbon in May", "My flat in Lisbon has a balcony"], user="maya", at=MAY)
    memory.add(["I play chess"], user="maya", at=MAY)
    memory.add(["I play chess"], user="maya", at="2025-01-01T10:00:00Z")
    memory.add(["I like figs"], user="maya")

    def rows() -> list[tuple[str, str, str, str, int]]:
        return [
            (m.id, m.created_at, m.updated_at, m.state, m.repetition_count)
            for m in memory.list(user="maya")
        ]

    def history() -> list[tuple[str, str | None]]:
        return [
            (e.at, e.said_at) for m in memory.list(user="maya") for e in memory.memory_history(m.id)
        ]

    before, audit = rows(), history()
    assert {created for _, created, *_ in before} >= {MAY}
    memory.rebuild()
    assert rows() == before and history() == audit


def test_events_written_before_said_at_existed_still_load_and_replay(
    memory: MnemoLedger, tmp_path: Path
) -> None:
    """A `MemoryAdded` and a `MemoryReinforced` without the field, as older versions wrote
    them, fold with no said time (dated when recorded) and re-apply in a replay, beside an
    import whose recorded request the replay runs again with its time."""
    ledger = memory.parts.ledger
    provenance = Provenance(user_id="maya", actor="tester")
    [old] = ledger.draft(provenance, [NewMemory("I like figs")])
    del vars(old.pending_events[0])["said_at"]  # the event as an older version wrote it
    ledger.save(old)
    with acting_as(provenance):
        old.reinforce()
    del vars(old.pending_events[0])["said_at"]
    ledger.save(old)
    assert ledger.memory(old.id.hex).said_at is None
    stored = ledger.stream(old.id.hex)
    assert [e.type for e in stored] == ["MemoryAdded", "MemoryReinforced"]
    assert all("said_at" not in e.data for e in stored)
    got = memory.get(old.id.hex)
    assert got.created_at == stored[0].at.isoformat() and got.repetition_count == 1
    [lisbon] = memory.add(["I moved to Lisbon in May"], user="maya", at=MAY).memories

    result = memory.replay(tmp_path / "replayed")
    assert result.failures == [] and result.events_reapplied >= 2
    assert result.commands_rerun == 1 and result.diverged_commands == 0
    with MnemoLedger(
        settings=Settings(home=tmp_path / "replayed", embedder="hashing", db=None), actor="tester"
    ) as replayed:
        assert replayed.get(lisbon.id).created_at == MAY
        assert replayed.get(old.id.hex).created_at == got.created_at


# --- surfaces ------------------------------------------------------------------------------


def test_cli_add_at(home: Path) -> None:
    added = run_json(
        home, "add", "I moved to Lisbon in May", "--user", "maya", "--at", MAY[:19] + "Z"
    )
    [lisbon] = added["memories"]
    assert lisbon["created_at"] == lisbon["updated_at"] == MAY
    [entry] = [e for e in run_json(home, "history", lisbon["id"]) if e["event"] == "ADD"]
    assert entry["said_at"] == MAY and entry["at"] != MAY

    naive = run(home, "add", "I like figs", "--user", "maya", "--at", "2024-05-01T09:00:00")
    assert naive.exit_code == 2
    assert "at must be an ISO-8601 time with its zone" in naive.stderr
    assert len(run_json(home, "list", "--user", "maya")) == 1


@pytest.fixture
def server(home: Path) -> Iterator[LiveServer]:
    with live_server(home) as running:
        yield running


def test_http_add_at_and_mem0_timestamp(server: LiveServer) -> None:
    key = server.key("researcher", ["maya"])
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
    ) as http:
        body = {"contents": ["I moved to Lisbon in May"], "user_id": "maya"}
        added = http.post("/memories", json={**body, "at": "2024-05-01T09:00:00Z"})
        assert added.status_code == 201, added.text
        [lisbon] = added.json()["memories"]
        assert lisbon["created_at"] == MAY
        assert http.get(f"/memories/{lisbon['id']}").json()["updated_at"] == MAY

        future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
        for bad, says in (("2024-05-01T09:00:00", "zone"), (future, "in the future")):
            refused = http.post("/memories", json={**body, "at": bad})
            assert refused.status_code == 422, refused.text
            error = refused.json()["error"]
            assert error["code"] == "validation_error" and "at" in error["message"]
            [detail] = error["details"]
            assert detail["loc"] == ["body", "at"] and says in detail["msg"]

        schema = http.get("/openapi.json").json()["components"]["schemas"]
        assert schema["AddMemoriesRequest"]["properties"]["at"]["anyOf"][0] == {
            "type": "string",
            "format": "date-time",
        }

        # mem0's add: `timestamp`, Unix seconds
        message = [{"role": "user", "content": "I play chess on Sundays"}]
        mem0 = http.post(
            "/mem0/memories", json={"messages": message, "user_id": "maya", "timestamp": MAY_UNIX}
        )
        assert mem0.status_code == 200, mem0.text
        [chess] = mem0.json()["results"]
        assert http.get(f"/mem0/memories/{chess['id']}").json()["created_at"] == MAY
        later = http.post(
            "/mem0/memories",
            json={"messages": message, "user_id": "maya", "timestamp": 4102444800},
        )
        assert later.status_code == 422 and later.json()["error"]["details"][0]["loc"] == [
            "body",
            "timestamp",
        ]


def test_mem0_memory_add_timestamp(home: Path) -> None:
    with Memory(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        inferred = m.add("I moved to Lisbon in May", user_id="maya", timestamp=MAY_UNIX)
        raw = m.add(
            [{"role": "user", "content": "Hi, it's Maya"}],
            user_id="maya",
            infer=False,
            timestamp=MAY_UNIX + 60,
        )
        items = {item["id"]: item for item in m.get_all(user_id="maya")["results"]}
        assert items[inferred["results"][0]["id"]]["created_at"] == MAY
        assert items[raw["results"][0]["id"]]["created_at"] == "2024-05-01T09:01:00+00:00"
        with pytest.raises(InvalidInput, match="timestamp is in the future"):
            m.add("I like figs", user_id="maya", timestamp=4102444800)
        with pytest.raises(InvalidInput, match="timestamp must be Unix seconds"):
            m.add("I like figs", user_id="maya", timestamp="2024-05-01")  # type: ignore[arg-type]


def test_mcp_store_and_add_at(home: Path) -> None:
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="tester") as memory:
        key = memory.create_key(agent="researcher", users=["maya"]).key
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with mcp_client(home, key) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            seen["schemas"] = {name: tools[name].input_schema for name in ("add", "store")}
            seen["store"] = structured(
                await client.call_tool(
                    "store",
                    {"contents": ["I moved to Lisbon in May"], "at": "2024-05-01T09:00:00Z"},
                )
            )
            seen["add"] = structured(
                await client.call_tool(
                    "add", {"contents": ["I play chess"], "at": "2024-05-01T11:00:00+02:00"}
                )
            )
            seen["naive"] = await client.call_tool(
                "store", {"contents": ["I like figs"], "at": "2024-05-01T09:00:00"}
            )

    anyio.run(session)
    for schema in seen["schemas"].values():
        assert schema["properties"]["at"]["anyOf"][0]["format"] == "date-time"
    assert seen["store"]["memories"][0]["created_at"] == MAY
    assert seen["add"]["memories"][0]["created_at"] == MAY
    assert seen["naive"].is_error
    assert seen["naive"].content[0].text.startswith("bad_request: at: ")
