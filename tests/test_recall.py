"""Resume (seed 001 §7), agent context (seed 002 + seed 004 §9, §14) and session transcript
indexing (seed 004 §8, §11) through the pure builders, the Python API and the CLI."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from mnemoledger import MnemoLedger
from mnemoledger.commands.cli import cli
from mnemoledger.commands.models import SearchHit
from mnemoledger.commands.recall.context import (
    SECTION_SEPARATOR,
    WHAT_YOU_KNOW_INTRO,
    build_context,
    decay_score,
    format_structured_content,
    load_tacit,
)
from mnemoledger.commands.recall.recall_api import transcript_hits
from mnemoledger.commands.recall.resume import (
    Topic,
    build_resume,
    compact_markdown,
    core_weight,
    estimate_tokens,
)
from mnemoledger.ledger import InvalidInput, NewMemory, Provenance, Settings
from mnemoledger.ledger.policy import (
    CHUNK_MAX_CHARS,
    CHUNK_OVERLAP_CHARS,
    CONTEXT_MAX_RULES,
    CONTEXT_MAX_SUMMARIES,
    CORE,
    MAX_STYLE_MEMORIES,
    MAX_TACIT_MEMORIES,
    PROCEDURAL,
    RESUME_CORE_BUDGET_TOKENS,
    RESUME_RECENT_BUDGET_TOKENS,
    RESUME_TOPICS_BUDGET_TOKENS,
    RESUME_TRIGGERS_BUDGET_TOKENS,
    SEARCH_DEFAULT_WEIGHTS,
    SENSITIVE,
    SESSION_CHUNK_DAMPENING,
    WORKING,
)
from mnemoledger.projections.layers import MemoryRow
from mnemoledger.projections.transcripts import (
    Message,
    block_text,
    message_blocks,
    session_chunks,
    session_messages,
    split_sentences,
    split_text,
)
from tests.test_consolidation_helpers import place

ENV = "Operating system: TestOS 1.0 (x86_64); shell: /bin/sh"


Memory = MnemoLedger  # the facade carries the recall API and the transcripts read model


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    m = Memory(settings=Settings(home=home, embedder="hashing"), actor="tester")
    try:
        yield m
    finally:
        m.close()


def remember(memory: Memory, user: str, *items: NewMemory) -> list[MemoryRow]:
    """Write memories straight to the ledger (no pipeline) and return their rows."""
    added = memory.ledger.add(Provenance(user_id=user, actor="tester"), list(items))
    memory.refresh()
    rows = memory.layers.get_many([m.id.hex for m in added])
    return [rows[m.id.hex] for m in added]


def at(row: MemoryRow, moment: datetime) -> MemoryRow:
    return replace(row, created_at=moment.isoformat(), updated_at=moment.isoformat())


# --- resume --------------------------------------------------------------------------------


def test_resume_four_sections_with_budgets(memory: Memory) -> None:
    now = datetime(2025, 6, 1, 12, tzinfo=UTC)
    long = "x" * 1000  # 250 tokens each
    rows = remember(
        memory,
        "ann",
        *[NewMemory(f"core fact {i} {long}", importance=0.1 + i / 100) for i in range(12)],
        NewMemory("deploy steps", kind=PROCEDURAL, importance=0.5),
        NewMemory("what happened", kind="episodic", importance=0.5),
        NewMemory("known fact", importance=0.5),
        *[NewMemory(f"recent {i} {long}", tags=["trigger:deploy"]) for i in range(6)],
        NewMemory("old news", tags=["trigger:git-push", "trigger:deploy"]),
    )
    core = [replace(r, layer=CORE) for r in rows[:15]]
    core[0] = replace(core[0], repetition_count=3)  # 0.1 x (1 + 3 x 2.5) = 0.85: the top
    recent = [at(r, now - timedelta(minutes=10 * (i + 1))) for i, r in enumerate(rows[15:21])]
    old = at(replace(rows[21], layer=WORKING), now - timedelta(days=3))
    topics = [
        Topic(id=f"kb{i}", name=f"Topic number {i} " + "y" * 80, members=i) for i in range(40)
    ]
    out = build_resume(
        [*core, *recent, old],
        user_id="ann",
        core_document="## USER\n- Ann lives in Oslo\n",
        core_version=3,
        topics=topics,
        now=now,
    )

    # Core: core.md first, then core-layer memories by the seed's weight, whole texts
    assert out.core.document == "## USER\n- Ann lives in Oslo" and out.core.document_version == 3
    weights = [m.weight for m in out.core.memories]
    assert weights == sorted(weights, reverse=True)  # type: ignore[type-var]
    assert out.core.memories[0].id == core[0].id
    boosted = {m.content: m.weight for m in out.core.memories}
    assert boosted["deploy steps"] == pytest.approx(0.5 * 1.3)
    assert boosted["known fact"] == pytest.approx(0.5)
    assert boosted["what happened"] == pytest.approx(0.5 * 0.8)
    assert core_weight(core[0]) == pytest.approx(0.85)
    assert out.core.tokens <= RESUME_CORE_BUDGET_TOKENS and out.core.omitted > 0
    assert len(out.core.memories) + out.core.omitted == 15
    assert all(m.content in {r.content for r in core} for m in out.core.memories)

    # Recent: non-core, changed in the last 12 h, newest first, ~1k tokens
    assert [m.id for m in out.recent.memories] == [r.id for r in recent][: len(out.recent.memories)]
    assert out.recent.tokens <= RESUME_RECENT_BUDGET_TOKENS
    assert len(out.recent.memories) == 3 and out.recent.omitted == 3  # 3 x 251 tokens fit
    assert old.id not in {m.id for m in out.recent.memories}

    # Topics: member count descending, within ~500 tokens; layer counts
    assert out.topics is not None
    assert out.topics.working == 1 and out.topics.buffer == 6
    assert [t.members for t in out.topics.topics] == sorted(
        (t.members for t in out.topics.topics), reverse=True
    )
    assert out.topics.topics[0].id == "kb39"
    assert out.topics.tokens <= RESUME_TOPICS_BUDGET_TOKENS and out.topics.omitted > 0

    # Triggers: deduplicated, by aggregate access count (each memory counts at least 1)
    assert out.triggers == ["deploy", "git-push"]

    text = out.text
    assert text.startswith(f"=== Core ({len(out.core.memories)}) ===\n## USER\n- Ann lives in Oslo")
    assert "deploy steps (procedural)" in text and "what happened (episodic)" in text
    order = [
        text.index("=== Core"),
        text.index("=== Recent (12h) ==="),
        text.index("=== Topics (Working: 1, Buffer: 6) ==="),
        text.index('kb39: "Topic number 39'),
        text.index("Triggers: deploy, git-push"),
    ]
    assert order == sorted(order)


def test_resume_without_a_topic_tree_omits_topics_and_bounds_triggers(memory: Memory) -> None:
    tags = [[f"trigger:t{i:03d}-{'z' * 18}"] for i in range(60)]
    rows = remember(memory, "bob", *[NewMemory(f"fact {i}", tags=t) for i, t in enumerate(tags)])
    rows[5] = replace(rows[5], access_count=9)
    out = build_resume(rows, user_id="bob")
    assert out.topics is None and "=== Topics" not in out.text
    assert out.triggers[:2] == ["t005-" + "z" * 18, "t000-" + "z" * 18]  # by count, name
    assert estimate_tokens("Triggers: " + ", ".join(out.triggers)) <= RESUME_TRIGGERS_BUDGET_TOKENS
    assert out.triggers_omitted == 60 - len(out.triggers) > 0


def test_resume_merges_the_default_namespace(memory: Memory) -> None:
    remember(
        memory,
        "cy",
        NewMemory("project fact", namespace="billing"),
        NewMemory("shared fact", namespace="default"),
        NewMemory("other project fact", namespace="search"),
        NewMemory("secret fact", namespace="billing", sensitivity=SENSITIVE),
    )
    remember(memory, "dee", NewMemory("someone else's fact", namespace="billing"))

    def recent(namespace: str | None) -> set[str]:
        return {m.content for m in memory.resume("cy", namespace).recent.memories}

    assert recent("billing") == {"project fact", "shared fact"}
    assert recent("default") == {"shared fact"}
    assert recent(None) == {"shared fact"}  # no namespace asked: `default` only
    assert memory.resume("cy", "billing").namespaces == ["billing", "default"]
    assert memory.resume("cy").namespaces == ["default"]
    with pytest.raises(InvalidInput):
        memory.resume("cy", hours=0)


def test_resume_core_shows_only_the_namespace_asked_for_and_default(memory: Memory) -> None:
    rows = remember(
        memory,
        "cy",
        NewMemory("Billing runs on the 1st", namespace="billing"),
        NewMemory("Cy prefers short answers", namespace="default"),
        NewMemory("Search uses BM25", namespace="search"),
        NewMemory("Cy likes tea", namespace="tacit/preferences", key="tea"),
    )
    for row in rows:
        place(memory, row.id, CORE)

    def core(namespace: str | None) -> set[str]:
        return {m.content for m in memory.resume("cy", namespace).core.memories}

    assert core("billing") == {"Billing runs on the 1st", "Cy prefers short answers"}
    assert core("search") == {"Search uses BM25", "Cy prefers short answers"}
    assert core(None) == core("default") == {"Cy prefers short answers"}
    text = memory.resume("cy", "billing").text
    assert "Search uses BM25" not in text and "Cy likes tea" not in text


def test_resume_shows_the_topic_tree_of_its_namespaces(memory: Memory) -> None:
    assert memory.resume("cy").topics is None  # no tree yet: the section is omitted
    remember(
        memory,
        "cy",
        *[NewMemory(f"Invoice {i} for the billing account", namespace="billing") for i in range(3)],
        *[NewMemory(f"Kite surfing lesson {i} at the beach", namespace="sports") for i in range(3)],
        NewMemory("Cy lives in Porto", namespace="default"),
    )
    tree = memory.topics(user="cy")
    leaves = [t for t in tree.topics if not t.children]
    assert leaves
    everything = memory.resume("cy", "billing")
    assert everything.topics is not None
    assert "=== Topics (Working: 0, Buffer: 4) ===" in everything.text
    shown = {t.id: t.members for t in everything.topics.topics}
    assert shown and sum(shown.values()) == 4  # billing's 3 and default's 1, not sports'
    for topic in everything.topics.topics:
        assert f'{topic.id}: "{topic.name}" [{topic.members}]' in everything.text
    sports = memory.resume("cy", "sports")
    assert sports.topics is not None and sum(t.members for t in sports.topics.topics) == 4


def test_resume_includes_core_md_and_writes_nothing(memory: Memory) -> None:
    memory.add(["I'm allergic to penicillin"], user="eve")
    remember(memory, "eve", NewMemory("tagged", tags=["trigger:deploy"]))
    core = memory.core(user="eve")
    before = memory.ledger.last_position()
    out = memory.resume("eve", "default")
    again = memory.resume("eve")
    memory.context("eve", "where do I live")
    assert memory.ledger.last_position() == before
    assert memory.log(since=before) == []
    assert not [e for e in memory.log() if e.type == "RecallServed"]
    assert all(row.access_count == 0 for row in memory.layers.list("eve"))
    assert core.version >= 1  # the offline core-update stage keeps her allergy
    assert out.core.document == compact_markdown(core.markdown)
    assert out.core.document and "I'm allergic to penicillin" in out.core.document
    assert "## SOUL" not in out.core.document  # empty sections are left out
    assert out.core.document_version == core.version
    assert out.triggers == ["deploy"] == again.triggers


# --- context -------------------------------------------------------------------------------


def note(memory: Memory, user: str, kind: str, content: str, **options: Any) -> str:
    if kind == "rule":
        options.setdefault("evidence", ["turn:1"])
        options.setdefault("confidence", 0.9)
    return memory.write_note(content, user=user, kind=kind, **options).note.id


def test_context_priority_order_and_rendering(memory: Memory) -> None:
    note(memory, "fay", "user", "Fay is a nurse in Lyon.")
    note(memory, "fay", "soul", "Think step by step.")
    note(memory, "fay", "agent", "You are Ava, a calm assistant.")
    note(memory, "fay", "rule", "Answer in French.")
    note(memory, "fay", "summary", "Fixed the printer yesterday.")
    note(memory, "fay", "log", "User asked about printers.")
    remember(
        memory,
        "fay",
        NewMemory("Prefers 4-space indentation", namespace="tacit/preferences", key="code-style"),
        NewMemory("Keep it short.", namespace="tacit/personality", key="directive"),
        NewMemory("Lyon", namespace="tacit/user", key="location", confidence=0.9),
        NewMemory("not tacit", namespace="entity/default", key="person/sam"),
    )
    for field, value in (("city", "Lyon"), ("language", "French")):  # seed 003 §10
        memory.grant_consent(
            memory.propose_consent(user="fay", field=field, value=value).request.id
        )
    ctx = memory.context("fay", environment=ENV)
    assert ctx.agent and ctx.agent.content == "You are Ava, a calm assistant."
    assert ctx.soul and ctx.user and ctx.directive == "Keep it short."
    assert ctx.profile == {"language": "French", "location": "Lyon"}
    text = ctx.text
    parts = text.split(SECTION_SEPARATOR)
    assert [p.splitlines()[0] for p in parts] == [
        "## Agent",
        "## Soul",
        "## Personality (Learned)",
        "## Environment",
        "## User Information",
        "## Rules",
        "## Summaries",
        "## What You Know",
    ]
    assert parts[3] == "## Environment\n" + ENV
    assert parts[4] == (
        "## User Information\nFay is a nurse in Lyon.\n- language: French\n- location: Lyon"
    )
    assert parts[5] == "## Rules\n- Answer in French."  # a procedural note, asked for by kind
    assert WHAT_YOU_KNOW_INTRO in parts[7]
    assert "- preferences/code-style: Prefers 4-space indentation" in parts[7]
    assert "- personality/directive: Keep it short." in parts[7]
    assert "not tacit" not in text and "User asked about printers." not in text
    assert memory.context("fay").environment  # this machine's OS line when none is given


def test_context_limits_relevance_and_recency_fallback(memory: Memory) -> None:
    rules = [
        note(memory, "gus", "rule", f"Rule {i}: {w} matters")
        for i, w in enumerate(
            [
                "tabs",
                "coffee",
                "billing",
                "docker",
                "python",
                "spanish",
                "music",
                "weather",
                "trains",
                "chess",
                "garden",
                "invoices",
            ]
        )
    ]
    summaries = [note(memory, "gus", "summary", f"Session {i} about topic {i}") for i in range(7)]
    ctx = memory.context("gus", environment=ENV)
    assert len(ctx.rules) == CONTEXT_MAX_RULES and len(ctx.summaries) == CONTEXT_MAX_SUMMARIES
    assert [r.id for r in ctx.rules] == rules[::-1][:10]  # no message: the newest
    assert [s.id for s in ctx.summaries] == summaries[::-1][:5]
    assert {r.via for r in ctx.rules} == {"recent"}

    near = memory.context("gus", "how should I pay the invoices and billing", environment=ENV)
    assert len(near.rules) == CONTEXT_MAX_RULES
    first = {near.rules[0].content, near.rules[1].content}
    assert first == {"Rule 2: billing matters", "Rule 11: invoices matters"}
    assert near.rules[0].via == "semantic" and near.rules[0].similarity is not None
    sims = [r.similarity for r in near.rules if r.via == "semantic"]
    assert sims == sorted(sims, reverse=True)  # type: ignore[type-var]


def test_context_filters_sensitive_low_confidence_and_procedural(memory: Memory) -> None:
    note(memory, "hal", "rule", "Public rule.")
    note(memory, "hal", "rule", "Secret rule.", sensitivity=SENSITIVE)
    note(memory, "hal", "summary", "Secret summary.", sensitivity=SENSITIVE)
    note(memory, "hal", "summary", "Shaky summary.", confidence=0.5)
    tacit = "tacit/preferences"
    remember(
        memory,
        "hal",
        NewMemory("explicit", namespace=tacit, key="a", confidence=0.9),
        NewMemory("at the threshold", namespace=tacit, key="b", confidence=0.65),
        NewMemory("inferred", namespace=tacit, key="c", confidence=0.6),
        NewMemory("unknown confidence", namespace=tacit, key="d"),
        NewMemory("hidden", namespace=tacit, key="e", sensitivity=SENSITIVE),
        NewMemory("1. Open the app.", namespace=tacit, key="f", kind=PROCEDURAL),
    )
    ctx = memory.context("hal", environment=ENV)
    assert [r.content for r in ctx.rules] == ["Public rule."]
    assert ctx.summaries == []
    assert {m.content for m in ctx.tacit} == {"explicit", "at the threshold", "unknown confidence"}
    for word in ("Secret", "Shaky", "inferred", "hidden", "Open the app"):
        assert word not in ctx.text
    assert ctx.excluded == {"sensitive": 3, "low_confidence": 2, "procedural": 1}
    # excluded from the prompt, still searchable (seed 004 §14)
    inferred = {r.id for r in memory.layers.list("hal") if r.content == "inferred"}
    assert inferred <= {i for i, _ in memory.layers.keyword_search("hal", "inferred", 5)}


def test_context_tacit_budgets_two_passes(memory: Memory) -> None:
    remember(
        memory,
        "ida",
        *[
            NewMemory(f"style {i}", namespace="tacit/personality", key=f"style/s{i}")
            for i in range(15)
        ],
        *[NewMemory(f"pref {i}", namespace="tacit/preferences", key=f"p{i}") for i in range(60)],
    )
    ctx = memory.context("ida", environment=ENV)
    assert len(ctx.tacit) == MAX_TACIT_MEMORIES
    styles = [m for m in ctx.tacit if m.namespace == "tacit/personality"]
    assert len(styles) == MAX_STYLE_MEMORIES
    assert ctx.tacit[:MAX_STYLE_MEMORIES] == styles  # pass 1 comes first
    assert len(ctx.text.split(SECTION_SEPARATOR)[-1].splitlines()) == 2 + MAX_TACIT_MEMORIES


def test_decay_scoring_and_overfetch(memory: Memory) -> None:
    now = datetime(2025, 6, 1, tzinfo=UTC)
    assert decay_score(10, now, now) == pytest.approx(10.0)
    assert decay_score(10, now - timedelta(days=30), now) == pytest.approx(7.0)
    assert decay_score(10, now - timedelta(days=60), now) == pytest.approx(4.9)
    assert decay_score(5, now - timedelta(days=60), now) == pytest.approx(2.45)

    rows = remember(
        memory,
        "jo",
        *[NewMemory(f"s{i}", namespace="tacit/personality", key=f"style/{i}") for i in range(32)],
    )
    stale = (now - timedelta(days=365)).isoformat()
    fresh = now.isoformat()
    # 30 stale but often-accessed styles fill the overfetch (max(3 x 10, 30) = 30) ...
    tacit = [replace(r, access_count=2, last_accessed=stale) for r in rows[:30]]
    # ... so a fresh, once-accessed one ranked 31st by access count is never fetched,
    tacit.append(replace(rows[30], access_count=1, last_accessed=fresh))
    # while one accessed often long ago loses to a recent one inside the overfetch
    tacit[0] = replace(
        tacit[0], access_count=10, last_accessed=(now - timedelta(days=90)).isoformat()
    )
    tacit[1] = replace(tacit[1], access_count=5, last_accessed=fresh)
    chosen = load_tacit(tacit, now)
    assert len(chosen) == MAX_STYLE_MEMORIES
    assert [m.id for m in chosen[:2]] == [tacit[1].id, tacit[0].id]  # 5.0 before 3.43
    assert chosen[1].decay_score == pytest.approx(10 * 0.7**3, rel=1e-4)
    assert rows[30].id not in {m.id for m in chosen}


def test_structured_rules_render_as_markdown() -> None:
    structured = json.dumps(
        {
            "version": 1,
            "sections": [
                {
                    "name": "Code Style",
                    "items": [
                        {"text": "Always use gofmt", "enabled": True},
                        {"text": "Tab indentation", "enabled": False},
                    ],
                }
            ],
        }
    )
    assert format_structured_content(structured) == "## Code Style\n- Always use gofmt"
    assert format_structured_content("plain *markdown*") == "plain *markdown*"
    assert format_structured_content('{"not": "sections"}') == '{"not": "sections"}'


def test_build_context_is_pure_and_skips_other_users(memory: Memory) -> None:
    [row] = remember(
        memory, "kim", NewMemory("likes tea", namespace="tacit/preferences", key="tea")
    )
    ctx = build_context([row], user_id="lee", environment=ENV)
    assert ctx.tacit == [] and ctx.text == "## Environment\n" + ENV


# --- chunking ------------------------------------------------------------------------------


def test_short_text_is_one_chunk() -> None:
    text = "  Hello world. This is a short text.  "
    [chunk] = split_text(text)
    assert chunk.text == "Hello world. This is a short text."
    assert text[chunk.start_char : chunk.end_char] == chunk.text
    assert split_text("   ") == []
    just_below = "a" * (CHUNK_MAX_CHARS + CHUNK_OVERLAP_CHARS - 1)
    assert len(split_text(just_below)) == 1


def test_sentence_boundaries() -> None:
    text = "First sentence. Second one! Third?\tFourth\n\nFifth. v1.2 stays"
    pieces = [text[s:e] for s, e in split_sentences(text)]
    assert pieces == [
        "First sentence. ",
        "Second one! ",
        "Third?\t",
        "Fourth\n\n",
        "Fifth. ",
        "v1.2 stays",
    ]


def test_long_text_chunks_overlap_on_sentence_boundaries() -> None:
    sentences = [f"Sentence {i:03d} carries some words about the chunker. " for i in range(120)]
    text = "".join(sentences)
    starts = {sum(len(s) for s in sentences[:i]) for i in range(len(sentences) + 1)}
    chunks = split_text(text)
    assert len(chunks) > 3
    assert chunks[0].start_char == 0 and chunks[-1].end_char == len(text.rstrip())
    for n, chunk in enumerate(chunks):
        assert chunk.index == n
        assert text[chunk.start_char : chunk.end_char] == chunk.text
        assert len(chunk.text) <= CHUNK_MAX_CHARS
        assert chunk.start_char in starts  # whole sentences
        assert chunk.end_char in starts or chunk.end_char == len(text.rstrip())
    for previous, chunk in itertools.pairwise(chunks):
        overlap = previous.end_char - chunk.start_char
        assert overlap >= CHUNK_OVERLAP_CHARS  # ~320 characters of whole sentences back
        assert overlap < CHUNK_OVERLAP_CHARS + len(sentences[0])


def test_an_oversized_sentence_is_cut_at_whitespace() -> None:
    text = " ".join(["word"] * 1000)  # 4999 characters, no sentence end
    chunks = split_text(text)
    assert all(len(c.text) <= CHUNK_MAX_CHARS for c in chunks)
    assert "".join(c.text for c in chunks) == text


def test_blocks_of_five_messages() -> None:
    turns: list[dict[str, Any]] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
        for i in range(12)
    ]
    turns.insert(3, {"role": "tool", "content": "   "})  # empty: skipped, keeps its number
    messages = session_messages(turns)
    assert len(messages) == 12 and messages[3].turn == 5
    blocks = message_blocks(messages)
    assert [len(b) for b in blocks] == [5, 5, 2]
    assert block_text([Message("user", "hi", 1), Message("assistant", "hello", 2)]) == (
        "user: hi\n\nassistant: hello\n\n"
    )
    chunks = session_chunks(turns)
    assert [(c.block, c.index, c.first_turn, c.last_turn) for c in chunks] == [
        (0, 0, 1, 6),
        (1, 0, 7, 11),
        (2, 0, 12, 13),
    ]
    assert chunks[0].text == "user: message 0\n\nassistant: message 1\n\nuser: message 2\n\n" + (
        "assistant: message 3\n\nuser: message 4"
    )
    long_turns = [{"role": "user", "content": "This is a long sentence about trains. " * 25}] * 5
    long_chunks = session_chunks(long_turns)
    assert len(long_chunks) > 1 and {c.block for c in long_chunks} == {0}


# --- transcripts ---------------------------------------------------------------------------

CONVERSATION = [
    {"role": "user", "content": "We booked the Hotel Miramar in Porto for the conference."},
    {"role": "assistant", "content": "Great, the Miramar is close to the venue."},
    {"role": "user", "content": "The taxi from the airport costs about 25 euros."},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "Remind me to pack the blue suit."},
    {"role": "assistant", "content": "I will remind you about the suit."},
]


def test_transcript_search_finds_an_ingested_conversation(memory: Memory) -> None:
    memory.ingest(CONVERSATION, user="max", thread="trip")
    memory.ingest([{"role": "user", "content": "Hotel Miramar is my favourite."}], user="ned")
    hits = memory.transcripts("which hotel in Porto", user="max", k=5)
    assert hits and hits[0].source == "session"
    best = hits[0]
    assert "Hotel Miramar in Porto" in best.content
    assert best.first_turn == 1 and best.last_turn == 5 and best.thread_id == "trip"
    assert best.id == f"{best.session_id}:0:0"
    vector, text = SEARCH_DEFAULT_WEIGHTS
    expected = SESSION_CHUNK_DAMPENING * (
        vector * (best.vector_score or 0) + text * (best.text_score or 0)
    )
    assert best.score == pytest.approx(expected, abs=1e-5)
    assert best.score <= SESSION_CHUNK_DAMPENING
    assert all(h.content != "user: Hotel Miramar is my favourite." for h in hits)  # per user
    raw = memory.transcripts_model.search("max", "which hotel in Porto", 5)
    assert raw[0][0] == best.id and raw[0][2] == pytest.approx(best.score, abs=1e-5)
    assert [h.id for h in transcript_hits(memory.transcripts_model, "suit", "max", 3)]
    with pytest.raises(InvalidInput):
        memory.transcripts("   ", user="max")
    with pytest.raises(InvalidInput):
        memory.transcripts("hotel", user="max", k=0)


def test_add_contents_are_not_transcripts(memory: Memory) -> None:
    memory.add(["I booked the Hotel Miramar"], user="oli")
    memory.write_note("Hotel notes", user="oli", kind="summary")
    assert memory.transcripts("Hotel Miramar", user="oli") == []
    assert memory.transcripts_model.count() == 0


def test_transcripts_rebuild_equals_incremental(memory: Memory) -> None:
    long = [
        {"role": "user", "content": f"Day {i}: we walked along the river and talked. " * 12}
        for i in range(8)
    ]
    memory.ingest(CONVERSATION, user="pia")
    memory.ingest(long, user="pia")
    memory.ingest(CONVERSATION[:2], user="quinn")
    memory.refresh()
    incremental = memory.transcripts_model.chunks()
    queries = ["hotel Porto", "river walk", "blue suit"]
    found = {q: memory.transcripts(q, user="pia", k=10) for q in queries}
    assert len({c.session_id for c in incremental}) == 3 and len(incremental) == 6

    memory.rebuild("transcripts")
    assert memory.transcripts_model.chunks() == incremental
    assert {q: memory.transcripts(q, user="pia", k=10) for q in queries} == found
    memory.rebuild()
    assert memory.transcripts_model.chunks() == incremental
    assert {q: memory.transcripts(q, user="pia", k=10) for q in queries} == found


def test_transcripts_survive_reopening(home: Path) -> None:
    settings = Settings(home=home, embedder="hashing")
    with Memory(settings=settings, actor="tester") as first:
        first.ingest(CONVERSATION, user="ray")
        before = first.transcripts("airport taxi", user="ray")
    with Memory(settings=settings, actor="tester") as second:
        assert second.transcripts("airport taxi", user="ray") == before


# --- CLI -----------------------------------------------------------------------------------


@pytest.fixture
def cli_group() -> click.Group:
    from mnemoledger.commands.cli import cli

    return cli


def run(group: click.Group, home: Path, *args: str) -> Result:
    return CliRunner().invoke(group, ["--home", str(home), *args], prog_name="mnemoledger")


def test_cli_resume_context_transcripts(cli_group: click.Group, home: Path) -> None:
    with Memory(settings=Settings(home=home, embedder="hashing"), actor="tester") as m:
        m.ingest(CONVERSATION, user="sam")
        m.write_note("Answer briefly.", user="sam", kind="rule", evidence=["t:1"], confidence=0.9)

    result = run(cli_group, home, "resume", "--user", "sam", "--namespace", "default", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["namespaces"] == ["default"] and data["text"].startswith("=== Core")
    human = run(cli_group, home, "resume", "--user", "sam")
    assert human.exit_code == 0 and "=== Recent (12h) ===" in human.output

    result = run(cli_group, home, "context", "--user", "sam", "--message", "be brief", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [r["content"] for r in data["rules"]] == ["Answer briefly."]
    assert "## Rules\n- Answer briefly." in data["text"]
    human = run(cli_group, home, "context", "--user", "sam")
    assert "## Environment" in human.output

    result = run(cli_group, home, "--json", "transcripts", "blue suit", "--user", "sam", "--k", "2")
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert {h["source"] for h in hits} == {"session"}
    assert any("blue suit" in h["content"] for h in hits)
    human = run(cli_group, home, "transcripts", "blue suit", "--user", "sam")
    assert human.exit_code == 0 and "score" in human.output

    bad = run(cli_group, home, "transcripts", "suit", "--user", "sam", "--k", "0")
    assert bad.exit_code == 2 and bad.output.startswith("error:")


def test_search_with_transcripts_merges_memories_and_chunks_by_score(memory: Memory) -> None:
    memory.ingest(CONVERSATION, user="max", thread="trip")
    memory.add(["Max keeps a travel diary about the Hotel Miramar"], user="max")
    merged = memory.search_all("Hotel Miramar in Porto", user="max", k=10)
    sources = {"memory" if isinstance(h, SearchHit) else h.source for h in merged}
    assert sources == {"memory", "session"}
    scores = [h.score for h in merged]
    assert scores == sorted(scores, reverse=True)
    chunks = [h for h in merged if not isinstance(h, SearchHit)]
    assert all(c.score <= SESSION_CHUNK_DAMPENING for c in chunks)

    result = CliRunner().invoke(
        cli,
        [
            "--home",
            str(memory.settings.home),
            "--json",
            "search",
            "Hotel Miramar in Porto",
            "--user",
            "max",
            "--transcripts",
        ],
    )
    assert result.exit_code == 0, result.output
    assert [h["id"] for h in json.loads(result.output)] == [h.id for h in merged]
