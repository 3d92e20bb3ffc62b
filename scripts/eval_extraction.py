"""Precision and recall of the facts `ingest` extracts from labelled conversations.

    .venv/bin/python scripts/eval_extraction.py --data tests/data/extraction_set.jsonl [--json]
    .venv/bin/python scripts/eval_extraction.py --data tests/data/extraction_holdout2.jsonl

`tests/data/extraction_holdout2.jsonl` is a second held-out set (every conversation
`heldout`), written before the rules were widened after the first and measured only.

Each line of the data is one conversation: `{"id", "split", "turns": [{"role", "content"}],
"facts": [{"attribute", "value", "polarity"}]}`. `split` is `dev` (used while building the
rules) or `heldout` (never looked at while building them). Every conversation is ingested
for its own user with the offline provider, in one fresh data directory, exactly as
`mnemoledger ingest` would.

What counts as an extracted fact: every active memory the ingest wrote for that user,
except the personality directive (a synthesis over the style observations, not a fact
the user stated). Its reading:

- attribute: in `tacit/user`, the first segment of its key (`name`, `occupation`,
  `employer`, `location`, `hometown`, `diet`, `allergy`, `language`, `schedule`,
  `deadline`, `tool`); in `tacit/preferences`, `preference`; in `tacit/personality`,
  `style`; in `entity/...`, the first segment of its key (`person`, `pet`, `place`, ...);
  in `daily/...`, `decision`; in `tacit/artifacts`, `artifact`.
- polarity: for a preference, its verb's ("User likes ..." `+`, "User dislikes ...",
  "User does not drink ..." `-`); for the others `-` when its text (key and content) says
  no, not, never, dislikes, hates, avoids, without ...; else `+`.
- value: the words of its key and content.

An extracted memory matches a labelled fact when the attribute is the same, the polarity
is the same, and every word of the labelled value is among the memory's words (case
aside, a final plural `s` and `-ing` aside, a weekday's abbreviation read as the weekday, small
function words ignored, "teaches" read as "teach" and "studies" as "study"). Style values
are compared as families (`STYLE_FAMILIES`: "short", "brief", "concise" and "to the point"
are one family), because the labels use the user's own word for a style; not wanting long
replies ("long -") and wanting short ones ("short +") are one wish, as are "jargon -" and
"plain +" (`OPPOSITES`). Matching
is one to one: a memory matches at most one labelled fact and a fact is matched by at most one
memory, so a copy of a fact counts against precision.

precision = matched memories / extracted memories; recall = matched facts / labelled facts,
summed over the conversations of a split (micro average).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mnemoledger import MnemoLedger
from mnemoledger.commands.models import MemoryOut
from mnemoledger.ledger import Settings


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


NEGATIVE: Final = re.compile(
    r"\b(?:no|not|never|dislikes?|hates?|avoids?|without|doesn't|does not|don't|can't stand"
    r"|isn't|is not)\b",
    re.IGNORECASE,
)
FUNCTION_WORDS: Final = _word_set(
    "a an the of for at in on to and or is are be by with my our your user's user"
)
STYLE_FAMILIES: Final = {
    "terse": _word_set("short brief concise terse succinct point"),
    "detailed": _word_set("detailed thorough in-depth depth examples step"),
    "casual": _word_set("casual informal relaxed"),
    "formal": _word_set("formal professional"),
    "humor": _word_set("humor humour jokes joke fun funny witty"),
    "emoji": _word_set("emoji emojis"),
    "direct": _word_set("straightforward direct blunt sugarcoating"),
    "bullets": _word_set("bullet bullets list lists"),
    "prose": _word_set("prose paragraphs paragraph"),
    "plain": _word_set("plain simple jargon layman"),
}
"""A labelled style value and a style memory match when they share a family."""
OPPOSITES: Final = {
    "terse": _word_set("long lengthy verbose wordy winded waffle rambling essays walls"),
    "plain": _word_set("jargon technical difficult complicated fancy acronyms"),
}
"""Not wanting long replies ("long -") is wanting short ones ("short +"), not wanting jargon
("jargon -") is wanting plain words ("plain +"): one wish, two labels."""
DIRECTIVE_KEY: Final = "directive"
_PREFERENCE_VERB: Final = re.compile(r"User(?:'s)? (\w+)", re.IGNORECASE)
_NEGATIVE_VERBS: Final = _word_set("dislikes hates does no avoids")
"""A preference's polarity is its verb's ("User likes my news without opinions": +)."""
_DAY_NAMES: Final = {
    short: f"{day}day"
    for day, shorts in (
        ("mon", "mon"),
        ("tues", "tue tues"),
        ("wednes", "wed weds"),
        ("thurs", "thu thur thurs"),
        ("fri", "fri"),
        ("satur", "sat"),
        ("sun", "sun"),
    )
    for short in shorts.split()
}
"""A weekday and its abbreviation are one word ("tues", "Tuesday")."""
_WORD: Final = re.compile(r"[a-z0-9]+(?:[:'][a-z0-9]+)*")


@dataclass(frozen=True)
class Labelled:
    attribute: str
    value: str
    polarity: str


@dataclass(frozen=True)
class Extracted:
    attribute: str
    polarity: str
    words: frozenset[str]
    text: str


@dataclass
class Score:
    extracted: int = 0
    matched_memories: int = 0
    labelled: int = 0
    matched_facts: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.matched_memories / self.extracted if self.extracted else 1.0

    @property
    def recall(self) -> float:
        return self.matched_facts / self.labelled if self.labelled else 1.0

    def as_json(self) -> dict[str, Any]:
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "extracted": self.extracted,
            "matched_memories": self.matched_memories,
            "labelled": self.labelled,
            "matched_facts": self.matched_facts,
        }


def words(text: str) -> frozenset[str]:
    """The comparable words of a text: lower case, a final plural `s` and `-ing` dropped."""
    found = set()
    for word in _WORD.findall(text.casefold().replace("-", " ")):
        if word in FUNCTION_WORDS:
            continue
        word = word[:-1] if len(word) > 3 and word.endswith("s") else word
        word = word[:-1] if word.endswith(("che", "she")) else word  # "teaches", "teach"
        word = f"{word[:-2]}y" if len(word) > 4 and word.endswith("ie") else word  # "studies"
        word = _DAY_NAMES.get(word, word)
        if len(word) > 5 and word.endswith("ing"):
            word = word[:-3]
            word = word[:-1] if word[-1] == word[-2] else word
        found.add(word)
    return frozenset(found)


def reading(memory: MemoryOut) -> Extracted | None:
    """How the evaluation reads a memory; None for the personality directive."""
    namespace, key = memory.namespace, memory.key or ""
    segments = key.split("/")
    if namespace == "tacit/personality":
        if key == DIRECTIVE_KEY:
            return None
        attribute = "style"
    elif namespace == "tacit/user" or namespace.startswith("entity/"):
        attribute = segments[0]
    elif namespace == "tacit/preferences":
        attribute = "preference"
    elif namespace.startswith("daily/"):
        attribute = "decision"
    elif namespace == "tacit/artifacts":
        attribute = "artifact"
    else:
        attribute = namespace
    text = f"{key.replace('/', ' ').replace('-', ' ')} {memory.content}"
    stated = _PREFERENCE_VERB.match(memory.content)
    if attribute == "preference" and stated is not None:
        polarity = "-" if stated.group(1).lower() in _NEGATIVE_VERBS else "+"
    else:
        polarity = "-" if NEGATIVE.search(text) else "+"
    return Extracted(attribute, polarity, words(text), memory.content)


def _wants(family: str, polarity: str, said: frozenset[str]) -> bool:
    """Whether a style said with this polarity wants the family ("long -" wants "terse")."""
    if polarity == "+":
        return bool(said & STYLE_FAMILIES[family] - OPPOSITES[family])
    return bool(said & OPPOSITES[family])


def matches(fact: Labelled, memory: Extracted) -> bool:
    wanted = words(fact.value)
    if fact.attribute == memory.attribute == "style":
        for family in OPPOSITES:
            if _wants(family, fact.polarity, wanted):
                return _wants(family, memory.polarity, memory.words)
    if fact.attribute != memory.attribute or fact.polarity != memory.polarity:
        return False
    if fact.attribute == "style":
        families = [f for f in STYLE_FAMILIES.values() if f & wanted]
        if families:
            return any(f & memory.words for f in families)
    return words(fact.value) <= memory.words


def score_conversation(facts: Sequence[Labelled], extracted: Sequence[Extracted]) -> Score:
    """One-to-one matching, labelled facts in order, each taking the first free memory."""
    score = Score(extracted=len(extracted), labelled=len(facts))
    free = list(range(len(extracted)))
    for fact in facts:
        hit = next((i for i in free if matches(fact, extracted[i])), None)
        if hit is None:
            score.misses.append({"missed": fact.__dict__})
            continue
        free.remove(hit)
        score.matched_facts += 1
        score.matched_memories += 1
    for i in free:
        memory = extracted[i]
        score.misses.append(
            {
                "extra": {
                    "attribute": memory.attribute,
                    "polarity": memory.polarity,
                    "content": memory.text,
                }
            }
        )
    return score


def load(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def evaluate(conversations: Iterable[dict[str, Any]], home: Path) -> dict[str, Score]:
    """Scores per split, and over all conversations under "all"."""
    scores: dict[str, Score] = {}
    with MnemoLedger(settings=Settings(home=home, embedder="hashing"), actor="eval") as memory:
        for conversation in conversations:
            user = f"eval-{conversation['id']}"
            memory.ingest(conversation["turns"], user=user)
            extracted = [
                r for m in memory.list(user=user, state="active") if (r := reading(m)) is not None
            ]
            facts = [Labelled(**f) for f in conversation["facts"]]
            result = score_conversation(facts, extracted)
            for split in (conversation.get("split", "dev"), "all"):
                total = scores.setdefault(split, Score())
                total.extracted += result.extracted
                total.matched_memories += result.matched_memories
                total.labelled += result.labelled
                total.matched_facts += result.matched_facts
                total.misses += [{"id": conversation["id"], **m} for m in result.misses]
    return scores


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", required=True, type=Path, help="labelled conversations (JSONL)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--split", help="only the conversations of this split (dev, heldout)")
    parser.add_argument("--misses", action="store_true", help="list missed and extra facts")
    args = parser.parse_args(argv)
    conversations = load(args.data)
    if args.split:
        conversations = [c for c in conversations if c.get("split", "dev") == args.split]
    with tempfile.TemporaryDirectory() as home:
        scores = evaluate(conversations, Path(home))
    if args.json:
        print(json.dumps({split: s.as_json() for split, s in scores.items()}, indent=2))
    else:
        for split, s in scores.items():
            print(
                f"{split:8} precision {s.precision:.3f} ({s.matched_memories}/{s.extracted})"
                f"  recall {s.recall:.3f} ({s.matched_facts}/{s.labelled})"
            )
    if args.misses:
        split = args.split or "all"
        for miss in scores[split].misses if split in scores else []:
            print(json.dumps(miss, ensure_ascii=False), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
