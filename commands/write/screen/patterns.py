"""What an instruction to the reading model looks like, as the seed lists it (seed 004 §15),
and the signs that a quoted phrase is being talked about rather than said.

The patterns are matched on every normalised view of a text
(`commands.write.screen.normalize.views`); everything else an instruction may say is read
for its meaning by the judge (`commands.judge`), not by listed phrasings.
"""

from __future__ import annotations

import re
from typing import Final

FLAGS: Final = re.IGNORECASE | re.MULTILINE


def _c(pattern: str, flags: int = FLAGS) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# --- the seed's 14 (seed 004 §15), the floor -------------------------------------------
# The seed's 14th, `system:`, is left to the judge, which reads a forged role marker for what
# it is and "System: Ubuntu 22.04, 32 GB RAM" as a fact.
SEED: Final = [
    _c(r"ignore\s+(all\s+)?previous\s+instructions"),
    _c(r"ignore\s+(all\s+)?above"),
    _c(r"disregard\s+(all\s+)?previous"),
    _c(r"you\s+are\s+now\s+"),
    _c(r"new\s+instructions?\s*:"),
    _c(r"<\s*system\s*>"),
    _c(r"<\s*/?\s*system-?(prompt|message|instruction)\s*>"),
    _c(r"IMPORTANT\s*:\s*you\s+must"),
    _c(r"override\s+(all\s+)?previous"),
    _c(r"forget\s+(all\s+)?previous"),
    _c(r"act\s+as\s+(if|though)\s+you"),
    _c(r"pretend\s+you\s+are"),
    _c(r"from\s+now\s+on\s*,?\s*you"),
]

# Words that show a quoted phrase is being talked about, not said: "someone hid 'ignore
# previous instructions' in their resume", "the classic jailbreak phrase 'you are DAN'".
MENTION_CUE: Final = re.compile(
    r"\b(?:phrase|string|words?|sentence|line|text|example|quote[sd]?|said|says|saying|"
    r"wrote|writes|written|typed|read|reads|heard|saw|seen|tricked|trick|hid|hiding|hidden|"
    r"called|known\s+as|named|titled|like|such\s+as|attacks?|injections?|jailbreaks?|"
    r"exploits?|meme|joke|slide|talk|article|paper|blog|post|tweet|thread|headline|"
    r"classic|famous|infamous|payload|filter|regex|blocklist|detect|detects|flag|flags|"
    r"flagged|matches|catch|catches|test|tests|demo)\b",
    re.IGNORECASE,
)
QUOTED: Final = re.compile(
    r"\"[^\"\n]{3,300}\"|\u201c[^\u201d\n]{3,300}\u201d|\u201e[^\u201c\u201d\n]{3,300}"
    r"[\u201c\u201d]|\u2018[^\u2019\n]{3,300}\u2019|\u00ab[^\u00bb\n]{3,300}\u00bb|"
    r"`[^`\n]{3,300}`|(?<![\w])'[^'\n]{3,300}'(?![\w])"
)
