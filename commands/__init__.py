"""The use cases (add, search, history, rebuild, ...) and the click CLI that drives them."""

from commands.facade import MnemoLedger
from commands.mem0_compat import Memory

__all__ = ["Memory", "MnemoLedger"]
