"""The read models: layers, vectors, core.md, graph, history and the rest, rebuilt from the log.

They know the ledger only; nothing here imports `commands`.
"""
