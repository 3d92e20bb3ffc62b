"""The HTTP API (`mnemoledger serve`): FastAPI over the facade, one key per agent.

`create_app` is loaded on first use, so that `serve`'s workers import `http.starting` (which
answers /health at once) without the API and the whole memory stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemoledger.commands.service.http.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from mnemoledger.commands.service.http.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
