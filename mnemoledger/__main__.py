"""`python -m mnemoledger` runs the CLI (the same as the `mnemoledger` script)."""

from mnemoledger.commands.cli import main

if __name__ == "__main__":  # importing the module (as the API docs' inspection does) runs nothing
    main()
