"""Nebo's file-based context (seed 004 §13, "Legacy"): SOUL.md, AGENTS.md and MEMORY.md as
the fallback of the ledger's context.

Files loaded (the seed's table): SOUL.md (personality and identity), AGENTS.md (agent
behaviour instructions), MEMORY.md (long-term facts and preferences). HEARTBEAT.md is not
read: the seed keeps it out of the system prompt (heartbeat daemon only).

Resolution order, per file, first match wins: (1) the workspace directory (`files_dir`,
`context --files DIR`), (2) the data directory (the `MNEMOLEDGER_CONTEXT_FILES_DIR`
setting; Nebo's is its application-support directory). The files are the fallback path:
`context` renders them only when the ledger holds no context for the user (no agent, soul
or user note, personality, profile, rules, summaries or tacit memories); the ledger's
context, when there is one, wins and the files are not read.

Prompt format (the seed's): each file that exists and is not blank as
`# Personality (SOUL.md)` / `# Agent Instructions (AGENTS.md)` / `# User Memory (MEMORY.md)`
then its content, in that order, joined by `\\n\\n---\\n\\n`. A file longer than
`CONTEXT_FILE_MAX_CHARS` is cut there and a line says so. A missing file is skipped; a
directory that does not exist, or a file that cannot be read (permissions, a directory
in its place, not UTF-8), is an `InvalidInput` naming the path.

Reading the files writes nothing to the log: it is a read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pydantic import BaseModel

from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import CONTEXT_FILE_MAX_CHARS

CONTEXT_FILES: Final = (
    ("SOUL.md", "Personality"),
    ("AGENTS.md", "Agent Instructions"),
    ("MEMORY.md", "User Memory"),
)
"""Seed 004 §13 prompt format: (file, heading), in the prompt's order."""
FILE_SEPARATOR: Final = "\n\n---\n\n"


class ContextFile(BaseModel):
    """One file of the file-based context."""

    name: str
    """SOUL.md, AGENTS.md or MEMORY.md."""
    heading: str
    path: str
    """Where it was read (the first directory of the resolution order that has it)."""
    content: str
    """As read, cut at CONTEXT_FILE_MAX_CHARS (with the marker line) when longer."""
    truncated: bool = False


def context_directories(*directories: str | Path | None) -> list[Path]:
    """The directories given, in resolution order, checked: a missing one is an error."""
    found: list[Path] = []
    for directory in directories:
        if directory is None or str(directory) == "":
            continue
        path = Path(directory).expanduser()
        if not path.exists():
            raise InvalidInput(f"context files directory {path}: no such directory")
        if not path.is_dir():
            raise InvalidInput(f"context files directory {path}: not a directory")
        found.append(path)
    return found


def load_context_files(
    directories: Sequence[Path], max_chars: int = CONTEXT_FILE_MAX_CHARS
) -> list[ContextFile]:
    """The seed's files, in prompt order, each from the first of `directories` that has
    it; missing and blank files skipped."""
    files: list[ContextFile] = []
    for name, heading in CONTEXT_FILES:
        path = next((d / name for d in directories if (d / name).exists()), None)
        if path is None:
            continue
        content, truncated = _read(path, max_chars)
        if content.strip():
            files.append(
                ContextFile(
                    name=name,
                    heading=heading,
                    path=str(path),
                    content=content,
                    truncated=truncated,
                )
            )
    return files


def format_context_files(files: Sequence[ContextFile]) -> str:
    """Seed 004 §13: `# Heading (FILE.md)` then the content, parts joined by `---`."""
    return FILE_SEPARATOR.join(
        f"# {file.heading} ({file.name})\n{file.content.strip()}" for file in files
    )


def _read(path: Path, max_chars: int) -> tuple[str, bool]:
    try:
        with path.open(encoding="utf-8") as handle:
            text = handle.read(max_chars + 1)
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(f"cannot read context file {path}: {error}") from None
    if len(text) <= max_chars:
        return text, False
    marker = f"\n[{path.name} cut at {max_chars} characters]"
    return text[:max_chars] + marker, True
