"""`python -m commands` runs the CLI (the same as the `mnemoledger` script)."""

from commands.cli import main

main()
