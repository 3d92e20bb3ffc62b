"""What the memory does over time: consolidation cycles, the worker, core.md and topics."""
