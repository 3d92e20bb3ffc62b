"""Schemathesis against the live API's own OpenAPI schema, with its default checks: no
generated request, valid or not, gets a 5xx; every answer is one the schema documents
(status, content type, headers, body); a request the schema refuses is refused and one it
accepts is accepted; a method a path lacks is a 405 naming the ones it has; a missing or
wrong key is a 401. Bounded (a few examples per operation, no time limits) so that it ends in
a few minutes on a slow machine. The requests are the same on every run (derandomized), so
the README's test command and CI do not depend on what one run happened to generate; set
`MNEMOLEDGER_SCHEMA_EXPLORE=1` to generate new ones."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import negative_data_rejection, positive_data_acceptance

from mnemoledger import MnemoLedger
from mnemoledger.commands.service.http import create_app
from mnemoledger.commands.service.http.requests import MAX_BODY_BYTES, RFC3339_TIME
from mnemoledger.commands.service.mem0_compat import said_at_timestamp
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.validation import said_at
from tests.live_server import LiveServer, live_server

# the module's server runs on SQLite (see `api`), so the PostgreSQL pass would repeat it
pytestmark = pytest.mark.sqlite_only

EXAMPLES_PER_OPERATION = 8
"""Per operation in the default run; the slow tier (CI's `pytest -m slow`) generates more."""
SLOW_EXAMPLES_PER_OPERATION = 25
"""About 0.8 s an example here: 25 keeps the slow tier near ten minutes in CI."""
FIXED = not os.environ.get("MNEMOLEDGER_SCHEMA_EXPLORE")
"""The same generated requests on every run (hypothesis `derandomize`)."""
USER = "maya"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # one server for the whole module: on SQLite, since PostgreSQL runs give each test its
    # own schema (dropped when the test ends)
    with live_server(tmp_path_factory.mktemp("schema") / "home", sqlite=True) as running:
        yield running


ADMIN_PATHS = ("/consolidate", "/export", "/verify")
"""Operations only admin keys may run: fuzzed with one, so they reach the facade."""

PLACEHOLDERS = {"user": "placeholder-user-key", "admin": "placeholder-admin-key"}
"""What `ApiKey` sends before the server exists: schemathesis builds some cases when pytest
collects the tests; `call_and_check` puts the real key in their place."""
KEYS = dict(PLACEHOLDERS)
"""The keys `ApiKey` sends: "user" (an agent acting for `USER`) and "admin" (`keys`)."""


@pytest.fixture(scope="module")
def keys(api: LiveServer) -> Iterator[dict[str, str]]:
    real = {"user": api.key("researcher", [USER]), "admin": api.key("ops", [USER], admin=True)}
    KEYS.update(real)
    yield real
    KEYS.update(PLACEHOLDERS)


@pytest.fixture(scope="module")
def known_memory(api: LiveServer) -> str:
    added = api.state.facade.call(
        lambda m: m.add(["Maya moved to Lisbon in May"], user="maya", agent="researcher")
    )
    return added.memories[0].id


def reach_the_handlers(case: schemathesis.Case, memory_id: str) -> None:
    """Random users and ids would stop almost every request at 403/404 before the facade
    runs: give most cases the key's user and half of them a memory that exists. Each part
    is replaced, not edited in place, so that schemathesis validates the request as sent
    again (a negative case whose only invalid value was the user is positive now)."""
    if isinstance(case.query, dict) and "user_id" in case.query:
        case.query = {**case.query, "user_id": USER}
    if isinstance(case.body, dict):
        body = dict(case.body)
        if "user_id" in body:
            body["user_id"] = USER
        if isinstance(body.get("filters"), dict) and "user_id" in body["filters"]:
            body["filters"] = {**body["filters"], "user_id": USER}
        if body != case.body:
            case.body = body
    drawn = (case.path_parameters or {}).get("memory_id")
    if drawn is not None and len(str(drawn)) % 2 == 0:
        case.path_parameters = {**case.path_parameters, "memory_id": memory_id}


def with_real_keys(case: schemathesis.Case, keys: dict[str, str]) -> None:
    """The case with the server's key where `ApiKey` put a placeholder."""
    sent = (case.headers or {}).get("Authorization")
    for role, placeholder in PLACEHOLDERS.items():
        if sent == f"Bearer {placeholder}":
            case.headers = {**case.headers, "Authorization": f"Bearer {keys[role]}"}


FRAMING_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "host", "connection", "expect", "te", "upgrade"}
)
"""Headers that frame the HTTP message, which are the HTTP server's, not the API's: a
generated `Content-Length: g` is refused by uvicorn's parser (400, text/plain) before the
app sees a request, which no OpenAPI document can describe."""


def without_framing_headers(case: schemathesis.Case) -> None:
    """The case without generated framing headers (the client library sets them)."""
    if case.headers:
        case.headers = {k: v for k, v in case.headers.items() if k.lower() not in FRAMING_HEADERS}


