"""The ledger explorer end to end in headless Chromium (Debian's `chromium` where it is
installed, else Playwright's own, fetched once by `playwright install chromium`): log in,
open a user's timeline, click into a memory, see its history and a diff, move the time
slider and watch the layer counts change, open the replay diff. Every page is
screenshotted into the test's temp dir; with MNEMOLEDGER_UPDATE_DOCS=1 the timeline also
goes to docs/ui-timeline.png (the README's)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from mnemoledger.commands.service.http.ui.routes import DIFF_ROOTS_ENV
from tests.ui_seed import LAST_ADD, Explorer, explorer

pytestmark = pytest.mark.sqlite_only  # a browser against one SQLite server; once is enough

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS_SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "ui-timeline.png"


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Explorer]:
    with explorer(tmp_path_factory.mktemp("ui-browser")) as running:
        yield running


def chromium_executable() -> str | None:
    """Debian's chromium when installed; else None after fetching Playwright's own (a
    fresh machine with nothing but Python runs the README's test command as written)."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], check=True)
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = chromium_executable()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser, ui: Explorer) -> Iterator[Page]:
    context = browser.new_context(base_url=ui.server.url, viewport={"width": 1280, "height": 860})
    try:
        yield context.new_page()
    finally:
        context.close()


def layer_counts(page: Page) -> dict[str, int]:
    counts = page.locator(".layer-count")
    return {
        str(counts.nth(i).get_attribute("data-layer")): int(counts.nth(i).inner_text())
        for i in range(counts.count())
    }


def test_an_auditor_walks_the_explorer(
    ui: Explorer, page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DIFF_ROOTS_ENV, str(ui.replay))  # the operator lets it open replays
    shots = tmp_path / "screenshots"

    def shot(name: str) -> None:
        page.screenshot(path=shots / f"{name}.png", full_page=True)

    page.goto("/ui/users/maya")
    expect(page).to_have_url(re.compile(r"/ui/login$"))
    shot("login")
    page.fill("#key", ui.admin_key)
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(r"/ui/users$"))
    expect(page.locator("table.grid")).to_contain_text("sam")
    shot("users")

    page.click("a[href='/ui/users/maya']")
    expect(page.locator("h1")).to_have_text("Timeline of maya")
    added = page.locator("li.event", has_text="MemoryAdded").first
    expect(added.locator("dd.llm")).to_be_hidden()
    added.locator("summary .pos").click()  # expand (the summary's memory link navigates)
    expect(added.locator("dd.llm")).to_be_visible()
    expect(added.locator("dd.llm")).to_contain_text("haema.reconstruct@2")
    expect(added.locator("dd.llm")).to_contain_text("tokens")
    updated = page.locator("li.event", has_text="MemoryUpdated")
    updated.locator("summary .pos").click()
    expect(updated.locator("pre")).to_contain_text("peanuts and cashews")
    updated.locator("summary .pos").click()  # fold it again
    shot("timeline")
    if os.environ.get("MNEMOLEDGER_UPDATE_DOCS") == "1":
        page.evaluate("window.scrollTo(0, 0)")
        DOCS_SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=DOCS_SCREENSHOT)

    page.locator(f"a.memory-link[href='/ui/memories/{ui.peanuts}']").first.click()
    expect(page).to_have_url(re.compile(f"/ui/memories/{ui.peanuts}$"))
    expect(page.locator("blockquote.content")).to_have_text(
        "Maya is allergic to peanuts and cashews"
    )
    history = page.locator("ol.history li.step")
    expect(history).to_have_count(4)  # ADD, UPDATE, its auto-link to a neighbour, LINK
    expect(page.locator("pre.diff .del")).to_have_text("-Maya is allergic to peanuts")
    expect(page.locator("pre.diff .add")).to_have_text("+Maya is allergic to peanuts and cashews")
    shot("memory")

    page.click("nav >> text=Layers")
    expect(page).to_have_url(re.compile(r"/ui/users/maya/layers$"))
    now = layer_counts(page)
    assert sum(now.values()) == 3
    page.locator("#as_of").fill("0")
    expect(page).to_have_url(re.compile(r"as_of=0$"))
    expect(page.locator("#position")).to_have_text("0")
    assert layer_counts(page) == {layer: 0 for layer in now}
    shot("layers")

    for name in ("core", "graph", "report"):
        page.click(f"nav a[href='/ui/users/maya/{name}']")
        expect(page).to_have_url(re.compile(f"/ui/users/maya/{name}$"))
        shot(name)
    expect(page.locator("svg.chart")).to_have_count(2)

    page.click("nav >> text=Replay diff")
    page.fill("input[name=a]", str(ui.home))
    page.fill("input[name=b]", str(ui.replay))
    page.click("button[type=submit]")
    expect(page.locator(".verdict")).to_have_text("The ledgers differ.")
    expect(page.locator("main")).to_contain_text(LAST_ADD)
    shot("diff")

    assert sorted(p.stem for p in shots.iterdir()) == sorted(
        ["login", "users", "timeline", "memory", "layers", "core", "graph", "report", "diff"]
    )
