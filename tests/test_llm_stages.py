"""The LLM stages: prompts and renderers, and the offline provider's contract for each stage."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from mnemoledger.commands.llm import (
    STAGES,
    LLMCall,
    LLMError,
    OfflineProvider,
    ScriptedProvider,
    StageOutputInvalid,
    make_provider,
)
from mnemoledger.commands.llm.consolidation_prompts import CONSOLIDATION_STAGES
from mnemoledger.commands.llm.consolidation_schemas import (
    AuditInput,
    AuditMemory,
    CandidateMemory,
    DistillInput,
    FactPair,
    GateInput,
    InsightInput,
    NameTopicsInput,
    PairInput,
    ResumeCompressInput,
    SameFactInput,
    TopicSample,
    TriageInput,
)
from mnemoledger.commands.llm.fact_prompts import FACT_STAGES, FactExtractInput
from mnemoledger.commands.llm.judge_prompts import (
    JUDGE_STAGES,
    FactText,
    ReadFactsInput,
    ReadTurnsInput,
    RelateInput,
    StatementPair,
    TurnText,
)
from mnemoledger.commands.llm.prompts import (
    CORE_UPDATE,
    EXTRACT,
    INSERT_MERGE,
    MERGE_NOTES,
    MULTI_FACT,
    RECONSTRUCT,
    REFINE,
    REMEMBER,
    SPLIT,
    SYNTHESIZE,
)
from mnemoledger.commands.llm.schemas import (
    MAX_CANDIDATE_FACTS,
    ConversationTurn,
    CoreUpdateInput,
    Coverage,
    ExtractInput,
    Fact,
    MergeInput,
    MergeNotesInput,
    MultiFactInput,
    ReconstructedMemory,
    ReconstructInput,
    ReconstructOutput,
    RefineInput,
    RelatedMemory,
    RememberInput,
    SplitInput,
    StyleObservation,
    SynthesizeInput,
    WrittenContent,
)
from mnemoledger.commands.llm.search_prompts import SEARCH_STAGES
from mnemoledger.commands.llm.search_schemas import ExpandInput, RerankCandidate, RerankInput
from mnemoledger.commands.llm.stage import Stage
from mnemoledger.ledger import InvalidInput, Settings
from mnemoledger.ledger.policy import INSIGHT_MAX_TOKENS, LLM_STAGE_MAX_TOKENS
from mnemoledger.ledger.validation import normalize_key as normalize_memory_key

OFFLINE = OfflineProvider()


def run(stage: Stage[Any, Any], inputs: BaseModel) -> Any:
    return OFFLINE.complete(stage, inputs).output


def related(memory_id: str, content: str, similarity: float) -> RelatedMemory:
    return RelatedMemory(id=memory_id, content=content, similarity=similarity)


def core(**sections: list[str]) -> str:
    return "\n\n".join(
        "\n".join([f"## {name}", *(f"- {b}" for b in sections.get(name, []))])
        for name in ("SOUL", "TOOLS", "RULE", "USER")
    )


def bullets(markdown: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = line[3:]
            found[current] = []
        elif line.startswith("- "):
            found[current].append(line[2:])
    return found


# --- split ---------------------------------------------------------------------------------


def test_split_makes_one_content_per_independent_fact_in_order() -> None:
    output = run(
        SPLIT, SplitInput(raw_input="I live in Paris. I work at Acme; my dog is Rex!\n\nI like tea")
    )
    assert output.contents == ["I live in Paris.", "I work at Acme", "my dog is Rex!", "I like tea"]


def test_split_keeps_a_single_fact_whole_and_drops_empty_pieces() -> None:
    assert run(SPLIT, SplitInput(raw_input="Maya is allergic to peanuts")).contents == [
        "Maya is allergic to peanuts"
    ]
    assert run(SPLIT, SplitInput(raw_input="Dr. Smith treats Maya.")).contents == [
        "Dr. Smith treats Maya."
    ]
    assert run(SPLIT, SplitInput(raw_input="  ; . \n ")).contents == []


def test_split_leaves_out_greetings_and_questions() -> None:
    output = run(
        SPLIT, SplitInput(raw_input="Hi! What time is it? I live in Porto. Thanks so much!")
    )
    assert output.contents == ["I live in Porto."]


# --- reconstruct and refine ----------------------------------------------------------------


def test_reconstruct_covers_every_new_content_with_no_related_memories() -> None:
    new = ["I live in Berlin", "I have a dog named Rex"]
    output = run(RECONSTRUCT, ReconstructInput(related=[], new_contents=new))
    assert [m.content for m in output.memories] == new
    assert [m.sources for m in output.memories] == [["new:0"], ["new:1"]]
    assert output.coverage == [
        Coverage(new_content=0, memories=[0]),
        Coverage(new_content=1, memories=[1]),
    ]


def test_reconstruct_replaces_a_similar_related_memory_with_the_new_content() -> None:
    output = run(
        RECONSTRUCT,
        ReconstructInput(
            related=[
                related("paris", "I live in Paris", 0.869),
                related("tea", "I like green tea", 0.81),
            ],
            new_contents=["I have a dog named Rex", "I moved to Berlin"],
        ),
    )
    assert output.memories == [
        ReconstructedMemory(content="I have a dog named Rex", sources=["new:0"]),
        # newest evidence wins: the contradicted memory is consumed by the one it overlaps most
        ReconstructedMemory(content="I moved to Berlin", sources=["new:1", "paris"]),
    ]
    # below the threshold the related memory is left untouched: not in the output at all
    assert all("tea" not in m.sources and "tea" not in m.content for m in output.memories)
    assert {c.new_content for c in output.coverage} == {0, 1}


def test_reconstruct_decides_by_what_is_said_not_by_a_similarity_edge() -> None:
    for similarity in (0.55, 0.86, 0.99):
        output = run(
            RECONSTRUCT,
            ReconstructInput(
                related=[
                    related("old", "I live in Paris", similarity),
                    related("allergy", "I am allergic to shellfish", similarity),
                ],
                new_contents=["I moved to Berlin"],
            ),
        )
        assert output.memories[0].sources == ["new:0", "old"]


def consumed_by_reconstruct(old: str, new: str, similarity: float = 0.92) -> bool:
    output = run(
        RECONSTRUCT,
        ReconstructInput(related=[related("old", old, similarity)], new_contents=[new]),
    )
    return "old" in output.memories[0].sources


def test_reconstruct_keeps_another_speakers_statement() -> None:
    """The another-holder guard, whatever the model reads: Melanie's move is not Caroline's."""
    old = "[8 May 2023] Caroline: I live in Paris."
    assert not consumed_by_reconstruct(old, "[9 May 2023] Melanie: I moved to Berlin.")


def test_reconstruct_collapses_identical_new_contents_but_covers_each() -> None:
    output = run(
        RECONSTRUCT,
        ReconstructInput(related=[], new_contents=["I like tea", "I like cake", "i like  tea."]),
    )
    assert [m.content for m in output.memories] == ["I like tea", "I like cake"]
    assert output.memories[0].sources == ["new:0", "new:2"]
    assert [(c.new_content, c.memories) for c in output.coverage] == [(0, [0]), (1, [1]), (2, [0])]


def test_refine_recomputes_a_complete_output_whatever_the_previous_one_was() -> None:
    inputs = ReconstructInput(
        related=[related("paris", "I live in Paris", 0.9)], new_contents=["I moved to Berlin"]
    )
    broken = ReconstructOutput(memories=[], coverage=[])
    refined = run(
        REFINE,
        RefineInput(
            related=inputs.related,
            new_contents=inputs.new_contents,
            previous=broken,
            problems=["new content 0 is not covered"],
        ),
    )
    assert refined == run(RECONSTRUCT, inputs)


# --- core update ---------------------------------------------------------------------------


def test_core_update_routes_each_candidate_to_one_section() -> None:
    output = run(
        CORE_UPDATE,
        CoreUpdateInput(
            current_core_markdown="",
            candidate_new_memories=[
                "Maya is allergic to peanuts",
                "Always answer in French",
                "Maya uses Neovim as her editor",
                "The assistant's name is Juno",
                "Maya had pasta for lunch",
            ],
            superseded_memories=[],
        ),
    )
    assert output.should_update
    assert bullets(output.core_markdown) == {
        "SOUL": ["The assistant's name is Juno"],
        "TOOLS": ["Maya uses Neovim as her editor"],
        "RULE": ["Always answer in French"],
        "USER": ["Maya is allergic to peanuts"],
    }
    assert re.findall(r"^## (\w+)$", output.core_markdown, re.M) == [
        "SOUL",
        "TOOLS",
        "RULE",
        "USER",
    ]


@pytest.mark.parametrize("superseded", [["Maya lives in Paris"], []])
def test_core_update_replaces_the_superseded_bullet(superseded: list[str]) -> None:
    """Named as superseded, or recognised as the same subject of the same person."""
    current = core(RULE=["Never suggest peanuts"], USER=["Maya lives in Paris", "Maya has a cat"])
    output = run(
        CORE_UPDATE,
        CoreUpdateInput(
            current_core_markdown=current,
            candidate_new_memories=["Maya moved to Berlin"],
            superseded_memories=superseded,
        ),
    )
    assert output.should_update
    assert bullets(output.core_markdown)["USER"] == ["Maya moved to Berlin", "Maya has a cat"]
    assert bullets(output.core_markdown)["RULE"] == ["Never suggest peanuts"]


def test_core_update_keeps_another_persons_home() -> None:
    current = core(USER=["Maya's sister lives in Rome"])
    output = run(
        CORE_UPDATE,
        CoreUpdateInput(
            current_core_markdown=current,
            candidate_new_memories=["Maya moved to Berlin"],
            superseded_memories=[],
        ),
    )
    assert bullets(output.core_markdown)["USER"] == [
        "Maya's sister lives in Rome",
        "Maya moved to Berlin",
    ]


def test_core_update_excludes_temporary_content_and_reports_no_change() -> None:
    current = core(USER=["Maya lives in Paris"])
    output = run(
        CORE_UPDATE,
        CoreUpdateInput(
            current_core_markdown=current,
            candidate_new_memories=[
                "This week I'm debugging the payment service",
                "Maya is currently debugging a flaky test",
                "For now, use the staging database",
                "Maya lives in Paris",  # already there
            ],
            superseded_memories=[],
        ),
    )
    assert not output.should_update
    assert bullets(output.core_markdown) == bullets(current)


def test_core_update_drops_a_superseded_bullet_even_without_a_coreworthy_candidate() -> None:
    output = run(
        CORE_UPDATE,
        CoreUpdateInput(
            current_core_markdown=core(TOOLS=["Maya runs Ubuntu 22.04"]),
            candidate_new_memories=["Maya tried a new laptop today"],
            superseded_memories=["Maya runs Ubuntu 22.04"],
        ),
    )
    assert output.should_update
    assert bullets(output.core_markdown) == {"SOUL": [], "TOOLS": [], "RULE": [], "USER": []}


# --- insert merge and note merge -------------------------------------------------------------


def test_insert_merge_keeps_every_detail() -> None:
    merged = run(INSERT_MERGE, MergeInput(existing="Maya likes tea.", new="Maya drinks it at 7am"))
    assert merged.content == "Maya likes tea; Maya drinks it at 7am"
    contained = run(
        INSERT_MERGE, MergeInput(existing="Maya likes green tea", new="Maya likes green tea at 7am")
    )
    assert contained.content == "Maya likes green tea at 7am"
    same = run(
        INSERT_MERGE, MergeInput(existing="Maya likes green tea at 7am", new="maya likes tea")
    )
    assert same.content == "Maya likes green tea at 7am; maya likes tea"


def test_merge_notes_keeps_every_detail_once() -> None:
    output = run(
        MERGE_NOTES,
        MergeNotesInput(
            notes=["Deployed v2 to eu-west-1. Tests pass", "Tests pass. Next: migrate the DB"]
        ),
    )
    assert output.summary == "Deployed v2 to eu-west-1. Tests pass. Next: migrate the DB."


# --- extraction ----------------------------------------------------------------------------


def test_fact_confidence_key_normalization_and_value_coercion() -> None:
    def fact(**fields: Any) -> Fact:
        return Fact.model_validate({"key": "k", "value": "v", "category": "preference", **fields})

    assert [fact(explicit=e).confidence for e in (True, False, None)] == [0.9, 0.6, 0.75]
    assert fact().confidence == 0.75
    assert fact(key="Code_Style").key == "code-style"
    assert fact(key="Preference/Code-Style").key == "preference/code-style"
    assert fact(key="  My--Key//path ").key == "my-key/path"
    assert normalize_memory_key("/Person/Sarah  Connor-") == "person/sarah-connor"
    assert fact(value=42).value == "42"
    assert fact(value={"size": 2}).value == '{"size": 2}'
    assert fact(tags=None).tags == []


def test_extraction_of_a_trivial_conversation_is_empty() -> None:
    output = run(EXTRACT, ExtractInput(conversation=[ConversationTurn(role="user", content="ok")]))
    assert output.model_dump() == {
        "preferences": [],
        "entities": [],
        "decisions": [],
        "styles": [],
        "artifacts": [],
    }


# --- synthesis and multi-fact ----------------------------------------------------------------


def test_synthesis_writes_three_to_five_second_person_sentences_strongest_first() -> None:
    observations = [
        StyleObservation(key="style/asks-for-sources", value="Asks for sources.", count=1),
        StyleObservation(key="style/humor-dry", value="User prefers dry wit", count=5),
        StyleObservation(key="style/prefers-terse-responses", value="Terse", count=3),
        StyleObservation(key="style/formal-tone", value="Formal", count=2),
    ]
    directive = run(SYNTHESIZE, SynthesizeInput(observations=observations)).directive
    sentences = re.split(r"(?<=\.)\s+", directive)
    assert 3 <= len(sentences) <= 5
    assert sentences[0] == "You tend to favour dry, understated wit over overt jokes."
    assert "short" in sentences[1]
    assert "Keep responses" in directive
    assert "sources" not in directive  # only the strongest signals
    for few in ([], observations[:1]):
        directive = run(SYNTHESIZE, SynthesizeInput(observations=few)).directive
        assert 3 <= len(re.split(r"(?<=\.)\s+", directive)) <= 5
        assert directive.startswith("You ")


def test_multi_fact_keeps_at_most_five_first_person_facts() -> None:
    turn = (
        "Hi! I live in Berlin. What time is it? Yesterday I went to the Louvre. "
        "First I run the tests, then I push. I always drink coffee. My partner is Sam. "
        "We use Python 3.12. I love jazz."
    )
    facts = run(MULTI_FACT, MultiFactInput(turn=turn)).facts
    assert len(facts) == MAX_CANDIDATE_FACTS == 5
    assert [(f.content, f.category) for f in facts] == [
        ("I live in Berlin.", "semantic"),
        ("Yesterday I went to the Louvre.", "episodic"),
        ("First I run the tests, then I push.", "procedural"),
        ("I always drink coffee.", "semantic"),
        ("My partner is Sam.", "semantic"),
    ]
    assert all(0.5 <= f.importance <= 0.8 for f in facts)
    assert facts[0].importance > facts[3].importance - 0.2


# --- every stage: registry, rendering, recorded calls, schemas -------------------------------

CANDIDATE = CandidateMemory(id="m1", content="Maya lives in Paris", kind="semantic", importance=0.7)
CANDIDATE_NEWER = CandidateMemory(
    id="m2", content="Maya lives in Berlin now", kind="semantic", importance=0.6
)

SAMPLE_INPUTS: dict[str, Any] = {
    "split": SplitInput(raw_input="I live in Paris. I like tea."),
    "reconstruct": ReconstructInput(
        related=[related("m1", "I live in Paris", 0.9)], new_contents=["I moved to Berlin"]
    ),
    "remember": RememberInput(
        related=[related("m1", "I live in Paris", 0.9)],
        new_contents=[WrittenContent(role="user", text="Hi! I moved to Berlin")],
    ),
    "refine": RefineInput(
        related=[related("m1", "I live in Paris", 0.9)],
        new_contents=["I moved to Berlin"],
        previous=ReconstructOutput(memories=[], coverage=[]),
        problems=["no memories"],
    ),
    "core_update": CoreUpdateInput(
        current_core_markdown=core(USER=["I live in Paris"]),
        candidate_new_memories=["I moved to Berlin"],
        superseded_memories=["I live in Paris"],
    ),
    "insert_merge": MergeInput(existing="Maya likes tea", new="Maya likes green tea at 7am"),
    "extract": ExtractInput(
        conversation=[ConversationTurn(role="user", content="I prefer short answers 🙂")]
    ),
    "synthesize": SynthesizeInput(
        observations=[StyleObservation(key="style/humor-dry", value="Dry wit", count=3)]
    ),
    "multi_fact": MultiFactInput(turn="I live in Berlin. I love jazz."),
    "merge_notes": MergeNotesInput(notes=["Deployed v2.", "Tests pass."]),
    # consolidation (seed 001 §2-§6, 003 §3-§4)
    "triage": TriageInput(namespace="default", memories=[CANDIDATE]),
    "gate": GateInput(candidates=[CANDIDATE]),
    "merge": PairInput(older=CANDIDATE, newer=CANDIDATE_NEWER, similarity=0.81),
    "reconcile": PairInput(older=CANDIDATE, newer=CANDIDATE_NEWER, similarity=0.66),
    "distill": DistillInput(namespace="billing", notes=["Started the export.", "Chose CSV."]),
    "resume_compress": ResumeCompressInput(
        namespace="billing", memories=["Deploy on Fridays only."], max_chars=600
    ),
    "audit": AuditInput(
        memories=[
            AuditMemory(
                short_id="m1abcdef",
                layer="core",
                importance=0.9,
                access_count=3,
                age_days=12.0,
                modified_days=2.0,
                tags=[],
                kind="semantic",
                content="Maya lives in Berlin",
            )
        ],
        merge_hints=[["m1abcdef", "m2abcdef"]],
    ),
    "name_topics": NameTopicsInput(
        topics=[TopicSample(topic_id="kb1", samples=["green tea", "jasmine tea"])],
        existing_names=["Running"],
    ),
    "same_fact": SameFactInput(
        pairs=[
            FactPair(
                pair_id="0",
                older="Maya lives in Paris",
                newer="Maya lives in Berlin",
                similarity=0.7,
            )
        ]
    ),
    "insight": InsightInput(
        activity=["Maya ran 10 km", "Maya ran 12 km", "Maya ran 15 km"], new_facts=[]
    ),
    "fact_extract": FactExtractInput(subject="maya", content="I live in Lisbon."),
    "expand": ExpandInput(query="where does Maya live"),
    "rerank": RerankInput(
        query="where does Maya live",
        candidates=[RerankCandidate(id="m1", content="Maya lives in Berlin")],
    ),
    "relate": RelateInput(pairs=[StatementPair(older="I live in Paris", newer="I moved")]),
    "read_turns": ReadTurnsInput(turns=[TurnText(role="assistant", text="Remember to rest")]),
    "read_facts": ReadFactsInput(
        texts=[FactText(text="berlin, for now", asked="Where are you based?")]
    ),
}

BOUNDARY_TAGS = {
    "split": ["raw_input"],
    "reconstruct": ["related_memories", "new_contents"],
    "refine": ["related_memories", "new_contents", "previous_output", "problems"],
    "remember": ["related_memories", "new_contents", "kind"],
    "core_update": ["current_core_markdown", "candidate_new_memories", "superseded_memories"],
    "insert_merge": ["existing_memory", "new_memory"],
    "extract": ["conversation"],
    "synthesize": ["observations"],
    "multi_fact": ["turn"],
    "merge_notes": ["notes"],
    "triage": ["namespace", "memories"],
    "gate": ["candidates"],
    "merge": ["older", "newer", "similarity"],
    "reconcile": ["older", "newer", "similarity"],
    "distill": ["namespace", "notes"],
    "resume_compress": ["namespace", "memories", "max_chars"],
    "audit": ["memories", "merge_hints"],
    "name_topics": ["topics", "existing_names"],
    "same_fact": ["pairs"],
    "insight": ["activity", "new_facts", "conversation"],
    "expand": ["query"],
    "rerank": ["query", "memories"],
    "fact_extract": ["subject", "memory"],
    "relate": ["pairs"],
    "read_turns": ["turns"],
    "read_facts": ["texts"],
}


def test_registry_holds_every_stage_with_a_versioned_prompt() -> None:
    constants: list[Stage[Any, Any]] = [
        SPLIT,
        RECONSTRUCT,
        REFINE,
        REMEMBER,
        CORE_UPDATE,
        INSERT_MERGE,
        EXTRACT,
        SYNTHESIZE,
        MULTI_FACT,
        MERGE_NOTES,
        *CONSOLIDATION_STAGES.values(),
        *SEARCH_STAGES.values(),
        *FACT_STAGES.values(),
        *JUDGE_STAGES.values(),
    ]
    assert list(STAGES.values()) == constants
    assert set(STAGES) == set(SAMPLE_INPUTS) == set(BOUNDARY_TAGS)
    assert RECONSTRUCT.prompt_id == "haema.reconstruct" and RECONSTRUCT.version == "2"
    assert len({s.prompt_id for s in constants}) == len(constants)
    assert REFINE.output_model is RECONSTRUCT.output_model is ReconstructOutput


def test_prompts_carry_the_seed_contracts() -> None:
    reconstruct = RECONSTRUCT.system
    for phrase in (
        "Related memories may be empty",
        "New contents are the newest evidence",
        "Conflict resolution favors new contents",
        "Independent facts split into separate memories",
        '"memories"',
        '"coverage"',
        "at most 280 characters",
    ):
        assert phrase in reconstruct
    assert reconstruct in REFINE.system and "<problems>" in REFINE.system
    for phrase in ("Durable", "Material", "Confident", "SOUL", "TOOLS", "RULE", "USER", "8"):
        assert phrase in CORE_UPDATE.system
    assert "Return a JSON object with five arrays" in EXTRACT.system
    assert '"explicit": boolean' in EXTRACT.system
    assert "(3-5 sentences)" in SYNTHESIZE.system and "You tend to" in SYNTHESIZE.system


@pytest.mark.parametrize("name", list(BOUNDARY_TAGS))
def test_render_wraps_each_input_in_its_boundary_tags(name: str) -> None:
    text = STAGES[name].render(SAMPLE_INPUTS[name])
    tags = re.findall(r"^<(/?)(\w+)>$", text, re.M)
    expected = [t for tag in BOUNDARY_TAGS[name] for t in (("", tag), ("/", tag))]
    assert tags == expected


def test_render_shows_reconstruction_inputs_with_ids_indexes_and_similarity() -> None:
    text = RECONSTRUCT.render(SAMPLE_INPUTS["reconstruct"])
    related_block = text.split("<related_memories>\n")[1].split("\n</related_memories>")[0]
    new_block = text.split("<new_contents>\n")[1].split("\n</new_contents>")[0]
    assert json.loads(related_block) == [
        {"id": "m1", "content": "I live in Paris", "similarity": 0.9}
    ]
    assert json.loads(new_block) == [{"index": 0, "content": "I moved to Berlin"}]


def test_render_of_a_conversation_skips_tools_and_keeps_the_recent_tail() -> None:
    turns = [ConversationTurn(role="user", content=f"{i:03d} " + "x" * 600) for i in range(40)]
    turns.append(ConversationTurn(role="tool", content="tool output"))
    text = EXTRACT.render(ExtractInput(conversation=turns))
    lines = text.splitlines()[1:-1]
    assert "tool output" not in text
    assert all(len(line) == len("user: ") + 500 for line in lines)
    assert len(lines) == 30  # 15,000 characters of 500-character messages
    assert lines[-1].startswith("user: 039 ")


def test_render_refuses_inputs_of_another_stage() -> None:
    with pytest.raises(TypeError):
        SPLIT.render(SAMPLE_INPUTS["merge_notes"])


def matches_schema(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """The JSON-schema subset pydantic emits for these models."""
    if "$ref" in schema:
        return matches_schema(value, root["$defs"][schema["$ref"].split("/")[-1]], root)
    if "anyOf" in schema:
        return any(matches_schema(value, option, root) for option in schema["anyOf"])
    kind = str(schema.get("type"))
    if kind == "object":
        properties = schema.get("properties", {})
        return (
            isinstance(value, dict)
            and all(key in value for key in schema.get("required", []))
            and (schema.get("additionalProperties", True) or set(value) <= set(properties))
            and all(matches_schema(v, properties[k], root) for k, v in value.items())
        )
    if kind == "array":
        return (
            isinstance(value, list)
            and len(value) <= schema.get("maxItems", math.inf)
            and all(matches_schema(item, schema["items"], root) for item in value)
        )
    if kind == "number":
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and schema.get("minimum", -math.inf) <= value <= schema.get("maximum", math.inf)
        )
    expected = {"string": str, "boolean": bool, "null": type(None)}
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected[kind])


@pytest.mark.parametrize("name", list(SAMPLE_INPUTS))
def test_offline_call_is_recorded_like_a_model_call(name: str) -> None:
    stage, inputs = STAGES[name], SAMPLE_INPUTS[name]
    call: LLMCall[Any] = OFFLINE.complete(stage, inputs)
    schema = stage.output_model.model_json_schema()
    assert schema.get("additionalProperties") is False
    assert matches_schema(json.loads(call.response), schema, schema)
    assert stage.output_model.model_validate_json(call.response) == call.output
    assert (call.stage, call.prompt_id, call.prompt_version) == (
        stage.name,
        stage.prompt_id,
        stage.version,
    )
    assert (call.provider, call.model) == ("offline", "rules-v1")
    assert call.request == {
        "model": "rules-v1",
        "messages": [
            {"role": "system", "content": stage.system},
            {"role": "user", "content": stage.render(inputs)},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": stage.name, "schema": schema, "strict": False},
        },
        "temperature": 0,
        "max_tokens": stage.max_answer_tokens,
    }
    prompt_chars = len(stage.system) + len(stage.render(inputs))
    assert call.prompt_tokens == math.ceil(prompt_chars / 4)
    assert call.completion_tokens == math.ceil(len(call.response) / 4)
    assert call.latency_ms >= 0
    assert OFFLINE.complete(stage, inputs).output == call.output  # deterministic


def test_offline_provider_refuses_an_unknown_stage() -> None:
    stranger = Stage(
        name="telepathy",
        prompt_id="x.telepathy",
        version="1",
        system="",
        input_model=SplitInput,
        output_model=ReconstructOutput,
        renderer=SPLIT.renderer,
    )
    with pytest.raises(LLMError, match="telepathy"):
        OFFLINE.complete(stranger, SplitInput(raw_input="x"))


# --- scripted provider and provider selection -------------------------------------------------


def test_scripted_provider_overrides_a_stage_then_delegates() -> None:
    scripted = ScriptedProvider(OFFLINE)
    incomplete = ReconstructOutput(memories=[], coverage=[])
    scripted.script("reconstruct", incomplete, '{"memories": []}', LLMError("down"))
    inputs = SAMPLE_INPUTS["reconstruct"]

    first = scripted.complete(RECONSTRUCT, inputs)
    assert first.output == incomplete and first.provider == "scripted"
    assert first.request["messages"] == RECONSTRUCT.messages(inputs)
    with pytest.raises(StageOutputInvalid, match="coverage"):
        scripted.complete(RECONSTRUCT, inputs)
    with pytest.raises(LLMError, match="down"):
        scripted.complete(RECONSTRUCT, inputs)
    assert scripted.complete(RECONSTRUCT, inputs).output == run(RECONSTRUCT, inputs)
    assert scripted.complete(SPLIT, SAMPLE_INPUTS["split"]).provider == "offline"
    assert [c.provider for c in scripted.calls] == ["scripted", "offline", "offline"]


def test_make_provider_follows_the_settings(tmp_path: Path) -> None:
    assert isinstance(make_provider(Settings(home=tmp_path)), OfflineProvider)
    with pytest.raises(InvalidInput, match="MNEMOLEDGER_LLM_MODEL"):
        make_provider(Settings(home=tmp_path, llm_provider="openai"))
    provider = make_provider(
        Settings(
            home=tmp_path,
            llm_provider="openai",
            llm_model="llama3.1",
            openai_base_url="http://127.0.0.1:9/v1",
        )
    )
    assert (provider.name, provider.model) == ("openai", "llama3.1")


def test_every_stage_bounds_its_answer() -> None:
    """Issue 31: every request sends `max_tokens` (a small model that loops is cut off);
    the insight call's is the seed's 220."""
    insight = CONSOLIDATION_STAGES["insight"]
    request = insight.chat_request(
        InsightInput(activity=["Maya asked for a summary"], new_facts=[]), "any-model"
    )
    assert request["max_tokens"] == INSIGHT_MAX_TOKENS == 220
    assert set(LLM_STAGE_MAX_TOKENS) == set(STAGES)
    for name, stage in STAGES.items():
        assert stage.max_answer_tokens == LLM_STAGE_MAX_TOKENS[name], name
        assert 1 <= stage.max_answer_tokens <= 4096
