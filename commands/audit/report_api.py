"""`ReportMixin`: operations and LLM usage over time, by DuckDB over the log.

memory.report(bucket="day").llm        # calls, tokens and latency by stage and model
"""

from __future__ import annotations

from mnemoledger.commands.audit.report import Report, build_report
from mnemoledger.ledger import Ledger


class ReportMixin:
    """Expects on `self`: `ledger`."""

    ledger: Ledger

    def report(self, *, user: str | None = None, bucket: str = "day") -> Report:
        """Operations by node, op and status per `bucket` (hour, day, week, month), and LLM
        calls, tokens and latency by stage and model (one user's, or everyone's)."""
        return build_report(self.ledger, user=user, bucket=bucket)
