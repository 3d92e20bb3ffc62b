"""The use cases (add, search, history, rebuild, ...) and the click CLI that drives them."""

from commands.facade import MnemoLedger

__all__ = ["MnemoLedger"]
