"""Two speech acts the offline extraction reads by their announcing words, as seed 004 §3
describes them (a decision made, a piece of work handed over), and emoji in the user's own
writing, the one style inferred from behaviour."""

from __future__ import annotations

import re
from typing import Final

_I = re.IGNORECASE
DECISION: Final = re.compile(
    r"\b(?:we(?:'ve| have)? decided (?:to |on )?|let's go with |let us go with |we'll use "
    r"|we will use |we're going with |we are going with |we'll go with |we will go with "
    r"|I(?:'ve| have)? decided (?:to |on )?|the decision is (?:to )?)(?P<what>[^.!?;]+)",
    _I,
)
"""A decision announced: "we decided to ...", "let's go with ..."."""
ARTIFACT: Final = re.compile(
    r"\bhere(?:'s| is| are)\s+(?:the |my |our |a |an )?"
    r"(?P<kind>final|draft|updated|revised|latest|new)\s+(?P<what>[^:.!?\n]+)"
    r"(?::\s*(?P<body>.+))?",
    _I | re.DOTALL,
)
"""A piece of work handed over: "here's the final draft: ..."."""
EMOJI: Final = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")
"""An emoji: one in the user's own turns is a style of theirs."""
