"""The ledger explorer: read-only HTML pages under `/ui` for admin keys (issue 9)."""

from mnemoledger.commands.service.http.ui.routes import install_ui

__all__ = ["install_ui"]
