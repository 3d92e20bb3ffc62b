"""Search with the relevance model (setting `search_relevance=learned`): what it says answers
ranks first, a newer value of an answer goes before the older one; a query is read only up
to its bound; hits say where each memory came from. The model and the judge are passed to
the search as collaborators where a test needs a known verdict."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from mnemoledger import MnemoLedger
from mnemoledger.commands.judge import default_judge
from mnemoledger.commands.judge.text import clauses, remaining
from mnemoledger.commands.recall.search import (
    QUERY_MAX_CHARS,
    QUERY_MAX_WORDS,
    bounded_query,
    hybrid_search,
)
from mnemoledger.ledger import Settings
from mnemoledger.projections.embeddings.embedder import Embedder


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MnemoLedger]:
    settings = Settings(home=tmp_path / "home", search_relevance="learned")
    with MnemoLedger(settings=settings, actor="tester") as m:
        yield m


class _Verdicts:
    """A relevance model with known verdicts, blended with the retrievers' relevance as the
    shipped model's fitted blend does."""

    def __init__(self, verdicts: Callable[[str, Sequence[str]], list[float]]) -> None:
        self.verdicts = verdicts

    def relevance(self, query: str, texts: Sequence[str]) -> list[float]:
        return self.verdicts(query, texts)

    def relevance_blend(self, answer: float, fused: float) -> float:
        return default_judge().relevance_blend(answer, fused)


def _hits(memory: MnemoLedger, said: Sequence[str], question: str, **hooks: Any) -> list[str]:
    for text in said:
        memory.add([text], user="alice")
    memory.refresh()
    return [
        hit.content
        for hit in hybrid_search(
            memory.layers, memory.vectors, memory.embedder, question, "alice", 3, **hooks
        )
    ]


def test_what_the_relevance_model_says_answers_ranks_first(memory: MnemoLedger) -> None:
    said = [
        "My boss Helen wants status updates by email",
        "My neighbour Phil has a spare key to my flat",
        "I keep my bike in the hallway",
    ]
    question = "if the user gets locked out, who can let them in"

    def phil_answers(query: str, texts: Sequence[str]) -> list[float]:
        assert query == question
        return [0.95 if "Phil" in text else 0.05 for text in texts]

    def helen_answers(query: str, texts: Sequence[str]) -> list[float]:
        return [0.95 if "Helen" in text else 0.05 for text in texts]

    assert "Phil" in _hits(memory, said, question, relevance=_Verdicts(phil_answers))[0]
    assert "Helen" in _hits(memory, [], question, relevance=_Verdicts(helen_answers))[0]


def test_a_newer_value_of_an_answer_goes_before_the_older(memory: MnemoLedger) -> None:
    # both stay active when the add does not supersede (here: the move is added as what
    # happened, which replaces nothing, whatever the relation model reads): the newer first
    memory.add(["I live in Paris and work as a nurse"], user="alice")
    memory.add(["I moved to Berlin"], user="alice", kind="episodic")
    question = "where does alice live"
    both_answer = lambda query, texts: [0.9 for _ in texts]  # noqa: E731
    asked: list[tuple[str, str]] = []

    def replacing(pairs: Sequence[tuple[str, str]]) -> list[float]:
        asked.extend(pairs)
        return [0.9 if "Berlin" in newer and "Paris" in older else 0.0 for older, newer in pairs]

    ranked = _hits(memory, [], question, relevance=_Verdicts(both_answer), replacing=replacing)
    assert len(ranked) == 2
    assert "Berlin" in ranked[0]
    assert asked  # the older was ranked first: the judge was asked about the pair
    never = lambda pairs: [0.0 for _ in pairs]  # noqa: E731
    kept = _hits(memory, [], question, relevance=_Verdicts(both_answer), replacing=never)
    assert kept == sorted(kept, key=lambda text: "Berlin" in text)  # the fused order stands


def test_only_answers_are_compared_for_a_newer_value(memory: MnemoLedger) -> None:
    said = ["I live in Paris", "I moved my dentist appointment to Friday"]
    asked: list[tuple[str, str]] = []

    def replacing(pairs: Sequence[tuple[str, str]]) -> list[float]:
        asked.extend(pairs)
        return [1.0 for _ in pairs]

    def paris_answers(query: str, texts: Sequence[str]) -> list[float]:
        return [0.9 if "Paris" in text else 0.1 for text in texts]

    ranked = _hits(
        memory,
        said,
        "where does alice live",
        relevance=_Verdicts(paris_answers),
        replacing=replacing,
    )
    assert "Paris" in ranked[0] and asked == []


