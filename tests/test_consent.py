"""The consent policy (seed 003 §10): no sensitive profile change without consent, and every
decision in the log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commands import MnemoLedger
from commands.cli import cli
from commands.consent import ConsentService
from ledger import InvalidInput, InvalidTransition, Ledger, MemoryNotFound, Provenance, Settings
from ledger.policy import CONSENT_WINDOW_DAYS
from projections.consent import ConsentProjection
from projections.runner import Runner

ConsentLedger = MnemoLedger  # the facade carries the consent API (ConsentMixin)


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
