"""The OpenAPI document as the API behaves: what FastAPI generates, corrected where it
says something the server does not do.

A parameter (query, path, header) is text or absent: an optional one is `X | None` in
Python, which FastAPI documents as "X or null", but no query string can carry a JSON null
(`?state=null` is the text "null", which `state` refuses). Its schema here is X alone, and
leaving the parameter out is how a client says "none" (`required: false`).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

NULL = {"type": "null"}


def without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without its `null` alternative (`anyOf: [X, null]` is X)."""
    choices = schema.get("anyOf")
    if not isinstance(choices, list) or NULL not in choices:
        return schema
    kept = [choice for choice in choices if choice != NULL]
    rest = {key: value for key, value in schema.items() if key != "anyOf"}
    if len(kept) == 1:
        return {**kept[0], **rest}
    return {**rest, "anyOf": kept}


def correct(document: dict[str, Any]) -> dict[str, Any]:
    """`document` (FastAPI's), its parameters without `null` (in place; idempotent)."""
    for path in document.get("paths", {}).values():
        for operation in path.values():
            for parameter in operation.get("parameters", []):
                if "schema" in parameter:
                    parameter["schema"] = without_null(parameter["schema"])
    return document


def install_schema(app: FastAPI) -> None:
    """Serve the corrected document at `/openapi.json` (and to `app.openapi()` callers)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        return correct(generate())

    app.openapi = openapi  # type: ignore[method-assign]
