"""Path parameters the router itself matches: a memory id is a UUID, so the fixed paths
beside `/memories/{memory_id}` (`/memories/by-key`, `/memories/clear`, `/memories/latest`)
are never read as one. `PATCH /memories/by-key` is a 405 naming the methods `/memories/by-key`
has, not an update of a memory called "by-key".

    @router.get(f"/{MEMORY_ID_PARAM}")
    async def get_memory(memory_id: MemoryId) -> ...
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from starlette.convertors import Convertor, register_url_convertor

MEMORY_ID = r"[0-9a-fA-F]{8}(?:-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12}"
"""A memory id: the UUID's 32 hex digits, as the API returns them, or its 36 characters
with hyphens (as mem0 clients send them); the ledger reads both (`uuid.UUID`)."""


class MemoryIdConvertor(Convertor[str]):
    """`{memory_id:memory_id}`: a path segment that is a memory id, else no match (404)."""

    regex = MEMORY_ID

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("memory_id", MemoryIdConvertor())

MEMORY_ID_PARAM = "{memory_id:memory_id}"
"""The memory id of a route's path (FastAPI documents it as `{memory_id}`)."""

MemoryId = Annotated[
    str,
    Path(
        pattern=f"^{MEMORY_ID}$",
        description="A memory id: 32 hex digits (or the UUID with hyphens). Any other path "
        "segment is not a memory: 404.",
    ),
]
