"""What the judge is asked and what it answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from mnemoledger.commands.judge.facts import StatedFact
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import REPLACES_CUT

RELATIONS: Final = ("replaces", "restates", "adds", "unrelated")
"""How a newer statement relates to an older one, in the order of the model's outputs."""

Role = Literal["user", "assistant", "tool", "document"]
ROLES: Final[tuple[Role, ...]] = ("user", "assistant", "tool", "document")
"""Who wrote a text: the person, the assistant's reply, a tool's output (a fetched page,
an API answer), an imported document."""


def role_of(value: object) -> Role:
    """`value` as a role, or `InvalidInput` naming the roles there are."""
    for role in ROLES:
        if value == role:
            return role
    raise InvalidInput(f"role must be one of {', '.join(ROLES)}, not {value!r}")


@dataclass(frozen=True)
class Relation:
    """The likelihoods that a newer statement replaces, restates, adds to, or is unrelated
    to an older one (they sum to 1)."""

    replaces: float
    """The newer gives a new value of the same fact of the same holder: the older is no
    longer true."""
    restates: float
    """The same fact with the same value, in other words."""
    adds: float
    """About the same thing or holder, but both are true at once."""
    unrelated: float
    """About something else."""
    replaces_cut: float = REPLACES_CUT
    """The likelihood from which `replaces` decides: the answering model's own calibration
    (a fitted model's manifest names it), `REPLACES_CUT` when it names none."""

    @property
    def label(self) -> str:
        """The likeliest relation."""
        scores = (self.replaces, self.restates, self.adds, self.unrelated)
        return RELATIONS[max(range(len(scores)), key=scores.__getitem__)]

    @property
    def replacing(self) -> bool:
        """Whether the newer statement replaces the older: "replaces" is the likeliest
        relation, from `replaces_cut` (a wrong replacement hides a true memory)."""
        return self.label == "replaces" and self.replaces >= self.replaces_cut


@dataclass(frozen=True)
class Turn:
    """A piece of text and who wrote it."""

    text: str
    role: Role = "user"


class Judge(Protocol):
    """The decisions about language the pipelines ask for. Each call takes all the pairs or
    texts of one add at once (one model call with an LLM provider)."""

    def relations(self, pairs: Sequence[tuple[str, str]]) -> list[Relation]:
        """For each (older, newer) pair, how the newer relates to the older."""
        ...

    def worth_keeping(self, turns: Sequence[Turn]) -> list[float]:
        """For each turn, the likelihood it holds something worth remembering long-term
        (not a greeting, thanks, acknowledgement, question or generic advice)."""
        ...

    def instructions(self, turns: Sequence[Turn]) -> list[float]:
        """For each turn, the likelihood it tries to instruct the model that will read it
        (a prompt injection); an assistant's advice to the user is not one."""
        ...

    def facts(self, turns: Sequence[tuple[str, str]]) -> list[list[StatedFact]]:
        """For each user turn of one conversation, in order (its text, and the assistant's
        turn before it or ""), the facts it states about the user, in the order said."""
        ...

    def stated(self, texts: Sequence[str]) -> list[list[StatedFact]]:
        """For each text, read on its own (no turn before it), the facts it states about
        the user, in the order said."""
        ...
