"""Offline personality synthesis (seed 004 §4): a 3-5 sentence, second-person paragraph
woven from the strongest style observations."""

from __future__ import annotations

from typing import Final

from mnemoledger.commands.llm.render import strongest_observations
from mnemoledger.commands.llm.schemas import StyleObservation, SynthesizeInput, SynthesizeOutput

WOVEN_OBSERVATIONS: Final = 3
"""How many of the strongest observations the paragraph names (one sentence each)."""

_HABITS: Final = {
    "style/prefers-terse-responses": "keep answers short and get straight to the point",
    "style/prefers-detailed-responses": "give thorough, detailed explanations",
    "style/humor-dry": "favour dry, understated wit over overt jokes",
    "style/humor": "bring a light touch of humor where it fits",
    "style/no-humor": "stay matter-of-fact and leave jokes out",
    "style/formal-tone": "keep a formal, professional tone",
    "style/casual-tone": "keep a relaxed, conversational tone",
    "style/no-emojis": "leave emoji out of your replies",
    "style/likes-emojis": "use the occasional emoji",
    "style/uses-emojis": "match the user's playful register, emoji included",
}
"""How the offline extractor's style keys read as habits ("You tend to <habit>")."""


_NO_SIGNAL: Final = "You tend to follow the user's lead on tone, length and format."


def habit(observation: StyleObservation) -> str:
    known = _HABITS.get(observation.key)
    if known is not None:
        return known
    value = observation.value.strip().rstrip(".")
    for subject in ("The user ", "the user ", "User ", "user "):
        value = value.removeprefix(subject)
    if value[1:2].islower():  # "Asks ..." -> "asks ...", but "API ..." stays
        value = value[:1].lower() + value[1:]
    return f"keep in mind that the user {value}"


def synthesize(inputs: SynthesizeInput) -> SynthesizeOutput:
    strongest = strongest_observations(inputs.observations)
    habits = [habit(o) for o in strongest[:WOVEN_OBSERVATIONS]]
    total = sum(o.count for o in strongest)
    sentences = [f"You tend to {habits[0]}." if habits else _NO_SIGNAL]
    if len(habits) > 1:
        sentences.append(f"You also {habits[1]}.")
    if len(habits) > 2:
        sentences.append(f"When it fits the moment, you {habits[2]}.")
    sentences.append(
        "Keep responses consistent with these habits, which come from "
        f"{total} {'observation' if total == 1 else 'observations'} of how this user talks "
        "with you."
    )
    sentences.append("When signals pull in different directions, favour the ones seen most often.")
    return SynthesizeOutput(directive=" ".join(sentences))