def _never_opened() -> MnemoLedger:
    raise AssertionError("only the schema is read here; the live server opens its own facade")


# The same schema the live server serves at /openapi.json (the app builds it without
# starting); loaded at import, so pytest collects one test per operation.
schema = schemathesis.openapi.from_dict(create_app(_never_opened).openapi())


@schema.auth(refresh_interval=None)
class ApiKey:
    """The module's keys, as a client sends them (`Authorization: Bearer`). Set as the
    schema's auth, so schemathesis knows them for the valid credentials: it still sends
    its own requests without a key, or with a wrong one, and expects a 401."""

    def get(self, case: schemathesis.Case, context: schemathesis.AuthContext) -> str:
        return KEYS["admin" if case.path in ADMIN_PATHS else "user"]

    def set(self, case: schemathesis.Case, data: str, context: schemathesis.AuthContext) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


def test_the_served_schema_is_the_one_tested(api: LiveServer) -> None:
    served = httpx.get(f"{api.url}/openapi.json", timeout=60).json()
    assert served == create_app(_never_opened).openapi()


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    derandomize=FIXED,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_generated_request_gets_a_server_error(
    case: schemathesis.Case, api: LiveServer, keys: dict[str, str], known_memory: str
) -> None:
    call_and_check(case, api, keys, known_memory)


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=SLOW_EXAMPLES_PER_OPERATION,
    derandomize=FIXED,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_many_generated_requests_get_no_server_error(
    case: schemathesis.Case, api: LiveServer, keys: dict[str, str], known_memory: str
) -> None:
    call_and_check(case, api, keys, known_memory)


def call_and_check(
    case: schemathesis.Case, api: LiveServer, keys: dict[str, str], known_memory: str
) -> None:
    """Send the generated request and run schemathesis' default checks on the answer (no
    5xx, a documented status, content type, headers and body, invalid data refused, valid
    data accepted, 405 with `Allow` for a method the path lacks, a 401 without a key, ...);
    every error also has the one error body."""
    with_real_keys(case, keys)
    without_framing_headers(case)
    reach_the_handlers(case, known_memory)
    response = case.call(base_url=api.url)
    unsaid = what_the_schema_cannot_say(case, response)
    case.validate_response(
        response,
        # only for a request refused for a reason the schema cannot state (see
        # `what_the_schema_cannot_say`): it does not tell valid data from invalid there
        excluded_checks=[positive_data_acceptance, negative_data_rejection] if unsaid else None,
        transport_kwargs={"base_url": api.url},
    )
    if unsaid:  # refused all the same (401 first without a key, 403 for another user's)
        assert 400 <= response.status_code < 500, f"{unsaid}: {response.status_code}"
    if response.status_code >= 400:
        error = response.json()["error"]  # the one error body, whatever failed
        assert error["status"] == response.status_code and error["code"] and error["message"]


SCOPE_IDS = ("user_id", "agent_id", "run_id")


def what_the_schema_cannot_say(
    case: schemathesis.Case, response: schemathesis.Response
) -> str | None:
    """Why the server refused this request, if it is a rule JSON Schema has no word for (a
    rule between two values, a size in bytes): each is stated in words in the schema's
    descriptions, and refused with the one error body. None for any other request."""
    query = case.query or {}
    body = case.body if isinstance(case.body, dict) else {}
    if response.status_code == 413 and len(response.request.body or b"") > MAX_BODY_BYTES:
        return "a body over the byte limit"
    filters = body.get("filters")
    if case.path == "/query" and isinstance(filters, dict):
        low, high = filters.get("importance_min"), filters.get("importance_max")
        numbers = (int, float)
        if isinstance(low, numbers) and isinstance(high, numbers) and low > high:
            return "importance_min above importance_max"
    listing_facts = case.path == "/facts" and case.method == "GET"
    if listing_facts and query.get("at") is not None and query.get("history") in (True, "true"):
        return "at and history together"
    adding = case.method == "POST" and case.path in ("/memories", "/mem0/memories")
    if adding and response.status_code == 422 and said_in_the_future(body):
        return "a time said in the future"
    scoping = case.path == "/mem0/memories" and case.method in ("GET", "DELETE")
    if scoping and not any(query.get(name) for name in SCOPE_IDS):
        return "none of user_id, agent_id and run_id"
    return None


def said_in_the_future(body: dict[str, Any]) -> bool:
    """Whether an add's `at` (mem0: `timestamp`) is a time the schema takes (RFC 3339, or a
    number of seconds in its range) that is later than now, or out of UTC's years: the
    schema's descriptions say "not in the future", which JSON Schema has no word for."""
    at, timestamp = body.get("at"), body.get("timestamp")
    try:
        if isinstance(at, str) and RFC3339_TIME.fullmatch(at):
            said_at(at)
        elif isinstance(timestamp, int | float) and not isinstance(timestamp, bool):
            said_at_timestamp(timestamp)
        else:
            return False
    except InvalidInput:
        return True
    return False
