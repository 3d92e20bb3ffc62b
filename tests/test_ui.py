"""The ledger explorer (/ui) on a real uvicorn, driven with httpx: every page renders what
the ledger holds, only admin keys get in, and nothing but the login form takes a POST."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mnemoledger.commands.service.http.ui.routes import DIFF_ROOTS_ENV, OUT_OF_REACH
from tests.read_models import open_memory
from tests.ui_seed import LAST_ADD, Explorer, explorer

pytestmark = pytest.mark.sqlite_only  # one seeded SQLite server for the module


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Explorer]:
    with explorer(tmp_path_factory.mktemp("ui")) as running:
        yield running


@pytest.fixture
def admin(ui: Explorer) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {ui.admin_key}"}
    with httpx.Client(base_url=ui.server.url, headers=headers, timeout=60) as http:
        yield http


def html(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def layer_counts(page: str) -> dict[str, int]:
    found = re.findall(r'class="layer-count" data-layer="(\w+)">(\d+)<', page)
    return {layer: int(count) for layer, count in found}


def test_no_key_or_a_bad_key_redirects_to_the_login_form(ui: Explorer) -> None:
    with httpx.Client(base_url=ui.server.url, timeout=60) as http:
        for path in ("/ui", "/ui/users", "/ui/users/maya", f"/ui/memories/{ui.paris}"):
            response = http.get(path)
            assert response.status_code == 303 and response.headers["location"] == "/ui/login"
        bad = http.get("/ui/users", headers={"Authorization": "Bearer nope"})
        assert bad.status_code == 303 and bad.headers["location"] == "/ui/login"
        assert 'name="key"' in html(http.get("/ui/login"))


def test_an_agent_key_is_refused_with_a_403_page(ui: Explorer) -> None:
    with httpx.Client(base_url=ui.server.url, timeout=60) as http:
        page = http.get("/ui/users", headers={"Authorization": f"Bearer {ui.agent_key}"})
        assert page.status_code == 403 and "not an admin key" in page.text
        login = http.post("/ui/login", data={"key": ui.agent_key})
        assert login.status_code == 403 and "only admin keys" in login.text
        assert "set-cookie" not in login.headers


def test_the_login_form_sets_an_httponly_cookie_that_opens_the_pages(ui: Explorer) -> None:
    with httpx.Client(base_url=ui.server.url, timeout=60) as http:
        wrong = http.post("/ui/login", data={"key": "not-a-key"})
        assert wrong.status_code == 401 and "invalid API key" in wrong.text
        login = http.post("/ui/login", data={"key": ui.admin_key})
        assert login.status_code == 303 and login.headers["location"] == "/ui/users"
        cookie = login.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
        users = html(http.get("/ui/users"))
        assert 'href="/ui/users/maya"' in users and 'href="/ui/users/sam"' in users
        logout = http.get("/ui/logout")
        assert logout.status_code == 303
        assert http.get("/ui/users").status_code == 303


def test_the_explorer_is_read_only_and_not_in_the_api_schema(
    ui: Explorer, admin: httpx.Client
) -> None:
    for path in ("/ui/users", "/ui/users/maya", f"/ui/memories/{ui.paris}"):
        assert admin.post(path).status_code == 405
    assert not [p for p in admin.get("/openapi.json").json()["paths"] if p.startswith("/ui")]
    css = admin.get("/ui/static/ui.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert admin.get("/ui/static/../routes.py").status_code == 404


def test_the_users_page_counts_memories_by_state_and_layer(admin: httpx.Client) -> None:
    page = html(admin.get("/ui/users"))
    maya = page[page.index('href="/ui/users/maya"') :].split("</tr>")[0]
    numbers = [int(n) for n in re.findall(r'class="num">(\d+)<', maya)]
    total, active, forgotten, superseded, buffer, working, core = numbers
    assert total == 4 and superseded == 1 and active == 3 and forgotten == 0
    assert buffer + working + core == active


def test_the_timeline_shows_events_with_their_command_and_llm_call(
    ui: Explorer, admin: httpx.Client
) -> None:
    page = html(admin.get("/ui/users/maya"))
    assert "MemoryAdded" in page and "MemoryUpdated" in page and "MemorySuperseded" in page
    assert "<details>" in page and "Deciding LLM call" in page
    assert "haema.reconstruct@2" in page and "tokens" in page and " ms" in page
    assert f'href="/ui/memories/{ui.peanuts}"' in page
    assert "chess" not in page, "only maya's events"

    updates = html(admin.get("/ui/users/maya", params={"type": "MemoryUpdated"}))
    assert updates.count('<li class="event">') == 1 and "peanuts and cashews" in updates

    by_agent = html(admin.get("/ui/users/maya", params={"agent": "researcher"}))
    everything = page.count('<li class="event">')
    assert 0 < by_agent.count('<li class="event">') < everything
    assert (
        html(admin.get("/ui/users/maya", params={"agent": "nobody"})).count('<li class="event">')
        == 0
    )


def test_the_timeline_is_paged_and_filtered_by_position(admin: httpx.Client) -> None:
    first = html(admin.get("/ui/users/maya"))
    total = int(re.search(r"(\d+) events", first).group(1))  # type: ignore[union-attr]
    positions = [int(p) for p in re.findall(r'class="pos">#(\d+)<', first)]
    assert positions == sorted(positions, reverse=True), "newest first"
    middle = positions[len(positions) // 2]
    later = html(admin.get("/ui/users/maya", params={"since": middle}))
    assert all(int(p) > middle for p in re.findall(r'class="pos">#(\d+)<', later))
    earlier = html(admin.get("/ui/users/maya", params={"until": middle}))
    assert all(int(p) <= middle for p in re.findall(r'class="pos">#(\d+)<', earlier))
    assert earlier.count('<li class="event">') + later.count('<li class="event">') == total
    beyond = html(admin.get("/ui/users/maya", params={"page": 2}))
    assert f"page 2 of {max(1, -(-total // 50))}" in beyond


def test_a_memory_page_shows_its_history_diffs_and_lineage(
    ui: Explorer, admin: httpx.Client
) -> None:
    peanuts = html(admin.get(f"/ui/memories/{ui.peanuts}"))
    assert "Maya is allergic to peanuts and cashews" in peanuts
    assert '<span class="del">-Maya is allergic to peanuts</span>' in peanuts
    assert '<span class="add">+Maya is allergic to peanuts and cashews</span>' in peanuts
    assert peanuts.index(">ADD<") < peanuts.index(">UPDATE<") < peanuts.index(">LINK<")
    assert "decided by reconstruct" in peanuts

    paris = html(admin.get(f"/ui/memories/{ui.paris}"))
    assert f'Replaced by <a href="/ui/memories/{ui.berlin}">' in paris
    berlin = html(admin.get(f"/ui/memories/{ui.berlin}"))
    assert f'Replaced <a href="/ui/memories/{ui.paris}">' in berlin

    missing = admin.get("/ui/memories/00000000000000000000000000000000")
    assert missing.status_code == 404 and "no memory" in missing.text


def test_the_layers_view_travels_in_time(admin: httpx.Client) -> None:
    now = html(admin.get("/ui/users/maya/layers"))
    last = int(re.search(r'max="(\d+)"', now).group(1))  # type: ignore[union-attr]
    assert f'value="{last}"' in now and sum(layer_counts(now).values()) == 3
    before = html(admin.get("/ui/users/maya/layers", params={"as_of": 0}))
    assert layer_counts(before) == {"buffer": 0, "working": 0, "core": 0}
    assert 'type="range"' in before and "data-autosubmit" in before


def test_the_core_page_lists_versions_and_a_side_by_side_diff(admin: httpx.Client) -> None:
    page = html(admin.get("/ui/users/maya/core"))
    versions = [int(v) for v in re.findall(r"<summary>version (\d+) ", page)]
    assert len(versions) >= 2
    assert '<table class="diff"' in page and "cashews" in page
    chosen = html(admin.get("/ui/users/maya/core", params={"a": 1, "b": versions[0]}))
    assert ">version 1</th>" in chosen and f">version {versions[0]}</th>" in chosen
    assert "<option selected>1</option>" in chosen


def test_the_graph_draws_active_memories_coloured_by_layer(admin: httpx.Client) -> None:
    page = html(admin.get("/ui/users/maya/graph"))
    assert page.count('class="node"') == 3
    assert "<line " in page and "related" in page
    assert "Topic tree" in page


def test_the_report_charts_operations_and_tokens_by_stage(admin: httpx.Client) -> None:
    page = html(admin.get("/ui/users/maya/report"))
    assert page.count('class="chart"') == 2
    assert ">reconstruct<" in page and ">core_update<" in page
    assert "Bucket" in page


def test_the_replay_diff_page_shows_what_the_replay_lacks(
    ui: Explorer, admin: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DIFF_ROOTS_ENV, str(ui.replay))
    assert "Ledger A" in html(admin.get("/ui/diff"))
    page = html(admin.get("/ui/diff", params={"a": str(ui.home), "b": str(ui.replay)}))
    assert "The ledgers differ." in page
    removed = page[page.index("Memories removed") : page.index("Memories changed")]
    assert LAST_ADD in removed
    same = html(admin.get("/ui/diff", params={"a": str(ui.home), "b": str(ui.home)}))
    assert "The two ledgers are identical." in same
    inside = str(ui.replay / "none")
    nowhere = admin.get("/ui/diff", params={"a": str(ui.home), "b": inside})
    assert nowhere.status_code == 400 and "no ledger there" in nowhere.text


# --- the attack: a key for one user, and paths outside the configured roots ----------------


@pytest.fixture
def maya_only(ui: Explorer) -> Iterator[httpx.Client]:
    """An admin key created for maya alone."""
    headers = {"Authorization": f"Bearer {ui.server.key('auditor', ['maya'], admin=True)}"}
    with httpx.Client(base_url=ui.server.url, headers=headers, timeout=60) as http:
        yield http


def alert(response: httpx.Response) -> tuple[int, str]:
    """The status and the error page's message."""
    found = re.search(r'<p class="error" role="alert">(.*?)</p>', response.text, re.S)
    assert found, response.text
    return response.status_code, found.group(1)


