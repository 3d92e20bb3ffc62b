"""Replay the recorded log into a scratch ledger: exactly (recorded LLM answers) or live
(changed prompts, model or provider). See `commands.replay.engine`."""

from commands.replay.engine import MODES, ReplayOptions, ReplayResult, replay
from commands.replay.providers import PromptOverride

__all__ = ["MODES", "PromptOverride", "ReplayOptions", "ReplayResult", "replay"]
