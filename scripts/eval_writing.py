"""Writing constraints on a realistic run (seed 003 §9): the share of the texts the LLM stages
wrote that passed the format checks on first pass, and what was done with the rest.

One LoCoMo conversation goes through the product twice, as a deployment would see it:
every turn is an `add` (episodic, with a consolidation cycle after each session, as the
worker runs), and the whole conversation is `ingest`ed for the first speaker (the other
speaker as the assistant), so extraction, reconstruction, merges, distillations and
insights all write. The figure is read back from the log (`LLMCallRecorded`):

    python scripts/eval_writing.py --data ../shared/data/locomo/dev.json --conversation 0
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from mnemoledger import MnemoLedger
from mnemoledger.commands.write.writing_acceptance import acceptance
from mnemoledger.ledger import Settings


def sessions(sample: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    talk = sample["conversation"]
    keys = sorted(
        (int(key.split("_")[1]), key) for key in talk if re.fullmatch(r"session_\d+", key)
    )
    return [(talk.get(f"{key}_date_time", ""), talk[key]) for _, key in keys]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (e.g. dev.json)")
    parser.add_argument("--conversation", type=int, default=0, help="which one (index)")
    parser.add_argument("--embedder", default=None, help="embedder (default: the product's)")
    parser.add_argument("--home", type=Path, help="keep the ledger here (default: temp dir)")
    args = parser.parse_args(argv)
    sample = json.loads(args.data.read_text())[args.conversation]
    speaker = sample["conversation"]["speaker_a"]
    user = sample["sample_id"]
    home = args.home or Path(tempfile.mkdtemp(prefix="mnemoledger-writing-"))
    settings = Settings(home=home, **({"embedder": args.embedder} if args.embedder else {}))
    started = time.perf_counter()
    outcomes: Counter[str] = Counter()
    with MnemoLedger(settings=settings, actor="eval") as memory:
        turns: list[dict[str, str]] = []
        for date, group in sessions(sample):
            for turn in group:
                text = f"[{date}] {turn['speaker']}: {turn['text']}"
                memory.add([text], user=user, kind="episodic", evidence=[turn["dia_id"]])
                role = "user" if turn["speaker"] == speaker else "assistant"
                turns.append({"role": role, "content": turn["text"]})
            cycle = memory.consolidate(user=user, daily=None)
            for operation in cycle.operations:
                if "writing" in operation:
                    outcomes[f"{operation['rule']}: {operation['writing']['action']}"] += 1
        memory.ingest(turns, user=f"{user}-ingest")
        events = memory.ledger.read(0, 10**9)
        for record in events:
            outcome = record.data.get("outcome") if record.type == "CommandCompleted" else None
            for written in (outcome or {}).get("writing", []) if isinstance(outcome, dict) else []:
                outcomes[f"{written['stage']}: {written['action']}"] += 1
        figure = acceptance(events)
        stats = memory.stats()
    report = {
        "conversation": user,
        "turns": len(turns),
        "embedder": stats.embedder if hasattr(stats, "embedder") else None,
        "seconds": round(time.perf_counter() - started, 1),
        "acceptance": figure.model_dump(),
        "per_stage": {s.stage: round(s.rate, 4) for s in figure.stages},
        "done_with_the_rest": dict(outcomes),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