def test_an_admin_key_for_one_user_sees_no_page_of_another(
    ui: Explorer, maya_only: httpx.Client
) -> None:
    users = html(maya_only.get("/ui/users"))
    assert 'href="/ui/users/maya"' in users and 'href="/ui/users/sam"' not in users
    for tail in ("", "/layers", "/core", "/graph", "/report"):
        sam = maya_only.get(f"/ui/users/sam{tail}")
        nobody = maya_only.get(f"/ui/users/nobody{tail}")
        assert sam.status_code == 404 and "chess" not in sam.text.lower()
        # the same answer as for a user who does not exist: nothing is disclosed
        assert alert(sam)[0] == alert(nobody)[0] == 404
        assert alert(sam)[1].replace("sam", "X") == alert(nobody)[1].replace("nobody", "X")
    assert html(maya_only.get("/ui/users/maya")).count('<li class="event">') > 0


def test_an_admin_key_for_one_user_cannot_open_another_users_memory(
    ui: Explorer, maya_only: httpx.Client
) -> None:
    [chess] = ui.server.state.facade.call(lambda memory: memory.list(user="sam"))
    theirs = maya_only.get(f"/ui/memories/{chess.id}")
    missing = maya_only.get("/ui/memories/00000000000000000000000000000000")
    assert theirs.status_code == missing.status_code == 404
    assert "chess" not in theirs.text.lower()
    assert alert(theirs)[1].replace(chess.id, "X") == alert(missing)[1].replace(
        "00000000000000000000000000000000", "X"
    )
    assert html(maya_only.get(f"/ui/memories/{ui.paris}"))


