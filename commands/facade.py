"""`MnemoLedger`: the Python API. Every CLI command is one method here.

    from mnemoledger import MnemoLedger

    with MnemoLedger(home="~/.agent-memory", actor="me") as memory:
        result = memory.add(["I moved to Lisbon in May"], user="maya")
        hits = memory.search("where does she live", user="maya")

Writes go to the event log and return at once; reads first bring the read models up to
date with the log (a few milliseconds when nothing changed), so a reader always sees every
acknowledged write.

The class is a table of contents: `__init__` builds the shared `Parts` (the log, the read
models, the LLM provider, ...) and one object per capability over them; each public verb
below names the capability method it runs (`add = verb(Writes.add)`: same parameters, same
docstring). A capability that uses another one receives it in its constructor.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from mnemoledger.commands.audit.export_api import Export
from mnemoledger.commands.audit.history_api import History
from mnemoledger.commands.audit.integrity_api import Integrity
from mnemoledger.commands.audit.replay_api import Replay
from mnemoledger.commands.audit.report_api import Reports
from mnemoledger.commands.audit.timetravel_api import TimeTravel
from mnemoledger.commands.lifecycle.consolidate_api import Consolidate
from mnemoledger.commands.llm.stage import LLMProvider
from mnemoledger.commands.parts import Parts, capability_key, part, verb
from mnemoledger.commands.recall.agent_profile_api import AgentProfiles
from mnemoledger.commands.recall.facts_api import Facts
from mnemoledger.commands.recall.graph_api import Graph
from mnemoledger.commands.recall.query_api import Query
from mnemoledger.commands.recall.reads_api import Reads
from mnemoledger.commands.recall.recall_api import Recall
from mnemoledger.commands.service.keys import ApiKeyStore
from mnemoledger.commands.service.keys_api import Keys
from mnemoledger.commands.service.project_api import Project
from mnemoledger.commands.write.add import AddPipeline
from mnemoledger.commands.write.categories import CategoriesConfig
from mnemoledger.commands.write.checkpoints_api import Checkpoints
from mnemoledger.commands.write.commands_api import Commands
from mnemoledger.commands.write.consent import ConsentService
from mnemoledger.commands.write.consent_api import Consent
from mnemoledger.commands.write.ingest_api import Ingest
from mnemoledger.commands.write.notes_api import Notes
from mnemoledger.commands.write.turn_queue_api import TurnQueue
from mnemoledger.commands.write.writes_api import Writes
from mnemoledger.ledger import Ledger, Settings
from mnemoledger.projections.consent import ConsentProjection
from mnemoledger.projections.core import CoreProjection
from mnemoledger.projections.delta import DeltaProjection
from mnemoledger.projections.embeddings.cache import CachedEmbedder
from mnemoledger.projections.flushes import FlushGuard
from mnemoledger.projections.graph import GraphProjection
from mnemoledger.projections.history import HistoryProjection
from mnemoledger.projections.latest import LatestProjection
from mnemoledger.projections.layers import LayersProjection
from mnemoledger.projections.runner import Runner
from mnemoledger.projections.topics import TopicsProjection
from mnemoledger.projections.transcripts import TranscriptsProjection
from mnemoledger.projections.vectors import VectorsProjection

if TYPE_CHECKING:
    from collections.abc import Sequence
    from contextlib import AbstractContextManager

    from mnemoledger.commands.audit.diff import DiffReport
    from mnemoledger.commands.audit.replay import ReplayOptions, ReplayResult
    from mnemoledger.commands.audit.replay.engine import Progress
    from mnemoledger.commands.audit.timepoints import Point


# Replay, diff and time travel load the replay engine (every stage and the consolidation
# pipeline), DuckDB and a scratch ledger: imported when one runs, not when a facade opens.


def replay(
    live: MnemoLedger, into: Path, options: ReplayOptions, progress: Progress | None
) -> ReplayResult:
    """`commands.audit.replay.replay`, imported on first use."""
    from mnemoledger.commands.audit.replay import replay as run

    return run(live, into, options, progress)


def diff_ledgers(a: MnemoLedger, b: MnemoLedger, user: str | None) -> DiffReport:
    """`commands.audit.diff.diff_ledgers`, imported on first use."""
    from mnemoledger.commands.audit.diff import diff_ledgers as compare

    return compare(a, b, user)


def read_models_at(
    live: MnemoLedger, point: str | int | Point, extra: Sequence[str] = ()
) -> AbstractContextManager[MnemoLedger]:
    """`commands.audit.timetravel.read_models_at`, imported on first use."""
    from mnemoledger.commands.audit.timetravel import read_models_at as view_at

    return view_at(live, point, extra)


def default_actor() -> str:
    """Who is acting when nobody says: `$MNEMOLEDGER_ACTOR`, else `cli:<login>`."""
    if actor := os.environ.get("MNEMOLEDGER_ACTOR"):
        return actor
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


class MnemoLedger:
    """An agent-memory ledger in one data directory (or on PostgreSQL, by settings)."""

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        actor: str | None = None,
        settings: Settings | None = None,
    ) -> None:
        base = settings or Settings()
        if home is not None:
            base = base.model_copy(update={"home": Path(home).expanduser()})
        self.parts = parts = Parts(base, actor or default_actor())
        reads = Reads(parts)
        self._consent = Consent(parts)
        self._keys = Keys(parts)
        self._capabilities: dict[str, object] = {
            capability_key(type(c)): c
            for c in (
                parts,
                Writes(parts),
                Notes(parts),
                Ingest(parts),
                self._consent,
                reads,
                Query(parts),
                Graph(parts),
                Facts(parts),
                AgentProfiles(parts),
                Recall(parts, reads),
                Consolidate(parts),
                History(parts),
                TimeTravel(parts, self, read_models_at),
                Replay(parts, self, run=replay, compare=diff_ledgers, reopen=self._reopen),
                Export(parts),
                Reports(parts),
                Integrity(parts),
                Project(parts),
                self._keys,
                Checkpoints(parts),
                TurnQueue(parts),
                Commands(parts),
            )
        }

    def capability(self, key: str) -> object:
        """The capability a verb runs on (`verb` asks for it by `capability_key`)."""
        return self._capabilities[key]

    def _reopen(self, settings: Settings) -> MnemoLedger:
        """Another ledger like this one (a scratch home, another home to compare with)."""
        return type(self)(settings=settings, actor=self.actor)

    # --- writes (commands/write) ---------------------------------------------------------

    add = verb(Writes.add)
    update = verb(Writes.update)
    link = verb(Writes.link)
    ttl = verb(Writes.ttl)
    forget = verb(Writes.forget)
    restore = verb(Writes.restore)
    write_note = verb(Notes.write_note)
    merge_notes = verb(Notes.merge_notes)
    supersede_note = verb(Notes.supersede_note)
    ingest = verb(Ingest.ingest)
    store = verb(Ingest.store)
    queue_turns = verb(TurnQueue.queue_turns)
    extract_queued = verb(TurnQueue.extract_queued)
    process_pending_adds = verb(Commands.process_pending_adds)
    propose_consent = verb(Consent.propose_consent)
    grant_consent = verb(Consent.grant_consent)
    deny_consent = verb(Consent.deny_consent)
    expire_consents = verb(Consent.expire_consents)
    save_checkpoint = verb(Checkpoints.save_checkpoint)

    # --- recall (commands/recall) --------------------------------------------------------

    get = verb(Reads.get)
    list = verb(Reads.list)
    latest = verb(Reads.latest)
    search = verb(Reads.search)
    core = verb(Reads.core)
    history = verb(Reads.history)
    log = verb(Reads.log)
    stats = verb(Reads.stats)
    notes = verb(Notes.notes)
    profile = verb(Ingest.profile)
    consents = verb(Consent.consents)
    profile_fields = verb(Consent.profile_fields)
    memory_query = verb(Query.memory_query)
    query = verb(Query.query)
    delta = verb(Query.delta)
    delta_changes = verb(Query.delta_changes)
    graph_edges = verb(Graph.graph_edges)
    related_edges = verb(Graph.related_edges)
    state_fact = verb(Facts.state_fact)
    end_fact = verb(Facts.end_fact)
    extract_facts = verb(Facts.extract_facts)
    facts = verb(Facts.facts)
    fact = verb(Facts.fact)
    set_agent_profile = verb(AgentProfiles.set_agent_profile)
    agent_profile = verb(AgentProfiles.agent_profile)
    resume = verb(Recall.resume)
    context = verb(Recall.context)
    transcripts = verb(Recall.transcripts)
    search_all = verb(Recall.search_all)
    load_checkpoint = verb(Checkpoints.load_checkpoint)
    checkpoints = verb(Checkpoints.checkpoints)
    queued_threads = verb(TurnQueue.queued_threads)
    command = verb(Commands.command)
    pending_adds = verb(Commands.pending_adds)

    # --- lifecycle (commands/lifecycle) --------------------------------------------------

    consolidate = verb(Consolidate.consolidate)
    build_topics = verb(Consolidate.build_topics)
    topics = verb(Consolidate.topics)
    topic_memories = verb(Consolidate.topic_memories)
    users_with_memories = verb(Consolidate.users_with_memories)
    topics_due = verb(Consolidate.topics_due)
    consolidation_pipeline = verb(Consolidate.consolidation_pipeline)

    # --- audit (commands/audit) ----------------------------------------------------------

    memory_history = verb(History.memory_history)
    timeline = verb(History.timeline)
    as_of = verb(TimeTravel["MnemoLedger"].as_of)
    position_at = verb(TimeTravel["MnemoLedger"].position_at)
    replay = verb(Replay["MnemoLedger"].replay)
    diff = verb(Replay["MnemoLedger"].diff)
    _opened = verb(Replay["MnemoLedger"].opened)
    export = verb(Export.export)
    import_events = verb(Export.import_events)
    report = verb(Reports.report)
    verify = verb(Integrity.verify)
    seal = verb(Integrity.seal)
    erase = verb(Integrity.erase)

    # --- service (commands/service): read models, API keys -------------------------------

    refresh = verb(Project.refresh)
    rebuild = verb(Project.rebuild)
    project = verb(Project.project)
    create_key = verb(Keys.create_key)
    keys = verb(Keys.keys)
    revoke_key = verb(Keys.revoke_key)
    authenticate = verb(Keys.authenticate)

    @property
    def api_key_store(self) -> ApiKeyStore:
        """The key store of the log, opened on first use."""
        return self._keys.api_key_store

    # --- the shared parts, read and replaced through the facade --------------------------

    settings: part[Settings] = part()
    actor: part[str] = part()
    clock: part[Callable[[], datetime]] = part()
    ledger: part[Ledger] = part()
    embedder: part[CachedEmbedder] = part()
    layers: part[LayersProjection] = part()
    vectors: part[VectorsProjection] = part()
    core_model: part[CoreProjection] = part()
    consent_model: part[ConsentProjection] = part()
    delta_model: part[DeltaProjection] = part()
    graph_model: part[GraphProjection] = part()
    transcripts_model: part[TranscriptsProjection] = part()
    history_model: part[HistoryProjection] = part()
    topics_model: part[TopicsProjection] = part()
    latest_model: part[LatestProjection] = part()
    flushes_model: part[FlushGuard] = part()
    runner: part[Runner] = part()
    llm: part[LLMProvider] = part()
    add_pipeline: part[AddPipeline] = part()
    _provenance = verb(Parts.provenance)

    @property
    def categories_config(self) -> CategoriesConfig:
        """The categories config, read once from the configured file."""
        return self.parts.categories_config

    @property
    def consent_service(self) -> ConsentService:
        """The consent use cases over this ledger and its consent read model."""
        return self._consent.consent_service

    # --- opening and closing -------------------------------------------------------------

    close = verb(Parts.close)

    def __enter__(self) -> MnemoLedger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
