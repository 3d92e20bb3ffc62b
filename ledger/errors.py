"""The ledger's errors: small named classes the CLI and the API map to exit codes."""


class LedgerError(Exception):
    """Base class of every error the ledger raises on purpose."""


class InvalidInput(LedgerError, ValueError):
    """The caller gave input the ledger refuses (empty content, too many tags, ...)."""


class MemoryNotFound(LedgerError, KeyError):
    """No memory has this id."""

    def __str__(self) -> str:
        return f"no memory with id {self.args[0]!r}"


class InvalidSetting(InvalidInput):
    """A setting (an environment variable `MNEMOLEDGER_*`, or a `Settings` argument) has a
    value the ledger cannot use; the message names the variable and what is wrong."""


class InvalidTransition(LedgerError):
    """The memory's current state does not allow this change (e.g. restoring an active one)."""


class IntegrityViolation(LedgerError):
    """A stored event is not what was written (changed, moved or unreadable)."""


class UnknownUser(InvalidInput):
    """No data of this user is in the ledger (nothing to erase)."""

    def __str__(self) -> str:
        return f"unknown user {self.args[0]!r}: the ledger holds no data of theirs"


class AlreadyErased(InvalidInput):
    """The user was erased and has written nothing since."""

    def __str__(self) -> str:
        return f"user {self.args[0]!r} was already erased at {self.args[1]}"
