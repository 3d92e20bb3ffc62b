"""Prompt-injection screening of memory content (Nebo, seed 004 §15).

A memory is later pasted into agents' prompts, so text that tries to instruct the model is
refused with a clear error instead of being stored.
"""

from __future__ import annotations

import re

from ledger.errors import InvalidInput

# The seed's 14 alternatives, checked case-insensitively (seed 004 §15).
INJECTION_PATTERNS = re.compile(
    r"(?i)"
    r"(ignore\s+(all\s+)?previous\s+instructions)"
    r"|(ignore\s+(all\s+)?above)"
    r"|(disregard\s+(all\s+)?previous)"
    r"|(you\s+are\s+now\s+)"
    r"|(new\s+instructions?\s*:)"
    r"|(system\s*:\s)"
    r"|(<\s*system\s*>)"
    r"|(<\s*/?\s*system-?(prompt|message|instruction)\s*>)"
    r"|(IMPORTANT\s*:\s*you\s+must)"
    r"|(override\s+(all\s+)?previous)"
    r"|(forget\s+(all\s+)?previous)"
    r"|(act\s+as\s+(if|though)\s+you)"
    r"|(pretend\s+you\s+are)"
    r"|(from\s+now\s+on\s*,?\s*you)"
)

# Tool-path limits (seed 004 §15): keys 128, values 2048 characters.
MAX_TOOL_KEY_CHARS = 128
MAX_TOOL_VALUE_CHARS = 2048


class InjectionRefused(InvalidInput):
    """The content looks like an attempt to instruct the agent that will read it."""


def screen(text: str) -> str:
    """`text` unchanged, or `InjectionRefused` naming the phrase that looks like an injection."""
    match = INJECTION_PATTERNS.search(text)
    if match:
        raise InjectionRefused(
            f"content refused: {match.group(0).strip()!r} looks like a prompt injection"
        )
    return text
