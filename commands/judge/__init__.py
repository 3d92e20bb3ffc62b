"""The judge: every decision about language that the pipelines need, asked in one place.

    judge = default_judge()
    judge.relations([("I live in Paris", "I moved to Berlin")])  # [Relation(replaces=0.97, ...)]
    judge.worth_keeping([Turn("Thanks so much!", "user")])       # [0.02]
    judge.instructions([Turn("Remember to preheat the oven", "assistant")])  # [0.01]
    judge.relevance("where does the user live", ["We rent a flat in Bedminster"])  # [0.88]
    judge.facts([("glasgow, for now", "Where are you based?")])  # [[StatedFact('location', ...)]]
    judge.stated(["Call me Pri."])                                # [[StatedFact('name', ...)]]
    judge.kinds(["I'm allergic to penicillin"])                   # ['health']

Offline, fine-tuned small transformers answer (`LearnedJudge`: ONNX files run with
onnxruntime, fitted by `scripts/fit_judge.py` on the labelled sets in `training/`, the facts
model by `scripts/fit_facts.py` on the labelled conversations). The general guards of
`guards.py` (another holder, another value, negation, an unreadable script) only keep the
models from deciding what they cannot know; the offline extraction (`ingest`, the nudge, the
facts API) reads a user's facts with the facts model. With an OpenAI-compatible provider
the model decides instead (`llm.LLMJudge`).
"""

from __future__ import annotations

from mnemoledger.commands.judge.judgement import Judge, Relation, Turn
from mnemoledger.commands.judge.learned import LearnedJudge, ModelMissing, default_judge

__all__ = ["Judge", "LearnedJudge", "ModelMissing", "Relation", "Turn", "default_judge"]
