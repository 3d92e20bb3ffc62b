"""HAEMA `add(contents)` (seed 000), with engram's insert dedup (seed 001 §2.1: the
DB-level check, then `quick_semantic_dup` for what it let through).

    1. normalize           2. batch-embed          3. related per content (top_k, cutoff)
    4. union               5. one reconstruction   6. one refinement if incomplete
    7. fallback to the normalized contents         8. new memories
    9. supersede the replaced related memories    10. one core update
The raw input is saved first (`AddRequested`); everything the command decides — new
memories, superseded ones, reinforced duplicates, the core update, the LLM calls and the
outcome — is saved in ONE transaction, so a failure leaves no half-done replacement. A
concurrent writer that got there first makes that save conflict; the command then runs
again from step 2 on fresh state.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any, Final

import numpy as np

from mnemoledger.commands.judge import Judge, Turn, default_judge
from mnemoledger.commands.judge.decisions import says_the_same
from mnemoledger.commands.judge.judgement import Role, role_of
from mnemoledger.commands.judge.llm import LLMJudge
from mnemoledger.commands.lifecycle import core_sync
from mnemoledger.commands.lifecycle.core_candidates import ask_core_update
from mnemoledger.commands.llm.prompts import (
    INSERT_MERGE,
    RECONSTRUCT,
    REFINE,
    REMEMBER,
    SPLIT,
)
from mnemoledger.commands.llm.remember import WRITING_PROBLEM_PREFIX, coverage_of
from mnemoledger.commands.llm.schemas import (
    MergeInput,
    ReconstructedMemory,
    ReconstructInput,
    ReconstructOutput,
    RefineInput,
    RelatedMemory,
    RememberInput,
    RememberOutput,
    SplitInput,
    WrittenContent,
    new_source,
)
from mnemoledger.commands.llm.stage import LLMProvider, Stage
from mnemoledger.commands.recall.relations import apply_links, auto_links
from mnemoledger.commands.write import consent_gate
from mnemoledger.commands.write.command_run import (
    AlreadyDecided,
    decide_until_saved,
    still_requested,
)
from mnemoledger.commands.write.constraints import conform, format_violations
from mnemoledger.commands.write.recorded_llm import RecordedLLM, prompt_version
from mnemoledger.commands.write.replaying import recorded_id, recorded_ids
from mnemoledger.commands.write.sanitize import (
    Finding,
    detect_instruction,
    detect_phrasing,
    refuse,
)
from mnemoledger.commands.write.similarity import jaccard, quick_dedup_threshold
from mnemoledger.commands.write.touch import dedup_touch
from mnemoledger.ledger import Ledger, Memory, NewMemory, Provenance, Settings, validation
from mnemoledger.ledger.command import COMPLETED, AddCommand, Command
from mnemoledger.ledger.core import CoreDocument, empty_core_markdown, parse_sections
from mnemoledger.ledger.errors import InvalidInput, LedgerError
from mnemoledger.ledger.policy import (
    ACTIVE,
    DEDUP_COSINE_SIM,
    DEDUP_JACCARD_PREFILTER,
    EPISODIC,
    INSERT_MERGE_SIM,
    MAX_EVIDENCE_ITEMS,
    PROCEDURAL,
    QUICK_DEDUP_CANDIDATES,
    QUICK_DEDUP_MODES,
    SEMANTIC,
    SHARED_NAMESPACE,
    WORTH_KEEPING_CUT,
    LLMAddCalls,
    QuickDedupMode,
)
from mnemoledger.ledger.provenance import acting_as
from mnemoledger.ledger.user import UserStream
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.embeddings.cache import CachedEmbedder
from mnemoledger.projections.embeddings.embedder import Embedder
from mnemoledger.projections.layers import LayersProjection, MemoryRow
from mnemoledger.projections.vectors import VectorsProjection

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AddRequest:
    """What the caller asked to remember, and how to file it."""

    contents: Sequence[str]
    kind: str = "semantic"
    tags: Sequence[str] = ()
    source: str = "api"
    namespace: str = "default"
    importance: float = 0.5
    evidence: Sequence[str] | None = None
    split: bool = True
    """Run the pre-memory split stage over each raw content (seed 000, stage 1)."""
    category: str | None = None
    """Seed 003 §5: the category every memory of this add is filed under (checked against
    the writer's allowlist by the caller); None: readers derive one."""
    metadata: Mapping[str, Any] | None = None
    """Free-form metadata every new memory of this add carries (mem0's `metadata`)."""
    quick_dedup: QuickDedupMode | None = None
    """Seed 001 §2.1 `quick_semantic_dup`: `words`, `similarity` or `off`; None: the
    deployment's setting. The mode an add ran with is recorded in its input, so a replay
    decides the same way (a recording without it ran before the check existed: `off`)."""
    role: Role = "user"
    """Who wrote the contents: `user`, `assistant`, `tool` (a fetched page, an API answer) or
    `document`. The injection screen and the worth-keeping judgement read it: an
    assistant's advice to the user is not an instruction to the model."""
    keep_all: bool = False
    """Store every piece, even those the judge finds not worth keeping (greetings, thanks,
    acknowledgements, questions)."""
    llm_calls: LLMAddCalls | None = None
    """`one`: one model call decides the add (`remember`); `staged`: a call per stage; None:
    the deployment's `llm_add_calls` with a model provider, `staged` offline. Recorded in
    the input when `one`, so a replay decides the same way."""
    core_batch: int | None = None
    """With `one`: how many adds' new memories one core-update call reads together; None:
    the deployment's `llm_core_batch`."""
    said_at: str | None = None
    """When the contents were said (ISO-8601 UTC, `validation.said_at`), if the caller named
    a past time (an imported history); None: now. Kept on every memory the add writes and
    every restatement it reinforces; a related memory said later is never replaced."""

    def as_input(self) -> dict[str, Any]:
        given: dict[str, Any] = {
            "contents": list(self.contents),
            "kind": self.kind,
            "tags": list(self.tags),
            "source": self.source,
            "namespace": self.namespace,
            "importance": self.importance,
            "evidence": list(self.evidence) if self.evidence is not None else None,
            "split": self.split,
        }
        if self.category is not None:  # absent when unnamed: older recordings stay as they were
            given["category"] = self.category
        if self.metadata is not None:
            given["metadata"] = dict(self.metadata)
        if self.quick_dedup is not None:
            given["quick_dedup"] = self.quick_dedup
        if self.role != "user":  # absent when the user's: older recordings stay as they were
            given["role"] = self.role
        if self.keep_all:
            given["keep_all"] = True
        if self.llm_calls == "one":  # absent when staged: older recordings stay as they were
            given["llm_calls"] = "one"
            given["core_batch"] = self.core_batch
        if self.said_at is not None:  # absent when now: older recordings stay as they were
            given["said_at"] = self.said_at
        return given


@dataclass
class AddOutcome:
    """What one add did."""

    command_id: str
    added: list[Memory] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    reinforced: list[Memory] = field(default_factory=list)
    core_updated: bool = False
    fallback: bool = False
    llm_calls: int = 0
    consent_requested: list[str] = field(default_factory=list)
    """Consent requests for the sensitive profile fields the contents state (seed 003 §10)."""
    writing: list[dict[str, object]] = field(default_factory=list)
    """What the writing constraints did with stage outputs that broke them (seed 003 §9)."""
    not_kept: list[str] = field(default_factory=list)
    """Pieces the judge found not worth keeping (greetings, thanks, questions): not stored."""
    core_update: str | None = None
    """With one call per add: `deferred` (the new memories wait for a later core-update
    call) or `batched` (this add made that call, over every waiting add's memories)."""

    def as_outcome(self) -> dict[str, Any]:
        given: dict[str, Any] = {
            "added": [m.id.hex for m in self.added],
            "superseded": self.superseded,
            "reinforced": [m.id.hex for m in self.reinforced],
            "core_updated": self.core_updated,
            "fallback": self.fallback,
        }
        if self.consent_requested:  # absent when none: older recordings stay as they were
            given["consent_requested"] = self.consent_requested
        if self.writing:
            given["writing"] = self.writing
        if self.not_kept:
            given["not_kept"] = self.not_kept
        if self.core_update is not None:
            given["core_update"] = self.core_update
        return given


@dataclass
class AddPipeline:
    """Everything `add` reads and writes."""

    ledger: Ledger
    layers: LayersProjection
    vectors: VectorsProjection
    embedder: Embedder
    provider: LLMProvider
    settings: Settings
    refresh: Callable[[], object] = lambda: None
    """Brings the read models up to date (before a re-run after a conflict)."""
    before_save: Callable[[], None] = lambda: None
    """Called just before the decisive save (tests inject faults here)."""
    consent: ConsentProjection | None = None
    """The consent read model: which sensitive fields were already proposed or decided."""
    judge: Judge = field(default_factory=default_judge)
    """Reads what the contents mean: instructions to the model, what is worth keeping."""

    def run(self, request: AddRequest, provenance: Provenance) -> AddOutcome:
        """Record the request, then process it."""
        command = self.record(request, provenance)
        return self.process(command, request_of(command.input), provenance)

    def record(self, request: AddRequest, provenance: Provenance) -> Command:
        """Validate the request and save it (`AddRequested`); nothing is decided yet.
        The saved input names the quick dedup mode, so processing it later decides the
        same way."""
        validation.identifier("user", provenance.user_id)
        if not request.contents:
            raise InvalidInput("nothing to add: give at least one content")
        contents = [validation.content(text) for text in request.contents]
        if request.quick_dedup is None:
            request = replace(request, quick_dedup=self.settings.quick_dedup)
        if request.llm_calls is None:
            with_model = self.settings.llm_provider != "offline"
            calls = self.settings.llm_add_calls if with_model else "staged"
            request = replace(request, llm_calls=calls)
        if request.llm_calls == "one" and request.core_batch is None:
            request = replace(request, core_batch=self.settings.llm_core_batch)
        # the decisive save validates kind, tags, ... again; failing early writes nothing
        self.ledger.draft(provenance, [_new_memory(request, contents[0])])
        with acting_as(provenance):
            command: Command = recorded_id(AddCommand(input=request.as_input()))
        self.ledger.save(command)
        return command

    def process(self, command: Command, request: AddRequest, provenance: Provenance) -> AddOutcome:
        """Decide and save a recorded add (`request` rebuilt from its input, `provenance` the
        request's). An add another process decided first is not decided again: its
        recorded outcome is returned."""
        user_id = str(validation.identifier("user", provenance.user_id))
        contents = [validation.content(text) for text in request.contents]
        decided = replace(provenance, user_id=user_id, causation_id=command.id.hex)

        def decide(fresh: Command, user: UserStream) -> AddOutcome:
            still_requested(self.ledger, fresh)  # under the user's writer lock
            return self._decide(fresh, user, request, contents, decided)

        try:
            return decide_until_saved(self.ledger, command, decided, decide, self.refresh)
        except AlreadyDecided:
            return outcome_of(self.ledger, command.id.hex)

    # --- the ten steps -------------------------------------------------------------------

    def _decide(
        self,
        command: Command,
        user: UserStream,
        request: AddRequest,
        raw_contents: list[str],
        provenance: Provenance,
    ) -> AddOutcome:
        if request.llm_calls == "one":
            return self._decide_in_one_call(command, user, request, raw_contents, provenance)
        llm = RecordedLLM(self.provider, command, provenance)
        judge = self._judge_of(llm)
        outcome = AddOutcome(command_id=command.id.hex)
        contents = self._split(llm, request, raw_contents)
        # the seed's phrasings (Python) are matched while the judge reads the pieces (native
        # code, which lets go of the interpreter): an add waits for the longer of the two
        screened = list(dict.fromkeys([*raw_contents, *contents]))  # one text, one screen
        role = request.role
        screen_phrasing = partial(_screen_all, role=role)
        screening = _side_work().submit(screen_phrasing, screened)
        try:
            judged = self._judged(contents, request, judge)
        except BaseException:
            _finish(screening, screen_phrasing, screened)  # a refusal says more than a failure
            raise
        _finish(screening, screen_phrasing, screened)
        refuse(judged.instruction)
        outcome.not_kept = judged.not_kept
        contents = judged.kept
        if not contents:  # nothing worth keeping: the add is recorded, nothing is stored
            outcome.llm_calls = command.llm_calls
            with acting_as(provenance):
                command.complete(outcome.as_outcome())
            self.ledger.save(command)
            return outcome
        vectors = self.embedder.passages(contents)
        changed: dict[str, Memory] = {}
        fresh, fresh_vectors = self._dedup(
            llm, judge, contents, vectors, provenance, changed, request, outcome
        )
        # a merge rewrote a memory: the vectors read model will want its new text, so it is
        # embedded now, beside the rest of the decision, into the embedding cache
        rewritten = _warm(self.embedder, [m.content for m in changed.values()])
        touch = dedup_touch(command.id, list(changed), provenance)  # seed 001 §2.1 touch()
        added: list[Memory] = []
        superseded: list[Memory] = []
        if fresh:
            related = self._related(
                provenance.user_id,
                self._lookup_vectors(fresh, fresh_vectors),
                request.namespace,
                request.kind,
                request.said_at,
            )
            output = self._reconstruct(llm, related, fresh, outcome, request.kind)
            if output is None:
                outcome.fallback = True
                output = ReconstructOutput.model_validate(
                    {
                        "memories": [
                            {"content": text, "sources": [f"new:{i}"]}
                            for i, text in enumerate(fresh)
                        ],
                        "coverage": [
                            {"new_content": i, "memories": [i]} for i in range(len(fresh))
                        ],
                    }
                )
            added, superseded = self._replacement(output, related, request, provenance, changed)
            self._link(added, superseded, provenance)
        outcome.added = added
        outcome.superseded = [m.id.hex for m in superseded]
        outcome.reinforced = list(changed.values())
        core = self._core_update(llm, provenance, added, superseded, list(changed.values()))
        outcome.core_updated = core is not None
        try:
            self._save(
                command, user, outcome, provenance, contents, superseded, [core, touch], judge
            )
        finally:
            _settle(rewritten)
        return outcome

    def _save(
        self,
        command: Command,
        user: UserStream,
        outcome: AddOutcome,
        provenance: Provenance,
        contents: list[str],
        superseded: list[Memory],
        extra: Sequence[object | None],
        judge: Judge,
    ) -> None:
        """Step 11: the consent requests the contents call for (read by `judge`: the model,
        with a provider), the outcome, and everything decided, in one transaction."""
        added, changed = outcome.added, outcome.reinforced
        consents = consent_gate.proposals(
            contents, provenance, self.consent, now=consent_gate.asked_at(command), judge=judge
        )
        outcome.consent_requested = [r.id.hex for r in consents]
        outcome.llm_calls = command.llm_calls
        with acting_as(provenance):
            command.complete(outcome.as_outcome())
            user.changed(
                command.id.hex,
                [m.id.hex for m in added],
                outcome.superseded,
                [m.id.hex for m in changed],
            )
        self.before_save()
        others = [x for x in extra if x is not None]
        saved = {id(m): m for m in (*added, *superseded, *changed, *others)}
        self.ledger.save(command, user, *saved.values(), *consents)

    # --- one call per add ------------------------------------------------------------------

    def _decide_in_one_call(
        self,
        command: Command,
        user: UserStream,
        request: AddRequest,
        raw_contents: list[str],
        provenance: Provenance,
    ) -> AddOutcome:
        """With a model provider: the contents are embedded, their related memories found,
        and one `remember` call reads them (worth keeping, an instruction to the model),
        splits them, names the related memories they only restate (reinforced) and writes
        the memories (superseding the related ones they name, as a reconstruction does).
        core.md follows what the add superseded; its new memories wait for the batched
        core update (`_core_in_batches`)."""
        llm = RecordedLLM(self.provider, command, provenance)
        outcome = AddOutcome(command_id=command.id.hex)
        contents = list(dict.fromkeys(raw_contents))
        screen_phrasing = partial(_screen_all, role=request.role)
        screening = _side_work().submit(screen_phrasing, contents)
        try:
            vectors = self.embedder.passages(contents)
            related = self._related(
                provenance.user_id,
                self._lookup_vectors(contents, vectors),
                request.namespace,
                request.kind,
                request.said_at,
            )
            inputs = RememberInput(
                related=related,
                new_contents=[WrittenContent(role=request.role, text=t) for t in contents],
                kind=request.kind,
                split=request.split and request.kind != PROCEDURAL,
            )
            answer = llm.run(REMEMBER, inputs)
        except BaseException:
            _finish(screening, screen_phrasing, contents)  # a refusal says more than a failure
            raise
        _finish(screening, screen_phrasing, contents)
        readings = {r.new_content: (r.keep, r.instruction) for r in answer.readings}
        read = [readings.get(i, (True, False)) for i in range(len(contents))]
        instructing = [t for t, (_, instruction) in zip(contents, read, strict=True) if instruction]
        refuse(Finding("meaning", instructing[0]) if instructing else None)
        kept = {i for i, (keep, _) in enumerate(read) if keep or request.keep_all}
        outcome.not_kept = [t for i, t in enumerate(contents) if i not in kept]
        outcome.fallback = REMEMBER.name in llm.fell_back
        memories = self._remembered(answer, inputs, kept, outcome)
        _screen_all([m.content for m in memories], request.role)
        by_id = {r.id for r in related}
        restated = dict.fromkeys(
            r.memory for r in answer.restates if r.new_content in kept and r.memory in by_id
        )
        if not memories and not restated:  # nothing worth keeping: recorded, nothing stored
            outcome.llm_calls = command.llm_calls
            with acting_as(provenance):
                command.complete(outcome.as_outcome())
            self.ledger.save(command)
            return outcome
        changed: dict[str, Memory] = {}
        for memory_id in restated:  # seed 001 §2.1 step 3: returned as it is, reinforced
            memory = self.ledger.memory(memory_id)
            changed[memory_id] = memory
            with acting_as(provenance):
                memory.reinforce(
                    evidence=list(request.evidence) if request.evidence else None,
                    said_at=request.said_at,
                )
        touch = dedup_touch(command.id, list(changed), provenance)
        output = ReconstructOutput(memories=memories, coverage=[])
        added, superseded = self._replacement(
            output, related, request, provenance, changed, stage=REMEMBER
        )
        self._link(added, superseded, provenance)
        outcome.added = added
        outcome.superseded = [m.id.hex for m in superseded]
        outcome.reinforced = list(changed.values())
        core = self._core_in_batches(
            llm, provenance, added, superseded, list(changed.values()), request.core_batch or 1
        )
        outcome.core_updated, outcome.core_update = core.updated, core.status
        written = [contents[i] for i in sorted(kept)]
        # one call per add: the consent gate reads the contents offline, not with a second call
        self._save(
            command,
            user,
            outcome,
            provenance,
            written,
            superseded,
            [core.document, touch],
            self.judge,
        )
        return outcome

    def _remembered(
        self,
        answer: RememberOutput,
        inputs: RememberInput,
        kept: set[int],
        outcome: AddOutcome,
    ) -> list[ReconstructedMemory]:
        """The memories of the answer built from kept contents (or rewriting related ones
        alone); when the answer is unusable (`remember_problems`: an answer the provider did
        not check, or the offline rules' own breaking the writing constraints), each kept
        content not restated, as written. A content kept only because the add keeps all
        that the answer left out is written as it is."""
        problems = REMEMBER.problems(inputs, answer)
        contents = [c.text for c in inputs.new_contents]
        if problems:
            outcome.fallback = True
            outcome.writing.extend(
                {"stage": REMEMBER.name, "violations": [p], "action": "refused"}
                for p in problems
                if p.startswith(WRITING_PROBLEM_PREFIX)
            )
            restated = {r.new_content for r in answer.restates}
            return [
                ReconstructedMemory(content=contents[i], sources=[new_source(i)])
                for i in sorted(kept - restated)
            ]
        dropped = {new_source(i) for i in range(len(contents)) if i not in kept}
        memories = [
            m
            for m in answer.memories
            if not any(s in dropped for s in m.sources)
            or any(s.startswith("new:") and s not in dropped for s in m.sources)
        ]
        covered = set(coverage_of(answer, len(contents))) | {r.new_content for r in answer.restates}
        memories.extend(
            ReconstructedMemory(content=contents[i], sources=[new_source(i)])
            for i in sorted(kept - covered)
        )
        return memories

    def _core_in_batches(
        self,
        llm: RecordedLLM,
        provenance: Provenance,
        added: list[Memory],
        superseded: list[Memory],
        reworded: Sequence[Memory],
        batch: int,
    ) -> _CoreStep:
        """core.md follows what the add superseded or reworded, as on every add; its new
        memories wait on the core document (`CoreCandidatesDeferred`, "deferred") until
        `batch` adds have left some, and the add that completes the batch makes one
        core-update call over all the waiting memories still active ("batched",
        `CoreCandidatesRead`). None: no new memory, nothing to say about the core."""
        document = self.ledger.core_document(provenance, provenance.user_id)
        current = document.markdown or empty_core_markdown()
        bullets = core_sync.bullets_of(current, document.sources)
        own = {m.id.hex: m for m in (*superseded, *reworded, *added)}
        read_now = bool(added) and document.pending_adds + 1 >= batch
        candidates: list[Memory] = []
        if read_now:
            waiting = (own.get(i) or core_sync.lookup(self.ledger, i) for i in document.pending)
            candidates = [m for m in waiting if m is not None and m.state == ACTIVE]
            candidates = list({m.id.hex: m for m in (*candidates, *added)}.values())
        decided = provenance
        if candidates:
            bullets, decided = ask_core_update(
                llm, provenance, current, bullets, candidates, superseded
            )
        touched = {m.id.hex: m for m in (*candidates, *added, *superseded, *reworded)}
        bullets = core_sync.followed(
            bullets, touched, lambda memory_id: core_sync.lookup(self.ledger, memory_id)
        )
        recorded: CoreDocument | None = None
        if bullets or any(parse_sections(current).values()):  # never start an empty core
            caused_by = [m.id.hex for m in candidates or added] or list(touched)
            recorded = core_sync.record(document, decided, bullets, caused_by)
        if not added:
            return _CoreStep(recorded, None, recorded is not None)
        with acting_as(provenance):
            if read_now:
                document.read_candidates([m.id.hex for m in candidates])
            else:
                document.defer([m.id.hex for m in added])
        return _CoreStep(document, "batched" if read_now else "deferred", recorded is not None)

    def _judge_of(self, llm: RecordedLLM) -> Judge:
        """Who reads what the contents mean: the fine-tuned models offline; with a model
        provider, the model (each call recorded on the command)."""
        return self.judge if self.settings.llm_provider == "offline" else LLMJudge(llm)

    def _judged(self, contents: list[str], request: AddRequest, judge: Judge) -> _Judged:
        """What the judge makes of the pieces, in one batch: the first that reads as an
        instruction to the model, and which are worth keeping."""
        turns = [Turn(text, request.role) for text in contents]
        instruction = detect_instruction(contents, request.role, judge)
        if request.keep_all:
            return _Judged(instruction, contents, [])
        keep = judge.worth_keeping(turns)
        kept = [t for t, p in zip(contents, keep, strict=True) if p >= WORTH_KEEPING_CUT]
        not_kept = [t for t, p in zip(contents, keep, strict=True) if p < WORTH_KEEPING_CUT]
        return _Judged(instruction, kept, not_kept)

    def _split(self, llm: RecordedLLM, request: AddRequest, contents: list[str]) -> list[str]:
        # a procedure is one memory of numbered steps (seed 003 §12), never cut into its steps
        if not request.split or request.kind == PROCEDURAL:
            return list(dict.fromkeys(contents))
        pieces: list[str] = []
        for text in contents:
            output = llm.run(SPLIT, SplitInput(raw_input=text))
            parts = [p for p in (_clean(c) for c in output.contents) if p] or [text]
            pieces.extend(parts)
        return list(dict.fromkeys(pieces))

    def _dedup(
        self,
        llm: RecordedLLM,
        judge: Judge,
        contents: list[str],
        vectors: np.ndarray[Any, Any],
        provenance: Provenance,
        changed: dict[str, Memory],
        request: AddRequest,
        outcome: AddOutcome,
    ) -> tuple[list[str], np.ndarray[Any, Any]]:
        """engram §2.1: Jaccard > 0.50 then cosine > 0.85 is a duplicate: reinforce it (and
        merge the new wording in through the merge stage when similarity > 0.80)."""
        keep: list[int] = []
        for index, (text, vector) in enumerate(zip(contents, vectors, strict=True)):
            # both checks read the same nearest memories: one vector search per content
            nearest = self._nearest(provenance.user_id, vector)
            duplicate = self._duplicate_of(nearest, text, request.namespace, judge)
            if duplicate is None:
                repeated = self._quick_duplicate_of(nearest, text, request, judge)
                if repeated is None:
                    keep.append(index)
                    continue
                # seed 001 §2.1 step 3: the stored memory is returned as it is, touched
                # (below, with every memory this add restated) and its repetition counted
                memory = changed.get(repeated) or self.ledger.memory(repeated)
                changed[memory.id.hex] = memory
                evidence = request.evidence
                with acting_as(provenance):
                    memory.reinforce(
                        evidence=list(evidence) if evidence else None, said_at=request.said_at
                    )
                continue
            memory = changed.get(duplicate[0]) or self.ledger.memory(duplicate[0])
            changed[memory.id.hex] = memory
            with acting_as(replace(provenance, prompt_version=prompt_version(INSERT_MERGE))):
                if duplicate[1] > INSERT_MERGE_SIM and text != memory.content:
                    merged = llm.run(INSERT_MERGE, MergeInput(existing=memory.content, new=text))
                    # seed 003 §9: a merged text that breaks the format is refused, the
                    # stored one stays (trimming a merge would drop what was merged in)
                    written = conform(merged.content, request.kind, INSERT_MERGE.name, trim=False)
                    if not written.passed:
                        outcome.writing.append(written.as_record())
                    content = written.text or ""
                    if content and content != memory.content:
                        memory.update(validation.content(content), None)
                evidence = request.evidence
                memory.reinforce(
                    evidence=list(evidence) if evidence else None, said_at=request.said_at
                )
        return [contents[i] for i in keep], vectors[keep]

    def _nearest(
        self, user_id: str, vector: np.ndarray[Any, Any]
    ) -> list[tuple[str, float, MemoryRow]]:
        """The active stored memories nearest `vector`, with their similarity (reference
        scale), nearest first."""
        candidates = self.vectors.similar(user_id, vector, QUICK_DEDUP_CANDIDATES)
        rows = self.layers.get_many([memory_id for memory_id, _ in candidates])
        return [
            (memory_id, similarity, rows[memory_id])
            for memory_id, similarity in candidates
            if memory_id in rows and rows[memory_id].state == ACTIVE
        ]

    def _duplicate_of(
        self,
        nearest: Sequence[tuple[str, float, MemoryRow]],
        text: str,
        namespace: str,
        judge: Judge,
    ) -> tuple[str, float] | None:
        """The stored memory `text` restates: similar on the reference scale, words in
        common, a namespace it may join (seed 001 §7: its own, or either side `default`),
        and no value of its own that differs ("my number is ...0142" / "...0199" is an
        update for the reconstruction, not a repetition)."""
        for memory_id, similarity, row in nearest:
            joinable = row.namespace == namespace or SHARED_NAMESPACE in (namespace, row.namespace)
            if (
                joinable
                and similarity > DEDUP_COSINE_SIM
                and jaccard(text, row.content) > DEDUP_JACCARD_PREFILTER
                and says_the_same(row.content, text, judge)
            ):
                return memory_id, similarity
        return None

    def _quick_duplicate_of(
        self,
        nearest: Sequence[tuple[str, float, MemoryRow]],
        text: str,
        request: AddRequest,
        judge: Judge,
    ) -> str | None:
        """engram's `quick_semantic_dup` (seed 001 §2.1 step 2): the stored memory `text`
        repeats at the insert threshold (the proxy's for an extraction), in a namespace it
        may join; in the default `words` mode the words must also say the same thing
        (`quick_dedup_words_agree`), so an update or a look-alike fact, which share this
        similarity band, is still added."""
        mode, namespace = request.quick_dedup or self.settings.quick_dedup, request.namespace
        if mode == "off":
            return None
        threshold = quick_dedup_threshold(request.source)
        for memory_id, similarity, row in nearest:
            if similarity < threshold:
                continue
            joinable = row.namespace == namespace or SHARED_NAMESPACE in (namespace, row.namespace)
            if joinable and (
                mode == "similarity" or quick_dedup_words_agree(row.content, text, judge)
            ):
                return memory_id
        return None

    def _lookup_vectors(
        self, fresh: list[str], passages: np.ndarray[Any, Any]
    ) -> np.ndarray[Any, Any]:
        """Step 2: the vectors the related lookup searches with (see `related_embedding`)."""
        if self.settings.related_embedding == "query":
            return np.vstack([self.embedder.query(text) for text in fresh])
        return passages

    def _related(
        self,
        user_id: str,
        vectors: np.ndarray[Any, Any],
        namespace: str,
        kind: str,
        said_at: str | None = None,
    ) -> list[RelatedMemory]:
        """Steps 3-4: each content's top_k neighbours above the cutoff, unioned; only those
        of the add's namespace and kind and no notes, which is all a new content may replace
        (a project's facts are not another project's older versions; a note is superseded
        by notes only). What happened is never an older version of what happened next: an
        episodic add replaces nothing. Nor is what was said later an older version of what
        an import says was said at `said_at`: a memory said after it (its `created_at`) is
        left out, and the import is stored beside it."""
        if kind == EPISODIC:
            return []
        best: dict[str, float] = {}
        for vector in vectors:
            for memory_id, similarity in self.vectors.similar(
                user_id, vector, self.settings.related_top_k
            ):
                if similarity >= self.settings.related_min_similarity:
                    best[memory_id] = max(similarity, best.get(memory_id, -1.0))
        rows = self.layers.get_many(list(best))
        return [
            RelatedMemory(id=memory_id, content=rows[memory_id].content, similarity=round(s, 4))
            for memory_id, s in sorted(best.items(), key=lambda item: (-item[1], item[0]))
            if memory_id in rows
            and rows[memory_id].state == ACTIVE
            and rows[memory_id].namespace == namespace
            and rows[memory_id].kind == kind
            and rows[memory_id].note_kind is None  # a note is superseded by notes only
            and not said_later(rows[memory_id].created_at, said_at)
        ]

    def _reconstruct(
        self,
        llm: RecordedLLM,
        related: list[RelatedMemory],
        fresh: list[str],
        outcome: AddOutcome,
        kind: str,
    ) -> ReconstructOutput | None:
        """Steps 5-7: one reconstruction, one refinement if incomplete or if a memory breaks
        the writing constraints (seed 003 §9), else None (fallback)."""
        output = llm.run(RECONSTRUCT, ReconstructInput(related=related, new_contents=fresh))
        problems = reconstruction_problems(output, related, fresh, kind)
        if not problems:
            return output
        refined = llm.run(
            REFINE,
            RefineInput(related=related, new_contents=fresh, previous=output, problems=problems),
        )
        result = None if reconstruction_problems(refined, related, fresh, kind) else refined
        outcome.writing.extend(
            {"stage": RECONSTRUCT.name, "violations": [p], "action": action}
            for p in problems
            if p.startswith(WRITING_PROBLEM_PREFIX)
            for action in ["refined" if result is not None else "refused"]
        )
        return result

    def _replacement(
        self,
        output: ReconstructOutput,
        related: list[RelatedMemory],
        request: AddRequest,
        provenance: Provenance,
        reinforced: dict[str, Memory],
        stage: Stage[Any, Any] = RECONSTRUCT,
    ) -> tuple[list[Memory], list[Memory]]:
        """Steps 8-9: the new memories, and the related ones they replace (superseded).

        A new memory inherits the evidence of the memories it was built from, so what it
        replaced can still be traced to its sources (merges keep provenance). A memory
        this command already reinforced is superseded through that same object, so the
        save holds one next version of it, not two."""
        by_id = {r.id: r for r in related}
        decided = replace(provenance, prompt_version=prompt_version(stage))
        stored: dict[str, Memory] = dict(reinforced)
        added: list[Memory] = []
        superseded: list[Memory] = []
        for memory in output.memories:
            content = validation.content(_clean(memory.content))
            sources = [s for s in memory.sources if s in by_id]
            if len(sources) == 1 and by_id[sources[0]].content == content:
                continue  # carried over unchanged: the stored memory stays as it is
            consumed = [stored.get(s) or self.ledger.memory(s) for s in sources]
            stored.update({m.id.hex: m for m in consumed})
            evidence = inherited_evidence(request.evidence, consumed)
            [draft] = recorded_ids(
                self.ledger.draft(decided, [_new_memory(request, content, evidence)])
            )
            added.append(draft)
            for old in consumed:
                if old.state == ACTIVE:
                    with acting_as(decided):
                        old.supersede(draft.id.hex, "reconstructed")
                    superseded.append(old)
        return added, superseded

    def _link(self, added: list[Memory], superseded: list[Memory], provenance: Provenance) -> None:
        """Seed 003 §2: edges from each new memory to its top-K neighbours above link_min
        (the vectors come from the embedding cache: nothing is embedded twice)."""
        if not added:
            return
        vectors = self.embedder.passages([m.content for m in added])
        links = auto_links(
            [(m.id.hex, v) for m, v in zip(added, vectors, strict=True)],
            provenance.user_id,
            self.vectors,
            exclude={m.id.hex for m in superseded},
        )
        apply_links({m.id.hex: m for m in added}, links, provenance)

    def _core_update(
        self,
        llm: RecordedLLM,
        provenance: Provenance,
        added: list[Memory],
        superseded: list[Memory],
        reworded: Sequence[Memory] = (),
    ) -> CoreDocument | None:
        """Step 10: the core-update stage, once, over the memories this call added; then
        core.md follows what the call superseded or reworded (`commands.core_sync`)."""
        document = self.ledger.core_document(provenance, provenance.user_id)
        current = document.markdown or empty_core_markdown()
        bullets = core_sync.bullets_of(current, document.sources)
        decided = provenance
        if added:
            bullets, decided = ask_core_update(llm, provenance, current, bullets, added, superseded)
        touched = {m.id.hex: m for m in (*added, *superseded, *reworded)}
        bullets = core_sync.followed(
            bullets, touched, lambda memory_id: core_sync.lookup(self.ledger, memory_id)
        )
        if not bullets and not any(parse_sections(current).values()):
            return None  # never start a core with an empty document
        caused_by = [m.id.hex for m in added] or list(touched)
        return core_sync.record(document, decided, bullets, caused_by)


def reconstruction_problems(
    output: ReconstructOutput,
    related: list[RelatedMemory],
    fresh: list[str],
    kind: str = SEMANTIC,
) -> list[str]:
    """Why a reconstruction is not acceptable (seed 000 step 6: incomplete or empty; seed
    003 §9: a rewritten memory empty, over 280 characters or over 2 sentences)."""
    problems: list[str] = []
    if not output.memories:
        problems.append("no memories in the output")
    covered = {c.new_content for c in output.coverage if c.memories}
    missing = [i for i in range(len(fresh)) if i not in covered]
    if missing:
        problems.append(f"new contents not covered: {missing}")
    known = {r.id for r in related} | {f"new:{i}" for i in range(len(fresh))}
    verbatim = set(fresh) | {r.content for r in related}
    for index, memory in enumerate(output.memories):
        text = _clean(memory.content)
        # what the user wrote is stored as written; only the stage's own texts are held
        if text not in verbatim and (violations := format_violations(text, kind)):
            problems.append(f"{WRITING_PROBLEM_PREFIX}memory {index}: {'; '.join(violations)}")
        unknown = [s for s in memory.sources if s not in known]
        if unknown:
            problems.append(f"memory {index} names unknown sources {unknown}")
    for coverage in output.coverage:
        if any(not 0 <= m < len(output.memories) for m in coverage.memories):
            problems.append(f"coverage of new content {coverage.new_content} is out of range")
    return problems


def quick_dedup_words_agree(stored: str, new: str, judge: Judge | None = None) -> bool:
    """The `words` guard of the quick dedup: words in common (the DB-level Jaccard
    prefilter) and no fact of one that the other lacks or states otherwise."""
    return jaccard(stored, new) > DEDUP_JACCARD_PREFILTER and says_the_same(stored, new, judge)


def quick_dedup_mode(value: object) -> QuickDedupMode:
    """`value` as a quick dedup mode (a recorded add's input), refused when it is none."""
    for mode in QUICK_DEDUP_MODES:
        if value == mode:
            return mode
    raise InvalidInput(f"quick_dedup must be one of {', '.join(QUICK_DEDUP_MODES)}, not {value!r}")


def request_of(given: Mapping[str, Any]) -> AddRequest:
    """The request a recorded add's input (`AddRequest.as_input`) was made from."""
    evidence = given.get("evidence")
    metadata = given.get("metadata")
    return AddRequest(
        contents=[str(c) for c in _listed(given.get("contents"))],
        kind=str(given.get("kind", SEMANTIC)),
        tags=tuple(str(t) for t in _listed(given.get("tags"))),
        source=str(given.get("source", "api")),
        namespace=str(given.get("namespace", "default")),
        importance=float(given.get("importance", 0.5)),
        evidence=None if evidence is None else [str(e) for e in _listed(evidence)],
        split=bool(given.get("split", True)),
        category=None if given.get("category") is None else str(given["category"]),
        metadata=dict(metadata) if isinstance(metadata, Mapping) else None,
        # recorded before the quick semantic dedup existed: the add ran without it
        quick_dedup=quick_dedup_mode(given.get("quick_dedup", "off")),
        role=role_of(given.get("role", "user")),
        keep_all=bool(given.get("keep_all", False)),
        # recorded with a call per stage unless the input says one call decided
        llm_calls="one" if given.get("llm_calls") == "one" else "staged",
        core_batch=_batch(given.get("core_batch")),
        said_at=None if given.get("said_at") is None else str(given["said_at"]),
    )


def said_later(created_at: str, said_at: str | None) -> bool:
    """Whether a memory written at `created_at` was said after `said_at` (None: now, after
    everything stored)."""
    if said_at is None:
        return False
    return datetime.fromisoformat(created_at) > datetime.fromisoformat(said_at)


def _batch(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _listed(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


class AddFailed(LedgerError):
    """The add was processed elsewhere and failed; its command says why."""


def outcome_of(ledger: Ledger, command_id: str) -> AddOutcome:
    """What a decided add did, read back from its recorded outcome (`AddFailed` when it
    failed)."""
    command = ledger.command(command_id)
    recorded = command.outcome or {}
    if command.status != COMPLETED:
        raise AddFailed(f"add {command_id} failed: {recorded.get('error', command.status)}")

    def memories(key: str) -> list[Memory]:
        return [ledger.memory(str(i)) for i in _listed(recorded.get(key))]

    return AddOutcome(
        command_id=command_id,
        added=memories("added"),
        superseded=[str(i) for i in _listed(recorded.get("superseded"))],
        reinforced=memories("reinforced"),
        core_updated=bool(recorded.get("core_updated", False)),
        fallback=bool(recorded.get("fallback", False)),
        llm_calls=command.llm_calls,
        consent_requested=[str(i) for i in _listed(recorded.get("consent_requested"))],
        not_kept=[str(t) for t in _listed(recorded.get("not_kept"))],
    )


@dataclass(frozen=True)
class _CoreStep:
    """What an add with one model call did to the core document."""

    document: CoreDocument | None
    """The document with its new events, to save; None: nothing changed."""
    status: str | None
    """`deferred` or `batched` (None: the add wrote no new memory)."""
    updated: bool
    """A new version of core.md was written."""


@dataclass(frozen=True)
class _Judged:
    instruction: Finding | None
    kept: list[str]
    not_kept: list[str]


def _screen_all(texts: Sequence[str], role: Role = "user") -> None:
    if role == "assistant":  # an assistant's reply speaks to a person (`sanitize.detect`)
        return
    for text in texts:
        refuse(detect_phrasing(text))


SIDE_THREADS: Final = 2
"""Threads for the work an add does beside its main line (the screen, warming the cache)."""
_SIDE: list[ThreadPoolExecutor] = []
_SIDE_LOCK = threading.Lock()


def _side_work() -> ThreadPoolExecutor:
    with _SIDE_LOCK:
        if not _SIDE:
            _SIDE.append(ThreadPoolExecutor(SIDE_THREADS, thread_name_prefix="add-side"))
        return _SIDE[0]


os.register_at_fork(after_in_child=_SIDE.clear)  # a forked child has none of the threads


def _finish(job: Future[None], work: Callable[[Sequence[str]], None], texts: list[str]) -> None:
    """The side job's outcome; run here if no side thread took it yet (others' adds keep
    them busy), rather than wait for one."""
    if job.cancel():
        work(texts)
    else:
        job.result()


@dataclass
class _Warming:
    """Texts being embedded into the embedding cache beside an add's decision."""

    embedder: Embedder
    texts: list[str]
    job: Future[object]


def _warm(embedder: Embedder, texts: Sequence[str]) -> _Warming | None:
    """Embed `texts` into the embedding cache beside the rest of the add (None when the
    embedder caches nothing, or there is nothing to embed): the read model that needs
    their vectors then finds them there instead of embedding them on the next add's path."""
    if not texts or not isinstance(embedder, CachedEmbedder):
        return None
    unique = list(dict.fromkeys(texts))
    return _Warming(embedder, unique, _side_work().submit(embedder.passages, unique))


def _settle(warming: _Warming | None) -> None:
    """Finish a cache warm-up (here, if no side thread took it yet); a failure is only
    logged: the read model embeds what the cache lacks."""
    if warming is None:
        return
    try:
        if warming.job.cancel():
            warming.embedder.passages(warming.texts)
        else:
            warming.job.result()
    except Exception as error:
        logger.warning("warming the embedding cache failed (%s); the read model embeds", error)


def _clean(text: str) -> str:
    return validation.normalize_text(text) if isinstance(text, str) else ""


def inherited_evidence(own: Sequence[str] | None, sources: Sequence[Memory]) -> list[str] | None:
    """`own` evidence followed by the sources' (no repeats), the newest kept at the cap."""
    merged = list(dict.fromkeys([*(own or []), *(e for m in sources for e in m.evidence or [])]))
    return merged[:MAX_EVIDENCE_ITEMS] if merged else None


def _new_memory(
    request: AddRequest, content: str, evidence: Sequence[str] | None = None
) -> NewMemory:
    return NewMemory(
        content=content,
        kind=request.kind,
        tags=tuple(request.tags),
        source=request.source,
        namespace=request.namespace,
        importance=request.importance,
        evidence=evidence if evidence is not None else request.evidence,
        category=request.category,
        metadata=request.metadata,
        said_at=request.said_at,
    )
