"""Reading a stage's output out of what a model says (seed 004 §3, "Response Parsing").

Models wrap JSON in code fences or prose even when asked not to: strip the fences, take the
first balanced `{...}` that is valid JSON, validate it with the stage's output model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from mnemoledger.commands.llm.errors import StageOutputInvalid
from mnemoledger.commands.llm.stage import InT, OutT, Stage

_CODE_FENCE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)```", re.DOTALL)


def strip_code_fences(text: str) -> str:
    """Replace each ``` fenced block by its body."""
    return _CODE_FENCE.sub(lambda match: match.group(1), text)


def _balanced_object_at(text: str, start: int) -> str | None:
    """The `{...}` starting at `start`, braces matched outside JSON strings."""
    depth = 0
    in_string = False
    escaped = False
    for position in range(start, len(text)):
        char = text[position]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : position + 1]
    return None


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first balanced `{...}` in `text` that parses as a JSON object, if any."""
    text = strip_code_fences(text)
    start = text.find("{")
    while start != -1:
        candidate = _balanced_object_at(text, start)
        if candidate is not None:
            try:
                value = json.loads(candidate)
            except json.JSONDecodeError:
                pass
            else:
                if isinstance(value, dict):
                    return value
        start = text.find("{", start + 1)
    return None


def parse_stage_output(stage: Stage[Any, OutT], text: str) -> OutT:
    """The stage's output model from a model's raw answer, or `StageOutputInvalid`.

    An answer with no JSON object at all counts as `{}`: valid for stages whose output has
    defaults everywhere (extraction: "nothing to remember" is a normal answer), invalid
    for the others.
    """
    found = first_json_object(text)
    try:
        return stage.output_model.model_validate({} if found is None else found)
    except ValidationError as error:
        reason = (
            "no JSON object in the answer"
            if found is None
            else "; ".join(
                f"{'.'.join(str(part) for part in e['loc']) or '(root)'}: {e['msg']}"
                for e in error.errors()
            )
        )
        raise StageOutputInvalid(stage.name, reason, text) from error


def parse_answer(stage: Stage[InT, OutT], inputs: InT, text: str) -> OutT:
    """`parse_stage_output`, then the stage's own check of the answer against the inputs
    (`Stage.check`): what it finds makes the answer invalid too."""
    output = parse_stage_output(stage, text)
    problems = stage.problems(inputs, output)
    if problems:
        raise StageOutputInvalid(stage.name, "; ".join(problems), text)
    return output