def test_hits_say_how_sure_the_model_is_and_where_each_memory_came_from(
    memory: MnemoLedger,
) -> None:
    memory.add(["My neighbour Phil has a spare key"], user="alice", thread="t1", evidence=["m7"])
    (hit,) = memory.search("who has a key to the user's home", user="alice", k=1)
    assert hit.answer is not None and 0.0 <= hit.answer <= 1.0
    assert (hit.evidence, hit.thread_id) == (["m7"], "t1")
    assert hit.created_at is not None
    assert "answer" not in hit.found().model_dump()  # what an agent reads (MCP)
    assert hit.found().evidence == ["m7"]


def test_a_read_memory_is_ranked_by_the_fitted_blend_of_the_model_and_the_retrievers(
    memory: MnemoLedger,
) -> None:
    memory.add(["My neighbour Phil has a spare key", "I keep my bike in the hall"], user="alice")
    hits = memory.search("who has a key to the user's home", user="alice", k=2)
    judge = default_judge()
    for hit in hits:
        assert hit.answer is not None and hit.fused is not None and hit.relevance is not None
        assert hit.relevance == pytest.approx(
            judge.relevance_blend(hit.answer, hit.fused), abs=1e-5
        )
    # more likely to answer, or ranked higher by the retrievers: never ranked lower
    assert judge.relevance_blend(0.9, 0.5) > judge.relevance_blend(0.1, 0.5)
    assert judge.relevance_blend(0.5, 0.9) > judge.relevance_blend(0.5, 0.1)


def test_with_the_relevance_model_off_the_retrievers_order_stands(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", search_relevance="off")
    with MnemoLedger(settings=settings, actor="tester") as memory:
        memory.add(["My neighbour Phil has a spare key"], user="alice")
        (hit,) = memory.search("who has a key", user="alice", k=1)
        assert hit.answer is None


def test_the_relevance_model_gives_each_memory_a_likelihood_of_answering() -> None:
    judge = default_judge()
    likelihoods = judge.relevance(
        "what does the user do for a living",
        ["I fix boilers for British Gas", "I'm living in a flat with two cats"],
    )
    assert len(likelihoods) == 2 and all(0.0 <= p <= 1.0 for p in likelihoods)
    assert judge.relevance("anything", []) == []


class _Counting:
    """The default embedder, counting the characters of the queries it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self.queried: list[str] = []

    def query(self, text: str) -> npt.NDArray[np.float32]:
        self.queried.append(text)
        return self._inner.query(text)

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._inner.passages(texts)


def test_a_huge_query_is_read_only_up_to_its_bound(memory: MnemoLedger) -> None:
    memory.add(["I keep bees on the allotment"], user="alice")
    memory.refresh()
    embedder = _Counting(memory.embedder)
    read: list[str] = []

    def relevance(query: str, texts: Sequence[str]) -> list[float]:
        read.append(query)
        return default_judge().relevance(query, texts)

    huge = "does the user keep any animals " + "honey " * 1000
    short = "does the user keep any animals"
    for query in (huge, short):
        hits = hybrid_search(
            memory.layers,
            memory.vectors,
            embedder,
            query,
            "alice",
            3,
            relevance=_Verdicts(relevance),
        )
        assert hits and "bees" in hits[0].content
    assert len(huge) > 5000
    assert all(len(text) <= QUERY_MAX_CHARS for text in embedder.queried + read)
    assert all(len(text.split()) <= QUERY_MAX_WORDS for text in embedder.queried + read)


def test_bounded_query_keeps_a_question_whole_and_cuts_a_flood() -> None:
    question = "what is the name of the user's youngest daughter's new school?"
    assert bounded_query(question) == question
    flood = "x" * 9000
    assert len(bounded_query(flood)) == QUERY_MAX_CHARS
    words = " ".join(f"w{i}" for i in range(500))
    assert bounded_query(words).split() == [f"w{i}" for i in range(QUERY_MAX_WORDS)]


def test_what_a_statement_still_says_without_a_replaced_clause() -> None:
    said = "I live in Paris and work as a nurse"
    assert clauses(said) == ["I live in Paris", "work as a nurse"]
    assert remaining(said, {0}) == "I work as a nurse"  # the shared subject said again
    assert remaining(said, {1}) == "I live in Paris"
    assert remaining("Maya lives in Oslo but works in Bergen", {0}) == "Maya works in Bergen"
    assert clauses("the carer comes Tuesdays and Fridays, usually around ten") == []
    # items of a list, and a subject of two people, are no clauses
    for listed in (
        "I have a dog and a cat",
        "I like salt and pepper",
        "My sister Ingrid and I live in Leeds",
    ):
        assert clauses(listed) == []
