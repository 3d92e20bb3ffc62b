"""The `consent` read model: every consent request with its status, and the applied profile.

Follows `ConsentRequested/Granted/Denied/Expired` (seed 003 §10) into one SQLite table and
records the projection's position in the same transaction. A user's profile is derived from
the granted requests in log order: a granted patch replaces the field's value (values of
accumulating fields such as `goals_add` add up); pending, denied and expired ones never
apply.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mnemoledger.ledger import EventRecord
from mnemoledger.ledger.policy import (
    ACCUMULATING_PROFILE_FIELDS,
    CONSENT_DENIED,
    CONSENT_EXPIRED,
    CONSENT_GRANTED,
    CONSENT_PENDING,
)
from mnemoledger.projections.sqlite_model import SQLiteReadModel

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS consent_requests ("
    " id TEXT PRIMARY KEY, user_id TEXT NOT NULL, field TEXT NOT NULL,"
    " proposed_value TEXT NOT NULL, reason TEXT NOT NULL, signals INTEGER NOT NULL,"
    " sensitive INTEGER NOT NULL, status TEXT NOT NULL, requested_at TEXT NOT NULL,"
    " requested_by TEXT NOT NULL, agent_id TEXT, expires_at TEXT NOT NULL,"
    " requested_position INTEGER NOT NULL, decided_at TEXT, decided_by TEXT,"
    " decision_actor TEXT, decision_reason TEXT, decided_position INTEGER)",
    "CREATE INDEX IF NOT EXISTS consent_by_user ON consent_requests (user_id, status)",
)

_COLUMNS = (
    "id",
    "user_id",
    "field",
    "proposed_value",
    "reason",
    "signals",
    "sensitive",
    "status",
    "requested_at",
    "requested_by",
    "agent_id",
    "expires_at",
    "requested_position",
    "decided_at",
    "decided_by",
    "decision_actor",
    "decision_reason",
    "decided_position",
)

_DECISIONS = {
    "ConsentGranted": CONSENT_GRANTED,
    "ConsentDenied": CONSENT_DENIED,
    "ConsentExpired": CONSENT_EXPIRED,
}


@dataclass(frozen=True)
class ConsentRow:
    """One consent request as the read model holds it."""

    id: str
    user_id: str
    field: str
    proposed_value: str
    reason: str
    signals: int
    sensitive: bool
    status: str
    requested_at: str
    requested_by: str
    """The actor who proposed the change."""
    agent_id: str | None
    expires_at: str
    requested_position: int
    decided_at: str | None
    decided_by: str | None
    """`by` of the decision: a person, or `auto` for a corroborated benign patch."""
    decision_actor: str | None
    """The actor recorded on the decision event."""
    decision_reason: str | None
    decided_position: int | None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class ConsentProjection(SQLiteReadModel):
    """Consent requests and applied profile fields under `directory/consent.sqlite3`."""

    name = "consent"

    schema = _SCHEMA
    tables = ("consent_requests",)

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        super().__init__(directory / "consent.sqlite3")

    def handle(self, record: EventRecord) -> None:
        if record.type == "ConsentRequested":
            self._requested(record)
        elif record.type in _DECISIONS:
            self._decided(record, _DECISIONS[record.type])

    def _requested(self, record: EventRecord) -> None:
        data = record.data
        self.db.execute(
            f"INSERT OR REPLACE INTO consent_requests ({', '.join(_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(_COLUMNS))})",
            (
                record.stream_id,
                record.user_id,
                data["field"],
                data["proposed_value"],
                data.get("reason") or "",
                int(data.get("signals", 1)),
                int(bool(data.get("sensitive", True))),
                CONSENT_PENDING,
                record.at.isoformat(),
                record.actor,
                record.agent_id,
                data["expires_at"],
                record.position,
                None,
                None,
                None,
                None,
                None,
            ),
        )

    def _decided(self, record: EventRecord, status: str) -> None:
        self.db.execute(
            "UPDATE consent_requests SET status = ?, decided_at = ?, decided_by = ?,"
            " decision_actor = ?, decision_reason = ?, decided_position = ? WHERE id = ?",
            (
                status,
                record.at.isoformat(),
                record.data.get("by"),
                record.actor,
                record.data.get("reason"),
                record.position,
                record.stream_id,
            ),
        )

    # --- queries -------------------------------------------------------------------------

    def get(self, request_id: str) -> ConsentRow | None:
        """One request by id (hex, as in the log), or None."""
        row = self.db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM consent_requests WHERE id = ?", (request_id,)
        ).fetchone()
        return _row(row) if row else None

    def list(self, user: str | None = None, status: str | None = None) -> builtins.list[ConsentRow]:
        """Requests in log order, filtered by user and status."""
        clauses: builtins.list[str] = []
        values: builtins.list[str] = []
        if user is not None:
            clauses.append("user_id = ?")
            values.append(user)
        if status is not None:
            clauses.append("status = ?")
            values.append(status)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.db.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM consent_requests{where} "
            "ORDER BY requested_position",
            values,
        ).fetchall()
        return [_row(row) for row in rows]

    def pending(self, user: str | None = None) -> builtins.list[ConsentRow]:
        """Requests still waiting for a decision, oldest first."""
        return self.list(user, CONSENT_PENDING)

    def profile_fields(self, user: str) -> dict[str, str]:
        """The user's applied profile: each field's value from its granted requests.

        A later grant replaces an earlier one; accumulating fields (`goals_add`) list every
        granted value once, in the order granted, one per line."""
        rows = self.db.execute(
            "SELECT field, proposed_value FROM consent_requests"
            " WHERE user_id = ? AND status = ? ORDER BY decided_position",
            (user, CONSENT_GRANTED),
        ).fetchall()
        profile: dict[str, str] = {}
        accumulated: dict[str, builtins.list[str]] = {}
        for field, value in rows:
            if field in ACCUMULATING_PROFILE_FIELDS:
                values = accumulated.setdefault(field, [])
                if value not in values:
                    values.append(value)
                profile[field] = "\n".join(values)
            else:
                profile[field] = value
        return profile


def _row(row: Sequence[Any]) -> ConsentRow:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["sensitive"] = bool(values["sensitive"])
    return ConsentRow(**values)
