"""Errors of the LLM stages: both are `LedgerError`s, so the CLI maps them to exit status 1."""

from __future__ import annotations

from mnemoledger.ledger.errors import LedgerError


class LLMError(LedgerError):
    """An LLM call failed: the server refused it, could not be reached, or kept failing."""


class StageOutputInvalid(LLMError):
    """The model answered, but its answer does not validate against the stage's output model.

    `response` keeps the raw text so the caller can record the failed call and refine.
    """

    def __init__(self, stage: str, reason: str, response: str) -> None:
        super().__init__(f"stage {stage!r}: the model's output is invalid: {reason}")
        self.stage = stage
        self.reason = reason
        self.response = response
