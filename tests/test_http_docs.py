"""/docs (Swagger UI) and /redoc (ReDoc) are served from files installed with the package:
their pages name only this server's URLs, the assets are there, and in headless Chromium
/docs lists the API's operations without a single request leaving the server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from mnemoledger.commands.service.http.docs import ASSET_FILES, ASSETS_URL, assets_directory
from tests.live_server import LiveServer, live_server

URL_ATTRIBUTES = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']""")
JS_URLS = re.compile(r"""\burl:\s*["']([^"']+)["']""")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("docs"), sqlite=True) as running:
        yield running


def referenced_urls(html: str) -> list[str]:
    return URL_ATTRIBUTES.findall(html) + JS_URLS.findall(html)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_reference_only_local_urls_and_their_assets_are_served(
    server: LiveServer, page: str
) -> None:
    answer = httpx.get(server.url + page, timeout=60)
    assert answer.status_code == 200 and "text/html" in answer.headers["content-type"]
    policy = answer.headers["content-security-policy"]  # the browser loads nothing else
    assert "default-src 'self'" in policy and "img-src 'self' data:" in policy
    urls = referenced_urls(answer.text)
    assert urls, answer.text
    assert "http://" not in answer.text and "https://" not in answer.text
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc and url.startswith("/"), url
        fetched = httpx.get(server.url + url, timeout=60)
        assert fetched.status_code == 200, url
        assert len(fetched.content) > 0
    assert "/openapi.json" in urls


def test_the_assets_ship_with_the_install() -> None:
    directory = assets_directory()
    for name in ASSET_FILES:
        assert (directory / name).stat().st_size > 1000, name
    bundle = (directory / "swagger-ui-bundle.js").read_text(encoding="utf-8")
    assert "SwaggerUIBundle" in bundle
    assert "Redoc" in (directory / "redoc.standalone.js").read_text(encoding="utf-8")


def test_the_docs_are_left_out_of_the_schema(server: LiveServer) -> None:
    paths = httpx.get(server.url + "/openapi.json", timeout=60).json()["paths"]
    assert not any(p.startswith(("/docs", "/redoc", ASSETS_URL)) for p in paths)


SEED_WORDS = re.compile(r"haema|engram|nebo|luminary|topiary|seeds? 0\d\d|§", re.IGNORECASE)
"""Names and section numbers of the designs the ledger follows: not words of its users."""


def test_the_docs_speak_the_users_words(server: LiveServer) -> None:
    """/docs shows the schema's prose: no seed names or section numbers (the value
    `engram` of `fusion` aside, a search setting's name)."""
    schema = httpx.get(server.url + "/openapi.json", timeout=60).json()
    found: list[str] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for name, value in node.items():
                assert not SEED_WORDS.search(name), f"{where}/{name}"
                walk(value, f"{where}/{name}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")
        elif (
            isinstance(node, str)
            and SEED_WORDS.search(node)
            and not (node == "engram" and "/enum/" in where)
        ):
            found.append(f"{where}: {node}")

    walk(schema, "")
    assert found == []


def test_an_unknown_asset_is_a_404(server: LiveServer) -> None:
    assert httpx.get(f"{server.url}{ASSETS_URL}/nothing.js", timeout=60).status_code == 404
    escape = httpx.get(f"{server.url}{ASSETS_URL}/..%2f..%2fapp.py")
    assert escape.status_code == 404


@pytest.mark.sqlite_only  # a browser against one SQLite server; once is enough
def test_swagger_ui_lists_the_operations_offline_in_chromium(
    server: LiveServer, tmp_path: Path
) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api")
    from tests.test_ui_browser import CHROMIUM_ARGS, chromium_executable

    outside: list[str] = []
    blocked: list[str] = []
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on(
                "request",
                lambda request: (
                    outside.append(request.url)
                    if not request.url.startswith((server.url, "data:", "blob:"))
                    else None
                ),
            )
            page.on(
                "requestfailed",
                lambda request: blocked.append(request.url) if request.failure == "csp" else None,
            )
            page.goto(server.url + "/docs")
            operations = page.locator(".opblock-summary-path")
            operations.first.wait_for(timeout=60_000)
            shown = {operations.nth(i).inner_text().strip() for i in range(operations.count())}
            assert {"/query", "/memories", "/search", "/health"} <= {
                s.replace("\u200b", "") for s in shown
            }, shown
            page.screenshot(path=str(tmp_path / "docs.png"))

            page.goto(server.url + "/redoc")
            page.get_by_text("scoped recall", exact=False).first.wait_for(timeout=60_000)
            page.screenshot(path=str(tmp_path / "redoc.png"))
        finally:
            browser.close()
    # ReDoc's menu asks for its vendor's logo; the page's policy blocks it in the browser
    assert sorted(outside) == sorted(blocked), (outside, blocked)
