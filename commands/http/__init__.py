"""The HTTP API (`mnemoledger serve`): FastAPI over the facade, one key per agent."""

from commands.http.app import create_app

__all__ = ["create_app"]
