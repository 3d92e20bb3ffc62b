"""Replay the recorded log into a scratch ledger: exactly (recorded LLM answers) or live
(changed prompts, model or provider). See `commands.replay.engine`."""

from mnemoledger.commands.audit.replay.engine import MODES, ReplayOptions, ReplayResult, replay
from mnemoledger.commands.audit.replay.providers import PromptOverride

__all__ = ["MODES", "PromptOverride", "ReplayOptions", "ReplayResult", "replay"]
