"""Memory keys as Nebo normalises them (seed 004 §2, "Key Normalization")."""

from __future__ import annotations

import re

_HYPHEN_RUNS = re.compile(r"-{2,}")
_SLASH_RUNS = re.compile(r"/{2,}")


def normalize_memory_key(key: str) -> str:
    """Lowercase; underscores and spaces -> hyphens; collapse repeated hyphens and slashes;
    trim leading/trailing hyphens and slashes.

    `"Code_Style"` -> `"code-style"`, `"  My--Key//path "` -> `"my-key/path"`.
    """
    key = key.strip().lower().replace("_", "-").replace(" ", "-")
    key = _HYPHEN_RUNS.sub("-", key)
    key = _SLASH_RUNS.sub("/", key)
    return key.strip("-/")
