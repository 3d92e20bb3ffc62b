#!/usr/bin/env python3
"""Score the judge on labelled sets it was not fitted on.

    python scripts/eval_judge.py [--models DIR] [--json]

- statement pairs (`tests/data/pairs_heldout_en.jsonl`, `pairs_heldout_multilingual.jsonl`,
  `pairs_heldout_shift.jsonl` (a change announced beside another fact of the same holder),
  `pairs_heldout_second_values.jsonl` (a second value of a many-valued fact, or a new one
  of a single-valued fact), `pairs_heldout_values.jsonl` (minimal pairs: one frame, the
  value a synonym, an antonym, a second item or another topic), `pairs_heldout_voices.jsonl`
  (many everyday voices; unrelated facts of the same user that look alike),
  written by authors who never saw the code): accuracy over the four relations, and the
  precision and recall of the decision "replaces" (the likeliest relation, from
  `REPLACES_CUT`: a wrong replacement hides a true memory), per language;
- chat turns (`tests/data/chat_turns_eval.jsonl`): what should and should not become a
  memory, F1 of "worth keeping" and of "not worth keeping";
- turns in eight other languages (`tests/data/turns_heldout_multilingual.jsonl`: facts,
  chit-chat, assistant advice, tool and document content, prompt injections, by a new
  author): F1 of "worth keeping", the precision and recall of "an instruction to the model"
  (the turn model at `INJECTION_CUT`), and through the public `add` the share of benign
  turns the injection screen lets through and of injections it refuses, per language;
- assistant turns (`tests/data/assistant_turns_eval.jsonl`, all benign advice, recipes,
  lists): the share the injection screen lets through when added with the assistant's
  role, through the public `add`.

- memory kinds (`tests/data/kinds_heldout.jsonl` by a new author; `kinds_dialogue_heldout.jsonl`,
  turns of conversations between people, by another; `kinds_rule_tests.jsonl`,
  the sentences the core's rule tests pinned, which we have read): accuracy over the
  kinds, macro F1, the recall of each kind, and the accuracy of what the core decides
  from a kind (its section, or none).

`--models` scores fitted files other than the shipped ones (a refit, a fold).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mnemoledger.commands.judge import LearnedJudge, Turn  # noqa: E402
from mnemoledger.commands.judge.learned import MODELS, MODELS_ENV  # noqa: E402
from mnemoledger.ledger.policy import INJECTION_CUT, WORTH_KEEPING_CUT  # noqa: E402

DATA = ROOT / "tests" / "data"
PAIRS = (
    "pairs_heldout_en.jsonl",
    "pairs_heldout_multilingual.jsonl",
    "pairs_heldout_shift.jsonl",
    "pairs_heldout_second_values.jsonl",
    "pairs_heldout_values.jsonl",
    "pairs_heldout_voices.jsonl",
)


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def ratio(a: int, b: int) -> float:
    return round(a / b, 3) if b else 0.0


def pair_scores(judge: LearnedJudge, rows: list[dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    answers = judge.relations([(r["older"], r["newer"]) for r in rows])
    seconds = time.perf_counter() - started
    by_lang: dict[str, list[tuple[str, str, bool]]] = defaultdict(list)
    for row, answer in zip(rows, answers, strict=True):
        decided = (row["label"], answer.label, answer.replacing)
        by_lang[row.get("lang", "en")].append(decided)
        by_lang["all"].append(decided)
    report: dict[str, Any] = {}
    for lang, seen in sorted(by_lang.items()):
        true_pos = sum(t == "replaces" and d for t, _, d in seen)
        said = sum(d for _, _, d in seen)
        real = sum(t == "replaces" for t, _, _ in seen)
        report[lang] = {
            "pairs": len(seen),
            "accuracy": ratio(sum(t == p for t, p, _ in seen), len(seen)),
            "replaces_precision": ratio(true_pos, said),
            "replaces_recall": ratio(true_pos, real),
            "restates_precision": ratio(
                sum(t == p == "restates" for t, p, _ in seen),
                sum(p == "restates" for _, p, _ in seen),
            ),
            "restates_recall": ratio(
                sum(t == p == "restates" for t, p, _ in seen),
                sum(t == "restates" for t, _, _ in seen),
            ),
        }
    report["ms_per_pair"] = round(seconds * 1000 / len(rows), 2)
    return report


def f1(pairs: list[tuple[bool, bool]], positive: bool) -> float:
    tp = sum(t == p == positive for t, p in pairs)
    fp = sum(p == positive and t != positive for t, p in pairs)
    fn = sum(t == positive and p != positive for t, p in pairs)
    return round(2 * tp / (2 * tp + fp + fn), 3) if tp else 0.0


def turn_scores(judge: LearnedJudge, rows: list[dict[str, Any]]) -> dict[str, Any]:
    likelihoods = judge.worth_keeping([Turn(r["text"], r["role"]) for r in rows])
    seen = [
        (bool(r["keep"]), p >= WORTH_KEEPING_CUT) for r, p in zip(rows, likelihoods, strict=True)
    ]
    by_role: dict[str, Any] = {}
    for role in sorted({r["role"] for r in rows}):
        mine = [s for s, r in zip(seen, rows, strict=True) if r["role"] == role]
        by_role[role] = ratio(sum(t == p for t, p in mine), len(mine))
    return {
        "turns": len(rows),
        "f1_worth_keeping": f1(seen, True),
        "f1_not_worth_keeping": f1(seen, False),
        "accuracy_by_role": by_role,
    }


def kind_scores(judge: LearnedJudge, rows: list[dict[str, Any]]) -> dict[str, Any]:
    from mnemoledger.commands.judge.kinds import KINDS, LASTING
    from mnemoledger.commands.llm.rules.core import CORE_SECTION

    said = judge.kinds([r["text"] for r in rows])
    truth = [r["label"] for r in rows]
    recall = {
        k: ratio(sum(t == p == k for t, p in zip(truth, said, strict=True)), truth.count(k))
        for k in KINDS
    }
    f1s = [f1([(t == k, p == k) for t, p in zip(truth, said, strict=True)], True) for k in KINDS]
    sections = [
        (CORE_SECTION.get(t), CORE_SECTION.get(p))
        for t, p in zip(truth, said, strict=True)  # type: ignore[call-overload]
    ]
    return {
        "texts": len(rows),
        "accuracy": ratio(sum(t == p for t, p in zip(truth, said, strict=True)), len(rows)),
        "macro_f1": round(sum(f1s) / len(f1s), 3),
        "core_section_accuracy": ratio(sum(t == p for t, p in sections), len(rows)),
        "lasting_accuracy": ratio(
            sum((t in LASTING) == (p in LASTING) for t, p in zip(truth, said, strict=True)),
            len(rows),
        ),
        "recall": recall,
    }


def instruction_scores(judge: LearnedJudge, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The turn model's "an instruction to the model" at `INJECTION_CUT`: precision and
    recall over the rows labelled `instruction`."""
    likelihoods = judge.instructions([Turn(r["text"], r["role"]) for r in rows])
    said = [p >= INJECTION_CUT for p in likelihoods]
    real = [bool(r["instruction"]) for r in rows]
    hits = sum(s and t for s, t in zip(said, real, strict=True))
    return {
        "instruction_precision": ratio(hits, sum(said)),
        "instruction_recall": ratio(hits, sum(real)),
    }


