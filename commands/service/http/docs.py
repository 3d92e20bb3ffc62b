"""`/docs` (Swagger UI) and `/redoc` (ReDoc) from assets installed with the package, so the
API's documentation works offline and loads nothing from a CDN.

The assets are those of `fastapi-offline` (MIT; it ships the Swagger UI 5 and ReDoc 2 dist
files FastAPI's pages would load from a CDN, kept current by its maintainer): only its
`static/` directory is used, served under `/docs-assets/`. FastAPI's own `/docs` and
`/redoc` are turned off (`docs_url=None`, `redoc_url=None`) and rebuilt here with local
URLs, without Google Fonts. Both pages are sent with a Content-Security-Policy that lets
them load nothing from another origin: ReDoc's menu shows a logo from its vendor's CDN
(hidden when it fails to load), which the browser then never asks for.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
"""Where the Swagger UI and ReDoc files are served."""

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",  # Swagger UI's page starts it inline
        "style-src 'self' 'unsafe-inline'",  # both inject their styles
        "img-src 'self' data:",
        "worker-src 'self' blob:",  # ReDoc's search runs in a worker built from a blob
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'self'",
    ]
)
"""Only this server's own files: the pages work offline and reach no one else."""

ASSET_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")


def assets_directory() -> Path:
    """The installed `fastapi_offline/static` directory."""
    return Path(str(files("fastapi_offline") / "static"))


def install_docs(app: FastAPI, title: str) -> None:
    """Serve `/docs`, `/redoc` and their assets on `app` (created with `docs_url=None`,
    `redoc_url=None`)."""
    openapi_url = app.openapi_url or "/openapi.json"
    app.mount(ASSETS_URL, StaticFiles(directory=assets_directory()), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return local_only(
            get_swagger_ui_html(
                openapi_url=openapi_url,
                title=f"{title} - Swagger UI",
                swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
                swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
                swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
                swagger_ui_parameters={"validatorUrl": None},  # no badge from validator.swagger.io
            )
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return local_only(
            get_redoc_html(
                openapi_url=openapi_url,
                title=f"{title} - ReDoc",
                redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
                redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
                with_google_fonts=False,
            )
        )


def local_only(page: HTMLResponse) -> HTMLResponse:
    """`page`, allowed to load from this server only."""
    page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return page
