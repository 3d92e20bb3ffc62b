"""The HTTP API (`mnemoledger serve`): FastAPI over the facade, one key per agent."""

from mnemoledger.commands.service.http.app import create_app

__all__ = ["create_app"]
