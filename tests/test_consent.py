"""The consent policy (seed 003 §10): no sensitive profile change without consent, and every
decision in the log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.write.consent import ConsentService
from mnemoledger.ledger import (
    InvalidInput,
    InvalidTransition,
    Ledger,
    MemoryNotFound,
    Provenance,
    Settings,
)
from mnemoledger.ledger.core import parse_sections
from mnemoledger.ledger.policy import CONSENT_WINDOW_DAYS
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.runner import Runner
from tests.live_server import live_server
from tests.test_consolidation_helpers import USER, clock, engram, ops, place, reinforce, remember

ConsentLedger = MnemoLedger  # the facade carries the consent API (ConsentMixin)
__all__ = ["clock", "engram"]


@pytest.fixture
def memory(home: Path) -> Iterator[ConsentLedger]:
    with ConsentLedger(home) as m:
        yield m


def types_and_actors(memory: MnemoLedger) -> list[tuple[str, str]]:
    return [(e.type, e.actor) for e in memory.log() if e.type.startswith("Consent")]


# --- sensitive fields: queued, applied only once granted --------------------------------


def test_sensitive_city_change_is_queued_and_applied_only_when_granted(
    memory: ConsentLedger,
) -> None:
    before = datetime.now(UTC)
    outcome = memory.propose_consent(
        user="maya", field="city", value="Lisbon", reason="said she moved", agent="helper"
    )
    request = outcome.request
    assert not outcome.applied and request.status == "pending" and request.sensitive
    window = datetime.fromisoformat(request.expires_at) - before
    assert timedelta(days=CONSENT_WINDOW_DAYS) <= window < timedelta(days=7, minutes=1)
    assert memory.profile_fields(user="maya") == {}
    assert [r.id for r in memory.consents(user="maya", status="pending")] == [request.id]
    assert [(e.type, e.agent_id) for e in memory.log()] == [("ConsentRequested", "helper")]

    granted = memory.grant_consent(request.id)
    assert granted.status == "granted" and granted.decided_by == "tester"
    assert memory.profile_fields(user="maya") == {"city": "Lisbon"}
    assert memory.consents(status="pending") == []
    assert memory.profile_fields(user="someone-else") == {}


def test_later_grant_replaces_the_field(memory: ConsentLedger) -> None:
    first = memory.propose_consent(user="maya", field="city", value="Porto").request
    second = memory.propose_consent(user="maya", field="city", value="Lisbon").request
    memory.grant_consent(second.id)
    memory.grant_consent(first.id)
    assert memory.profile_fields(user="maya") == {"city": "Porto"}, "the last grant wins"


def test_denied_patch_never_applies(memory: ConsentLedger) -> None:
    request = memory.propose_consent(user="maya", field="pronouns", value="they/them").request
    denied = memory.deny_consent(request.id, reason="not what I said")
    assert denied.status == "denied" and denied.decision_reason == "not what I said"
    assert memory.profile_fields(user="maya") == {}
    events = len(memory.log())
    with pytest.raises(InvalidTransition, match="is denied"):
        memory.grant_consent(request.id)
    assert len(memory.log()) == events
    assert memory.profile_fields(user="maya") == {}


def test_pending_requests_expire_after_seven_days(memory: ConsentLedger) -> None:
    t0 = datetime(2030, 1, 1, 12, tzinfo=UTC)
    request = memory.propose_consent(user="maya", field="language", value="pt", now=t0).request
    assert request.expires_at == "2030-01-08T12:00:00+00:00"
    other = memory.propose_consent(user="maya", field="city", value="Faro", now=t0 + timedelta(2))

    assert memory.expire_consents(now=t0 + timedelta(days=6, hours=23)) == []
    expired = memory.expire_consents(now=t0 + timedelta(days=CONSENT_WINDOW_DAYS))
    assert [r.id for r in expired] == [request.id] and expired[0].status == "expired"
    assert [r.id for r in memory.consents(status="pending")] == [other.request.id]
    assert memory.profile_fields(user="maya") == {}
    assert memory.expire_consents(now=t0 + timedelta(days=8)) == [], "nothing due twice"

    events = len(memory.log())
    with pytest.raises(InvalidTransition, match="is expired"):
        memory.grant_consent(request.id)
    with pytest.raises(InvalidTransition, match="expired at"):
        memory.grant_consent(other.request.id, now=t0 + timedelta(days=30))
    assert len(memory.log()) == events, "a refused grant writes nothing"
    assert memory.grant_consent(other.request.id, now=t0 + timedelta(days=3)).status == "granted"
    assert memory.profile_fields(user="maya") == {"city": "Faro"}


# --- benign fields: applied when corroborated ------------------------------------------


def test_benign_tone_with_two_signals_applies_at_once(memory: ConsentLedger) -> None:
    outcome = memory.propose_consent(user="maya", field="tone", value="concise", signals=2)
    assert outcome.applied and not outcome.request.sensitive
    assert outcome.request.status == "granted" and outcome.request.decided_by == "auto"
    assert memory.profile_fields(user="maya") == {"tone": "concise"}
    requested, granted = memory.log()
    assert (requested.type, granted.type) == ("ConsentRequested", "ConsentGranted")
    assert granted.data == {"by": "auto"} and granted.actor == "tester"
    assert requested.causation_id == granted.causation_id, "one command, one atomic save"
    assert requested.position is not None and granted.position == requested.position + 1


def test_benign_tone_with_one_signal_is_queued(memory: ConsentLedger) -> None:
    outcome = memory.propose_consent(user="maya", field="tone", value="playful", signals=1)
    assert not outcome.applied and outcome.request.status == "pending"
    assert memory.profile_fields(user="maya") == {}
    memory.grant_consent(outcome.request.id)
    assert memory.profile_fields(user="maya") == {"tone": "playful"}


def test_seed003_s10_benign_field_applies_alone_from_a_confident_theory_of_mind(
    memory: ConsentLedger,
) -> None:
    unsure = memory.propose_consent(user="maya", field="tone", value="warm", tom_confidence=0.79)
    assert not unsure.applied and unsure.request.tom_confidence == 0.79
    sure = memory.propose_consent(user="maya", field="goals_add", value="run", tom_confidence=0.8)
    assert sure.applied and sure.request.decided_by == "auto"
    assert memory.profile_fields(user="maya") == {"goals_add": "run"}
    # a sensitive field waits for a person however confident the insight is
    city = memory.propose_consent(user="maya", field="city", value="Porto", tom_confidence=1.0)
    assert not city.applied and city.request.status == "pending"
    requested = [e for e in memory.log() if e.type == "ConsentRequested"]
    assert [e.data.get("tom_confidence") for e in requested] == [0.79, 0.8, 1.0]
    with pytest.raises(InvalidInput, match="between 0 and 1"):
        memory.propose_consent(user="maya", field="tone", value="x", tom_confidence=1.5)


def test_two_single_signal_proposals_of_one_benign_value_apply_together(
    memory: ConsentLedger,
) -> None:
    first = memory.propose_consent(user="maya", field="tone", value="Concise", signals=1)
    other = memory.propose_consent(user="maya", field="tone", value="playful", signals=1)
    assert not first.applied and not other.applied
    second = memory.propose_consent(user="maya", field="tone", value=" concise ", signals=1)
    assert second.applied and second.request.decided_by == "auto"
    assert memory.profile_fields(user="maya")["tone"].strip().casefold() == "concise"
    statuses = {r.id: r.status for r in memory.consents(user="maya")}
    assert statuses == {
        first.request.id: "granted",
        other.request.id: "pending",
        second.request.id: "granted",
    }
    granted = [e for e in memory.log() if e.type == "ConsentGranted"]
    assert len(granted) == 2 and len({e.causation_id for e in granted}) == 1, "one save"


def test_signals_add_up_only_inside_the_window_and_never_for_sensitive_fields(
    memory: ConsentLedger,
) -> None:
    start = datetime(2030, 1, 1, tzinfo=UTC)
    memory.propose_consent(user="maya", field="tone", value="concise", now=start)
    late = start + timedelta(days=CONSENT_WINDOW_DAYS, hours=1)
    assert not memory.propose_consent(user="maya", field="tone", value="concise", now=late).applied
    for _ in range(3):
        city = memory.propose_consent(user="maya", field="city", value="Porto", signals=1)
        assert not city.applied and city.request.status == "pending"
    assert "city" not in memory.profile_fields(user="maya")


def test_goals_accumulate(memory: ConsentLedger) -> None:
    for goal in ("run a marathon", "learn Portuguese", "run a marathon"):
        memory.propose_consent(user="maya", field="goals_add", value=goal, signals=3)
    assert memory.profile_fields(user="maya") == {"goals_add": "run a marathon\nlearn Portuguese"}


# --- refusals write nothing -------------------------------------------------------------


def test_grant_twice_is_an_invalid_transition_and_the_log_is_unchanged(
    memory: ConsentLedger,
) -> None:
    request = memory.propose_consent(user="maya", field="preferred_name", value="May").request
    memory.grant_consent(request.id)
    events = len(memory.log())
    with pytest.raises(InvalidTransition, match="only a pending request can be granted"):
        memory.grant_consent(request.id)
    with pytest.raises(InvalidTransition):
        memory.deny_consent(request.id)
    assert len(memory.log()) == events


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"field": "salary"}, "profile field must be one of"),
        ({"value": "   "}, "value is empty"),
        ({"value": "x" * 257}, "the limit is 256"),
        ({"user": "has space"}, "no spaces"),
        ({"signals": 0}, "signals"),
    ],
)
def test_bad_proposals_write_nothing(
    memory: ConsentLedger, changes: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {"user": "maya", "field": "city", "value": "Lisbon"}
    with pytest.raises(InvalidInput, match=message):
        memory.propose_consent(**(arguments | changes))
    assert memory.log() == []


def test_unknown_ids_are_not_found(memory: ConsentLedger) -> None:
    [added] = memory.add(["Maya likes tea"], user="maya").memories
    for request_id in ("0123456789abcdef0123456789abcdef", "not-an-id", added.id):
        with pytest.raises(MemoryNotFound, match="no consent request"):
            memory.grant_consent(request_id)


# --- the audit trail --------------------------------------------------------------------


def test_every_decision_is_an_event_with_its_actor(memory: ConsentLedger) -> None:
    t0 = datetime.now(UTC)
    memory.actor = "agent-runtime"
    city = memory.propose_consent(user="maya", field="city", value="Lisbon").request
    name = memory.propose_consent(user="maya", field="preferred_name", value="M").request
    memory.propose_consent(user="maya", field="language", value="pt")
    memory.propose_consent(user="maya", field="tone", value="warm", signals=2)
    memory.actor = "maya"
    memory.grant_consent(city.id)
    memory.deny_consent(name.id, reason="keep Maya")
    memory.actor = "worker"
    memory.expire_consents(now=t0 + timedelta(days=8))
    assert types_and_actors(memory) == [
        ("ConsentRequested", "agent-runtime"),
        ("ConsentRequested", "agent-runtime"),
        ("ConsentRequested", "agent-runtime"),
        ("ConsentRequested", "agent-runtime"),
        ("ConsentGranted", "agent-runtime"),
        ("ConsentGranted", "maya"),
        ("ConsentDenied", "maya"),
        ("ConsentExpired", "worker"),
    ]
    assert all(e.user_id == "maya" for e in memory.log())
    history = memory.history(city.id)
    assert [(e.type, e.data.get("by")) for e in history] == [
        ("ConsentRequested", None),
        ("ConsentGranted", "maya"),
    ]
    assert history[0].data["field"] == "city" and history[0].data["sensitive"] is True
    assert memory.profile_fields(user="maya") == {"city": "Lisbon", "tone": "warm"}


# --- the read model: rebuilt equals incremental ----------------------------------------


def snapshot(memory: ConsentLedger) -> dict[str, Any]:
    return {
        "requests": [r.model_dump() for r in memory.consents()],
        "rows": [r.as_json() for r in memory.consent_model.list()],
        "profiles": {u: memory.profile_fields(user=u) for u in ("u1", "u2")},
    }


def test_rebuilt_consent_model_equals_incremental(memory: ConsentLedger, home: Path) -> None:
    t0 = datetime.now(UTC)
    ids = [
        memory.propose_consent(user=f"u{n % 2 + 1}", field=field, value=f"v{n}").request.id
        for n, field in enumerate(["city", "tone", "language", "city", "pronouns"])
    ]
    memory.propose_consent(user="u1", field="tone", value="dry", signals=2)
    memory.grant_consent(ids[0])
    memory.deny_consent(ids[1], reason="no")
    memory.grant_consent(ids[3])
    memory.expire_consents(now=t0 + timedelta(days=9))
    incremental = snapshot(memory)
    assert memory.consent_model.get(ids[2]) is not None
    assert memory.consent_model.get("nope") is None

    assert memory.rebuild("consent").projections == ["consent"]
    assert snapshot(memory) == incremental
    memory.close()
    for path in (home / "projections" / "consent").iterdir():
        path.unlink()
    with ConsentLedger(home) as fresh:
        assert snapshot(fresh) == incremental


proposal = st.tuples(
    st.just("propose"),
    st.sampled_from(["u1", "u2"]),
    st.sampled_from(["city", "tone", "goals_add", "language"]),
    st.sampled_from(["a", "b", "c"]),
    st.integers(1, 3),
)
decision = st.tuples(st.sampled_from(["grant", "deny"]), st.integers(0, 1000))
expiry = st.tuples(st.just("expire"), st.integers(0, 10))


@dataclass
class Direct:
    """The service over a bare ledger and a runner of the consent model alone."""

    ledger: Ledger
    model: ConsentProjection
    runner: Runner

    @property
    def service(self) -> ConsentService:
        return ConsentService(self.ledger, self.model)


def direct(home: Path) -> Direct:
    ledger = Ledger(Settings(home=home))
    model = ConsentProjection(home / "consent")
    return Direct(ledger, model, Runner(ledger, [model], home / ".lock"))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(proposal, decision, expiry), min_size=5, max_size=25))
def test_any_history_rebuilds_to_the_same_model(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[Any, ...]]
) -> None:
    app = direct(tmp_path_factory.mktemp("direct"))
    t0 = datetime.now(UTC)
    who = Provenance(actor="prop")
    ids: list[str] = []
    try:
        for op in operations:
            if op[0] == "propose":
                outcome = app.service.propose(op[1], op[2], op[3], signals=op[4], provenance=who)
                ids.append(outcome.request.id)
            elif op[0] == "expire":
                app.runner.catch_up()
                app.service.expire_due(t0 + timedelta(days=op[1]), provenance=who)
            elif ids:
                target = ids[op[1] % len(ids)]
                try:
                    if op[0] == "grant":
                        app.service.grant(target, who)
                    else:
                        app.service.deny(target, "", who)
                except InvalidTransition:
                    pass
            if len(ids) % 4 == 0:
                app.runner.catch_up()
        app.runner.catch_up()
        views = (app.model.list(), {u: app.model.profile_fields(u) for u in ("u1", "u2")})
        for row in app.model.list():
            assert row.status == app.service.request(row.id).status
        app.runner.rebuild()
        assert (app.model.list(), {u: app.model.profile_fields(u) for u in ("u1", "u2")}) == views
    finally:
        app.runner.close()
        app.ledger.close()


# --- the command line -------------------------------------------------------------------


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], prog_name="mnemoledger")


def run_json(home: Path, *args: str) -> Any:
    result = run(home, "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def log_types(home: Path) -> list[str]:
    with ConsentLedger(home) as memory:
        return [e.type for e in memory.log()]


def test_cli_flow(home: Path) -> None:
    proposed = run_json(home, "consent", "propose", "--user", "maya", "--field", "city",
                        "--value", "Lisbon", "--agent", "helper")  # fmt: skip
    assert proposed["applied"] is False and proposed["request"]["status"] == "pending"
    request_id = proposed["request"]["id"]
    assert run_json(home, "consent", "profile", "--user", "maya") == {}
    [pending] = run_json(home, "consent", "list", "--status", "pending")
    assert pending["id"] == request_id and pending["field"] == "city"

    granted = run_json(home, "consent", "grant", request_id, "--actor", "maya")
    assert granted["status"] == "granted" and granted["decided_by"] == "maya"
    assert run_json(home, "consent", "profile", "--user", "maya") == {"city": "Lisbon"}

    auto = run_json(home, "consent", "propose", "--user", "maya", "--field", "tone",
                    "--value", "concise", "--signals", "2")  # fmt: skip
    assert auto["applied"] is True and auto["request"]["decided_by"] == "auto"
    queued = run_json(home, "consent", "propose", "--user", "maya", "--field", "language",
                      "--value", "pt")  # fmt: skip
    denied = run_json(home, "consent", "deny", queued["request"]["id"], "--reason", "no")
    assert denied["status"] == "denied"
    assert run_json(home, "consent", "list", "--user", "maya", "--status", "denied") == [denied]
    assert log_types(home) == [
        "ConsentRequested",
        "ConsentGranted",
        "CoreStarted",  # a granted sensitive field enters core.md in the same save
        "CoreUpdated",
        "ConsentRequested",
        "ConsentGranted",
        "ConsentRequested",
        "ConsentDenied",
    ]
    human = run(home, "consent", "list", "--user", "maya")
    assert human.exit_code == 0 and "Lisbon" in human.stdout


def test_cli_expire(home: Path) -> None:
    run_json(home, "consent", "propose", "--user", "u", "--field", "city", "--value", "Faro")
    assert run_json(home, "consent", "expire") == []
    later = (datetime.now(UTC) + timedelta(days=8)).isoformat()
    [expired] = run_json(home, "consent", "expire", "--now", later)
    assert expired["status"] == "expired"
    assert log_types(home) == ["ConsentRequested", "ConsentExpired"]


@pytest.mark.parametrize(
    "args",
    [
        ["consent", "grant", "{granted}"],
        ["consent", "deny", "{granted}"],
        ["consent", "grant", "0123456789abcdef0123456789abcdef"],
        ["consent", "grant", "not-an-id"],
        ["consent", "propose", "--user", "u", "--field", "salary", "--value", "1"],
        ["consent", "propose", "--user", "u", "--field", "city", "--value", " "],
        ["consent", "propose", "--user", "u", "--field", "tone", "--value", "x", "--signals", "0"],
        ["consent", "list", "--status", "maybe"],
        ["consent", "expire", "--now", "yesterday"],
    ],
)
def test_cli_refusals_are_one_error_line_exit_2_and_write_nothing(
    home: Path, args: list[str]
) -> None:
    proposed = run_json(home, "consent", "propose", "--user", "u", "--field", "city",
                        "--value", "Porto")  # fmt: skip
    request_id = proposed["request"]["id"]
    run_json(home, "consent", "grant", request_id)
    before = log_types(home)
    result = run(home, *[a.format(granted=request_id) for a in args])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    assert log_types(home) == before


# --- consent on every write path (issue 15 item 4) --------------------------------------

REPRO = "Please call me Pri. My pronouns are she/her. I live in Porto and speak Portuguese."
REPRO_FIELDS = {
    "preferred_name": "Pri",
    "pronouns": "she/her",
    "city": "Porto",
    "language": "Portuguese",
}
REPRO_WORDS = ("Pri", "she/her", "Porto", "Portuguese")


def requested(memory: MnemoLedger, user: str = "pri") -> dict[str, str]:
    return {r.field: r.proposed_value for r in memory.consents(user=user)}


def request_of(memory: MnemoLedger, field: str, user: str = "pri") -> str:
    [found] = [r.id for r in memory.consents(user=user) if r.field == field]
    return found


def assert_none_of_the_repro(text: str, *, but: tuple[str, ...] = ()) -> None:
    for word in REPRO_WORDS:
        if word not in but:
            assert word not in text, (word, text)


def test_add_repro_keeps_core_profile_and_context_free_and_asks_four_times(
    memory: ConsentLedger,
) -> None:
    result = memory.add([REPRO], user="pri")
    assert result.memories  # the memories keep what was said
    assert_none_of_the_repro(memory.core(user="pri").markdown)
    assert memory.profile("pri") == {}
    assert_none_of_the_repro(memory.context("pri").text)
    assert memory.resume(user="pri").core.document is None
    assert requested(memory) == REPRO_FIELDS
    assert {r.status for r in memory.consents(user="pri")} == {"pending"}
    caused = {e.causation_id for e in memory.log() if e.type == "ConsentRequested"}
    assert caused == {result.command_id}  # the audit trail names the add that asked

    memory.add([REPRO], user="pri")  # said again: nothing asked twice
    assert len(memory.consents(user="pri")) == 4

    memory.grant_consent(request_of(memory, "city"))
    core = memory.core(user="pri").markdown
    assert parse_sections(core)["USER"] == ["City: Porto"]
    assert memory.profile("pri") == {"location": "Porto"}
    context = memory.context("pri")
    assert context.profile == {"location": "Porto"}
    assert_none_of_the_repro(context.text, but=("Porto",))

    memory.deny_consent(request_of(memory, "language"), reason="not for the agent")
    memory.add(["I speak Portuguese at home."], user="pri")
    assert "Portuguese" not in memory.core(user="pri").markdown
    assert len(memory.consents(user="pri")) == 4  # denied stays denied

    memory.add(["I moved to Lisbon."], user="pri")
    assert requested(memory)["city"] in ("Porto", "Lisbon")
    assert [r.proposed_value for r in memory.consents(user="pri") if r.field == "city"] == [
        "Porto",
        "Lisbon",
    ]
    memory.grant_consent(
        next(r.id for r in memory.consents(user="pri", status="pending") if r.field == "city")
    )
    assert parse_sections(memory.core(user="pri").markdown)["USER"] == ["City: Lisbon"]
    assert memory.profile("pri") == {"location": "Lisbon"}


def test_add_on_the_command_line(home: Path) -> None:
    added = run_json(home, "add", REPRO, "--user", "pri")
    assert added["memories"]
    assert_none_of_the_repro(run_json(home, "core", "--user", "pri")["markdown"])
    listed = run_json(home, "consent", "list", "--user", "pri", "--status", "pending")
    assert {r["field"]: r["proposed_value"] for r in listed} == REPRO_FIELDS
    name = next(r["id"] for r in listed if r["field"] == "preferred_name")
    run_json(home, "consent", "grant", name)
    assert "- Preferred name: Pri" in run_json(home, "core", "--user", "pri")["markdown"]
    assert run_json(home, "profile", "--user", "pri") == {"display_name": "Pri"}


def test_add_over_http(home: Path) -> None:
    with live_server(home) as server:
        key = server.key("researcher", ["pri"])
        with httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as http:
            added = http.post("/memories", json={"contents": [REPRO], "user_id": "pri"})
            assert added.status_code == 201, added.text
        core = server.state.facade.call(lambda m: m.core(user="pri").markdown)
        asked = server.state.facade.call(lambda m: requested(m))
    assert_none_of_the_repro(core)
    assert asked == REPRO_FIELDS


def test_ingest_asks_for_the_users_fields_only(memory: ConsentLedger) -> None:
    turns = [
        {"role": "user", "content": f"Hi! {REPRO}"},
        {"role": "assistant", "content": "Nice to meet you, Pri. Where does your family live?"},
        {"role": "user", "content": "My sister lives in Rome. I work at Shopify as a developer."},
    ]
    memory.ingest(turns, user="pri")
    assert requested(memory) == REPRO_FIELDS  # nothing for the sister's Rome
    assert_none_of_the_repro(memory.core(user="pri").markdown)
    profile = memory.profile("pri")
    assert not {"display_name", "location", "pronouns", "language"} & set(profile)
    assert_none_of_the_repro(memory.context("pri").text)
    memory.ingest(turns, user="pri")  # the same conversation again asks nothing new
    assert len(memory.consents(user="pri")) == 4

    memory.grant_consent(request_of(memory, "preferred_name"))
    assert memory.profile("pri")["display_name"] == "Pri"
    assert "display_name: Pri" in memory.context("pri").text


def test_a_user_note_asks_and_the_context_shows_only_what_is_granted(
    memory: ConsentLedger,
) -> None:
    memory.write_note(
        "I'm Pri, my pronouns are she/her and I'm based in Porto. I love cycling.",
        user="pri",
        kind="user",
    )
    assert requested(memory) == {"preferred_name": "Pri", "pronouns": "she/her", "city": "Porto"}
    context = memory.context("pri")
    assert context.user is not None and context.user.content == "I love cycling."
    assert_none_of_the_repro(context.text)
    memory.write_note("Please reply in Portuguese.", user="pri", kind="rule", evidence=["turn 3"])
    assert requested(memory)["language"] == "Portuguese"
    assert "Portuguese" not in memory.context("pri").text


def test_the_consolidation_gate_never_takes_a_profile_field_into_core(
    engram: MnemoLedger,
) -> None:
    allergy = remember(engram, "Maya is allergic to peanuts", importance=0.8)
    home_town = remember(engram, "I live in Porto and speak Portuguese", importance=0.8)
    for memory_id in (allergy, home_town):
        place(engram, memory_id, "working")
        reinforce(engram, memory_id, 2)
    result = engram.consolidate(user=USER)
    gated = {o["memory"] for o in ops(result, "gate")}
    assert allergy in gated and home_town not in gated
    assert engram.get(home_town).layer == "working"


def test_an_update_that_states_a_field_takes_the_bullet_out_of_core(
    memory: ConsentLedger,
) -> None:
    [allergy] = memory.add(["I'm allergic to penicillin"], user="pri").memories
    assert "penicillin" in memory.core(user="pri").markdown
    memory.update(allergy.id, "I live in Porto")
    assert "Porto" not in memory.core(user="pri").markdown


def test_a_field_bullet_only_a_grant_writes(memory: ConsentLedger) -> None:
    # whoever writes core.md (an LLM core stage, a follow-up version) cannot slip a field
    # bullet or a sensitive statement in: only the grant's own version admits one
    before = "## USER\n- Maya has a cat\n"
    bullets = [
        core_sync.CoreBullet("USER", "Maya has a cat", ()),
        core_sync.CoreBullet("USER", "City: Lisbon", ()),
        core_sync.CoreBullet("USER", "Maya lives in Lisbon", ()),  # "Maya goes by Mia": measured
        core_sync.CoreBullet("RULE", "Always answer in French", ()),
    ]
    assert [b.text for b in core_sync.consented(bullets, before)] == ["Maya has a cat"]
    admitted = core_sync.consented(bullets, before, admitted=("City: Lisbon",))
    assert [b.text for b in admitted] == ["Maya has a cat", "City: Lisbon"]
    kept = core_sync.consented(bullets[:2], before + "- City: Lisbon\n")
    assert [b.text for b in kept] == ["Maya has a cat", "City: Lisbon"]
