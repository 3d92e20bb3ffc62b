"""Topics (seed 001 §6, engram's `POST /topic`), consolidation, export and verify.

Consolidation, export and verify act on a user's whole timeline or the whole log, so they
need an admin key (`admin_required`, 403, otherwise); topics follow the usual user and
category rules.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Query
from fastapi.responses import FileResponse

from mnemoledger.commands.audit.integrity_api import VerifyResult
from mnemoledger.commands.lifecycle.consolidate_api import (
    ConsolidateResult,
    TopicDetail,
    TopicsResult,
)
from mnemoledger.commands.service.http.auth import Authenticated
from mnemoledger.commands.service.http.requests import ConsolidateRequest, Identifier, TopicRequest

router = APIRouter(tags=["maintenance"])

EXPORT_MEDIA_TYPES = {
    "jsonl": "application/x-ndjson",
    "csv": "text/csv",
    "parquet": "application/vnd.apache.parquet",
}


@router.get("/topics")
async def topics(
    caller: Authenticated,
    user_id: Annotated[Identifier, Query()],
    rebuild: Annotated[bool, Query()] = False,
) -> TopicsResult:
    """The user's named topic tree: leaves (`kb1`, ...) most members first, then parents;
    built first when the user has none yet, or with `rebuild`."""
    return await caller.run(lambda scoped: scoped.topics(user=user_id, rebuild=rebuild))


@router.post("/topic")
async def topic(body: TopicRequest, caller: Authenticated) -> dict[str, TopicDetail]:
    """Drill down: each named topic's memories (those the key may read)."""
    return await caller.run(lambda scoped: scoped.topic_memories(user=body.user_id, ids=body.ids))


@router.post("/consolidate")
async def consolidate(body: ConsolidateRequest, caller: Authenticated) -> ConsolidateResult:
    """One consolidation cycle for the user (admin key): promotion, triage, gate,
    reconcile, merge, decay. With `dry_run`, the planned operations and nothing written."""
    return await caller.run(
        lambda scoped: scoped.consolidate(user=body.user_id, dry_run=body.dry_run)
    )


@router.get(
    "/export",
    response_class=FileResponse,
    responses={200: {"content": {t: {} for t in EXPORT_MEDIA_TYPES.values()}}},
)
async def export(
    caller: Authenticated,
    background: BackgroundTasks,
    user_id: Annotated[Identifier, Query()],
    format: Annotated[str, Query(pattern="^(jsonl|csv|parquet)$")] = "jsonl",
) -> FileResponse:
    """The user's whole event timeline as a file (admin key): `jsonl` (importable with
    `mnemoledger import`), `csv` or `parquet`."""
    folder = Path(tempfile.mkdtemp(prefix="mnemoledger-export-"))
    target = folder / f"{user_id}.{format}"
    try:
        await caller.run(lambda scoped: scoped.export(user=user_id, format=format, path=target))
    except BaseException:
        _remove(folder)
        raise
    background.add_task(_remove, folder)
    return FileResponse(
        target, media_type=EXPORT_MEDIA_TYPES[format], filename=f"{user_id}.{format}"
    )


@router.get("/verify")
async def verify(caller: Authenticated) -> VerifyResult:
    """Check every stored event (hashes, per-stream chains, seals, positions); admin key."""
    return await caller.run(lambda scoped: scoped.verify())


def _remove(folder: Path) -> None:
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
