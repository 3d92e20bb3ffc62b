"""Schemathesis against the live API's own OpenAPI schema: no generated request, valid or
not, gets a 5xx. Bounded (a few examples per operation) so it runs in about a minute."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from mnemoledger import MnemoLedger
from mnemoledger.commands.service.http import create_app
from tests.live_server import LiveServer, live_server

# the module's server runs on SQLite (see `api`), so the PostgreSQL pass would repeat it
pytestmark = pytest.mark.sqlite_only

EXAMPLES_PER_OPERATION = 8
"""Per operation in the default run; the slow tier (CI's `pytest -m slow`) generates more."""
SLOW_EXAMPLES_PER_OPERATION = 40
USER = "maya"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # one server for the whole module: on SQLite, since PostgreSQL runs give each test its
    # own schema (dropped when the test ends)
    with live_server(tmp_path_factory.mktemp("schema") / "home", sqlite=True) as running:
        yield running


@pytest.fixture(scope="module")
def api_key(api: LiveServer) -> str:
    return api.key("researcher", ["maya"])


@pytest.fixture(scope="module")
def admin_key(api: LiveServer) -> str:
    return api.key("ops", [USER], admin=True)


ADMIN_PATHS = ("/consolidate", "/export", "/verify")
"""Operations only admin keys may run: fuzzed with one, so they reach the facade."""


@pytest.fixture(scope="module")
def known_memory(api: LiveServer) -> str:
    added = api.state.facade.call(
        lambda m: m.add(["Maya moved to Lisbon in May"], user="maya", agent="researcher")
    )
    return added.memories[0].id


def reach_the_handlers(case: schemathesis.Case, memory_id: str) -> None:
    """Random users and ids would stop almost every request at 403/404 before the facade
    runs: give most cases the key's user and half of them a memory that exists."""
    filters = case.body.get("filters") if isinstance(case.body, dict) else None
    for container in (case.query, case.body, filters):
        if isinstance(container, dict) and "user_id" in container:
            container["user_id"] = USER
    if case.path_parameters and len(str(case.path_parameters.get("memory_id", ""))) % 2 == 0:
        case.path_parameters["memory_id"] = memory_id


def _never_opened() -> MnemoLedger:
    raise AssertionError("only the schema is read here; the live server opens its own facade")


# The same schema the live server serves at /openapi.json (the app builds it without
# starting); loaded at import, so pytest collects one test per operation.
schema = schemathesis.openapi.from_dict(create_app(_never_opened).openapi())


def test_the_served_schema_is_the_one_tested(api: LiveServer) -> None:
    assert httpx.get(f"{api.url}/openapi.json").json() == create_app(_never_opened).openapi()


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_generated_request_gets_a_server_error(
    case: schemathesis.Case, api: LiveServer, api_key: str, admin_key: str, known_memory: str
) -> None:
    call_and_check(case, api, api_key, admin_key, known_memory)


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=SLOW_EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_many_generated_requests_get_no_server_error(
    case: schemathesis.Case, api: LiveServer, api_key: str, admin_key: str, known_memory: str
) -> None:
    call_and_check(case, api, api_key, admin_key, known_memory)


def call_and_check(
    case: schemathesis.Case, api: LiveServer, api_key: str, admin_key: str, known_memory: str
) -> None:
    """Send the generated request; no 5xx, and every error has the one error body."""
    reach_the_handlers(case, known_memory)
    key = admin_key if case.path in ADMIN_PATHS else api_key
    response = case.call(base_url=api.url, headers={"Authorization": f"Bearer {key}"})
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:500]}"
    )
    if response.status_code >= 400:
        error = response.json()["error"]  # the one error body, whatever failed
        assert error["status"] == response.status_code and error["code"] and error["message"]