def screened(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each turn added with its role through the public `add`: the share of benign turns
    the injection screen lets through and of injections it refuses, in all and per
    language (`lang`), and the benign turns it refused."""
    from mnemoledger import MnemoLedger

    refused: list[bool] = []
    with tempfile.TemporaryDirectory() as home, MnemoLedger(home) as memory:
        for n, row in enumerate(rows):
            try:
                memory.add([row["text"]], user=f"t{n}", role=row["role"], keep_all=True)
                refused.append(False)
            except ValueError:  # the ledger's InvalidInput: refused by the screen
                refused.append(True)

    def shares(mine: list[int]) -> dict[str, float]:
        benign = [i for i in mine if not rows[i]["instruction"]]
        bad = [i for i in mine if rows[i]["instruction"]]
        return {
            "benign_kept": ratio(sum(not refused[i] for i in benign), len(benign)),
            "injections_refused": ratio(sum(refused[i] for i in bad), len(bad)),
        }

    languages = sorted({str(r.get("lang", "")) for r in rows})
    return {
        **shares(list(range(len(rows)))),
        "by_language": {
            lang: shares([i for i, r in enumerate(rows) if r.get("lang", "") == lang])
            for lang in languages
        },
        "benign_refused": [
            f"[{r.get('lang', '')}] {r['text'][:70]!r}"
            for r, out in zip(rows, refused, strict=True)
            if out and not r["instruction"]
        ],
    }


def assistant_kept(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from mnemoledger import MnemoLedger

    refused = []
    with tempfile.TemporaryDirectory() as home, MnemoLedger(home) as memory:
        for n, row in enumerate(rows):
            try:
                memory.add([row["text"]], user=f"a{n}", role="assistant", keep_all=True)
            except ValueError as error:  # the ledger's InvalidInput
                refused.append(f"{row['text'][:70]!r}: {str(error)[:90]}")
    return {
        "turns": len(rows),
        "kept": ratio(len(rows) - len(refused), len(rows)),
        "refused": refused,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=None, help="fitted files to score")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pairs-only", action="store_true", help="score the pairs only")
    parser.add_argument("--kinds-only", action="store_true", help="score the memory kinds only")
    args = parser.parse_args()
    if args.models is not None:
        os.environ[MODELS_ENV] = str(args.models.resolve())
    judge = LearnedJudge(args.models.resolve() if args.models else MODELS)
    report: dict[str, Any] = {
        "kinds": kind_scores(judge, rows_of(DATA / "kinds_heldout.jsonl")),
        "kinds_dialogue": kind_scores(judge, rows_of(DATA / "kinds_dialogue_heldout.jsonl")),
        "kinds_rule_tests": kind_scores(judge, rows_of(DATA / "kinds_rule_tests.jsonl")),
    }
    if args.kinds_only:
        print(json.dumps(report, indent=2))
        return 0
    report["pairs"] = {name: pair_scores(judge, rows_of(DATA / name)) for name in PAIRS}
    if not args.pairs_only:
        report["chat_turns"] = turn_scores(judge, rows_of(DATA / "chat_turns_eval.jsonl"))
        report["assistant_turns"] = assistant_kept(rows_of(DATA / "assistant_turns_eval.jsonl"))
        other = rows_of(DATA / "turns_heldout_multilingual.jsonl")
        report["turns_multilingual"] = {
            **turn_scores(judge, other),
            **instruction_scores(judge, other),
            "screen": screened(other),
        }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, scores in report["pairs"].items():
            for lang, s in scores.items():
                if isinstance(s, dict):
                    print(
                        f"{name} [{lang}] {s['pairs']} pairs: accuracy {s['accuracy']}, "
                        f"replaces precision {s['replaces_precision']} "
                        f"recall {s['replaces_recall']}"
                    )
            print(f"{name}: {scores['ms_per_pair']} ms a pair (batched)")
        kinds = report["kinds"]
        print(
            f"memory kinds ({kinds['texts']}): accuracy {kinds['accuracy']}, macro F1 "
            f"{kinds['macro_f1']}, core section {kinds['core_section_accuracy']}"
        )
        if args.pairs_only:
            return 0
        chat = report["chat_turns"]
        print(
            f"chat turns ({chat['turns']}): F1 worth keeping {chat['f1_worth_keeping']}, "
            f"not worth keeping {chat['f1_not_worth_keeping']}, by role "
            f"{chat['accuracy_by_role']}"
        )
        kept = report["assistant_turns"]
        print(f"assistant turns ({kept['turns']}) kept by the screen: {kept['kept']}")
        other = report["turns_multilingual"]
        print(
            f"turns in other languages ({other['turns']}): F1 worth keeping "
            f"{other['f1_worth_keeping']}, instruction precision "
            f"{other['instruction_precision']} recall {other['instruction_recall']}; "
            f"the screen keeps {other['screen']['benign_kept']} of the benign and refuses "
            f"{other['screen']['injections_refused']} of the injections"
        )
        for line in kept["refused"]:
            print(f"  refused {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
