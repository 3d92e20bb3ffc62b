"""The documentation (issue 30): the generated CLI reference covers every click command, and
the README stays a front page (at most 300 lines, no seed names)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click
import markdown

ROOT = Path(__file__).resolve().parent.parent
SEED_NAMES = ("HAEMA", "engram", "Nebo", "Luminary", "Topiary")
# Seed names are allowed on no page of the README. Values users type that contain one
# (`--fusion engram`, MNEMOLEDGER_FORGETTING=engram, ENGRAM_LLM_LEVEL, ENGRAM_BUFFER_CAP)
# are documented in docs/settings.md and docs/retrieval.md, not in the README, so no token
# is allowed here.
ALLOWED_IN_README: tuple[str, ...] = ()


def _every_command() -> list[str]:
    """Every command path (`mnemoledger keys create`), the lazily loaded ones included, as
    the docs build sees them (scripts/mkdocs_hooks.py)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import mkdocs_hooks
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    group = mkdocs_hooks.load_every_command()
    paths: list[str] = []

    def walk(command: click.Command, path: str) -> None:
        paths.append(path)
        if isinstance(command, click.Group):
            context = click.Context(command, info_name=path.rsplit(" ", 1)[-1])
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None, name
                walk(sub, f"{path} {name}")

    walk(group, "mnemoledger")
    return paths


def test_the_cli_reference_page_documents_every_command() -> None:
    commands = _every_command()  # first: the page documents what the group holds then
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    html = markdown.markdown(page, extensions=["attr_list", "mkdocs-click"])
    headings = {
        re.sub(r"<[^>]+>", "", heading).strip()
        for heading in re.findall(r"<h\d[^>]*>(.*?)</h\d>", html, flags=re.S)
    }
    assert len(commands) > 40
    missing = [path for path in commands if path not in headings]
    assert not missing, f"not in docs/reference/cli.md: {missing}"


def test_the_readme_is_a_front_page_without_seed_names() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    text = readme
    for token in ALLOWED_IN_README:
        text = text.replace(token, "")
    named = [name for name in SEED_NAMES if re.search(name, text, flags=re.I)]
    assert not named, f"the README names {named}: say it in plain words (docs/seed-coverage.md)"
    assert not re.search(r"seed \d{3}", text, flags=re.I)


def test_the_readme_keeps_the_quick_start_commands_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert (
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/mnemoledger demo" in readme
    )
    assert (
        'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && .venv/bin/pytest' in readme
    )