def test_the_diff_covers_the_keys_users_only(
    ui: Explorer, admin: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DIFF_ROOTS_ENV, str(ui.replay))
    params = {"a": str(ui.home), "b": str(ui.replay)}
    headers = {"Authorization": f"Bearer {ui.server.key('auditor', ['sam'], admin=True)}"}
    with httpx.Client(base_url=ui.server.url, headers=headers, timeout=60) as sam_only:
        # maya's cello is the difference; a key for sam alone sees two identical ledgers
        assert "The ledgers differ." in html(admin.get("/ui/diff", params=params))
        page = html(sam_only.get("/ui/diff", params=params))
        assert "The two ledgers are identical." in page and "cello" not in page
        asked = sam_only.get("/ui/diff", params={**params, "user": "maya"})
        assert asked.status_code == 404 and "cello" not in asked.text


def test_the_diff_opens_nothing_outside_the_configured_roots(
    ui: Explorer, admin: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other_home = tmp_path / "other-home"  # another home on the server, with its own keys
    with open_memory(other_home) as other:
        other.add(["Zoe's bank PIN is 4921"], user="zoe")
    outside = [
        str(other_home),  # a ledger
        str(tmp_path / "empty"),  # no ledger
        "/nonexistent",
        "/etc",
        "relative/path",
        str(ui.replay),  # a ledger, but no root is configured
    ]
    monkeypatch.delenv(DIFF_ROOTS_ENV, raising=False)
    answers = {alert(admin.get("/ui/diff", params={"a": str(ui.home), "b": p})) for p in outside}
    assert answers == {(404, OUT_OF_REACH)}, "one answer, whatever is there"

    monkeypatch.setenv(DIFF_ROOTS_ENV, str(tmp_path / "replays"))
    (tmp_path / "replays").mkdir()
    (tmp_path / "replays" / "escape").symlink_to(other_home)
    escapes = [
        str(tmp_path / "replays" / "escape"),
        str(tmp_path / "replays" / ".." / "other-home"),
        str(other_home),
    ]
    for path in escapes:
        for params in ({"a": str(ui.home), "b": path}, {"a": path, "b": str(ui.home)}):
            response = admin.get("/ui/diff", params=params)
            assert alert(response) == (404, OUT_OF_REACH) and "4921" not in response.text
    # the home against itself needs no root
    monkeypatch.delenv(DIFF_ROOTS_ENV)
    assert "identical" in html(admin.get("/ui/diff", params={"a": str(ui.home), "b": str(ui.home)}))


def test_replay_paths_are_plain_directories(ui: Explorer) -> None:
    assert isinstance(ui.replay, Path) and (ui.replay / "ledger.sqlite3").exists()


def test_a_nul_character_in_a_diff_path_is_a_400_page(ui: Explorer, admin: httpx.Client) -> None:
    for params in (
        {"a": str(ui.home), "b": f"{ui.home}\x00"},
        {"a": "/tmp/\x00", "b": str(ui.home)},
    ):
        assert alert(admin.get("/ui/diff", params=params)) == (
            400,
            "a path cannot contain a NUL character",
        )
