"""Token counts where no server reports them."""

from __future__ import annotations

import math
from typing import Final

CHARS_PER_TOKEN: Final = 4
"""The usual rule of thumb for English text with BPE tokenizers."""


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_prompt_tokens(messages: list[dict[str, str]]) -> int:
    return estimate_tokens("".join(message["content"] for message in messages))
