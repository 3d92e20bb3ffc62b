"""engram's recall (seed 001 §4, §8, §9) and Nebo's keyword search (seed 004 §6, §16):
the seed's behaviours, default or as named search options, row by row."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.llm.prompts import STAGES
from mnemoledger.commands.llm.rules.search import expand as offline_expand
from mnemoledger.commands.llm.scripted import ScriptedProvider
from mnemoledger.commands.llm.search_schemas import ExpandInput, RerankOutput
from mnemoledger.commands.models import SearchHit
from mnemoledger.commands.recall.search import (
    SearchOptions,
    bm25_score,
    engram_relevance,
    fts_expression,
    query_tokens,
    recency,
    seed_bm25_score,
    without_near_duplicates,
)
from mnemoledger.ledger import Settings
from mnemoledger.ledger.policy import (
    ENGRAM_KEYWORD_PENALTY,
    RECALL_DEDUP_SIM,
    SEARCH_FUSION_CHOICES,
)
from mnemoledger.projections.embeddings.calibration import Calibration
from mnemoledger.projections.fts_text import fts_text
from mnemoledger.projections.layers import MemoryRow

NOW = datetime(2026, 1, 10, tzinfo=UTC)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MnemoLedger]:
    with MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing")) as ledger:
        yield ledger


# --- §4.2 scoring formula: the seed's recency as an option --------------------------------


def test_s4_2_recency_exp_option_is_the_seeds_formula() -> None:
    week_ago = (NOW - timedelta(hours=168)).isoformat()
    assert recency(week_ago, "episodic", NOW, "exp") == pytest.approx(math.exp(-1.0))
    assert recency(week_ago, "semantic", NOW, "exp") == pytest.approx(math.exp(-0.6))
    assert recency(week_ago, "episodic", NOW) == pytest.approx(0.5)  # default: halving


def test_s4_2_recency_option_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOLEDGER_SEARCH_RECENCY", "exp")
    monkeypatch.setenv("MNEMOLEDGER_SEARCH_FUSION", "engram")
    options = SearchOptions.of(Settings())
    assert (options.recency, options.fusion) == ("exp", "engram")
    with pytest.raises(ValueError, match="fusion must be one of"):
        SearchOptions(fusion="borda")  # type: ignore[arg-type]


# --- §4.3 dual-hit boost, FTS-only caps, keyword penalty, short CJK -----------------------


def test_s4_3_dual_hit_boost_gated_by_similarity() -> None:
    both = engram_relevance(0.6, 0.8, "coffee at dawn", "coffee", ["coffee"])
    assert both == pytest.approx(0.6 * (1 + 0.8 * 0.3 * 1.0))
    weak = engram_relevance(0.3, 0.8, "coffee at dawn", "coffee", ["coffee"])
    assert weak == pytest.approx(0.3 * (1 + 0.8 * 0.3 * (0.3 / 0.45)))
    assert engram_relevance(0.95, 1.0, "coffee", "coffee", ["coffee"]) == 1.0  # capped


def test_s4_3_fts_only_hits_are_capped() -> None:
    assert engram_relevance(None, 0.8, "coffee", "coffee beans", ["coffee"]) == pytest.approx(0.2)
    assert engram_relevance(None, 0.8, "咖啡", "咖啡", ["咖啡"]) == pytest.approx(0.32)


def test_s4_3_keyword_affinity_penalty_for_semantic_only_hits() -> None:
    terms = ["espresso"]
    without = engram_relevance(0.5, None, "I drink tea", "espresso", terms)
    holding = engram_relevance(0.5, None, "an espresso, please", "espresso", terms)
    assert without == pytest.approx(0.5 * ENGRAM_KEYWORD_PENALTY)
    assert holding == pytest.approx(0.5)


def test_s4_3_short_cjk_query_boost_and_floor() -> None:
    short = engram_relevance(0.3, 0.5, "我喜欢咖啡", "咖啡", ["咖啡"])
    assert short == pytest.approx(max(0.3 * (1 + 0.5 * 0.6 * (0.3 / 0.45)), 0.50 + 0.5 * 0.35))
    long_query = "我每天早上都喜欢喝一杯热咖啡"
    normal = engram_relevance(0.3, 0.5, "我喜欢咖啡", long_query, ["咖啡"])
    assert normal == pytest.approx(0.3 * (1 + 0.5 * 0.3 * (0.3 / 0.45)))


def test_s4_3_engram_fusion_is_a_search_option(memory: MnemoLedger) -> None:
    assert "engram" in SEARCH_FUSION_CHOICES
    memory.add(["I drink espresso every morning before work"], user="u")
    memory.add(["The dog sleeps in the garden"], user="u")
    hits = memory.search("espresso", user="u", fusion="engram")
    assert hits and "espresso" in hits[0].content
    # a keyword hit also found by similarity: boosted above its bare similarity
    assert hits[0].relevance is not None and hits[0].relevance > 0


# --- §8 RECALL_DEDUP_SIM ------------------------------------------------------------------


class _Vectors:
    """A stand-in vector store: stored vectors by id, identity calibration."""

    calibration = Calibration("test", (-1.0, 1.0), (-1.0, 1.0))

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = {k: np.asarray(v, np.float32) for k, v in vectors.items()}

    def vector(self, memory_id: str) -> np.ndarray | None:
        return self.vectors.get(memory_id)


def _hit(memory_id: str, score: float) -> SearchHit:
    return SearchHit(
        id=memory_id,
        content=memory_id,
        score=score,
        layer="buffer",
        kind="semantic",
        keyword_rank=None,
        vector_rank=None,
    )


def test_s8_recall_dedup_sim_leaves_out_near_duplicates_of_better_hits() -> None:
    near = math.cos(math.acos(RECALL_DEDUP_SIM) - 0.01)  # just above 0.78
    apart = math.cos(math.acos(RECALL_DEDUP_SIM) + 0.05)  # below
    vectors = _Vectors(
        {
            "a": [1.0, 0.0],
            "b": [near, math.sqrt(1 - near**2)],
            "c": [apart, -math.sqrt(1 - apart**2)],
        }
    )
    hits = [_hit("a", 0.9), _hit("b", 0.8), _hit("c", 0.7)]
    kept = without_near_duplicates(hits, vectors, 10)  # type: ignore[arg-type]
    assert [h.id for h in kept] == ["a", "c"]
    assert [h.id for h in without_near_duplicates(hits, vectors, 1)] == ["a"]  # type: ignore[arg-type]


# --- §9 FTS5 (seed 001) and seed 004 §16 memories_fts -------------------------------------


def test_s9_fts5_cjk_text_is_indexed_as_bigrams() -> None:
    assert fts_text("我喜欢咖啡") == " 我喜 喜欢 欢咖 咖啡 啡 "
    assert fts_text("plain words") == "plain words"
    assert query_tokens("咖啡 and tea") == ["咖啡", "and", "tea"]
    assert fts_expression("喜欢咖啡", "AND") == '"喜欢" AND "欢咖" AND "咖啡"'


def test_s9_fts5_chinese_and_japanese_queries_find_their_memory(memory: MnemoLedger) -> None:
    memory.add(["我喜欢喝咖啡"], user="u")
    memory.add(["私は東京に住んでいます"], user="u")
    memory.add(["I walk the dog every evening"], user="u")
    for fusion in ("rrf", "engram"):
        assert memory.search("咖啡", user="u", fusion=fusion)[0].content == "我喜欢喝咖啡"
        assert memory.search("東京", user="u", fusion=fusion)[0].content == "私は東京に住んでいます"
    memory.rebuild()  # a rebuild indexes the bigrams too
    assert memory.search("咖啡", user="u")[0].content == "我喜欢喝咖啡"
    assert memory.search("啡", user="u")[0].content == "我喜欢喝咖啡"  # one character


def test_s16_memories_fts_indexes_key_and_tags(memory: MnemoLedger, tmp_path: Path) -> None:
    memory.add(["The retro moved to Thursday"], user="u", tags=["sprintcadence"])
    assert memory.search("sprintcadence", user="u")[0].content == "The retro moved to Thursday"
    memory.rebuild()
    assert memory.search("sprintcadence", user="u")[0].content == "The retro moved to Thursday"
    with sqlite3.connect(tmp_path / "projections" / "layers.sqlite3") as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(memories_fts)")]
    assert columns == ["content", "key", "tags"]


# --- seed 004 §6: FTS query building, BM25 normalisation -----------------------------------


def test_s6_fts_query_building_and_operator_is_an_option(memory: MnemoLedger) -> None:
    memory.add(["Lisbon has the best custard tarts"], user="u")
    memory.add(["Porto has wine cellars by the river"], user="u")
    assert fts_expression("golang tutorials") == '"golang" AND "tutorials"'  # seed's example
    ored = memory.search("Lisbon river", user="u", fusion="weighted", min_score=0.0)
    anded_options = SearchOptions(fusion="weighted", fts_operator="AND")
    with_and = memory.parts.settings.model_copy(
        update={"search_fts_operator": anded_options.fts_operator}
    )
    memory.parts.settings = with_and
    anded = memory.search("Lisbon river", user="u", fusion="weighted", min_score=0.0, expand=False)
    assert sum(h.keyword_rank is not None for h in ored) == 2  # OR: either word
    assert sum(h.keyword_rank is not None for h in anded) == 0  # AND: no memory has both


def test_s6_bm25_score_normalization_seed_option() -> None:
    assert seed_bm25_score(-10.0) == pytest.approx(1 / 11)  # as the seed writes it
    assert seed_bm25_score(-1.0) == pytest.approx(0.5)
    assert seed_bm25_score(1.0) == pytest.approx(0.5)
    assert bm25_score(-10.0) == pytest.approx(10 / 11)  # default: the best match highest
    assert SearchOptions(bm25="seed").bm25 == "seed"


# --- §4.4 query expansion, §4.5 re-ranking and touch --------------------------------------


def _calls(memory: MnemoLedger, since: int) -> list[str]:
    return [e.data["stage"] for e in memory.log()[since:] if e.type == "LLMCallRecorded"]


def test_s4_4_query_expansion_explicit_is_recorded_and_offline_gives_keywords(
    memory: MnemoLedger,
) -> None:
    assert "Bilingual" in STAGES["expand"].system  # the prompt asks for Chinese and English
    assert offline_expand(ExpandInput(query="What did Caroline paint?")).queries == [
        "Caroline paint",
        "paint",
    ]
    memory.add(["Caroline painted a sunset over the lake"], user="u")
    before = len(memory.log())
    hits = memory.search("What did Caroline paint?", user="u", expand=True)
    assert hits[0].content == "Caroline painted a sunset over the lake"
    assert _calls(memory, before) == ["expand"]
    requested = [e for e in memory.log()[before:] if e.type == "SearchRequested"]
    assert requested[0].data["input"]["query"] == "What did Caroline paint?"
    before = len(memory.log())
    memory.search("What did Caroline paint?", user="u", expand=False)
    assert _calls(memory, before) == []  # nothing recorded without the LLM


def test_s4_4_auto_expand_below_threshold_uses_the_better_alternative(
    memory: MnemoLedger,
) -> None:
    memory.add(["I drink espresso every morning"], user="u")
    asked: list[str] = []

    def alternatives(query: str) -> list[str]:
        asked.append(query)
        return ["espresso"]

    # engram relevance is the similarity: a query sharing no word with anything is weak
    hits = memory.search("hot beverage", user="u", fusion="engram", expand=alternatives)
    assert asked == ["hot beverage"]
    assert hits and hits[0].content == "I drink espresso every morning"
    asked.clear()
    memory.search("espresso", user="u", fusion="engram", expand=alternatives)
    assert asked == []  # a good match: no expansion
    assert memory.search("espresso", user="nobody", fusion="engram", expand=alternatives) == []
    assert asked == []  # no result at all: no top result to judge, no expansion


def test_s4_5_rerank_prompt_reorders_and_scores_still_fall(memory: MnemoLedger) -> None:
    memory.add(["Caroline painted a sunset over the lake"], user="u")
    memory.add(["Caroline paints every Sunday with her friend Melanie"], user="u")
    plain = memory.search("Caroline paint", user="u")
    assert len(plain) == 2
    before = len(memory.log())
    offline = memory.search("Caroline paint", user="u", rerank=True)
    assert [h.id for h in offline] == [h.id for h in plain]  # offline: the search's order
    assert _calls(memory, before) == ["rerank"]
    scripted = ScriptedProvider(memory.parts.llm)
    scripted.script("rerank", RerankOutput(ranking=[plain[1].id, plain[0].id]))
    memory.parts.llm = scripted
    reranked = memory.search("Caroline paint", user="u", rerank=True)
    assert [h.id for h in reranked] == [plain[1].id, plain[0].id]
    assert [h.score for h in reranked] == sorted((h.score for h in plain), reverse=True)


def test_s4_5_touch_only_relevance_above_half_and_dry_skips(memory: MnemoLedger) -> None:
    memory.add(["Caroline painted a sunset over the lake"], user="u", kind="episodic")
    memory.add(["Melanie runs a pottery class on Saturdays"], user="u", kind="episodic")
    asked = {"agent": "supervisor", "user": "u", "return_mode": "full", "top_k": 5}
    dry = memory.query("What did Caroline paint?", dry=True, **asked)  # type: ignore[arg-type]
    assert dry.results
    assert memory.log()[-1].data["touched"] == []
    assert all(m.access_count == 0 for m in _rows(memory))
    served = memory.query("What did Caroline paint?", **asked)  # type: ignore[arg-type]
    recall = memory.log()[-1]
    relevance = {h.id: h.relevance for h in memory.search("What did Caroline paint?", user="u")}
    touched = recall.data["touched"]
    assert touched == [r.id for r in served.results if (relevance.get(r.id) or 0) > 0.5]
    counts = {m.id: m.access_count for m in _rows(memory)}
    assert all(counts[i] == (1 if i in touched else 0) for i in counts)


def _rows(memory: MnemoLedger) -> list[MemoryRow]:
    memory.refresh()
    return memory.layers.list("u")


# --- §4.1 hybrid retrieval: the fact graph channel ------------------------------------------


def test_s4_1_fact_linked_memories_enter_with_relevance_one(memory: MnemoLedger) -> None:
    met = memory.add(["We met at the conference in spring"], user="u").memories[0].id
    memory.add(["The garden needs watering twice a week"], user="u")
    memory.state_fact("Maya", "works_at", "Acme", memory=met)
    for fusion in ("rrf", "engram"):
        hits = memory.search("Acme", user="u", fusion=fusion, expand=False)
        assert hits[0].id == met and hits[0].relevance == 1.0
    # a fact that no longer holds links nothing
    memory.state_fact("Maya", "works_at", "Initech", memory=met)
    after = memory.search("Acme", user="u", expand=False)
    assert all(h.relevance is not None and h.relevance < 1.0 for h in after if h.id == met)


def test_s7_search_with_a_namespace_reads_it_and_default(memory: MnemoLedger) -> None:
    memory.add(["The deploy runs on Fridays"], user="u", namespace="proja")
    memory.add(["The deploy dashboard is the second tab in Grafana"], user="u")
    memory.add(["The deploy is frozen in August"], user="u", namespace="projb")
    found = {h.namespace for h in memory.search("deploy", user="u", namespace="proja")}
    assert found == {"proja", "default"}


def test_s6_types_search_result_has_key_namespace_and_source(memory: MnemoLedger) -> None:
    memory.store("code_style", "Tabs over spaces in every repository", user="u")
    memory.add(["The garden needs watering twice a week"], user="u")
    by_key = memory.search("code_style", user="u", expand=False)  # the key is indexed
    assert by_key[0].key == "code-style" and by_key[0].namespace == "default"  # normalised
    assert by_key[0].source in ("fts", "fts+vector")
    assert {h.source for h in memory.search("garden", user="u", expand=False)} <= {
        "fts",
        "vector",
        "fts+vector",
    }


def test_s9_fts5_an_index_of_the_old_shape_is_rebuilt_with_bigrams(tmp_path: Path) -> None:
    with MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing")) as memory:
        memory.add(["我喜欢喝咖啡"], user="u")
    path = tmp_path / "projections" / "layers.sqlite3"
    with sqlite3.connect(path) as conn:  # the keyword index as an older version built it
        conn.execute("DROP TABLE memories_fts_vocab")
        conn.execute("DROP TABLE memories_fts")
        conn.execute(
            "CREATE VIRTUAL TABLE memories_fts USING fts5(content, content = 'memories', "
            "content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2')"
        )
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
    with MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing")) as memory:
        assert memory.search("咖啡", user="u")[0].content == "我喜欢喝咖啡"
    with sqlite3.connect(path) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(memories_fts)")]
    assert columns == ["content", "key", "tags"]


# --- the switches on the CLI and over HTTP (seed 001 §4.3-4.5) ------------------------------


def test_s4_switches_on_the_cli(tmp_path: Path) -> None:
    home = ["--home", str(tmp_path)]
    runner = CliRunner(env={"MNEMOLEDGER_EMBEDDER": "hashing"})
    added = runner.invoke(cli, [*home, "add", "I drink espresso every morning", "--user", "u"])
    assert added.exit_code == 0, added.output
    searched = runner.invoke(
        cli,
        [*home, "--json", "search", "espresso", "--user", "u", "--fusion", "engram"],
        catch_exceptions=False,
    )
    assert searched.exit_code == 0, searched.output
    assert json.loads(searched.output)[0]["content"] == "I drink espresso every morning"
    for switches in (["--expand", "--rerank"], ["--no-expand"]):
        run = runner.invoke(cli, [*home, "search", "espresso", "--user", "u", *switches])
        assert run.exit_code == 0, run.output
    asked = [*home, "--json", "query", "espresso", "--agent", "researcher", "--user", "u"]
    queried = runner.invoke(cli, [*asked, "--dry", "--rerank", "--fusion", "engram"])
    assert queried.exit_code == 0, queried.output
    with MnemoLedger(settings=Settings(home=tmp_path, embedder="hashing")) as memory:
        stages = [e.data["stage"] for e in memory.log() if e.type == "LLMCallRecorded"]
        served = [e for e in memory.log() if e.type == "RecallServed"]
    assert "expand" in stages and served[-1].data["touched"] == []
    bad = runner.invoke(cli, [*home, "search", "espresso", "--user", "u", "--fusion", "borda"])
    assert bad.exit_code == 2


def test_s4_1_filtered_semantic_mode_with_enough_keyword_candidates(memory: MnemoLedger) -> None:
    memory.store("plural", "espressos", user="u")  # similar to the query, not its keyword
    tail = "while the rain kept falling on the old tram lines and the river boats waited"
    texts = (
        f"The Lisbon cafe near the museum served a quick espresso after the tour {tail}",
        f"The office machine on the third floor makes a bitter espresso daily {tail}",
        f"Grandma never touched espresso because her doctor warned about her heart {tail}",
        f"Our wedding cake hid an espresso layer between two chocolate sponges {tail}",
    )
    ask = {"user": "u", "k": 2, "fusion": "engram", "expand": False, "min_score": 0.0}
    for number, text in enumerate(texts[:3]):
        memory.store(f"k{number}", text, user="u")
    # 3 keyword candidates < 2 x k: the similarity reads the whole index
    assert memory.search("espresso", **ask)[0].content == "espressos"  # type: ignore[arg-type]
    memory.store("k3", texts[3], user="u")
    # 4 keyword candidates >= 2 x k: the similarity ranks those alone (filtered mode)
    found = memory.search("espresso", **ask)  # type: ignore[arg-type]
    assert "espressos" not in [h.content for h in found]
    assert all(h.source == "fts+vector" for h in found)
