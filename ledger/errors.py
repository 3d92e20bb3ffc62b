"""The ledger's errors: small named classes the CLI and the API map to exit codes."""


class LedgerError(Exception):
    """Base class of every error the ledger raises on purpose."""


class InvalidInput(LedgerError, ValueError):
    """The caller gave input the ledger refuses (empty content, too many tags, ...)."""


class MemoryNotFound(LedgerError, KeyError):
    """No memory has this id."""

    def __str__(self) -> str:
        return f"no memory with id {self.args[0]!r}"


class InvalidTransition(LedgerError):
    """The memory's current state does not allow this change (e.g. restoring an active one)."""
