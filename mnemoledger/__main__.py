"""`python -m mnemoledger` runs the CLI (the same as the `mnemoledger` script)."""

from mnemoledger.commands.cli import main

main()
