"""The use cases and the surfaces that drive them, grouped by capability:

- `write`: what goes in (add, ingest, notes, procedures; the injection screen, consent,
  categories and writing constraints on every path);
- `recall`: what comes back (search, query, resume, context, relations);
- `lifecycle`: what the memory does over time (consolidation, the worker, core.md, topics);
- `audit`: what happened (history, time travel, replay, diff, export, report, integrity);
- `service`: who reaches it (HTTP, MCP, mem0's API, keys, the read-model follower).

Each capability keeps its Python API (`*_api.py`) beside its command line (`*_cli.py`);
`facade.MnemoLedger` composes them and `cli` gathers the commands.
"""
