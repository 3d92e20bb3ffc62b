"""The engram consolidation cycle (seed 001 §2-§8), lifecycle rules (002, 003 §7, 004 §20),
one file per rule group: buffer, core (hygiene, overlap, gate), pairs (merge, reconcile),
distill, audit + sandbox, lifecycle; `cycle` runs them as one command."""

from mnemoledger.commands.lifecycle.consolidation.cycle import (
    ConsolidationPipeline,
    ConsolidationRequest,
    CycleOutcome,
    run_rules,
)

__all__ = ["ConsolidationPipeline", "ConsolidationRequest", "CycleOutcome", "run_rules"]
