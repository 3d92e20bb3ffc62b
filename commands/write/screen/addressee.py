"""Whether an English text could be speaking to a model at all.

The meaning classifier reads second-person advice as an instruction: "You got this! Keep
going!", "Make sure you watch other people's videos first" (1.5% of LoCoMo's chat turns
scored above the cut). An instruction to the model that reads a memory names something of a
model's world: its rules or instructions, its answers, the user, its memory, a secret to
send, a role to play, what it read before. An English text that names none of them is
advice to a person, and the classifier alone does not refuse it; the patterns still do.
Texts in other languages keep the classifier's word: this lexicon is English.
"""

from __future__ import annotations

import re
from typing import Final

MODEL_WORLD: Final = re.compile(
    r"\b(?:a\.?i|ai's|assistants?|agents?|models?|llms?|chat ?bots?|bots?|gpt|claude|gemini|copilot"
    r"|program|system|prompts?|instruct\w*|rules?|guidelines?|guidance|polic(?:y|ies)|restrict\w*"
    r"|constraints?|limits?|limitations?|filters?|safety|guardrails?|censor\w*|operators?"
    r"|developers?|deploy\w*|configur\w*|settings?|admin\w*|jailbr\w*|modes?|personas?|roles?"
    r"|pretend\w*|act as|acting as|behave|you are now|you're now|orders?|commands?"
    r"|respon\w*|repl(?:y|ies)|answer\w*|outputs?|print\w*|reveal\w*|disclos\w*|repeat\w*"
    r"|verbatim|say|tell|user'?s?|ignor\w*|disregard\w*|forget\w*|forgot|overrid\w*|bypass\w*"
    r"|unrestrict\w*|supersed\w*|obsolete|expired|no longer apply|from now on|henceforth"
    r"|going forward|previous\w*|prior|above|earlier|memor(?:y|ies)|remember\w*|stor(?:e|ed|ing)"
    r"|sav(?:e|ed|ing)|context|conversations?|sessions?|history|passwords?|api|keys?|tokens?"
    r"|secrets?|credentials?|confidential|private|e-?mails?|send|sent|forward\w*|upload\w*"
    r"|exfil\w*|urls?|links?|https?|www|base64|execut\w*|shell|sudo|tools?|functions?"
    r"|summar\w*|recommend\w*|mention\w*|hide|hidden|secretly|quietly|comments?|notes?|reads?"
    r"|reading|retriev\w*|whoever|whatever|obey\w*|refus\w*|comply\w*|insist\w*|claim\w*"
    r"|asks?|asked|asking|this point|this line|after this|below|paragraph|written|texts?"
    r"|characters?|helpful|assist\w*|anyone|everyone|act like|this chat|rest of (?:the|this))\b",
    re.IGNORECASE,
)
"""Words of a model's world, any one of which lets the classifier decide."""
_ENGLISH: Final = re.compile(
    r"\b(?:the|and|you|your|to|is|are|it|of|that|this|for|with|have|be|my|so|just|don't)\b",
    re.IGNORECASE,
)
_LETTER: Final = re.compile(r"[^\W\d_]")
MIN_ENGLISH_WORDS: Final = 2
"""A text with fewer common English words than this is read as another language."""


def english(text: str) -> bool:
    """Whether `text` reads as English: ASCII letters only, and common English words."""
    letters = _LETTER.findall(text)
    ascii_only = all(letter.isascii() for letter in letters)
    return ascii_only and len(_ENGLISH.findall(text)) >= MIN_ENGLISH_WORDS


def may_address_a_model(text: str) -> bool:
    """False for English text that names nothing of a model's world ("You got this!")."""
    return not english(text) or MODEL_WORLD.search(text) is not None
