"""`Reports`: operations and LLM usage over time, by DuckDB over the log.

memory.report(bucket="day").llm        # calls, tokens and latency by stage and model
"""

from __future__ import annotations

from mnemoledger.commands.audit.report import Report, build_report
from mnemoledger.commands.parts import Parts


class Reports:
    """Usage reports over the log (`Report` is the report itself)."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def report(self, *, user: str | None = None, bucket: str = "day") -> Report:
        """`MnemoLedger.report`: operations and LLM use per bucket (documented there)."""
        return build_report(self.parts.ledger, user=user, bucket=bucket)
