"""mkdocs hooks (mkdocs.yml `hooks:`): before the pages are rendered, every command the CLI
loads lazily (`LAZY_COMMANDS` in commands/cli.py) is loaded into the root group, so that
mkdocs-click documents all of them, in name order, as `mnemoledger --help` lists them."""

from __future__ import annotations

from typing import Any

import click


def load_every_command() -> click.Group:
    """The root click group with every command registered, sorted by name."""
    from mnemoledger.commands.cli import cli

    context = click.Context(cli, info_name="mnemoledger")
    names = cli.list_commands(context)
    for name in names:
        cli.get_command(context, name)
    cli.commands = {name: cli.commands[name] for name in sorted(cli.commands)}
    return cli


def on_config(config: Any, **kwargs: Any) -> Any:
    load_every_command()
    return config
